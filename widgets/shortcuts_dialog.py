"""Help ▸ Keyboard shortcuts (F1): every menu command of the window that has a shortcut, read
from the menus themselves when the dialog opens, so the list is always what the keys do.

Shortcuts that live on a panel rather than in a menu (the lab's Ctrl+Return) are listed from
:data:`PANEL_SHORTCUTS`. :func:`menu_shortcuts` is also what the tests use to check that no two
commands share a key.
"""

from __future__ import annotations

from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMainWindow,
    QMenu,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

#: Shortcuts of panels, not of menu commands: (where, what, keys).
PANEL_SHORTCUTS = (
    ("Lab panel", "Measure with the settings shown (or run the batch)", "Ctrl+Return"),
)


def _clean(text: str) -> str:
    return text.replace("&&", "\0").replace("&", "").replace("\0", "&")


def menu_shortcuts(window: QMainWindow) -> list[tuple[str, str, str, str]]:
    """(menu, command, keys, description) for every menu action with a shortcut, in menu order."""
    rows: list[tuple[str, str, str, str]] = []

    def walk(menu: QMenu, path: str) -> None:
        for action in menu.actions():
            if action.menu() is not None:
                walk(action.menu(), f"{path} ▸ {_clean(action.menu().title())}")
                continue
            keys = [k for k in action.shortcuts() if not k.isEmpty()]
            if not keys or action.isSeparator():
                continue
            text = ", ".join(k.toString(QKeySequence.SequenceFormat.NativeText) for k in keys)
            rows.append((path, _clean(action.text()).rstrip("…").strip(), text, action.statusTip()))

    for action in window.menuBar().actions():
        if action.menu() is not None:
            walk(action.menu(), _clean(action.menu().title()))
    return rows


class ShortcutsDialog(QDialog):
    def __init__(self, window: QMainWindow, parent: QWidget | None = None):
        super().__init__(parent or window)
        self.setWindowTitle("Keyboard shortcuts")
        self.resize(760, 520)
        self.filter = QLineEdit()
        self.filter.setPlaceholderText("Filter: a command, a menu or a key…")
        self.filter.setClearButtonEnabled(True)
        self.table = QTableWidget(0, 4)
        self.table.setHorizontalHeaderLabels(["Keys", "Command", "Menu", "What it does"])
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.verticalHeader().setVisible(False)
        self.table.setWordWrap(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        rows = [(keys, command, menu, tip) for menu, command, keys, tip in menu_shortcuts(window)]
        rows += [(keys, what, where, "") for where, what, keys in PANEL_SHORTCUTS]
        self.table.setRowCount(len(rows))
        for r, row in enumerate(rows):
            for c, text in enumerate(row):
                item = QTableWidgetItem(text)
                item.setToolTip(text)
                if c == 0:
                    font = item.font()
                    font.setBold(True)
                    item.setFont(font)
                self.table.setItem(r, c, item)
        self.filter.textChanged.connect(self._apply_filter)
        layout = QVBoxLayout(self)
        layout.addWidget(self.filter)
        layout.addWidget(self.table)
        hint = QLabel("Every command is also in the menus; hover a toolbar button or a table header for what it does.")
        hint.setWordWrap(True)
        hint.setStyleSheet("color: palette(placeholder-text);")
        layout.addWidget(hint)

    def _apply_filter(self, text: str) -> None:
        needle = text.strip().lower()
        for r in range(self.table.rowCount()):
            row_text = " ".join(self.table.item(r, c).text().lower() for c in range(4))
            self.table.setRowHidden(r, bool(needle) and needle not in row_text)

    def visible_rows(self) -> list[tuple[str, str]]:
        """(keys, command) of the rows the filter leaves visible."""
        return [(self.table.item(r, 0).text(), self.table.item(r, 1).text())
                for r in range(self.table.rowCount()) if not self.table.isRowHidden(r)]
