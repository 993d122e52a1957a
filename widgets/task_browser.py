"""Task browser: a tree by benchmark / suite / domain with a search box and task counts."""

from __future__ import annotations

from PySide6.QtCore import QSortFilterProxyModel, Qt, Signal
from PySide6.QtGui import QStandardItem, QStandardItemModel
from PySide6.QtWidgets import QLabel, QLineEdit, QTreeView, QVBoxLayout, QWidget

TASK_ID_ROLE = Qt.ItemDataRole.UserRole + 1
SEARCH_ROLE = Qt.ItemDataRole.UserRole + 2
GROUP_LABEL_ROLE = Qt.ItemDataRole.UserRole + 3  # a group's name without its count

_DOMAIN_LABELS = {"material_science": "material science"}


class _TaskFilter(QSortFilterProxyModel):
    """Matches every word of the query against a task's id, name, title and descriptions;
    a group stays visible while any task under it matches."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.words: list[str] = []
        self.setRecursiveFilteringEnabled(True)

    def set_query(self, text: str) -> None:
        if hasattr(self, "beginFilterChange"):  # Qt >= 6.9; invalidateFilter is deprecated there
            self.beginFilterChange()
            self.words = text.lower().split()
            self.endFilterChange()
        else:
            self.words = text.lower().split()
            self.invalidateFilter()

    def filterAcceptsRow(self, row, parent) -> bool:
        if not self.words:
            return True
        index = self.sourceModel().index(row, 0, parent)
        haystack = index.data(SEARCH_ROLE)
        if not haystack:  # group rows match only through their children
            return False
        return all(word in haystack for word in self.words)


class TaskBrowser(QWidget):
    task_selected = Signal(str)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.search = QLineEdit()
        self.search.setPlaceholderText("Search tasks by id, name or description…")
        self.search.setClearButtonEnabled(True)
        self.model = QStandardItemModel(self)
        self.model.setHorizontalHeaderLabels(["Task"])
        self.proxy = _TaskFilter(self)
        self.proxy.setSourceModel(self.model)
        self.tree = QTreeView()
        self.tree.setModel(self.proxy)
        self.tree.setHeaderHidden(True)
        self.tree.setUniformRowHeights(True)
        self.tree.setEditTriggers(QTreeView.EditTrigger.NoEditTriggers)
        self.count_label = QLabel()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.search)
        layout.addWidget(self.tree, 1)
        layout.addWidget(self.count_label)
        self._items: dict[str, QStandardItem] = {}
        self._groups: list[QStandardItem] = []
        self.search.textChanged.connect(self._on_search)
        self.tree.selectionModel().currentChanged.connect(self._on_current)

    # ------------------------------------------------------------------ content

    def set_tasks(self, tasks, benchmark_label, suite_label) -> None:
        """Fill the tree. ``tasks`` are engine Task objects in catalog order."""
        self.model.removeRows(0, self.model.rowCount())
        self._items.clear()
        self._groups.clear()
        nodes: dict[tuple, QStandardItem] = {}

        def group(key: tuple, label: str, parent: QStandardItem) -> QStandardItem:
            if key not in nodes:
                item = QStandardItem(label)
                item.setData(label, Qt.ItemDataRole.ToolTipRole)
                item.setSelectable(False)
                item.setData(label, GROUP_LABEL_ROLE)
                parent.appendRow(item)
                nodes[key] = item
                self._groups.append(item)
            return nodes[key]

        root = self.model.invisibleRootItem()
        for task in tasks:
            bench = group((task.benchmark,), benchmark_label(task.benchmark), root)
            suite = group((task.benchmark, task.suite), suite_label(task.suite), bench)
            parent = suite
            if task.group:
                parent = group((task.benchmark, task.suite, task.group), _DOMAIN_LABELS.get(task.group, task.group), suite)
            item = QStandardItem(task.name)
            item.setData(task.id, TASK_ID_ROLE)
            item.setData(task.search_text(), SEARCH_ROLE)
            item.setToolTip(f"{task.id}\n{task.title}")
            parent.appendRow(item)
            self._items[task.id] = item
        self._update_counts()
        self.tree.expandToDepth(1)

    def _update_counts(self) -> None:
        """Show "name (visible/total)" on every group and a total below the tree."""

        def walk(source_item: QStandardItem) -> tuple[int, int]:
            total = visible = 0
            for r in range(source_item.rowCount()):
                child = source_item.child(r)
                if child.data(TASK_ID_ROLE):
                    total += 1
                    src = self.model.indexFromItem(child)
                    visible += 1 if self.proxy.mapFromSource(src).isValid() else 0
                else:
                    t, v = walk(child)
                    total += t
                    visible += v
            base = source_item.data(GROUP_LABEL_ROLE)
            if base:
                count = f"{total}" if not self.proxy.words else f"{visible}/{total}"
                source_item.setText(f"{base}  ({count})")
            return total, visible

        total, visible = walk(self.model.invisibleRootItem())
        if self.proxy.words:
            self.count_label.setText(f"{visible} of {total} tasks match")
        else:
            self.count_label.setText(f"{total} tasks")

    # ------------------------------------------------------------------ behaviour

    def _on_search(self, text: str) -> None:
        self.proxy.set_query(text)
        self._update_counts()
        if self.proxy.words:
            self.tree.expandAll()

    def _on_current(self, current, _previous) -> None:
        task_id = current.data(TASK_ID_ROLE)
        if task_id:
            self.task_selected.emit(task_id)

    def select_task(self, task_id: str) -> bool:
        item = self._items.get(task_id)
        if item is None:
            return False
        index = self.proxy.mapFromSource(self.model.indexFromItem(item))
        if not index.isValid():
            self.search.clear()
            index = self.proxy.mapFromSource(self.model.indexFromItem(item))
        self.tree.scrollTo(index)
        self.tree.setCurrentIndex(index)
        return True

    def current_task_id(self) -> str | None:
        return self.tree.currentIndex().data(TASK_ID_ROLE)

    def visible_task_ids(self) -> list[str]:
        return [tid for tid, item in self._items.items()
                if self.proxy.mapFromSource(self.model.indexFromItem(item)).isValid()]

    def select_next(self, step: int = 1) -> None:
        ids = self.visible_task_ids()
        if not ids:
            return
        current = self.current_task_id()
        i = ids.index(current) if current in ids else -step
        self.select_task(ids[(i + step) % len(ids)])
