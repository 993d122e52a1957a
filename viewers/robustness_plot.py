"""Recovery rate against the levels of one robustness axis (pyqtgraph), as in ERBench's Fig. 6.

Levels are categories (``uniform`` / ``mixture``, ``0`` / ``0.01`` / …), so they are placed at
0, 1, 2, … with their text as tick labels. The y-axis is the recovery rate in [0, 1]. Updates
are stored at once and drawn by a timer at most 20 times a second.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from . import style
from .style import styled_plot


class RobustnessPlot(QWidget):
    """One curve: recovery rate per axis level for the chosen method."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.plot_widget = pg.PlotWidget()
        self.plot = styled_plot(self.plot_widget, "Recovery rate", "level", "recovery rate")
        self.plot.setYRange(-0.05, 1.05, padding=0)
        self.plot.setMouseEnabled(x=False, y=False)
        self.curve = self.plot.plot([], [], symbol="o")
        self._style_curve(style.current())
        self.caption = QLabel("No sweep yet.")
        self.caption.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.plot_widget)
        layout.addWidget(self.caption)
        self._levels: list[str] = []
        self._rates: dict[str, float] = {}
        self._counts: dict[str, tuple[int, int]] = {}
        self._dirty = False
        self._timer = QTimer(self)
        self._timer.setInterval(50)
        self._timer.timeout.connect(self._redraw)
        self._timer.start()
        style.on_change(self._restyle)

    def _style_curve(self, s: style.Style) -> None:
        pen = style.pen(s.prediction, 2)
        self.curve.setPen(pen)
        self.curve.setSymbolPen(pen)
        self.curve.setSymbolBrush(pg.mkBrush(*s.prediction))
        self.curve.setSymbolSize(style.size(9))

    def _restyle(self, s: style.Style) -> None:
        self._style_curve(s)
        style.apply_view(self.plot_widget, s)

    def set_axis(self, axis_label: str, levels: list[str], method: str = "") -> None:
        """Start a new sweep: the x-axis shows ``levels`` and no point yet."""
        self._levels = list(levels)
        self._rates, self._counts = {}, {}
        title = f"Recovery rate · {method}" if method else "Recovery rate"
        self.plot.setTitle(title, size=style.title_size())
        self.plot.setLabel("bottom", axis_label)
        self.plot.getAxis("bottom").setTicks([list(enumerate(self._levels))])
        self.plot.setXRange(-0.5, max(len(self._levels) - 0.5, 0.5), padding=0)
        self.caption.setText("Waiting for the first run…")
        self._dirty = True

    def set_rows(self, rows) -> None:
        """Update from summary rows (objects with ``level``, ``rate``, ``runs``, ``recovered``)."""
        for row in rows:
            if row.rate is None:
                continue
            if row.level not in self._levels:
                self._levels.append(row.level)
                self.plot.getAxis("bottom").setTicks([list(enumerate(self._levels))])
            self._rates[row.level] = float(row.rate)
            self._counts[row.level] = (row.recovered, row.runs)
        self._dirty = True

    def point_count(self) -> int:
        return len(self._rates)

    def points(self) -> list[tuple[str, float]]:
        return [(lv, self._rates[lv]) for lv in self._levels if lv in self._rates]

    def _redraw(self) -> None:
        if not self._dirty:
            return
        self._dirty = False
        xs = [i for i, lv in enumerate(self._levels) if lv in self._rates]
        ys = [self._rates[self._levels[i]] for i in xs]
        self.curve.setData(xs, ys)
        if xs:
            parts = [f"{lv}: {self._counts[lv][0]}/{self._counts[lv][1]}" for lv in self._levels if lv in self._counts]
            self.caption.setText("Recovered runs per level — " + ", ".join(parts))
