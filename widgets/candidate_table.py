"""Candidates: the Pareto front (complexity vs training loss) as a sortable table."""

from __future__ import annotations

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QSortFilterProxyModel, Qt, Signal
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QLabel, QTableView, QVBoxLayout, QWidget

_COLUMNS = ("Complexity", "Train NMSE", "Expression")


class CandidateModel(QAbstractTableModel):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.rows: list[dict] = []
        self.chosen: str | None = None

    def set_rows(self, rows: list[dict], chosen: str | None = None) -> None:
        self.beginResetModel()
        self.rows = sorted(rows, key=lambda r: r["complexity"])
        self.chosen = chosen
        self.endResetModel()

    def set_chosen(self, expression: str | None) -> None:
        self.chosen = expression
        if self.rows:
            self.dataChanged.emit(self.index(0, 0), self.index(len(self.rows) - 1, len(_COLUMNS) - 1))

    def rowCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(_COLUMNS)

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return _COLUMNS[section]
        if role == Qt.ItemDataRole.ToolTipRole and orientation == Qt.Orientation.Horizontal:
            return (
                "Number of nodes in the expression tree",
                "Normalised mean squared error on the training data (0 = perfect, 1 = no better than the mean)",
                "The model; double-click to see its fit",
            )[section]
        return None

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        row = self.rows[index.row()]
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if col == 0:
                return int(row["complexity"])
            if col == 1:
                loss = row.get("loss")
                return "—" if loss is None else f"{loss:.4g}"
            return row["expression"]
        if role == Qt.ItemDataRole.UserRole:  # sort key
            if col == 1:
                loss = row.get("loss")
                return float("inf") if loss is None else float(loss)
            return row["complexity"] if col == 0 else row["expression"]
        if role == Qt.ItemDataRole.ToolTipRole and col == 2:
            return row["expression"]
        if role == Qt.ItemDataRole.FontRole and self.chosen and row["expression"] == self.chosen:
            from PySide6.QtGui import QFont

            font = QFont()
            font.setBold(True)
            return font
        return None


class CandidateTable(QWidget):
    candidate_activated = Signal(str)  # expression

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.model = CandidateModel(self)
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setSortRole(Qt.ItemDataRole.UserRole)
        self.view = QTableView()
        self.view.setModel(self.proxy)
        self.view.setSortingEnabled(True)
        self.view.sortByColumn(0, Qt.SortOrder.AscendingOrder)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.view.verticalHeader().setVisible(False)
        self.view.setWordWrap(False)
        header = self.view.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.caption = QLabel("The Pareto front of the run appears here: simplest to most accurate.")
        self.caption.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.caption)
        layout.addWidget(self.view)
        # `activated` fires on double-click and on Enter, so keyboard users can open a fit too.
        self.view.activated.connect(self._on_activated)

    def set_front(self, rows: list[dict], iteration: int | None = None, chosen: str | None = None) -> None:
        self.model.set_rows(rows, chosen)
        if iteration is not None:
            self.caption.setText(f"Pareto front at iteration {iteration}: {len(rows)} models. Double-click one to see its fit.")
        else:
            self.caption.setText(f"Pareto front: {len(rows)} models. Double-click one to see its fit.")

    def mark_chosen(self, expression: str | None) -> None:
        self.model.set_chosen(expression)

    def clear(self) -> None:
        self.model.set_rows([])
        self.caption.setText("The Pareto front of the run appears here: simplest to most accurate.")

    def row_count(self) -> int:
        return self.model.rowCount()

    def _on_activated(self, index) -> None:
        source = self.proxy.mapToSource(index)
        self.candidate_activated.emit(self.model.rows[source.row()]["expression"])
