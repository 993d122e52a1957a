"""A progress bar whose new value is drawn with the window's next paint, not at once.

``QProgressBar.setValue`` repaints the bar synchronously (``repaint()``, so that progress shows
during blocking work), and so does ``setRange`` when it resets a value that no longer fits; a
synchronous repaint makes Qt paint every pending update of the whole window there and then. The
window moves its progress bars on every run event, loaded task, fit and scored candidate, so each
of those flushed the window's paint: in a profile of ``benchmarks/bench_ui.py --only load``
(py-spy ``--native``) these forced paints were about a sixth of the main thread's event
handling. Nothing in Kepler Lab blocks the GUI thread while a bar moves, so the ordinary,
coalesced ``update()`` is enough.
"""

from __future__ import annotations

from PySide6.QtWidgets import QProgressBar


class ProgressBar(QProgressBar):
    def _deferred(self, change, *args) -> None:
        if not self.updatesEnabled():  # an ancestor holds updates: Qt's repaint() is a no-op then
            change(*args)
            return
        # repaint() does nothing while updates are disabled; enabling them again schedules an
        # ordinary update() of the bar (QWidget.setUpdatesEnabled).
        self.setUpdatesEnabled(False)
        try:
            change(*args)
        finally:
            self.setUpdatesEnabled(True)

    def setValue(self, value: int) -> None:  # noqa: N802 -- Qt's names
        if value != self.value():
            self._deferred(super().setValue, value)

    def setRange(self, minimum: int, maximum: int) -> None:  # noqa: N802
        if (minimum, maximum) != (self.minimum(), self.maximum()):
            self._deferred(super().setRange, minimum, maximum)

    def reset(self) -> None:
        self._deferred(super().reset)
