"""The status bar's activity indicator: what the app is busy with, and how far along it is.

Every long operation of the window (the task catalog, a task's data, a run, a fit, scoring the
candidates, an export …) begins an activity with a key and a sentence, may report progress, and
ends it. The bar shows the newest activity still going, as a progress bar when its total is known
and as a busy indicator otherwise; its tooltip lists all of them. With nothing going on it hides.
"""

from __future__ import annotations

import time

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QWidget

from .progress import ProgressBar


class ActivityBar(QWidget):
    changed = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("activityBar")
        self.label = QLabel("")
        self.label.setObjectName("activityLabel")
        self.bar = ProgressBar()
        self.bar.setObjectName("activityProgress")
        self.bar.setFixedWidth(180)
        self.bar.setMaximumHeight(16)
        self.bar.setTextVisible(True)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 6, 0)
        layout.setSpacing(6)
        layout.addWidget(self.label)
        layout.addWidget(self.bar)
        # key -> [text, value, total, started]; insertion order is start order.
        self._going: dict[str, list] = {}
        self.setVisible(False)

    # ------------------------------------------------------------------ API

    def begin(self, key: str, text: str, total: int = 0) -> None:
        """Start (or restart) activity ``key``; ``total`` 0 means its length is unknown."""
        self._going.pop(key, None)
        self._going[key] = [text, 0, max(0, int(total)), time.monotonic()]
        self._show()

    def update(self, key: str, value: float, total: int | None = None, text: str | None = None) -> None:
        entry = self._going.get(key)
        if entry is None:
            return
        if total is not None:
            entry[2] = max(0, int(total))
        if text is not None:
            entry[0] = text
        entry[1] = value
        self._show()

    def end(self, key: str) -> None:
        if self._going.pop(key, None) is not None:
            self._show()

    def active(self) -> list[str]:
        """Keys of the activities going on, oldest first."""
        return list(self._going)

    def text_of(self, key: str) -> str | None:
        entry = self._going.get(key)
        return entry[0] if entry else None

    # ------------------------------------------------------------------ drawing

    def _show(self) -> None:
        if not self._going:
            self.setVisible(False)
            self.label.setText("")
            self.setToolTip("")
            self.changed.emit()
            return
        key = next(reversed(self._going))
        text, value, total, _ = self._going[key]
        more = len(self._going) - 1
        self.label.setText(text + (f"  (+{more} more)" if more else ""))
        if total > 0:
            self.bar.setRange(0, total)
            self.bar.setValue(int(min(max(value, 0), total)))
            self.bar.setFormat(f"{int(value)} / {total}" if total != 1000 else f"{100 * value / total:.0f} %")
        else:
            self.bar.setRange(0, 0)  # Qt draws a busy indicator
        now = time.monotonic()
        lines = [f"{t} ({now - s:.0f} s)" for t, _, _, s in self._going.values()]
        self.setToolTip("Going on:\n" + "\n".join(lines))
        self.setVisible(True)
        self.changed.emit()


#: What the window's background loads are doing, by loader channel (app/main_window.py).
CHANNEL_TEXT = {
    "catalog": "Loading the task catalog…",
    "preview": "Building the task's data…",
    "fit": "Computing the fit…",
    "surface": "Building the 3-D surface…",
    "llm": "Reading the run's LLM calls…",
    "export": "Exporting…",
}
