"""Fit viewer: predicted vs true with the identity line, residuals, and for dynamical tasks the
target and the prediction against time. Train, in-domain and out-of-domain points are
coloured apart, so a model that only fits the training range is seen at a glance."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from .style import IDENTITY_COLOR, PREDICTION_COLOR, TRUTH_COLOR, split_brush, split_label, styled_plot

#: Points drawn per split at most (pyqtgraph stays smooth; the metrics use every point).
MAX_POINTS = 4000


@dataclass
class FitData:
    """Everything the viewer draws; built off the GUI thread."""

    target: str  # target variable name
    splits: dict[str, tuple[np.ndarray, np.ndarray]]  # split -> (y_true, y_pred)
    time: dict[str, np.ndarray] | None = None  # split -> time values (dynamical tasks)
    time_name: str = "t"
    title: str = ""


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
        self.current: FitData | None = None
        self._set_time_visible(False)

    def _set_time_visible(self, visible: bool) -> None:
        self.time_plot.setVisible(visible)
        self.layout_widget.ci.layout.setRowStretchFactor(1, 1 if visible else 0)
        self.layout_widget.ci.layout.setRowMaximumHeight(1, 10_000 if visible else 0)

    def clear(self, message: str = "Run a method or pick a run to see its fit.") -> None:
        self.current = None
        for plot in (self.scatter_plot, self.residual_plot, self.time_plot):
            plot.clear()
        self.header.setText(message)
        self._set_time_visible(False)

    def show_fit(self, fit: FitData) -> None:
        self.clear(fit.title or "Fit")
        self.current = fit
        lo, hi = np.inf, -np.inf
        for split, (y_true, y_pred) in fit.splits.items():
            idx = _thin(len(y_true))
            yt, yp = y_true[idx], y_pred[idx]
            finite = np.isfinite(yp)
            brush = split_brush(split)
            name = split_label(split)
            self.scatter_plot.plot(yt[finite], yp[finite], pen=None, symbol="o", symbolSize=4,
                                   symbolPen=None, symbolBrush=brush, name=name)
            self.residual_plot.plot(yt[finite], (yp - yt)[finite], pen=None, symbol="o", symbolSize=4,
                                    symbolPen=None, symbolBrush=brush)
            if yt.size:
                lo, hi = min(lo, float(np.min(yt))), max(hi, float(np.max(yt)))
        if np.isfinite(lo) and np.isfinite(hi):
            pen = pg.mkPen(IDENTITY_COLOR, width=2, style=pg.QtCore.Qt.PenStyle.DashLine)
            self.scatter_plot.plot([lo, hi], [lo, hi], pen=pen, name="identity")
            self.residual_plot.addLine(y=0, pen=pen)
        self.scatter_plot.setLabel("bottom", f"true {fit.target}")
        self.scatter_plot.setLabel("left", f"predicted {fit.target}")
        self.residual_plot.setLabel("bottom", f"true {fit.target}")
        if fit.time:
            self._set_time_visible(True)
            self._draw_time(fit)

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
        self.time_plot.plot(t, yt, pen=pg.mkPen(TRUTH_COLOR, width=2), name=f"true {fit.target}")
        self.time_plot.plot(t, np.where(np.isfinite(yp), yp, np.nan), connect="finite",
                            pen=pg.mkPen(PREDICTION_COLOR, width=2, style=pg.QtCore.Qt.PenStyle.DashLine),
                            name="model")
        ood = fit.time.get("test_ood")
        if ood is not None and ood.size:
            region = pg.LinearRegionItem(values=(float(np.min(ood)), float(np.max(ood))), movable=False,
                                         brush=pg.mkBrush(230, 159, 0, 40))
            region.setToolTip("out-of-domain test range")
            region.setZValue(-10)
            self.time_plot.addItem(region)
            label = pg.TextItem("OOD", color=(170, 110, 0), anchor=(0, 0))
            label.setPos(float(np.min(ood)), float(np.nanmax(yt)))
            self.time_plot.addItem(label)
        self.time_plot.setLabel("bottom", fit.time_name)
        self.time_plot.setLabel("left", fit.target)

    def plotted_point_count(self) -> int:
        """Points drawn in the predicted-vs-true plot (for tests and the status bar)."""
        total = 0
        for item in self.scatter_plot.listDataItems():
            x, _ = item.getData()
            if x is not None and item.opts.get("symbol") is not None:
                total += len(x)
        return total
