"""Live loss over iterations (pyqtgraph, log y-axis), redrawn at most 20 times a second."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QLabel, QSizePolicy, QVBoxLayout, QWidget

from . import style
from .settle import PaintOnce
from .style import styled_plot

#: Losses are clipped to this floor so an exact fit (loss 0) still shows on a log axis.
LOSS_FLOOR = 1e-16


class LossPlot(QWidget):
    """Best training loss (NMSE) against iteration."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.plot_widget = pg.PlotWidget()
        self.plot = styled_plot(self.plot_widget, "Best training loss", "iteration", "NMSE (train, log scale)")
        self.plot.setLogMode(x=False, y=True)
        # On a log axis pyqtgraph's automatic "(x1e-09)" scaling mixes with decade labels and
        # misleads; the decades alone say it.
        self.plot.getAxis("left").enableAutoSIPrefix(False)
        self.curve = self.plot.plot([], [], pen=style.pen(style.current().prediction, 2))
        self.summary = QLabel("No run yet.")
        self.summary.setObjectName("lossSummary")
        # Its text changes with every run shown and every redraw of a live run; as a plain label
        # its width was the dock's minimum width, so each new text relaid out and repainted the
        # whole window (and jolted the panels sideways). Ignored: it takes the width it is given,
        # and wraps onto a second line in a narrow dock.
        self.summary.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.summary.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.plot_widget)
        layout.addWidget(self.summary)
        self._x: list[float] = []
        self._y: list[float] = []
        self._dirty = False
        # Painted once per change, on a turn after the one that made it (see viewers/settle.py).
        self._paint = PaintOnce(self.plot_widget, (self.plot,))
        self._timer = QTimer(self)
        self._timer.setInterval(50)  # at most ~20 redraws per second
        self._timer.timeout.connect(self._redraw)
        self._timer.start()
        self.clear()
        style.on_change(self._restyle)

    def _restyle(self, s: style.Style) -> None:
        """Theme or presentation mode changed: new pen, axes and background."""
        self.curve.setPen(style.pen(s.prediction, 2))
        style.apply_view(self.plot_widget, s)

    def clear(self) -> None:
        self._x, self._y = [], []
        self.curve.setData([], [])
        # An empty log axis would show the mantissas 2…9 of a single decade; show decades
        # until data arrive (the view auto-ranges again on the first point).
        self.plot.setRange(xRange=(0, 10), yRange=(-6, 0), padding=0)
        self.plot.enableAutoRange()
        self.summary.setText("No run yet.")
        self._dirty = False
        self._paint.soon()  # settled over the next turns (a run's start), then painted once

    def append(self, iteration: float, loss: float) -> None:
        if not np.isfinite(loss):
            return
        self._x.append(float(iteration))
        self._y.append(max(float(loss), LOSS_FLOOR))
        self._dirty = True

    def set_series(self, iterations, losses) -> None:
        self.clear()  # an empty series must not leave the previous run's curve on screen
        for i, loss in zip(iterations, losses):
            self.append(i, loss)
        self._redraw()

    def point_count(self) -> int:
        return len(self._x)

    def data(self) -> tuple[np.ndarray, np.ndarray]:
        return np.asarray(self._x), np.asarray(self._y)

    def _redraw(self) -> None:
        if not self._dirty:
            return
        self._dirty = False
        self.curve.setData(self._x, self._y)
        self._paint.soon()
        if self._x:
            self.summary.setText(f"iteration {int(self._x[-1])}: best training NMSE {self._y[-1]:.4g}")
