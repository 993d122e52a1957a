"""Help ▸ Keyboard shortcuts: opened with F1, lists what the menus bind, filters as you type."""

from __future__ import annotations

import collections

import pytest

pytest.importorskip("pytestqt")

from app.application import create_app  # noqa: E402
from app.main_window import MainWindow  # noqa: E402
from widgets.shortcuts_dialog import ShortcutsDialog, menu_shortcuts  # noqa: E402


@pytest.fixture
def window(qtbot, isolated_home):
    create_app()
    win = MainWindow(restore_layout=False)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitUntil(lambda: len(win.tasks) > 0, timeout=15000)
    yield win
    win.controller.shutdown()
    win.loader.wait_all()


def test_f1_lists_every_menu_shortcut_and_no_key_is_bound_twice(window, qtbot):
    rows = menu_shortcuts(window)
    keys = collections.Counter(k for _menu, _cmd, k, _tip in rows)
    assert [k for k, n in keys.items() if n > 1] == []  # two commands on one key would make one dead
    commands = {cmd: k for _menu, cmd, k, _tip in rows}
    for command in ("Start", "Stop", "Next task", "Reveal ground truth", "Sweep", "Leaderboard", "Keyboard shortcuts"):
        assert command in commands, command
    assert window.shortcuts_action.shortcut().toString() == "F1"
    window.shortcuts_action.trigger()  # Help ▸ Keyboard shortcuts (what F1 triggers)
    qtbot.waitUntil(lambda: any(d.isVisible() for d in window.findChildren(ShortcutsDialog)), timeout=5000)
    dialog = next(d for d in window.findChildren(ShortcutsDialog) if d.isVisible())
    visible = dialog.visible_rows()
    assert (commands["Start"], "Start") in visible and len(visible) == len(rows) + 1  # + the lab panel's key
    qtbot.keyClicks(dialog.filter, "sweep")
    assert dialog.visible_rows() == [(commands["Sweep"], "Sweep")]
    dialog.filter.clear()
    qtbot.keyClicks(dialog.filter, "lab panel")
    assert dialog.visible_rows() == [("Ctrl+Return", "Measure with the settings shown (or run the batch)")]
    dialog.close()
