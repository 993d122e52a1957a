"""The Robustness dialog: a method's recovery rate along one of ERBench's axes.

Pick a few base tasks, an axis (sample size, sampling distribution, domain, noise,
dimensionality) and its levels, a method, seconds per run and a number of seeds; Start runs
:func:`engine.robustness.sweep` on a background thread through :mod:`app.worker`'s generic job,
the same way the main window's run controller does, so the GUI thread never runs a search. The
plot and the table fill as runs finish; Stop cancels the current run and ends the sweep. Runs are
stored in the run store, and a sweep started again reuses the runs it already has.
"""

from __future__ import annotations

import math
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSplitter,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from engine import methods as m
from engine import robustness
from engine.store import RunStore
from widgets.progress import ProgressBar
from widgets.tips import explain_headers
from engine.tasks import variants
from viewers.robustness_plot import RobustnessPlot

#: More base tasks than this make a sweep too long to be useful interactively.
MAX_BASE_TASKS = 10


def _fmt_rate(rate) -> str:
    return "–" if rate is None else f"{rate:.0%}"


def _fmt_nmse(value) -> str:
    if value is None:
        return "–"
    if math.isinf(value):
        return "inf"
    return f"{value:.3g}"


class RobustnessView(QDialog):
    """Dialog running one robustness sweep at a time."""

    sweep_finished = Signal(object)  # engine.robustness.SweepFinished

    def __init__(self, db_path: Path, tasks=None, parent: QWidget | None = None, selected: list[str] | None = None):
        super().__init__(parent)
        self.setWindowTitle("Robustness")
        self.resize(1100, 700)
        self.db_path = Path(db_path)
        self.job = None
        self.context: m.RunContext | None = None
        self.results: list[robustness.SweepRun] = []
        self.levels: list[str] = []
        self.last_finished: robustness.SweepFinished | None = None
        self._tasks: dict[str, object] = {}

        # --- choices
        self.filter = QLineEdit()
        self.filter.setPlaceholderText("Filter tasks…")
        self.filter.setClearButtonEnabled(True)
        self.task_list = QListWidget()
        self.task_list.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.task_list.setToolTip(f"Tick up to {MAX_BASE_TASKS} base tasks (function tasks of any suite)")
        self.axis_box = QComboBox()
        for axis in variants.AXES:
            self.axis_box.addItem(variants.AXIS_LABELS[axis], axis)
        self.level_list = QListWidget()
        self.level_list.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.level_list.setMaximumHeight(150)
        self.level_note = QLabel("")
        self.level_note.setWordWrap(True)
        self.method_box = QComboBox()
        for name in m.method_names():
            self.method_box.addItem(m.get_method(name).label, name)
        self.seconds = QDoubleSpinBox()
        self.seconds.setRange(0.5, 3600.0)
        self.seconds.setDecimals(1)
        self.seconds.setValue(10.0)
        self.seconds.setSuffix(" s")
        self.seeds = QSpinBox()
        self.seeds.setRange(1, 20)
        self.seeds.setValue(1)
        self.seeds.setToolTip("Runs per task and level, with seeds 0, 1, …")
        self.start_button = QPushButton("Start")
        self.start_button.setDefault(True)
        self.stop_button = QPushButton("Stop")
        self.stop_button.setEnabled(False)
        self.progress = ProgressBar()
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.status = QLabel("Choose base tasks, an axis and its levels, then Start.")
        self.status.setWordWrap(True)

        form = QFormLayout()
        form.addRow("Axis", self.axis_box)
        form.addRow("Levels", self.level_list)
        form.addRow("", self.level_note)
        form.addRow("Method", self.method_box)
        form.addRow("Time per run", self.seconds)
        form.addRow("Seeds", self.seeds)
        buttons = QHBoxLayout()
        buttons.addWidget(self.start_button)
        buttons.addWidget(self.stop_button)
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(QLabel("Base tasks"))
        left_layout.addWidget(self.filter)
        left_layout.addWidget(self.task_list, 1)
        left_layout.addLayout(form)
        left_layout.addLayout(buttons)
        left_layout.addWidget(self.progress)
        left_layout.addWidget(self.status)

        # --- results
        self.plot = RobustnessPlot()
        self.table = QTableWidget(0, 5)
        self.table.setHorizontalHeaderLabels(["Level", "Runs", "Recovered", "Rate", "Median NMSE (test ID)"])
        explain_headers(self.table)
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        right = QSplitter(Qt.Orientation.Vertical)
        right.addWidget(self.plot)
        right.addWidget(self.table)
        right.setSizes([450, 200])

        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(left)
        splitter.addWidget(right)
        splitter.setSizes([380, 720])
        layout = QVBoxLayout(self)
        layout.addWidget(splitter)

        self.filter.textChanged.connect(self._apply_filter)
        self.axis_box.currentIndexChanged.connect(self._axis_changed)
        self.start_button.clicked.connect(self.start)
        self.stop_button.clicked.connect(self.stop)
        self._axis_changed()
        if tasks is not None:
            self.set_tasks(tasks, selected)

    # ------------------------------------------------------------------ choices

    def set_tasks(self, tasks, selected: list[str] | None = None) -> None:
        """Offer ``tasks`` (function tasks, variants left out) as base tasks."""
        chosen = set(selected or []) | set(self.selected_task_ids())
        self.task_list.clear()
        self._tasks = {}
        for task in tasks:
            if task.kind != "function" or task.id.startswith(variants.PREFIX + "/"):
                continue
            self._tasks[task.id] = task
            item = QListWidgetItem(task.id)
            item.setToolTip(task.title)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked if task.id in chosen else Qt.CheckState.Unchecked)
            self.task_list.addItem(item)
        self._apply_filter(self.filter.text())

    def select_tasks(self, task_ids) -> None:
        wanted = set(task_ids)
        for i in range(self.task_list.count()):
            item = self.task_list.item(i)
            item.setCheckState(Qt.CheckState.Checked if item.text() in wanted else Qt.CheckState.Unchecked)

    def selected_task_ids(self) -> list[str]:
        return [self.task_list.item(i).text() for i in range(self.task_list.count())
                if self.task_list.item(i).checkState() == Qt.CheckState.Checked]

    def _apply_filter(self, text: str) -> None:
        needle = text.strip().lower()
        for i in range(self.task_list.count()):
            item = self.task_list.item(i)
            item.setHidden(bool(needle) and needle not in item.text().lower())

    def set_axis(self, axis: str) -> None:
        self.axis_box.setCurrentIndex(self.axis_box.findData(axis))

    def axis(self) -> str:
        return self.axis_box.currentData()

    def _axis_changed(self, *_args) -> None:
        axis = self.axis()
        self.level_list.clear()
        grouping = axis == "dimensionality"
        for level in variants.LEVELS[axis]:
            item = QListWidgetItem(level)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked)
            self.level_list.addItem(item)
        self.level_list.setEnabled(not grouping)
        self.level_note.setText(
            "Dimensionality groups the chosen tasks by their number of inputs; it does not change them."
            if grouping else
            {"sample_size": "Training rows (uniform, no noise).",
             "distribution": "Uniform, or ERBench's clipped mixture of uniform and normal parts.",
             "domain": "Training box moved up by half its width, halved, or doubled.",
             "noise": "Relative Gaussian noise on the training target: level × RMS(y)."}[axis]
        )

    def set_levels(self, levels) -> None:
        wanted = {str(lv) for lv in levels}
        for i in range(self.level_list.count()):
            item = self.level_list.item(i)
            item.setCheckState(Qt.CheckState.Checked if item.text() in wanted else Qt.CheckState.Unchecked)

    def selected_levels(self) -> list[str]:
        return [self.level_list.item(i).text() for i in range(self.level_list.count())
                if self.level_list.item(i).checkState() == Qt.CheckState.Checked]

    # ------------------------------------------------------------------ running

    def is_running(self) -> bool:
        return self.job is not None and self.job.is_running()

    def start(self) -> None:
        if self.is_running():
            return
        from app.worker import start_job

        ids = self.selected_task_ids()
        if not ids:
            self.status.setText("Tick at least one base task.")
            return
        if len(ids) > MAX_BASE_TASKS:
            self.status.setText(f"Tick at most {MAX_BASE_TASKS} base tasks (a sweep runs every task at every level).")
            return
        axis = self.axis()
        levels = None if axis == "dimensionality" else self.selected_levels()
        if levels is not None and not levels:
            self.status.setText("Tick at least one level.")
            return
        tasks = [self._tasks[i] for i in ids]
        method = self.method_box.currentData()
        seconds = float(self.seconds.value())
        seeds = list(range(self.seeds.value()))
        self.context = context = m.RunContext()
        self.results, self.last_finished = [], None
        self.levels = list(levels or [])
        self.plot.set_axis(variants.AXIS_LABELS[axis], self.levels, self.method_box.currentText())
        self._show_rows(robustness.summarize([], self.levels))
        db_path = self.db_path

        def produce():
            # The worker thread opens its own store connection (SQLite connections are per thread).
            store = RunStore(db_path)
            try:
                yield from robustness.sweep(tasks, axis, method, store, levels=levels, seeds=seeds,
                                            seconds=seconds, context=context)
            finally:
                store.close()

        self.job = start_job(produce, name="robustness")
        self.job.item.connect(self._on_item)
        self.job.failed.connect(self._on_failed)
        self.job.finished.connect(self._on_job_finished)
        self.start_button.setEnabled(False)
        self.stop_button.setEnabled(True)
        self.status.setText("Preparing the variants…")

    def stop(self) -> None:
        if self.context is not None:
            self.context.cancel()
            self.status.setText("Stopping…")

    def shutdown(self, msecs: int = 10000) -> None:
        """Cancel a running sweep and wait for its thread (window closing)."""
        if self.is_running():
            self.stop()
            self.job.wait(msecs)

    def _on_item(self, item) -> None:
        if isinstance(item, robustness.SweepStarted):
            self.levels = list(item.levels)
            self.plot.set_axis(variants.AXIS_LABELS[item.axis], self.levels, self.method_box.currentText())
            self.progress.setRange(0, max(item.total, 1))
            self.progress.setValue(0)
            self._show_rows(robustness.summarize([], self.levels))
        elif isinstance(item, robustness.SweepRunStarted):
            self.status.setText(f"Run {item.index + 1} of {item.total}: {item.task_id} (seed {item.seed})")
        elif isinstance(item, robustness.SweepRun):
            self.results.append(item)
            self.progress.setValue(len(self.results))
            rows = robustness.summarize(self.results, self.levels)
            self.plot.set_rows(rows)
            self._show_rows(rows)
        elif isinstance(item, robustness.SweepFinished):
            self.last_finished = item
            self.plot.set_rows(item.rows)
            self._show_rows(item.rows)
            done = sum(r.runs for r in item.rows)
            self.status.setText(("Stopped" if item.cancelled else "Finished") + f": {done} run(s) counted.")
            self.sweep_finished.emit(item)

    def _show_rows(self, rows) -> None:
        self.table.setRowCount(len(rows))
        for r, row in enumerate(rows):
            cells = [row.level, str(row.runs), str(row.recovered), _fmt_rate(row.rate), _fmt_nmse(row.median_nmse)]
            for c, text in enumerate(cells):
                cell = QTableWidgetItem(text)
                if c:
                    cell.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(r, c, cell)

    def _on_failed(self, message: str) -> None:
        self.status.setText("The sweep failed: " + message.split("\n", 1)[0])

    def _on_job_finished(self) -> None:
        self.job = None
        self.start_button.setEnabled(True)
        self.stop_button.setEnabled(False)

    def closeEvent(self, event) -> None:
        self.shutdown()
        super().closeEvent(event)
