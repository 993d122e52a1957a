"""The window's progress bars draw a new value with the next paint: Qt's own QProgressBar paints
at once (and with it everything else pending in the window), which cost the window about a sixth
of its event handling under load (widgets/progress.py)."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QProgressBar, QVBoxLayout, QWidget

from widgets.progress import ProgressBar


class _Paints(QObject):
    """Records the bar's value each time the bar is painted."""

    def __init__(self, bar):
        super().__init__()
        self.bar, self.values = bar, []
        bar.installEventFilter(self)

    def eventFilter(self, obj, event):  # noqa: N802 -- Qt's name
        if event.type() == QEvent.Type.Paint:
            self.values.append(self.bar.value())
        return False


def _shown(qtbot, cls):
    holder = QWidget()
    qtbot.addWidget(holder)
    bar = cls(holder)
    bar.setRange(0, 100)
    QVBoxLayout(holder).addWidget(bar)
    holder.show()
    qtbot.waitExposed(holder)
    qtbot.wait(50)
    return holder, bar


def test_qt_progress_bar_paints_at_once_which_is_what_is_avoided(qtbot):
    _holder, bar = _shown(qtbot, QProgressBar)
    paints = _Paints(bar)
    bar.setValue(40)
    assert paints.values == [40]  # painted inside setValue


def test_a_new_value_is_painted_with_the_next_paint_not_at_once(qtbot):
    _holder, bar = _shown(qtbot, ProgressBar)
    paints = _Paints(bar)
    bar.setValue(40)
    assert paints.values == [] and bar.value() == 40 and bar.text() == "40%"
    qtbot.waitUntil(lambda: bool(paints.values), timeout=2000)
    assert paints.values[-1] == 40
    assert bar.updatesEnabled()


def test_a_value_set_while_the_panel_holds_its_updates_shows_once_it_lets_them_go(qtbot):
    holder, bar = _shown(qtbot, ProgressBar)
    paints = _Paints(bar)
    holder.setUpdatesEnabled(False)
    bar.setValue(70)
    qtbot.wait(50)
    assert paints.values == [] and bar.value() == 70
    holder.setUpdatesEnabled(True)  # the bar follows its panel again: nothing left switched off
    assert bar.updatesEnabled()
    qtbot.waitUntil(lambda: bool(paints.values), timeout=2000)
    assert paints.values[-1] == 70


def test_a_new_range_that_resets_the_value_is_painted_later_too(qtbot):
    _holder, bar = _shown(qtbot, ProgressBar)
    bar.setValue(80)
    qtbot.wait(50)
    paints = _Paints(bar)
    bar.setRange(0, 10)  # 80 no longer fits: Qt resets the bar, and QProgressBar repaints at once
    assert paints.values == [] and bar.value() == bar.minimum() - 1  # Qt's "no value yet"
    qtbot.waitUntil(lambda: bool(paints.values), timeout=2000)
    bar.setRange(0, 0)  # the busy indicator the activity bar shows for work of unknown length
    assert bar.maximum() == 0 and bar.updatesEnabled()
