"""Trajectories of a system of ODEs: for every state variable, the observed series (points) and
the model's simulation from the same initial condition (line), for the fitting and the
out-of-domain initial conditions side by side; a phase portrait (x₀ against x₁) for
two-dimensional systems. The R² of each simulation is in the plot titles."""

from __future__ import annotations


import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from engine.fits import TrajectoryData  # noqa: F401 (the data this view draws)

from . import style
from .style import split_brush, split_label

#: Column order of the panels.
SPLITS = ("train", "test_ood")


def _fmt_r2(value) -> str:
    if value is None:
        return ""
    if not np.isfinite(value):
        return " · simulation failed"
    return f" · R² {value:.3f}"


class TrajectoryView(QWidget):
    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.header = QLabel("Pick a coupled-ODE task and run a method to see its trajectories.")
        self.header.setObjectName("trajectoryHeader")
        self.header.setWordWrap(True)
        self.canvas = pg.GraphicsLayoutWidget()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.header)
        layout.addWidget(self.canvas, 1)
        self.data: TrajectoryData | None = None
        self.plots: dict[tuple[str, str], pg.PlotItem] = {}
        self.phase: pg.PlotItem | None = None
        style.on_change(self._restyle)

    def _restyle(self, s: style.Style) -> None:
        """Theme or presentation mode changed: draw the trajectories again in the new style."""
        if self.data is not None:
            self.set_data(self.data)
        style.apply_view(self.canvas, s)

    def clear(self, message: str = "") -> None:
        self.canvas.clear()
        self.plots.clear()
        self.phase = None
        self.data = None
        self.header.setText(message or "Pick a coupled-ODE task and run a method to see its trajectories.")

    def set_data(self, data: TrajectoryData) -> None:
        self.canvas.clear()
        self.plots.clear()
        self.data = data
        notes = "; ".join(f"{split_label(k)}: {v}" for k, v in data.errors.items())
        self.header.setText(data.title + (f" — {notes}" if notes else ""))
        splits = [s for s in SPLITS if s in data.splits]
        for row, name in enumerate(data.states):
            for col, split in enumerate(splits):
                t, observed, simulated = data.splits[split]
                title = f"{name}: {split_label(split)}" + (_fmt_r2(data.r2.get(split)) if row == 0 else "")
                plot = self.canvas.addPlot(row=row, col=col)
                style.styled_plot(plot, title, "t", name)
                if row == 0 and col == 0:
                    style.apply_legend(plot.addLegend(offset=(5, 5)))
                plot.plot(t, observed[:, row], pen=None, symbol="o", symbolSize=style.size(4), symbolPen=None,
                          symbolBrush=split_brush(split, 170), name="observed")
                if simulated is not None and np.isfinite(simulated[:, row]).any():
                    plot.plot(t, simulated[:, row], pen=style.pen(style.current().prediction, 2), name="model")
                self.plots[(name, split)] = plot
        if len(data.states) == 2:
            phase = self.canvas.addPlot(row=0, col=len(splits), rowspan=2)
            style.styled_plot(phase, "Phase portrait", data.states[0], data.states[1])
            for split in splits:
                _, observed, simulated = data.splits[split]
                phase.plot(observed[:, 0], observed[:, 1], pen=None, symbol="o", symbolSize=style.size(4),
                           symbolPen=None, symbolBrush=split_brush(split, 170))
                if simulated is not None and np.isfinite(simulated).all():
                    phase.plot(simulated[:, 0], simulated[:, 1], pen=style.pen(style.current().prediction, 2))
            self.phase = phase

    def curve_count(self) -> int:
        """Drawn model curves (for tests)."""
        items = list(self.plots.values()) + ([self.phase] if self.phase is not None else [])
        return sum(1 for p in items for c in p.listDataItems() if c.opts.get("pen") is not None
                   and c.opts.get("symbol") is None)
