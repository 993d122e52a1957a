"""Compare two stored runs side by side: loss curves on one plot, the headline metrics with
the better value highlighted, and both final Pareto fronts.

The dialog only draws what it is given: the window passes a ``fetch(run_id)`` function that
reads a run from the store (:class:`ComparedRun`), and fills in the candidates' test metrics
through its scorers (:attr:`RunCompare.pair_shown` tells it when).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from viewers.pareto_plot import LossAxis
from viewers.style import styled_plot

from .candidate_table import CandidateTable
from .tips import explain_headers

LOSS_FLOOR = 1e-16
#: Run A and run B (Okabe-Ito blue and vermillion).
COLORS = ((0, 114, 178), (213, 94, 0))
BETTER_BRUSH = QBrush(QColor(214, 240, 220))

def _split(split: str, key: str):
    return lambda run: (run.record.metrics.get(split) or {}).get(key)


def _sa(run):
    metrics = run.record.metrics or {}
    value = metrics.get("sa", (metrics.get("id") or {}).get("sa"))
    if value is None:  # what a run stores: metrics["symbolic"]["equivalent"] (True / False / None)
        value = (metrics.get("symbolic") or {}).get("equivalent")
    return None if value is None else float(value)


#: (label, getter, which value is better: "low", "high" or None, format)
METRIC_ROWS: tuple[tuple[str, Callable, str | None, str], ...] = (
    ("Method", lambda run: run.record.method, None, "text"),
    ("Status", lambda run: run.record.status, None, "text"),
    ("Final model", lambda run: run.record.expression, None, "text"),
    ("Complexity", lambda run: run.record.complexity, None, "int"),  # a trade-off, not a score
    ("Train NMSE", _split("train", "nmse"), "low", "num"),
    ("ID NMSE", _split("id", "nmse"), "low", "num"),
    ("OOD NMSE", _split("ood", "nmse"), "low", "num"),
    ("Acc₀.₁ ID", _split("id", "acc_0.1"), "high", "acc"),
    ("Acc₀.₁ OOD", _split("ood", "acc_0.1"), "high", "acc"),
    ("SA", _sa, "high", "acc"),
    ("Seconds", lambda run: run.record.seconds, None, "secs"),
)


@dataclass
class ComparedRun:
    """One side of the comparison, read from the store by the window."""

    record: Any  # engine.store.RunRecord
    progress: list[dict] = field(default_factory=list)  # progress events (iteration, best_loss, elapsed)
    front: list[dict] = field(default_factory=list)  # the last Pareto report
    variables: list[str] | None = None  # the task's inputs, when the task is known
    target: str | None = None


def _fmt(value, kind: str) -> str:
    if value is None:
        return "—"
    if kind == "text":
        return str(value)
    if kind == "int":
        return str(int(value))
    if kind == "acc":
        return "yes" if value >= 1 else "no" if value <= 0 else f"{value:.2f}"
    if kind == "secs":
        return f"{value:.1f} s"
    if isinstance(value, float) and math.isinf(value):
        return "∞"
    return f"{value:.4g}"


def run_label(record) -> str:
    started = time.strftime("%m-%d %H:%M", time.localtime(record.started_at))
    task = record.task_id.rsplit("/", 1)[-1]
    return f"{record.id} · {record.method} · {task} · {started}"


class _Side(QGroupBox):
    def __init__(self, letter: str, color, parent=None):
        super().__init__(f"Run {letter}", parent)
        self.letter = letter
        self.color = color
        self.combo = QComboBox()
        self.combo.setMinimumContentsLength(28)
        self.combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.swatch = QLabel("■")
        self.swatch.setStyleSheet(f"color: rgb{tuple(color)}; font-size: 16pt;")
        self.table = CandidateTable()
        top = QHBoxLayout()
        top.addWidget(self.swatch)
        top.addWidget(self.combo, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.table)
        self.run: ComparedRun | None = None


class RunCompare(QDialog):
    pair_shown = Signal()  # both sides show new runs (the window starts scoring their fronts)

    def __init__(self, fetch: Callable[[str], ComparedRun | None], choices: list, first: str | None = None,
                 second: str | None = None, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Compare runs")
        self.resize(1300, 820)
        self.fetch = fetch
        self.choices = list(choices)
        self.sides = [_Side("A", COLORS[0]), _Side("B", COLORS[1])]

        self.x_axis = QComboBox()
        self.x_axis.addItems(["iteration", "seconds"])
        self.x_axis.setToolTip("Horizontal axis of the loss curves")
        self.plot_widget = pg.PlotWidget(axisItems={"left": LossAxis("left")})
        self.plot = styled_plot(self.plot_widget, "Best training loss", "iteration", "NMSE (train, log scale)")
        self.plot.setLogMode(x=False, y=True)
        self.plot.getAxis("left").enableAutoSIPrefix(False)
        self.legend = self.plot.addLegend(offset=(-8, 8))
        self.curves = [self.plot.plot([], [], pen=pg.mkPen(c, width=2), name=f"run {s.letter}")
                       for c, s in zip(COLORS, self.sides)]

        self.metrics = QTableWidget(len(METRIC_ROWS), 2)
        self.metrics.setVerticalHeaderLabels([r[0] for r in METRIC_ROWS])
        explain_headers(self.metrics, Qt.Orientation.Vertical)
        self.metrics.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.metrics.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.metrics.setWordWrap(False)
        self.metrics.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.metrics.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.metrics.setToolTip("The better value of each metric is highlighted")

        plot_box = QWidget()
        plot_layout = QVBoxLayout(plot_box)
        plot_layout.setContentsMargins(0, 0, 0, 0)
        axis_row = QHBoxLayout()
        axis_row.addStretch(1)
        axis_row.addWidget(QLabel("x axis:"))
        axis_row.addWidget(self.x_axis)
        plot_layout.addLayout(axis_row)
        plot_layout.addWidget(self.plot_widget)
        top = QSplitter(Qt.Orientation.Horizontal)
        top.addWidget(plot_box)
        top.addWidget(self.metrics)
        top.setSizes([760, 460])
        bottom = QSplitter(Qt.Orientation.Horizontal)
        for side in self.sides:
            bottom.addWidget(side)
        whole = QSplitter(Qt.Orientation.Vertical)
        whole.addWidget(top)
        whole.addWidget(bottom)
        whole.setStretchFactor(0, 2)
        whole.setStretchFactor(1, 3)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QGridLayout(self)
        layout.addWidget(whole, 0, 0)
        layout.addWidget(buttons, 1, 0)

        for side in self.sides:
            for record in self.choices:
                side.combo.addItem(run_label(record), record.id)
        ids = [r.id for r in self.choices]
        first = first if first in ids else (ids[0] if ids else None)
        second = second if second in ids else next((i for i in ids if i != first), first)
        for side, run_id in zip(self.sides, (first, second)):
            if run_id is not None:
                side.combo.setCurrentIndex(ids.index(run_id))
            side.combo.currentIndexChanged.connect(self._on_choice)
        self.x_axis.currentIndexChanged.connect(self._draw_curves)
        self._on_choice()

    # ------------------------------------------------------------------ content

    def run_ids(self) -> list[str | None]:
        return [s.run.record.id if s.run else None for s in self.sides]

    def show_pair(self, first: str, second: str) -> None:
        ids = [r.id for r in self.choices]
        for side, run_id in zip(self.sides, (first, second)):
            side.combo.blockSignals(True)
            side.combo.setCurrentIndex(ids.index(run_id))
            side.combo.blockSignals(False)
        self._on_choice()

    def _on_choice(self) -> None:
        for side in self.sides:
            run_id = side.combo.currentData()
            run = self.fetch(run_id) if run_id else None
            side.run = run
            if run is None:
                side.table.clear()
                continue
            side.table.set_task_context(run.variables, run.target)
            side.table.set_front(run.front, chosen=run.record.expression)
            side.setTitle(f"Run {side.letter}: {run.record.id} ({run.record.method})")
        self._draw_curves()
        self._fill_metrics()
        self.pair_shown.emit()

    def _draw_curves(self) -> None:
        by_time = self.x_axis.currentText() == "seconds"
        self.plot.setLabel("bottom", "seconds" if by_time else "iteration")
        self.legend.clear()
        for side, curve in zip(self.sides, self.curves):
            run = side.run
            if run is None:
                curve.setData([], [])
                continue
            pts = [(p.get("elapsed") if by_time else p.get("iteration"), p.get("best_loss")) for p in run.progress]
            pts = [(x, max(float(y), LOSS_FLOOR)) for x, y in pts
                   if x is not None and y is not None and math.isfinite(float(y))]
            x = np.array([p[0] for p in pts], dtype=float)
            y = np.array([p[1] for p in pts], dtype=float)
            curve.setData(x, y)
            self.legend.addItem(curve, f"{side.letter}: {run.record.id} ({run.record.method})")
        self.plot.enableAutoRange()

    def _fill_metrics(self) -> None:
        self.metrics.setHorizontalHeaderLabels([f"Run {s.letter}" for s in self.sides])
        for c, side in enumerate(self.sides):
            if side.run:
                self.metrics.horizontalHeaderItem(c).setToolTip(run_label(side.run.record))
        for r, (label, getter, better, kind) in enumerate(METRIC_ROWS):
            values = []
            for c, side in enumerate(self.sides):
                value = getter(side.run) if side.run else None
                values.append(value)
                item = QTableWidgetItem(_fmt(value, kind))
                item.setTextAlignment(Qt.AlignmentFlag.AlignCenter if kind != "text" else
                                      Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
                if kind == "text" and value:
                    item.setToolTip(str(value))
                self.metrics.setItem(r, c, item)
            # SA appears only when a run recorded it.
            self.metrics.setRowHidden(r, label == "SA" and all(v is None for v in values))
            for c in self.better_columns(values, better):
                item = self.metrics.item(r, c)
                item.setBackground(BETTER_BRUSH)
                font = QFont()
                font.setBold(True)
                item.setFont(font)

    @staticmethod
    def better_columns(values: list, better: str | None) -> list[int]:
        """Columns holding the better of two values (none on a tie or a missing value)."""
        if better is None or any(v is None for v in values):
            return []
        a, b = (float(v) for v in values)
        if math.isnan(a) or math.isnan(b) or a == b:
            return []
        low = 0 if a < b else 1
        return [low] if better == "low" else [1 - low]

    def highlighted(self) -> dict[str, int]:
        """Metric label -> the highlighted column (for tests)."""
        out = {}
        for r, (label, *_rest) in enumerate(METRIC_ROWS):
            for c in range(2):
                item = self.metrics.item(r, c)
                if item is not None and item.font().bold():
                    out[label] = c
        return out
