"""Fit viewer: predicted vs true with the identity line, residuals, and for dynamical tasks the
target and the prediction against time. Train, in-domain and out-of-domain points are
coloured apart, so a model that only fits the training range is seen at a glance."""

from __future__ import annotations


from collections.abc import Callable, Iterator
from itertools import chain

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from engine.fits import FitData  # noqa: F401 (the data this view draws)

from . import style
from .scatter import DrawWhenShown, UniformScatter, on_screen
from .settle import PaintOnce
from .style import split_brush, split_label, styled_plot

#: Points drawn per split at most (pyqtgraph stays smooth; the metrics use every point).
MAX_POINTS = 4000


def _thin(n: int) -> np.ndarray:
    if n <= MAX_POINTS:
        return np.arange(n)
    return np.linspace(0, n - 1, MAX_POINTS).astype(int)


class FitViewer(QWidget):
    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.header = QLabel("Run a method or pick a run to see its fit.")
        self.header.setWordWrap(True)
        self.layout_widget = pg.GraphicsLayoutWidget()
        self.scatter_plot = self.layout_widget.addPlot(row=0, col=0)
        self.residual_plot = self.layout_widget.addPlot(row=0, col=1)
        self.time_plot = self.layout_widget.addPlot(row=1, col=0, colspan=2)
        styled_plot(self.scatter_plot, "Predicted vs true", "true", "predicted")
        styled_plot(self.residual_plot, "Residuals", "true", "predicted − true")
        styled_plot(self.time_plot, "Target and prediction over time", "t", "target")
        self.scatter_plot.addLegend(offset=(5, 5))
        self.time_plot.addLegend(offset=(5, 5))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.header)
        layout.addWidget(self.layout_widget)
        #: The fit on show, or to be shown when the viewer comes on screen (see show_fit).
        self.current: FitData | None = None
        self._drawn: FitData | None = None  # the fit the plots hold
        self._splits: tuple[str, ...] | None = None  # the splits whose scatter items are on the plots
        self._when_shown = DrawWhenShown(self, self.layout_widget.viewport(), self._draw_and_settle)
        # One scatter item per split and plot, made once and refilled: a fit of 5000 points is
        # redrawn in a few milliseconds this way, where new PlotDataItems (each restyling all of
        # its points several times) took over 100 ms on the GUI thread.
        self._points: dict[tuple[str, str], UniformScatter] = {}
        dashed = pg.QtCore.Qt.PenStyle.DashLine
        self._identity = pg.PlotDataItem(pen=style.pen(style.current().identity, 2, style=dashed))
        self._zero = pg.InfiniteLine(angle=0, pos=0, pen=style.pen(style.current().identity, 2, style=dashed))
        # The time plot's items are made once too, and refilled: made again for every fit, with
        # their legend entries, they took 17 of the 31 ms a dynamical task's fit took to draw.
        self._truth = self.time_plot.plot([], [], name="true", autoDownsampleFactor=1.0)
        self._model = self.time_plot.plot([], [], connect="finite", name="model", autoDownsampleFactor=1.0)
        # A trajectory of 5000 samples is drawn as the lowest and highest sample of each pixel
        # column (pyqtgraph's peak downsampling, set on the plot so that its menu shows it):
        # the same picture, where stroking all 5000 with a wide antialiased pen took Qt about
        # 10 ms per curve at every paint. Zoomed in, fewer samples per pixel are merged.
        self.time_plot.setDownsampling(auto=True, mode="peak")
        self.time_plot.setClipToView(True)
        self._ood_region = pg.LinearRegionItem(movable=False)
        self._ood_region.setToolTip("out-of-domain test range")
        self._ood_region.setZValue(-10)
        self._ood_label = pg.TextItem("OOD", anchor=(0, 0))
        self._ood_font = self._ood_label.textItem.font()  # outside presentation mode
        self._ood_region.setVisible(False)
        self._ood_label.setVisible(False)
        self.time_plot.addItem(self._ood_region)
        # Hung from the top of the data, inside the plot: left out of the auto-range, whose
        # bounds would otherwise change with the label's on-screen size at every zoom.
        self.time_plot.addItem(self._ood_label, ignoreBounds=True)
        self._style_time(style.current())
        self._set_time_visible(False)
        # Laid out, ranged and its axes sized before it is painted, and painted once per fit
        # (see viewers/settle.py).
        self._paint = PaintOnce(self.layout_widget, (self.scatter_plot, self.residual_plot, self.time_plot),
                                (self._ood_label,))
        style.on_change(self._restyle)

    def _style_time(self, s: style.Style) -> None:
        self._truth.setPen(style.pen(s.truth, 2))
        self._model.setPen(style.pen(s.prediction, 2, style=pg.QtCore.Qt.PenStyle.DashLine))
        self._ood_region.setBrush(pg.mkBrush(*s.orange[:3], 55 if s.dark else 40))
        self._ood_label.setColor(s.orange if s.dark else (170, 110, 0))
        self._ood_label.setFont(style.font(s.tick_pt) if s.tick_pt is not None else self._ood_font)

    def _restyle(self, s: style.Style) -> None:
        """Theme or presentation mode changed: markers, lines, axes and background again."""
        dashed = pg.QtCore.Qt.PenStyle.DashLine
        self._identity.setPen(style.pen(s.identity, 2, style=dashed))
        self._zero.setPen(style.pen(s.identity, 2, style=dashed))
        for (_plot, split), item in self._points.items():
            item.setSize(style.size(4))
            item.setBrush(split_brush(split))
        self._style_time(s)
        style.apply_view(self.layout_widget, s)
        self._paint.soon()  # new fonts: new axis widths

    def marker_size(self) -> float:
        """Size of the predicted-vs-true markers (for tests)."""
        item = next((i for (p, _), i in self._points.items() if p == "fit"), None)
        return float(item.opts["size"]) if item is not None else style.size(4)

    def _set_time_visible(self, visible: bool) -> None:
        self.time_plot.setVisible(visible)
        self.layout_widget.ci.layout.setRowStretchFactor(1, 1 if visible else 0)
        self.layout_widget.ci.layout.setRowMaximumHeight(1, 10_000 if visible else 0)

    def _detach(self) -> None:
        """Take the scatter items, the identity line and the zero line off the plots (kept)."""
        if self.scatter_plot.legend is not None:
            # The legend lists only these items: emptied at once, it is resized once (removing its
            # entries one by one relays it out for each).
            self.scatter_plot.legend.clear()
        for (plot_name, _split), item in self._points.items():
            plot = self.scatter_plot if plot_name == "fit" else self.residual_plot
            if item.scene() is not None:
                plot.removeItem(item)
        for plot, item in ((self.scatter_plot, self._identity), (self.residual_plot, self._zero)):
            if item.scene() is not None:
                plot.removeItem(item)
        self._splits = None

    def _show_items(self, visible: bool) -> None:
        for item in (*self._points.values(), self._identity, self._zero):
            item.setVisible(visible)
        if self.scatter_plot.legend is not None:
            self.scatter_plot.legend.setVisible(visible)

    def clear(self, message: str = "Run a method or pick a run to see its fit.") -> None:
        """Nothing drawn, ``message`` in the header. The scatter items and their legend stay on
        the plots, hidden: the next fit of the same splits (the usual case: the next run of a
        task, or of another task of its benchmark) refills them, where adding them and their
        legend entries again took about as long as filling them (15-17 ms)."""
        self.current = self._drawn = None
        self._when_shown.drop()
        self._show_items(False)
        for item in self._points.values():
            item.clear()  # emptied too: the plot menu's CSV export writes hidden items as well
        self._identity.setData([], [])
        self._truth.setData([], [])
        self._model.setData([], [])
        self._ood_region.setVisible(False)
        self._ood_label.setVisible(False)
        self.header.setText(message)
        self._set_time_visible(False)

    def _scatter(self, plot_name: str, split: str) -> UniformScatter:
        item = self._points.get((plot_name, split))
        if item is None:
            item = self._points[(plot_name, split)] = UniformScatter(
                size=style.size(4), pen=None, brush=split_brush(split), symbol="o", name=split_label(split), hoverable=False)
        return item

    def show_fit(self, fit: FitData) -> None:
        """Show ``fit``: at once if the viewer is on screen, else when it comes on screen (its
        dock behind the run history a user clicks through: drawing 5000 points there cost the
        window's thread 30-50 ms per click for nothing to see).

        On screen, the points are set at once, and the rest (the time plot, then the plots'
        layout, ranges and axes: see viewers/settle.py) on the next turns of the event loop,
        with the viewport's updates off until it is painted, once. A dynamical task's fit took
        one turn of drawing and three paints, 130 ms with 90 in one turn; now the points take
        about 10 ms, each later step under 10 ms and the one paint 15-20 ms (idle machine)."""
        self.header.setText(fit.title or "Fit")
        self.current = fit
        if not self._when_shown.wanted():
            return
        steps = chain(self._draw_steps(), self._paint.steps())
        next(steps, None)  # the points: a caller may count them at once
        if on_screen(self):
            self._paint.hold()
            self._paint.in_turns(steps)
        else:  # a window not shown (an export, a test): no paint waits, nothing to spread
            _run(steps)

    def draw_then(self, then: Callable[[], None]) -> None:
        """Call ``then`` (the window bringing the panel forward) on the next turn of the event
        loop, and draw a fit owed to this viewer over the turns after it, with the viewport's
        updates off until it is settled. Drawn as the panel came forward, inside its first
        paint, the points, the settling and the paint made one turn of about 85 ms for a
        dynamical task's fit as a run ended; behind its tab the viewer does not have its size
        yet, so it cannot be settled there. The panel's plots keep the picture they had for
        those turns. Nothing owed: ``then`` at once."""
        if not self._when_shown.pending:
            then()
            return

        def draw() -> Iterator[None]:
            if self._when_shown.pending:  # else drawn meanwhile (a paint the hold did not stop)
                self._when_shown.drop()
                yield from self._draw_steps(by_split=True)

        self._paint.show_then_settle(then, draw)

    def drawing_owed(self) -> bool:
        """A fit waits for the viewer to come on screen."""
        return self._when_shown.pending

    def _draw_and_settle(self) -> None:
        _run(chain(self._draw_steps(), self._paint.steps()))

    def _draw_steps(self, by_split: bool = False) -> Iterator[None]:
        """Draw the current fit in steps: the points (``by_split``: the training points, their
        residuals, then the test points), then the time plot. Yields after each; a newer fit
        drawn in between ends it."""
        fit = self.current
        if fit is None or fit is self._drawn:
            return
        if self._splits != tuple(fit.splits):  # else the items are refilled in place: no legend or item churn
            self._detach()
            self.scatter_plot.clear()
            self.residual_plot.clear()
            self._splits = tuple(fit.splits)
        self._drawn = fit
        self._paint.unsettled = True
        self._show_items(True)
        lo, hi = np.inf, -np.inf
        for split, (y_true, y_pred) in fit.splits.items():
            idx = _thin(len(y_true))
            yt, yp = y_true[idx], y_pred[idx]
            finite = np.isfinite(yp)
            fit_points, residuals = self._scatter("fit", split), self._scatter("residual", split)
            fit_points.setData(x=yt[finite], y=yp[finite])
            if fit_points.scene() is None:
                self.scatter_plot.addItem(fit_points)
            if by_split and split == "train":
                yield  # the largest split's points and residuals each on a turn of its own
                if self._drawn is not fit:
                    return
            residuals.setData(x=yt[finite], y=(yp - yt)[finite])
            if residuals.scene() is None:
                self.residual_plot.addItem(residuals)
            if yt.size:
                lo, hi = min(lo, float(np.min(yt))), max(hi, float(np.max(yt)))
            if by_split and split == "train" and len(fit.splits) > 1:
                yield
                if self._drawn is not fit:
                    return
        if not (np.isfinite(lo) and np.isfinite(hi)) and self._identity.scene() is not None:
            self.scatter_plot.removeItem(self._identity)  # nothing to compare: no identity line
            self.residual_plot.removeItem(self._zero)
            if self.scatter_plot.legend is not None:
                self.scatter_plot.legend.removeItem(self._identity)
        if np.isfinite(lo) and np.isfinite(hi):
            self._identity.setData([lo, hi], [lo, hi])
            self._identity.opts["name"] = "identity"
            if self._identity.scene() is None:
                self.scatter_plot.addItem(self._identity)
                self.residual_plot.addItem(self._zero)
        _label(self.scatter_plot, "bottom", f"true {fit.target}")
        _label(self.scatter_plot, "left", f"predicted {fit.target}")
        _label(self.residual_plot, "bottom", f"true {fit.target}")
        yield
        if self._drawn is not fit:
            return  # a newer fit was drawn, or the viewer cleared, meanwhile
        self._set_time_visible(bool(fit.time))
        if fit.time:
            self._draw_time(fit)
        else:
            self._truth.setData([], [])
            self._model.setData([], [])
        yield

    def _draw_time(self, fit: FitData) -> None:
        ts, truth, pred = [], [], []
        for split, (y_true, y_pred) in fit.splits.items():
            t = fit.time.get(split)
            if t is None:
                continue
            ts.append(t)
            truth.append(y_true)
            pred.append(y_pred)
        t = np.concatenate(ts)
        order = np.argsort(t, kind="stable")
        t, yt, yp = t[order], np.concatenate(truth)[order], np.concatenate(pred)[order]
        self._truth.setData(t, yt)
        self._model.setData(t, np.where(np.isfinite(yp), yp, np.nan))
        legend = self.time_plot.legend
        if legend is not None and (entry := legend.getLabel(self._truth)) is not None \
                and entry.text != f"true {fit.target}":
            entry.setText(f"true {fit.target}")
        ood = fit.time.get("test_ood")
        shown = ood is not None and bool(ood.size)
        if shown:
            self._ood_region.setRegion((float(np.min(ood)), float(np.max(ood))))
            # at the top of what is drawn (the model's curve may rise above the data's), where
            # the auto-range puts the plot's top edge: hung from there, the label stays inside
            values = np.concatenate([yt, yp])
            values = values[np.isfinite(values)]
            self._ood_label.setPos(float(np.min(ood)), float(np.max(values)) if values.size else 0.0)
        self._ood_region.setVisible(shown)
        self._ood_label.setVisible(shown)
        _label(self.time_plot, "bottom", fit.time_name)
        _label(self.time_plot, "left", fit.target)

    def plotted_point_count(self) -> int:
        """Points drawn in the predicted-vs-true plot (for tests and the status bar)."""
        return sum(len(item.data) for (plot_name, _), item in self._points.items()
                   if plot_name == "fit" and item.scene() is not None and item.isVisible())


def _run(steps: Iterator[None]) -> None:
    for _ in steps:
        pass


def _label(plot: pg.PlotItem, side: str, text: str) -> None:
    """Set an axis title if it changed: setting it again re-renders it and resizes the axis."""
    if plot.getAxis(side).labelText != text:
        plot.setLabel(side, text)
