"""Plots of the lab panel (issue 5): the scan plot (one input against one scalar output, with a
fitted hypothesis and its residuals) and the series plot (the time series or profiles an
apparatus records, the selected experiment drawn boldly over the others).

Everything here only draws what it is given; the lab panel computes models off the GUI thread.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QVBoxLayout, QWidget

from . import style
from .style import styled_plot

# Colours come from the current style (viewers/style.py): measured points in its blue, the
# selected experiment ringed in its prediction colour (vermillion), other experiments faint,
# and the series plot's curves in its Okabe-Ito series colours.


class DecadeAxis(pg.AxisItem):
    """An axis whose log mode puts labelled ticks on whole decades and unlabelled ones between
    (pyqtgraph's own picks 2, 3, … 9 of each decade as the main level over one to six decades,
    and their labels run into each other)."""

    def logTickValues(self, minVal, maxVal, size, stdTicks):  # noqa: N802,N803 -- pyqtgraph API
        span = maxVal - minVal
        if 0.8 <= span <= 6.0:
            # Labelled: the decades, and over less than three decades also 2× and 5× (1-2-5).
            labelled = (1,) if span > 3.0 else (1, 2, 5)
            major, minor = [], []
            for v in range(math.floor(minVal), math.ceil(maxVal) + 1):
                for k in range(1, 10):
                    t = v + math.log10(k)
                    if minVal <= t <= maxVal:
                        (major if k in labelled else minor).append(t)
            if len(major) >= 2:
                return [(None, major), (None, minor)]
        return super().logTickValues(minVal, maxVal, size, stdTicks)


def _axes() -> dict:
    return {"bottom": DecadeAxis("bottom"), "left": DecadeAxis("left")}


def _tidy_log_axes(plot, x: np.ndarray, y: np.ndarray, log_x: bool, log_y: bool) -> None:
    """On a log axis covering a decade or more, label the decades only (pyqtgraph would also
    label 2…9 of every decade, which run into each other)."""
    for name, values, log in (("bottom", x, log_x), ("left", y, log_y)):
        level = 2
        if log:
            v = values[np.isfinite(values) & (values > 0)]
            if v.size and np.log10(v.max() / v.min()) >= 0.8:
                level = 0  # DecadeAxis' labelled level only
        plot.getAxis(name).setStyle(maxTextLevel=level)


def _finite_for(values: np.ndarray, log: bool) -> np.ndarray:
    ok = np.isfinite(values)
    if log:
        ok &= values > 0
    return ok


class LabScanPlot(QWidget):
    """Measured output against one input, the model's curve or predictions over it, and the
    relative residuals (measured − model) / |measured| in a small plot below."""

    point_clicked = Signal(int)  # experiment index

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.layout_widget = pg.GraphicsLayoutWidget()
        self.layout_widget.setObjectName("labScanPlot")
        self.plot = self.layout_widget.addPlot(row=0, col=0, axisItems=_axes())
        self.residual_plot = self.layout_widget.addPlot(row=1, col=0, axisItems=_axes())
        styled_plot(self.plot, "Measurements", "input", "output")
        styled_plot(self.residual_plot, "", "input", "residual (rel.)")
        self.residual_plot.setXLink(self.plot)
        self.residual_plot.setMaximumHeight(150)
        self.layout_widget.ci.layout.setRowStretchFactor(0, 4)
        self.layout_widget.ci.layout.setRowStretchFactor(1, 1)
        for p in (self.plot, self.residual_plot):
            for axis in ("left", "bottom"):
                p.getAxis(axis).enableAutoSIPrefix(False)
        self.legend = self.plot.addLegend(offset=(8, 8), brush=pg.mkBrush(style.current().legend_fill),
                                          pen=pg.mkPen(style.current().legend_border))
        self.message = pg.TextItem("", color=style.current().muted, anchor=(0.5, 0.5))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.layout_widget)
        self._scatter: pg.PlotDataItem | None = None
        self.shown_points = 0
        self.model_shown = False
        self._last: tuple | None = None  # the arguments of the last show_data, to draw it again
        self.clear("Run experiments to see them here.")
        style.on_change(self._restyle)

    def _restyle(self, s: style.Style) -> None:
        """Theme or presentation mode changed: draw the same measurements again."""
        self.message.setColor(pg.mkColor(s.muted))
        if self._last is not None:
            args, kwargs = self._last
            self.show_data(*args, **kwargs)
        style.apply_view(self.layout_widget, s)

    def _set_residuals_visible(self, visible: bool) -> None:
        """The residual plot takes room only once there is a model to compare with."""
        self.residual_plot.setVisible(visible)
        self.layout_widget.ci.layout.setRowMaximumHeight(1, 150 if visible else 0)
        self.layout_widget.ci.layout.setRowStretchFactor(1, 1 if visible else 0)

    def clear(self, message: str = "") -> None:
        self._last = None
        self.plot.clear()
        self.residual_plot.clear()
        self._set_residuals_visible(False)
        self.legend.clear()
        self.legend.setVisible(False)  # an empty legend would show as a small empty box
        self._scatter = None
        self.shown_points = 0
        self.model_shown = False
        self.message.setText(message)
        if message:
            self.plot.addItem(self.message, ignoreBounds=True)
            self.message.setPos(0.5, 0.5)
            self.plot.setRange(xRange=(0, 1), yRange=(0, 1), padding=0)

    def show_data(self, x: Sequence[float], y: Sequence[float], *, x_label: str, y_label: str, log_x: bool = False,
                  log_y: bool = False, selected: int | None = None, model_x: np.ndarray | None = None,
                  model_y: np.ndarray | None = None, predicted: Sequence[float] | None = None) -> None:
        """Draw the measurements; ``model_x/model_y`` is a smooth model curve (other inputs held
        fixed), ``predicted`` the model at every measurement (always drawn as residuals)."""
        x = np.asarray(x, dtype=float)
        y = np.asarray(y, dtype=float)
        self.clear("")
        self._last = ((x, y), dict(x_label=x_label, y_label=y_label, log_x=log_x, log_y=log_y, selected=selected,
                                   model_x=model_x, model_y=model_y, predicted=predicted))
        s = style.current()
        self.plot.setLogMode(x=log_x, y=log_y)
        self.residual_plot.setLogMode(x=log_x, y=False)
        self.plot.setLabel("bottom", x_label)
        self.plot.setLabel("left", y_label)
        self.plot.setTitle(f"{y_label} against {x_label}", size=style.title_size())
        self.residual_plot.setLabel("bottom", x_label)
        index = np.arange(len(x))
        ok = _finite_for(x, log_x) & _finite_for(y, log_y)
        if not ok.any():
            self.clear("No measurement can be drawn on these axes"
                       + (" (log axes need positive values)." if (log_x or log_y) else "."))
            return
        # PlotDataItem (not a bare ScatterPlotItem) so that the plot's log mode applies to it.
        self._scatter = self.plot.plot(x[ok], y[ok], pen=None, symbol="o", symbolSize=style.size(9),
                                       symbolPen=pg.mkPen(*s.background[:3], 200),
                                       symbolBrush=pg.mkBrush(*s.blue, 220), data=list(index[ok]),
                                       name="measured")
        self._scatter.setZValue(10)  # measurements stay visible over the model
        self._scatter.sigPointsClicked.connect(self._on_clicked)
        self._scatter.scatter.opts["hoverable"] = True
        self._scatter.scatter.opts["tip"] = self._tip
        self.shown_points = int(ok.sum())
        _tidy_log_axes(self.plot, x[ok], y[ok], log_x, log_y)
        _tidy_log_axes(self.residual_plot, x[ok], np.zeros(int(ok.sum())), log_x, False)
        if model_x is not None and model_y is not None and len(model_x):
            mx, my = np.asarray(model_x, dtype=float), np.asarray(model_y, dtype=float)
            good = _finite_for(mx, log_x) & _finite_for(my, log_y)
            if good.any():
                self.plot.plot(mx[good], my[good], pen=style.pen(s.prediction, 2), name="hypothesis")
                self.model_shown = True
        if predicted is not None:
            p = np.asarray(predicted, dtype=float)
            good = ok & _finite_for(p, log_y)
            if good.any() and not self.model_shown:
                self.plot.plot(x[good], p[good], pen=None, symbol="x", symbolSize=style.size(10),
                               symbolPen=style.pen(s.prediction, 2), name="hypothesis")
                self.model_shown = True
            with np.errstate(all="ignore"):
                residual = (y - p) / np.abs(y)
            keep = ok & np.isfinite(residual)
            self._set_residuals_visible(True)
            if keep.any():
                self.residual_plot.plot(x[keep], residual[keep], pen=None, symbol="o", symbolSize=style.size(7),
                                        symbolPen=None, symbolBrush=pg.mkBrush(*s.blue, 220))
                self.residual_plot.addLine(y=0, pen=style.pen(s.identity, 1.5, style=Qt.PenStyle.DashLine))
        if selected is not None and 0 <= selected < len(x) and ok[selected]:
            self.plot.plot([x[selected]], [y[selected]], pen=None, symbol="o", symbolSize=style.size(17),
                           symbolPen=style.pen(s.prediction, 2.5), symbolBrush=pg.mkBrush(0, 0, 0, 0),
                           name="selected")
        self._place_legend(x[ok], y[ok])
        self.legend.setVisible(bool(self.legend.items))
        self.plot.enableAutoRange()
        self.residual_plot.enableAutoRange(axis="y")

    def _place_legend(self, x: np.ndarray, y: np.ndarray) -> None:
        """The legend goes in the top corner the data leave free: top right when the output
        falls along x (a force against distance), else top left."""
        order = np.argsort(x, kind="stable")
        falling = len(order) > 1 and y[order[0]] > y[order[-1]]
        if falling:
            self.legend.anchor(itemPos=(1, 0), parentPos=(1, 0), offset=(-8, 8))
        else:
            self.legend.anchor(itemPos=(0, 0), parentPos=(0, 0), offset=(8, 8))

    @staticmethod
    def _tip(x, y, data):
        return f"experiment {int(data) + 1}\n{x:.5g}, {y:.5g}"

    def _on_clicked(self, _item, points, *_args) -> None:
        if len(points):
            self.point_clicked.emit(int(points[0].data()))


class LabSeriesPlot(QWidget):
    """Recorded series of every experiment: the selected one in colour, the others faint."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.plot_widget = pg.PlotWidget(axisItems=_axes())
        self.plot_widget.setObjectName("labSeriesPlot")
        self.plot = styled_plot(self.plot_widget, "Recorded series", "time", "value")
        for axis in ("left", "bottom"):
            self.plot.getAxis(axis).enableAutoSIPrefix(False)
        self.legend = self.plot.addLegend(offset=(8, 8), brush=pg.mkBrush(style.current().legend_fill),
                                          pen=pg.mkPen(style.current().legend_border))
        self.message = pg.TextItem("", color=style.current().muted, anchor=(0.5, 0.5))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.plot_widget)
        self.curves_shown = 0
        self._last: tuple | None = None  # the arguments of the last show_series
        self.clear("Run an experiment to see its recorded series.")
        style.on_change(self._restyle)

    def _restyle(self, s: style.Style) -> None:
        self.message.setColor(pg.mkColor(s.muted))
        if self._last is not None:
            args, kwargs = self._last
            self.show_series(*args, **kwargs)
        style.apply_view(self.plot_widget, s)

    def clear(self, message: str = "") -> None:
        self._last = None
        self.plot.clear()
        self.legend.clear()
        self.legend.setVisible(False)  # an empty legend would show as a small empty box
        self.curves_shown = 0
        self.message.setText(message)
        if message:
            self.plot.addItem(self.message, ignoreBounds=True)
            self.message.setPos(0.5, 0.5)
            self.plot.setRange(xRange=(0, 1), yRange=(0, 1), padding=0)

    def show_series(self, curves: list[tuple[str, np.ndarray, np.ndarray, bool]], *, x_label: str, y_label: str,
                    log_x: bool = False, log_y: bool = False, title: str = "") -> None:
        """``curves``: (legend label, x, y, selected). Selected curves are drawn last, in colour."""
        self.clear("")
        self._last = ((curves,), dict(x_label=x_label, y_label=y_label, log_x=log_x, log_y=log_y, title=title))
        s = style.current()
        self.plot.setLogMode(x=log_x, y=log_y)
        self.plot.setLabel("bottom", x_label)
        self.plot.setLabel("left", y_label)
        self.plot.setTitle(title or f"{y_label} against {x_label}", size=style.title_size())
        drawn = 0
        others = [c for c in curves if not c[3]]
        chosen = [c for c in curves if c[3]]
        for i, (label, x, y, selected) in enumerate(others + chosen):
            x = np.asarray(x, dtype=float)
            y = np.asarray(y, dtype=float)
            n = min(len(x), len(y))
            x, y = x[:n], y[:n]
            ok = _finite_for(x, log_x) & _finite_for(y, log_y)
            if not ok.any():
                continue
            if selected:
                color = s.series[(i - len(others)) % len(s.series)]
                self.plot.plot(x[ok], y[ok], pen=style.pen(color, 2.5), symbol="o", symbolSize=style.size(6),
                               symbolPen=None, symbolBrush=pg.mkBrush(*color), name=label)
            else:
                self.plot.plot(x[ok], y[ok], pen=style.pen(s.faint, 1, alpha=140), symbol="o",
                               symbolSize=style.size(3), symbolPen=None, symbolBrush=pg.mkBrush(*s.faint[:3], 140),
                               name=label if i == 0 else None)
            drawn += 1
        self.curves_shown = drawn
        self.legend.setVisible(bool(self.legend.items))
        if curves:
            all_x = np.concatenate([np.asarray(c[1], dtype=float).ravel() for c in curves])
            all_y = np.concatenate([np.asarray(c[2], dtype=float).ravel() for c in curves])
            _tidy_log_axes(self.plot, all_x, all_y, log_x, log_y)
        if not drawn:
            self.clear("Nothing to draw: the series are empty or not finite"
                       + (" (log axes need positive values)." if (log_x or log_y) else "."))
            return
        self.plot.enableAutoRange()
