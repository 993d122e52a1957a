"""Pareto plot: training loss (log scale) against complexity for a run's candidates.

Front members are joined by a step line (each one is the best model up to its complexity);
the candidate PySR's rule recommends is drawn as a star and the run's final model ringed.
Hovering a point shows its expression; clicking one emits :attr:`ParetoPlot.point_clicked`
with its row, and :meth:`ParetoPlot.highlight` marks the row the candidate table selected, so
the two views stay linked both ways (the main window connects them).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt, Signal
from PySide6.QtGui import QCursor
from PySide6.QtWidgets import QLabel, QToolTip, QVBoxLayout, QWidget

from engine import pareto

from . import style
from .settle import PaintOnce
from .style import styled_plot

#: Losses are clipped to this floor so an exact fit (loss 0) still shows on a log axis.
LOSS_FLOOR = 1e-16
#: A click or hover within this many pixels of a point picks it.
PICK_PIXELS = 12

# Colours come from the current style (viewers/style.py): the front is its blue, dominated
# models its faint grey, the recommended one its orange and the final model its prediction colour.


class LossAxis(pg.AxisItem):
    """Log-scale loss axis that labels only 1, 2 and 5 × 10ⁿ, so a range of less than a decade
    does not stack a label on every minor tick."""

    def tickStrings(self, values, scale, spacing):
        strings = super().tickStrings(values, scale, spacing)
        if not self.logMode:
            return strings
        out = []
        for v, text in zip(values, strings):
            mantissa = 10 ** (v - math.floor(v + 1e-9))
            keep = any(abs(mantissa - m) < 1e-6 * m for m in (1, 2, 5))
            out.append(text if keep else "")
        return out


class _CountAxis(pg.AxisItem):
    """Complexity is a whole number: no ticks between integers."""

    def tickSpacing(self, minVal, maxVal, size):
        levels, seen = [], set()
        for spacing, offset in super().tickSpacing(minVal, maxVal, size):
            spacing = max(1.0, spacing)
            if spacing not in seen:
                seen.add(spacing)
                levels.append((spacing, offset))
        return levels


class ParetoPlot(QWidget):
    point_clicked = Signal(int)  # row of the clicked candidate

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.plot_widget = pg.PlotWidget(axisItems={"left": LossAxis("left"), "bottom": _CountAxis("bottom")})
        self.plot = styled_plot(self.plot_widget, "Accuracy against complexity", "complexity",
                                "NMSE (train, log scale)")
        self.plot.getAxis("left").setLogMode(True)
        self.plot.getAxis("left").enableAutoSIPrefix(False)
        self.plot.setMenuEnabled(False)
        # Top right stays clear: the front falls from the simple, inaccurate models at the top left
        # to the complex, accurate ones at the bottom right.
        # Bottom left: a front falls from the top left to the bottom right, so that corner is
        # where no point usually is.
        # Top right: the corner a Pareto front (error falling with complexity) always leaves empty.
        self.legend = self.plot.addLegend(offset=(-6, 6), labelTextSize="8pt", verSpacing=-6)
        self.plot.vb.setDefaultPadding(0.08)
        self.steps = pg.PlotDataItem()
        self.points = pg.ScatterPlotItem(name="Pareto front")
        self.others = pg.ScatterPlotItem(brush=pg.mkBrush(None), name="dominated")
        self.chosen_item = pg.ScatterPlotItem(symbol="o", brush=pg.mkBrush(None), name="final model")
        self.recommended_item = pg.ScatterPlotItem(symbol="star", name="recommended")
        self.selected_item = pg.ScatterPlotItem(symbol="s", brush=pg.mkBrush(None))
        for item in (self.steps, self.others, self.points, self.chosen_item, self.recommended_item, self.selected_item):
            self.plot.addItem(item)
        self.selected_item.setZValue(10)
        self.recommended_item.setZValue(5)
        self.hint = QLabel("")
        self.hint.setWordWrap(True)  # no minimum width of its own (large fonts in presentation mode)
        self._style_items(style.current())
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.plot_widget)
        layout.addWidget(self.hint)

        self.rows: list[dict] = []
        self._xy = np.zeros((0, 2))  # (complexity, log10 loss) per row; NaN when not drawn
        self.recommended: int | None = None
        self.chosen: int | None = None
        self.selected: int | None = None
        self.hover_text = ""
        # Painted once per new front, on a turn after the one that set it (see viewers/settle.py):
        # as a run ended, its front and the plot's two paints (25 + 14 ms) shared turns with
        # the result and the history.
        self._paint = PaintOnce(self.plot_widget, (self.plot,))
        self.plot.scene().sigMouseClicked.connect(self._on_click)
        self.plot.scene().sigMouseMoved.connect(self._on_move)
        self.clear()
        style.on_change(self._restyle)

    # ------------------------------------------------------------------ look

    def _style_items(self, s: style.Style) -> None:
        """Pens, brushes and sizes of the plot's items in the style ``s``."""
        self.steps.setPen(style.pen(s.blue, 1.5))
        self.points.setSize(style.size(9))
        self.points.setPen(pg.mkPen(s.background, width=0.8 * s.line_scale))  # a thin gap around each point
        self.points.setBrush(pg.mkBrush(*s.blue))
        self.others.setSize(style.size(7))
        self.others.setPen(style.pen(s.faint, 1.2))
        self.chosen_item.setSize(style.size(19))
        self.chosen_item.setPen(style.pen(s.prediction, 2.2))
        self.recommended_item.setSize(style.size(20))
        self.recommended_item.setPen(style.pen((255, 230, 170) if s.dark else (120, 70, 0), 1))
        self.recommended_item.setBrush(pg.mkBrush(*s.orange))
        self.selected_item.setSize(style.size(25))
        self.selected_item.setPen(style.pen(s.foreground, 1.5, style=Qt.PenStyle.DashLine))
        self.hint.setStyleSheet(f"color: {style.css(s.muted)};")

    def _restyle(self, s: style.Style) -> None:
        self._style_items(s)
        style.apply_view(self.plot_widget, s)

    # ------------------------------------------------------------------ content

    def clear(self) -> None:
        self.set_front([])

    def set_front(self, rows: list[dict], recommended: int | None = None, chosen: int | None = None,
                  final: tuple | None = None) -> None:
        """``rows`` are candidates (``complexity``, ``loss``, ``expression``); the indices of the
        recommended and the chosen candidate refer to them, as do clicks and highlights.
        ``final`` = (complexity, loss, expression) places the run's final model when it is not
        one of the rows (``chosen`` is None)."""
        self.rows = list(rows)
        self.recommended, self.chosen = recommended, chosen
        self.final = final if chosen is None else None
        xy = np.full((len(rows), 2), np.nan)
        for i, r in enumerate(rows):
            loss = r.get("loss")
            if loss is not None and math.isfinite(loss) and loss >= 0:
                xy[i] = (float(r["complexity"]), math.log10(max(float(loss), LOSS_FLOOR)))
        self._xy = xy
        on_front = set(pareto.front_indices(rows))
        front = [i for i in pareto.front_indices(rows)]
        off = [i for i in range(len(rows)) if i not in on_front and np.isfinite(xy[i, 1])]
        self.points.setData(pos=xy[front] if front else np.zeros((0, 2)), data=front,
                            brush=pg.mkBrush(*style.current().blue))
        self.others.setData(pos=xy[off] if off else np.zeros((0, 2)), data=off)
        if front:
            # A staircase: flat to the next complexity, then down to its loss.
            sx, sy = [], []
            for a, b in zip(front, front[1:] + [None]):
                sx.append(xy[a, 0])
                sy.append(xy[a, 1])
                if b is not None:
                    sx.append(xy[b, 0])
                    sy.append(xy[a, 1])
            self.steps.setData(sx, sy)
        else:
            self.steps.setData([], [])
        self._mark(self.recommended_item, recommended)
        self._mark(self.chosen_item, chosen)
        if self.final is not None and self.final[1] is not None and math.isfinite(self.final[1]):
            c, loss, _ = self.final
            self.chosen_item.setData(pos=[(float(c), math.log10(max(float(loss), LOSS_FLOOR)))], data=[-1])
        self._legend_for([(self.points, "Pareto front", bool(front)), (self.others, "dominated", bool(off)),
                          (self.chosen_item, "final model", len(self.chosen_item.data) > 0),
                          (self.recommended_item, "recommended", len(self.recommended_item.data) > 0)])
        self.highlight(self.selected if self.selected is not None and self.selected < len(rows) else None)
        drawn = int(np.isfinite(xy[:, 1]).sum()) if len(rows) else 0
        if not rows:
            self.hint.setText("The Pareto front of the run appears here.")
        else:
            missing = len(rows) - drawn
            extra = f" ({missing} without a finite loss not drawn)" if missing else ""
            self.hint.setText(f"{drawn} models{extra}. Hover a point for its equation, click to select it.")
        self.plot.enableAutoRange()
        self._paint.soon()

    def bring_forward(self, show: Callable[[], None]) -> None:
        """``show`` brings this plot's tab forward: done on a turn of its own with the plot held,
        then the plot settles over the next turns and paints once (PaintOnce.show_then_settle)."""
        self._paint.show_then_settle(show)

    def _legend_for(self, entries) -> None:
        """The legend lists only what is drawn. Rebuilt only when that changes: a new legend
        row costs pyqtgraph a label item and its layout (about 10 ms per front)."""
        wanted = [(item, label) for item, label, shown in entries if shown]
        if wanted == getattr(self, "_legend_rows", None):
            return
        self._legend_rows = wanted
        self.legend.clear()
        for item, label in wanted:
            self.legend.addItem(item, label)

    def _mark(self, item: pg.ScatterPlotItem, row: int | None) -> None:
        if row is not None and 0 <= row < len(self.rows) and np.isfinite(self._xy[row, 1]):
            item.setData(pos=self._xy[[row]], data=[row])
        else:
            item.setData(pos=np.zeros((0, 2)), data=[])

    def highlight(self, row: int | None) -> None:
        """Mark ``row`` as selected (``None`` or −1: no selection). Emits nothing."""
        self.selected = None if row is None or row < 0 else row
        self._mark(self.selected_item, self.selected)

    # ------------------------------------------------------------------ picking

    def point_scene_pos(self, row: int) -> QPointF | None:
        if not (0 <= row < len(self.rows)) or not np.isfinite(self._xy[row, 1]):
            return None
        x, y = self._xy[row]
        return self.plot.vb.mapViewToScene(QPointF(float(x), float(y)))

    def point_widget_pos(self, row: int):
        """Where row's point is, in the plot widget's viewport coordinates (for tests)."""
        scene = self.point_scene_pos(row)
        return None if scene is None else self.plot_widget.mapFromScene(scene)

    def _final_hover(self, scene_pos: QPointF) -> str:
        if self.final is None or not len(self.chosen_item.data):
            return ""
        x, y = self.chosen_item.getData()
        p = self.plot.vb.mapViewToScene(QPointF(float(x[0]), float(y[0])))
        if math.hypot(p.x() - scene_pos.x(), p.y() - scene_pos.y()) > PICK_PIXELS:
            return ""
        c, loss, expression = self.final
        return f"{expression}\ncomplexity {c} · train NMSE {loss:.4g}\n● the run's final model (simplified, not on the front as written)"

    def row_at(self, scene_pos: QPointF) -> int | None:
        best, best_d = None, float(PICK_PIXELS)
        for row in range(len(self.rows)):
            p = self.point_scene_pos(row)
            if p is None:
                continue
            d = math.hypot(p.x() - scene_pos.x(), p.y() - scene_pos.y())
            if d <= best_d:
                best, best_d = row, d
        return best

    def tooltip(self, row: int) -> str:
        r = self.rows[row]
        loss = r.get("loss")
        lines = [str(r["expression"]),
                 f"complexity {r['complexity']} · train NMSE {'—' if loss is None else f'{loss:.4g}'}"]
        if row == self.recommended:
            lines.append("★ recommended")
        if row == self.chosen:
            lines.append("● the run's final model")
        return "\n".join(lines)

    def _on_click(self, event) -> None:
        if event.button() != Qt.MouseButton.LeftButton:
            return
        row = self.row_at(event.scenePos())
        if row is not None:
            self.highlight(row)
            self.point_clicked.emit(row)

    def _on_move(self, scene_pos) -> None:
        row = self.row_at(scene_pos)
        text = self.tooltip(row) if row is not None else self._final_hover(scene_pos)
        if text != self.hover_text:
            self.hover_text = text
            if text:
                QToolTip.showText(QCursor.pos(), text, self.plot_widget)
            else:
                QToolTip.hideText()
