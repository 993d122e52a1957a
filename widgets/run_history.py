"""Run history: past runs from the store, newest first; selecting one reopens it, selecting
two (Ctrl/Shift-click) and pressing Compare opens them side by side."""

from __future__ import annotations

import math
import time
from collections.abc import Iterator

from PySide6.QtCore import QItemSelection, QItemSelectionModel, Qt, Signal
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

from viewers.turns import turns
from widgets.tips import explain_headers

_COLUMNS = ("Started", "Task", "Method", "Status", "NMSE ID", "NMSE OOD", "SA", "Model")

#: Symbolic accuracy in a cell, and its sort key (found first, then undecided, not found, unchecked).
_SA_CELLS = {True: ("✓", 0), None: ("?", 1), False: ("✗", 2)}
RUN_ID_ROLE = Qt.ItemDataRole.UserRole + 1


#: Rows written per turn of the event loop when the whole history is rebuilt (a sweep's runs
#: replacing the list): 500 rows at once held the window for 30-60 ms on an idle machine and
#: 0.2 s on a busy one.
FILL_ROWS = 80

#: Rows the columns are sized from (Qt's default, 1000, sized them from every row of a long
#: history after every refresh).
SIZE_FROM_ROWS = 200


def _sort_key(rec, column: int):
    """What a column sorts by: numbers as numbers (no error last), start time as time."""
    if column == 0:
        return rec.started_at
    if column == 1:
        return rec.task_id
    if column == 2:
        return rec.method
    if column == 3:
        return rec.status
    if column in (4, 5):
        value = (rec.metrics.get("id" if column == 4 else "ood") or {}).get("nmse")
        return math.inf if value is None or value != value else value  # none or NaN: last
    if column == 6:
        symbolic = rec.metrics.get("symbolic")
        return _SA_CELLS.get(symbolic.get("equivalent"), _SA_CELLS[None])[1] if symbolic else 3
    return rec.expression or ""


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
        # Sorted here, not by Qt: QTableWidget compares items through Python's __lt__, about
        # 4500 calls into Python to sort 500 rows (25 ms of the window's thread per refresh),
        # and a rebuilt history has to be written in its final order to be written in parts.
        # A click on a column's header flips its sort indicator, as with Qt's own sorting.
        self.table.setSortingEnabled(False)
        self.table.setWordWrap(False)
        header = self.table.horizontalHeader()
        header.setSectionsClickable(True)
        header.setSortIndicatorShown(True)
        header.setSortIndicator(0, Qt.SortOrder.DescendingOrder)
        header.sortIndicatorChanged.connect(self._resort)
        header.setResizeContentsPrecision(SIZE_FROM_ROWS)
        for col in range(len(_COLUMNS) - 1):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(len(_COLUMNS) - 1, QHeaderView.ResizeMode.Stretch)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addLayout(top)
        layout.addWidget(self.table)
        self._records = []  # as given: newest first
        self._fill_token = 0  # a newer rebuild or refresh supersedes the rest of a fill
        self._filling = False
        self._restore: list[str] = []  # the selection to restore when a fill is done
        self._missed: str | None = None  # a run select_run could not find (see there)
        self._restore_emit = False  # ... as a click would (select_run during a fill)
        #: Extra entries of the right-click menu: features (the demo replay) add QActions here.
        self.context_actions: list = []
        self.table.itemSelectionChanged.connect(self._on_selection)

    def set_runs(self, records, keep_selection: bool = True) -> None:
        """``records`` are engine RunRecords, newest first. A refresh that adds, ends or drops a
        few runs writes only their rows; otherwise the table is rebuilt, :data:`FILL_ROWS` rows
        per turn of the event loop after the first (see :meth:`filling`)."""
        records = list(records)
        missed, self._missed = self._missed, None
        if missed is not None and (self.selected_run_ids() or not any(rec.id == missed for rec in records)):
            missed = None
        if keep_selection and self._update_in_place(records):
            if missed is not None:
                self.select_run(missed, emit=False)
            return
        restore = [missed] if missed is not None else self.selected_run_ids() if keep_selection else []
        self._rebuild(records, restore)

    def _rebuild(self, records: list, restore: list[str]) -> None:
        # A run picked before its row came (select_run during a fill) still opens at the end.
        self._restore_emit = self._restore_emit and self._filling and restore == self._restore
        self._restore = restore
        self._records = records
        self._fill_token += 1
        self._filling = True
        rows = self._sorted(records)
        self.table.blockSignals(True)
        # Emptied first: replacing the items of a filled table one by one costs time quadratic
        # in its rows (0.7 s for 50 runs, 44 s for 500); the selection is restored at the end.
        self.table.setRowCount(0)
        self.table.blockSignals(False)
        turns().start(self._fill(self._fill_token, rows), self)  # the first rows at once; the rest in turns

    def filling(self) -> bool:
        """A rebuilt history is still being written (its rows come over a few event-loop turns)."""
        return self._filling

    def _fill(self, token: int, rows: list) -> Iterator[None]:
        """Write ``rows`` into the table, ``FILL_ROWS`` per step: a long list comes over a few
        turns of the event loop (viewers/turns.py), so that the window paints and takes input
        in between. A newer list ends it."""
        start = 0
        while True:
            if token != self._fill_token:
                return  # superseded by a newer list
            end = min(len(rows), start + FILL_ROWS)
            self.table.blockSignals(True)
            self.table.setRowCount(end)
            for r in range(start, end):
                for c, item in enumerate(self._cells(rows[r])):
                    self.table.setItem(r, c, item)
            self.table.blockSignals(False)
            if end >= len(rows):
                break
            start = end
            yield
        self._filling = False
        restore, emit = self._restore, self._restore_emit
        self._restore, self._restore_emit = [], False
        if restore and not self._shown_selection():  # unless the user picked a row meanwhile
            self.table.blockSignals(True)
            self.select_runs(restore)
            self.table.blockSignals(False)
        self._changed()
        if emit and len(restore) == 1 and self._shown_selection() == restore:
            self.run_selected.emit(restore[0])

    def _sorted(self, records: list) -> list:
        """``records`` in the order of the header's sort indicator; ties keep the store's order."""
        header = self.table.horizontalHeader()
        column = header.sortIndicatorSection()
        if not 0 <= column < len(_COLUMNS):
            return list(records)
        descending = header.sortIndicatorOrder() == Qt.SortOrder.DescendingOrder
        return sorted(records, key=lambda rec: _sort_key(rec, column), reverse=descending)

    def _resort(self, *_args) -> None:
        """The user clicked a column's header: the rows are written again in its order."""
        if self._records:
            self._rebuild(self._records, self.selected_run_ids())

    def _changed(self) -> None:
        self.count.setText(f"{len(self._records)} runs")
        self.compare_button.setEnabled(len(self.selected_run_ids()) == 2)
        self.runs_changed.emit()

    def _update_in_place(self, records: list) -> bool:
        """The refresh at a run's start or end: the runs shown plus a few new ones, some of them
        changed. Only those rows are written, each in its sorted place, and the selection stays;
        rebuilding a history of 1000 runs took about 60 ms of the window's thread each time (and
        several times that on a busy machine). False when the change is not of that kind."""
        if self._filling and records == self._records:
            return True  # the same list again: the fill goes on (and signals when it is done)
        old = {rec.id: rec for rec in self._records}
        ids = {rec.id for rec in records}
        added = [rec for rec in records if rec.id not in old]
        changed = {rec.id for rec in records if rec.id in old and rec != old[rec.id]}
        removed = set(old) - ids  # the oldest, when the store's newest 500 move on
        if (not self._records or self._filling or len(added) > 50 or len(removed) > 50 or len(changed) > 10
                or self.table.rowCount() != len(self._records)):
            return False
        target = self._sorted(records)
        shown = self.run_ids()  # (a walk over every row: read once)
        if not added and not changed and not removed and [r.id for r in target] == shown:
            self._records = records
            self._changed()  # nothing to write; listeners still hear of the refresh
            return True
        selected = self.selected_run_ids()
        self.table.blockSignals(True)
        try:
            # The rows that go, and those whose run changed (their place may change with it),
            # are taken out; the rows left keep their order, which is the order they have among
            # the new list's rows. The changed and the new runs then go in at their places.
            for row in sorted((r for r, run_id in enumerate(shown) if run_id in removed or run_id in changed),
                              reverse=True):
                self.table.removeRow(row)
            for row, rec in enumerate(target):
                if rec.id in changed or rec.id not in old:
                    self.table.insertRow(row)
                    for c, item in enumerate(self._cells(rec)):
                        self.table.setItem(row, c, item)
            kept = [run_id for run_id in selected if run_id in ids]
            if self.selected_run_ids() != kept:  # a selected run's row was written again
                self.select_runs(kept)
        finally:
            self.table.blockSignals(False)
        if self.run_ids() != [rec.id for rec in target]:
            return False  # not the expected kind after all (ties ordered otherwise): rebuilt
        self._records = records
        self._changed()
        return True

    def _cells(self, rec) -> list:
        """The row of one run: an item per column, each knowing the run's id."""
        nmse_id = (rec.metrics.get("id") or {}).get("nmse")
        nmse_ood = (rec.metrics.get("ood") or {}).get("nmse")
        symbolic = rec.metrics.get("symbolic")
        texts = (
            time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(rec.started_at)),
            rec.task_id.split("/", 2)[-1],
            rec.method,
            rec.status,
            _fmt(nmse_id),
            _fmt(nmse_ood),
            _SA_CELLS.get(symbolic.get("equivalent"), _SA_CELLS[None])[0] if symbolic else "—",
            rec.expression or (rec.error or ""),
        )
        # Plain items: the rows are sorted by _sort_key before they are written, never by Qt.
        cells = [QTableWidgetItem(text) for text in texts]
        cells[1].setToolTip(rec.task_id)
        cells[3].setToolTip(rec.error or rec.stop_reason or rec.status)
        # ✓ / ✗ / ? for the final model's symbolic accuracy, — when it was not checked.
        cells[6].setToolTip(f"Symbolic accuracy: {symbolic.get('reason', '')}" if symbolic
                            else "Symbolic accuracy not checked (no ground truth).")
        cells[6].setTextAlignment(Qt.AlignmentFlag.AlignCenter)
        cells[7].setToolTip(rec.expression or rec.error or "")
        for item in cells:
            item.setData(RUN_ID_ROLE, rec.id)
        return cells

    def records(self) -> list:
        """The RunRecords on show, newest first."""
        return list(self._records)

    def selected_run_id(self) -> str | None:
        ids = self.selected_run_ids()
        return ids[0] if ids else None

    def selected_run_ids(self) -> list[str]:
        """Ids of the selected runs, in table order; during a fill with nothing picked yet,
        those to be selected when it is done."""
        return self._shown_selection() or (list(self._restore) if self._filling else [])

    def _shown_selection(self) -> list[str]:
        rows = sorted({index.row() for index in self.table.selectionModel().selectedRows()})
        return [self.table.item(r, 0).data(RUN_ID_ROLE) for r in rows]

    def select_runs(self, run_ids: list[str]) -> None:
        """Select exactly these runs (for the Compare button; emits like a user's selection)."""
        selection = QItemSelection()
        for r in range(self.table.rowCount()):
            if self.table.item(r, 0).data(RUN_ID_ROLE) in run_ids:
                selection.select(self.table.model().index(r, 0), self.table.model().index(r, self.table.columnCount() - 1))
        self.table.selectionModel().select(selection, QItemSelectionModel.SelectionFlag.ClearAndSelect)

    def select_run(self, run_id: str, emit: bool = True) -> bool:
        """Select one run (as a click on its row does, unless ``emit`` is False). A run whose row
        is still to come in a fill is selected when the fill is done."""
        self._missed = None
        for r in range(self.table.rowCount()):
            if self.table.item(r, 0).data(RUN_ID_ROLE) == run_id:
                if not emit:
                    self.table.blockSignals(True)
                # This row alone: QTableView.selectRow adds to the selection while Ctrl or Shift
                # is held (a run ending while the user Ctrl-clicks would select two).
                flags = QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
                self.table.selectionModel().setCurrentIndex(self.table.model().index(r, 0), flags)
                self.table.blockSignals(False)
                self.compare_button.setEnabled(False)
                return True
        if self._filling and any(rec.id == run_id for rec in self._records):
            self.table.clearSelection()
            self._restore, self._restore_emit = [run_id], emit
            return True
        # Not listed (yet): selected in the next list if it is there and nothing else is selected
        # by then. A history read on a thread comes a moment after the window opens, when the
        # last session's run has already been opened and asked for.
        self._missed = run_id
        return False

    def run_ids(self) -> list[str]:
        return [self.table.item(r, 0).data(RUN_ID_ROLE) for r in range(self.table.rowCount())]

    def _on_selection(self) -> None:
        self._missed = None  # the user's pick wins
        ids = self._shown_selection()  # what the user did to the rows, not a pending selection
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
