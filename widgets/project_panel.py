"""The Project panel: a project's title, notes, tasks and runs (File ▸ Save project… writes them
to a .klab file; app/session.py does the file work).

The panel only holds and shows the lists; what "the current task" and "the displayed run" are is
the window's business, so the Add buttons ask for them with a signal.
"""

from __future__ import annotations

from PySide6.QtCore import QItemSelectionModel, Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (QAbstractItemView, QGroupBox, QHBoxLayout, QLabel, QLineEdit, QListWidget,
                               QListWidgetItem, QPlainTextEdit, QPushButton, QSplitter, QVBoxLayout, QWidget)

from engine.project import MAX_TITLE_CHARS

ID_ROLE = Qt.ItemDataRole.UserRole + 1


class _IdList(QGroupBox):
    """A titled list of ids with Add / Remove buttons; double-click or Enter opens an entry."""

    activated = Signal(str)
    add_requested = Signal()
    removed = Signal(list)

    def __init__(self, title: str, add_text: str, add_tip: str, empty_text: str, parent=None):
        super().__init__(title, parent)
        self._title = title
        self.list = QListWidget()
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.list.setAlternatingRowColors(True)
        self.list.itemActivated.connect(lambda item: self.activated.emit(item.data(ID_ROLE)))
        self.list.itemSelectionChanged.connect(self._update_buttons)
        self.empty = QLabel(empty_text)
        self.empty.setWordWrap(True)
        self.empty.setEnabled(False)  # drawn as a hint
        self.add_button = QPushButton(add_text)
        self.add_button.setToolTip(add_tip)
        self.add_button.clicked.connect(self.add_requested)
        self.remove_button = QPushButton("Remove")
        self.remove_button.setToolTip("Take the selected entries out of the project (nothing is deleted)")
        self.remove_button.clicked.connect(self.remove_selected)
        delete = QShortcut(QKeySequence(QKeySequence.StandardKey.Delete), self.list)
        delete.setContext(Qt.ShortcutContext.WidgetShortcut)
        delete.activated.connect(self.remove_selected)
        buttons = QHBoxLayout()
        buttons.addWidget(self.add_button)
        buttons.addWidget(self.remove_button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.empty)
        layout.addLayout(buttons)
        self._update_buttons()

    def ids(self) -> list[str]:
        return [self.list.item(i).data(ID_ROLE) for i in range(self.list.count())]

    def set_entries(self, entries: list[tuple[str, str, str]]) -> None:
        """(id, label, tooltip) per entry, in order."""
        self.list.clear()
        for entry in entries:
            self._append(*entry)
        self._update_buttons()

    def _append(self, item_id: str, label: str, tip: str = "") -> None:
        item = QListWidgetItem(label)
        item.setData(ID_ROLE, item_id)
        item.setToolTip(tip or item_id)
        self.list.addItem(item)

    def add(self, item_id: str, label: str, tip: str = "") -> bool:
        """Append an entry unless it is there already (then it is selected); True if added."""
        if self.select(item_id):
            return False
        self._append(item_id, label, tip)
        self.list.setCurrentRow(self.list.count() - 1, QItemSelectionModel.SelectionFlag.ClearAndSelect)
        self._update_buttons()
        return True

    def relabel(self, labels: dict[str, tuple[str, str]]) -> None:
        for i in range(self.list.count()):
            item = self.list.item(i)
            if item.data(ID_ROLE) in labels:
                label, tip = labels[item.data(ID_ROLE)]
                item.setText(label)
                item.setToolTip(tip)

    def select(self, item_id: str) -> bool:
        for i in range(self.list.count()):
            if self.list.item(i).data(ID_ROLE) == item_id:
                self.list.setCurrentRow(i, QItemSelectionModel.SelectionFlag.ClearAndSelect)
                return True
        return False

    def remove_selected(self) -> None:
        rows = sorted((self.list.row(item) for item in self.list.selectedItems()), reverse=True)
        gone = [self.list.takeItem(row).data(ID_ROLE) for row in rows]
        self._update_buttons()
        if gone:
            self.removed.emit(gone)

    def _update_buttons(self) -> None:
        self.remove_button.setEnabled(bool(self.list.selectedItems()))
        count = self.list.count()
        self.empty.setVisible(count == 0)
        self.setTitle(f"{self._title} ({count})" if count else self._title)


class ProjectPanel(QWidget):
    """Title, notes, tasks and runs of the open project."""

    edited = Signal()  # the user changed the title, the notes or a list
    task_activated = Signal(str)
    run_activated = Signal(str)
    add_task_requested = Signal()
    add_run_requested = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.location = QLabel("Not saved yet")
        self.location.setWordWrap(True)
        self.location.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.title_edit = QLineEdit()
        self.title_edit.setObjectName("projectTitle")
        self.title_edit.setMaxLength(MAX_TITLE_CHARS)  # what a project file may hold
        self.title_edit.setPlaceholderText("Project title (e.g. Week 3: Kepler's third law)")
        self.title_edit.textEdited.connect(lambda _t: self.edited.emit())
        self.notes = QPlainTextEdit()
        self.notes.setObjectName("projectNotes")
        self.notes.setPlaceholderText("Notes for a colleague or a class: what the runs show, what to try next…")
        self.notes.textChanged.connect(self._on_notes_changed)
        self._quiet = False

        self.tasks = _IdList("Tasks", "Add current task", "Add the task selected in the task browser",
                             "No tasks yet: select a task, then Add current task.")
        self.runs = _IdList("Runs", "Add displayed run", "Add the run whose results are shown (run one, or open one "
                            "from the run history)", "No runs yet: open or finish a run, then Add displayed run.")
        self.tasks.activated.connect(self.task_activated)
        self.runs.activated.connect(self.run_activated)
        self.tasks.add_requested.connect(self.add_task_requested)
        self.runs.add_requested.connect(self.add_run_requested)
        self.tasks.removed.connect(lambda _ids: self.edited.emit())
        self.runs.removed.connect(lambda _ids: self.edited.emit())

        notes_box = QWidget()
        nl = QVBoxLayout(notes_box)
        nl.setContentsMargins(0, 0, 0, 0)
        nl.addWidget(QLabel("Notes"))
        nl.addWidget(self.notes, 1)
        split = QSplitter(Qt.Orientation.Vertical)
        split.setChildrenCollapsible(False)
        split.addWidget(notes_box)
        split.addWidget(self.tasks)
        split.addWidget(self.runs)
        split.setSizes([200, 140, 200])
        layout = QVBoxLayout(self)
        layout.addWidget(self.title_edit)
        layout.addWidget(self.location)
        layout.addWidget(split, 1)

    def _on_notes_changed(self) -> None:
        if not self._quiet:
            self.edited.emit()

    # ------------------------------------------------------------------ content

    def set_project(self, title: str, notes: str, tasks: list[tuple[str, str, str]],
                    runs: list[tuple[str, str, str]], location: str) -> None:
        """Show a project (no ``edited`` signal)."""
        self._quiet = True
        try:
            self.title_edit.setText(title)
            if self.notes.toPlainText() != notes:
                self.notes.setPlainText(notes)
            self.tasks.set_entries(tasks)
            self.runs.set_entries(runs)
            self.location.setText(location)
        finally:
            self._quiet = False

    def title(self) -> str:
        return self.title_edit.text().strip()

    def notes_text(self) -> str:
        return self.notes.toPlainText()

    def task_ids(self) -> list[str]:
        return self.tasks.ids()

    def run_ids(self) -> list[str]:
        return self.runs.ids()

    def is_empty(self) -> bool:
        return not (self.title() or self.notes_text().strip() or self.task_ids() or self.run_ids())

    def add_task(self, task_id: str, label: str, tip: str = "") -> bool:
        added = self.tasks.add(task_id, label, tip)
        if added:
            self.edited.emit()
        return added

    def add_run(self, run_id: str, label: str, tip: str = "") -> bool:
        added = self.runs.add(run_id, label, tip)
        if added:
            self.edited.emit()
        return added

    def set_location(self, text: str) -> None:
        self.location.setText(text)


__all__ = ["ProjectPanel", "ID_ROLE"]
