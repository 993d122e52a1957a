"""Run history: past runs from the store, newest first; selecting one reopens it, selecting
two (Ctrl/Shift-click) and pressing Compare opens them side by side."""

from __future__ import annotations

import math
import time

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMenu,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from widgets.tips import explain_headers

_COLUMNS = ("Started", "Task", "Method", "Status", "NMSE ID", "NMSE OOD", "SA", "Model")

#: Symbolic accuracy in a cell, and its sort key (found first, then undecided, not found, unchecked).
_SA_CELLS = {True: ("✓", 0), None: ("?", 1), False: ("✗", 2)}
RUN_ID_ROLE = Qt.ItemDataRole.UserRole + 1


class _SortItem(QTableWidgetItem):
    """Sorts by a hidden key (numbers as numbers, start time as time)."""

    def __init__(self, text: str, key):
        super().__init__(text)
        self.key = key

    def __lt__(self, other):
        if isinstance(other, _SortItem):
            return self.key < other.key
        return super().__lt__(other)


def _fmt(value) -> str:
    if value is None:
        return "—"
    if isinstance(value, float) and math.isinf(value):
        return "∞"
    return f"{value:.3g}"


class RunHistory(QWidget):
    run_selected = Signal(str)
    compare_requested = Signal(str, str)  # two run ids, in table order
    runs_changed = Signal()  # set_runs showed a new list (statuses may have changed)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.only_task = QCheckBox("Only the selected task")
        self.only_task.setToolTip("Show only runs of the task selected in the browser")
        self.count = QLabel("")
        self.compare_button = QPushButton("Compare")
        self.compare_button.setToolTip("Select two runs (Ctrl+click) to compare them side by side")
        self.compare_button.setEnabled(False)
        self.compare_button.clicked.connect(self._request_compare)
        top = QHBoxLayout()
        top.addWidget(self.only_task)
        top.addStretch(1)
        top.addWidget(self.count)
        top.addWidget(self.compare_button)
        self.table = QTableWidget(0, len(_COLUMNS))
        self.table.setHorizontalHeaderLabels(_COLUMNS)
        explain_headers(self.table)  # a sentence on each metric column
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.table.customContextMenuRequested.connect(self._context_menu)
        self.table.setSortingEnabled(True)
        self.table.setWordWrap(False)
        header = self.table.horizontalHeader()
        for col in range(len(_COLUMNS) - 1):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(len(_COLUMNS) - 1, QHeaderView.ResizeMode.Stretch)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addLayout(top)
        layout.addWidget(self.table)
        self._records = []
        #: Extra entries of the right-click menu: features (the demo replay) add QActions here.
        self.context_actions: list = []
        self.table.itemSelectionChanged.connect(self._on_selection)

    def set_runs(self, records, keep_selection: bool = True) -> None:
        """``records`` are engine RunRecords, newest first."""
        records = list(records)
        if keep_selection and self._update_in_place(records):
            return
        selected = self.selected_run_ids() if keep_selection else []
        self._records = records
        self.table.blockSignals(True)
        self.table.setSortingEnabled(False)
        # Emptied first: replacing the items of a filled table one by one costs time quadratic
        # in its rows (0.7 s for 50 runs, 44 s for 500); the selection is restored below.
        self.table.setRowCount(0)
        self.table.setRowCount(len(self._records))
        for r, rec in enumerate(self._records):
            for c, item in enumerate(self._cells(rec)):
                self.table.setItem(r, c, item)
        self.table.setSortingEnabled(True)
        self.table.blockSignals(False)
        if selected:
            self.table.blockSignals(True)
            self.select_runs(selected)
            self.table.blockSignals(False)
        self._changed()

    def _changed(self) -> None:
        self.count.setText(f"{len(self._records)} runs")
        self.compare_button.setEnabled(len(self.selected_run_ids()) == 2)
        self.runs_changed.emit()

    def _update_in_place(self, records: list) -> bool:
        """The refresh at a run's start or end: the runs shown plus a few new ones, some of them
        changed. Only those rows are written, in the table's sort order, and the selection stays;
        rebuilding a history of 1000 runs took about 60 ms of the window's thread each time (and
        several times that on a busy machine). False when the change is not of that kind."""
        old = {rec.id: rec for rec in self._records}
        ids = {rec.id for rec in records}
        added = [rec for rec in records if rec.id not in old]
        changed = [rec for rec in records if rec.id in old and rec != old[rec.id]]
        removed = set(old) - ids  # the oldest, when the store's newest 500 move on
        if (not self._records or len(added) > 50 or len(removed) > 50 or len(changed) > 10
                or self.table.rowCount() != len(self._records)):
            return False
        if not added and not changed and not removed and [r.id for r in records] == [r.id for r in self._records]:
            self._changed()  # nothing to write; listeners still hear of the refresh
            return True
        # With sorting on, setting the sort column's item moves the row to its place: that one
        # is set last, so the row's other items land in the row before it moves.
        sort_col = self.table.horizontalHeader().sortIndicatorSection()
        order = [c for c in range(len(_COLUMNS)) if c != sort_col] + ([sort_col] if 0 <= sort_col < len(_COLUMNS) else [])
        self.table.blockSignals(True)
        try:
            if removed:
                for row in sorted((r for r in range(self.table.rowCount())
                                   if self.table.item(r, 0).data(RUN_ID_ROLE) in removed), reverse=True):
                    self.table.removeRow(row)
            for rec in changed:  # looked up one by one: a changed row may have moved the others
                row = self._row_of(rec.id)
                if row is None:
                    return False
                cells = self._cells(rec)
                for c in order:
                    self.table.setItem(row, c, cells[c])
            for rec in reversed(added):  # newest first: each goes in at the top, then to its place
                self.table.insertRow(0)
                cells = self._cells(rec)
                for c in order:
                    self.table.setItem(0, c, cells[c])
        finally:
            self.table.blockSignals(False)
        self._records = records
        self._changed()
        return True

    def _row_of(self, run_id: str) -> int | None:
        return next((r for r in range(self.table.rowCount())
                     if (item := self.table.item(r, 0)) is not None and item.data(RUN_ID_ROLE) == run_id), None)

    def _cells(self, rec) -> list:
        """The row of one run: a sortable item per column, each knowing the run's id."""
        started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(rec.started_at))
        nmse_id = (rec.metrics.get("id") or {}).get("nmse")
        nmse_ood = (rec.metrics.get("ood") or {}).get("nmse")
        cells = [
            _SortItem(started, rec.started_at),
            _SortItem(rec.task_id.split("/", 2)[-1], rec.task_id),
            _SortItem(rec.method, rec.method),
            _SortItem(rec.status, rec.status),
            _SortItem(_fmt(nmse_id), math.inf if nmse_id is None else nmse_id),
            _SortItem(_fmt(nmse_ood), math.inf if nmse_ood is None else nmse_ood),
            self._sa_item(rec.metrics.get("symbolic")),
            _SortItem(rec.expression or (rec.error or ""), rec.expression or ""),
        ]
        cells[1].setToolTip(rec.task_id)
        cells[3].setToolTip(rec.error or rec.stop_reason or rec.status)
        cells[7].setToolTip(rec.expression or rec.error or "")
        for item in cells:
            item.setData(RUN_ID_ROLE, rec.id)
        return cells

    def records(self) -> list:
        """The RunRecords on show, newest first."""
        return list(self._records)

    @staticmethod
    def _sa_item(symbolic: dict | None) -> QTableWidgetItem:
        """✓ / ✗ / ? for a run's symbolic accuracy, — when it was not checked (no ground truth)."""
        if not symbolic:
            item = _SortItem("—", 3)
            item.setToolTip("Symbolic accuracy not checked (no ground truth).")
        else:
            text, key = _SA_CELLS.get(symbolic.get("equivalent"), _SA_CELLS[None])
            item = _SortItem(text, key)
            item.setToolTip(f"Symbolic accuracy: {symbolic.get('reason', '')}")
        item.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
        return item

    def selected_run_id(self) -> str | None:
        ids = self.selected_run_ids()
        return ids[0] if ids else None

    def selected_run_ids(self) -> list[str]:
        """Ids of the selected runs, in table order."""
        rows = sorted({index.row() for index in self.table.selectionModel().selectedRows()})
        return [self.table.item(r, 0).data(RUN_ID_ROLE) for r in rows]

    def select_runs(self, run_ids: list[str]) -> None:
        """Select exactly these runs (for the Compare button; emits like a user's selection)."""
        from PySide6.QtCore import QItemSelection, QItemSelectionModel

        selection = QItemSelection()
        for r in range(self.table.rowCount()):
            if self.table.item(r, 0).data(RUN_ID_ROLE) in run_ids:
                selection.select(self.table.model().index(r, 0), self.table.model().index(r, self.table.columnCount() - 1))
        self.table.selectionModel().select(selection, QItemSelectionModel.SelectionFlag.ClearAndSelect)

    def select_run(self, run_id: str, emit: bool = True) -> bool:
        for r in range(self.table.rowCount()):
            if self.table.item(r, 0).data(RUN_ID_ROLE) == run_id:
                if not emit:
                    self.table.blockSignals(True)
                self.table.selectRow(r)
                self.table.blockSignals(False)
                self.compare_button.setEnabled(False)
                return True
        return False

    def run_ids(self) -> list[str]:
        return [self.table.item(r, 0).data(RUN_ID_ROLE) for r in range(self.table.rowCount())]

    def _on_selection(self) -> None:
        ids = self.selected_run_ids()
        self.compare_button.setEnabled(len(ids) == 2)
        if len(ids) == 1:
            self.run_selected.emit(ids[0])

    def _request_compare(self) -> None:
        ids = self.selected_run_ids()
        if len(ids) == 2:
            self.compare_requested.emit(ids[0], ids[1])

    def _context_menu(self, pos) -> None:
        ids = self.selected_run_ids()
        menu = QMenu(self)
        compare = menu.addAction("Compare the two selected runs")
        compare.setEnabled(len(ids) == 2)
        compare.triggered.connect(self._request_compare)
        if self.context_actions:
            menu.addSeparator()
            for action in self.context_actions:
                menu.addAction(action)
        self._menu = menu
        menu.popup(self.table.viewport().mapToGlobal(pos))
