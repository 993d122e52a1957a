"""Themes and presentation mode (issue 9), driven from the View menu and its keys as a user would."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QFont, QPalette
from PySide6.QtWidgets import QApplication

from app import appearance
from app.application import create_app
from app.main_window import MainWindow
from viewers import style

MATSCI1 = "llmsrbench/lsr-synth/material_science/MatSci1"
MAIN_DOCKS = ("browser", "detail", "fit", "run", "result", "loss")
SECONDARY = {"history", "llm", "lab", "candidates"}


_windows: list[MainWindow] = []


def _open(qtbot) -> MainWindow:
    create_app()
    win = MainWindow()
    _windows.append(win)  # closed and deleted when the test ends (see the fixture)
    win.resize(1600, 1000)
    win.show()
    qtbot.waitUntil(lambda: len(win.tasks) > 0, timeout=15000)
    return win


def _shut(win: MainWindow) -> None:
    win.controller.shutdown()
    win.loader.wait_all()


@pytest.fixture
def window(qtbot, isolated_home):
    font = QFont(QApplication.instance().font()) if QApplication.instance() else None
    win = _open(qtbot)
    yield win
    # Close and delete every window the test opened, so no hidden window of this test receives
    # the palette and font changes of the next one.
    for w in _windows:
        _shut(w)
        w.close()
        w.deleteLater()
    _windows.clear()
    QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    QApplication.processEvents()
    # Leave no trace for the tests that follow in this process: normal font, light look.
    if font is not None:
        QApplication.instance().setFont(font)
    QApplication.instance().setPalette(appearance.palette("light"))
    style.reset()


def _open_docks(win) -> set[str]:
    """Docks the user has open (a dock behind another's tab counts as open)."""
    return {key for key, dock in win.docks.items() if dock.toggleViewAction().isChecked()}


def _background(view):
    return view.backgroundBrush().color().getRgb()[:3]


def _lightness(color) -> int:
    return color.lightness()


def _wait_window_colour(qtbot, win, dark: bool) -> None:
    """Qt hands a new application palette to the widgets through its event loop."""
    if dark:
        qtbot.waitUntil(lambda: _lightness(win.palette().color(QPalette.ColorRole.Window)) < 80, timeout=5000)
    else:
        qtbot.waitUntil(lambda: _lightness(win.palette().color(QPalette.ColorRole.Window)) > 200, timeout=5000)


def _press(qtbot, win, key) -> None:
    win.activateWindow()
    qtbot.keyClick(win, key)


@pytest.mark.slow
def test_presentation_mode_toggles_on_and_off_exactly(window, qtbot):
    win, app = window, QApplication.instance()
    # A short GP run, so the loss curve and the fit viewer have something drawn.
    win.browser.select_task(MATSCI1)
    qtbot.waitUntil(lambda: win.run_panel.start_button.isEnabled(), timeout=5000)
    win.run_panel.set_value("seconds", 3)
    qtbot.mouseClick(win.run_panel.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not win.controller.is_running(), timeout=60000)
    qtbot.waitUntil(lambda: win.fit.plotted_point_count() > 0, timeout=30000)
    qtbot.waitUntil(lambda: not win.loader.busy(), timeout=30000)
    assert win.loss.point_count() > 0

    font = QFont(app.font())
    pen_width = win.loss.curve.opts["pen"].widthF()
    marker = win.fit.marker_size()
    docks = _open_docks(win)
    assert SECONDARY <= docks
    geometry = {key: win.docks[key].geometry() for key in docks}
    state = win.saveState()

    # F5 (View ▸ Presentation mode) turns it on.
    _press(qtbot, win, Qt.Key.Key_F5)
    assert win.appearance.presenting and win.appearance.presentation_action.isChecked()
    assert app.font().pointSizeF() == pytest.approx(font.pointSizeF() * appearance.FONT_SCALE, rel=0.01)
    assert win.loss.curve.opts["pen"].widthF() >= 2.5 * pen_width
    assert win.fit.marker_size() > 1.5 * marker
    tick_font = win.loss.plot.getAxis("left").style["tickFont"]
    assert tick_font is not None and tick_font.pointSizeF() > font.pointSizeF() * 1.4
    assert _background(win.loss.plot_widget) == (255, 255, 255)  # high contrast: pure white
    assert all(win.docks[key].isHidden() for key in SECONDARY)
    assert _open_docks(win) == docks - SECONDARY
    for key in MAIN_DOCKS:
        assert key in _open_docks(win)
    for key in ("browser", "run", "result", "loss"):
        assert win.docks[key].isVisible()

    # Esc leaves it: the exact font, pens, markers and dock layout come back.
    _press(qtbot, win, Qt.Key.Key_Escape)
    assert not win.appearance.presenting and not win.appearance.presentation_action.isChecked()
    assert app.font() == font and app.font().pointSizeF() == font.pointSizeF()
    assert win.loss.curve.opts["pen"].widthF() == pen_width
    assert win.fit.marker_size() == marker
    assert win.loss.plot.getAxis("left").style["tickFont"] is None
    assert _open_docks(win) == docks
    qtbot.waitUntil(lambda: {key: win.docks[key].geometry() for key in docks} == geometry, timeout=5000)
    assert win.saveState() == state

    # And the menu entry toggles it as well.
    win.appearance.presentation_action.trigger()
    assert win.appearance.presenting and app.font() != font
    win.appearance.presentation_action.trigger()
    assert not win.appearance.presenting and app.font() == font


def test_dark_theme_reaches_widgets_and_plots_and_is_remembered(window, qtbot, isolated_home):
    win = window
    menu_titles = [a.text() for a in win.menus["view"].actions()]
    assert "&Theme" in menu_titles and "&Presentation mode" in menu_titles
    assert win.appearance.theme == "system" and win.appearance.effective_theme() == "light"
    _wait_window_colour(qtbot, win, dark=False)

    win.appearance.theme_actions["dark"].trigger()  # View ▸ Theme ▸ Dark
    assert win.appearance.theme_actions["dark"].isChecked()
    assert not win.appearance.theme_actions["light"].isChecked()
    _wait_window_colour(qtbot, win, dark=True)
    assert _lightness(win.palette().color(QPalette.ColorRole.WindowText)) > 180
    assert win.palette().color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text) != \
        win.palette().color(QPalette.ColorGroup.Active, QPalette.ColorRole.Text)
    for view in (win.loss.plot_widget, win.pareto.plot_widget, win.fit.layout_widget,
                 win.detail.preview.plot_widget, win.lab_panel.scan.layout_widget):
        assert max(_background(view)) < 60, view
    axis = win.loss.plot.getAxis("bottom")
    assert axis.textPen().color().lightness() > 180 and axis.pen().color().lightness() > 180
    assert style.current().truth[0] > 200  # the near-black truth line is light on dark

    # A new window in the same home opens dark.
    win.close()
    _shut(win)
    again = _open(qtbot)
    try:
        assert again.appearance.theme == "dark" and again.appearance.theme_actions["dark"].isChecked()
        _wait_window_colour(qtbot, again, dark=True)
        assert max(_background(again.loss.plot_widget)) < 60
        again.appearance.theme_actions["light"].trigger()
        _wait_window_colour(qtbot, again, dark=False)
        assert _background(again.loss.plot_widget) == (255, 255, 255)
        assert again.loss.plot.getAxis("bottom").textPen().color().lightness() < 60
    finally:
        _shut(again)


def test_dark_presentation_combines_and_leaves_back_to_dark(window, qtbot):
    win, app = window, QApplication.instance()
    font = QFont(app.font())
    win.appearance.theme_actions["dark"].trigger()
    normal_dark = _background(win.loss.plot_widget)
    pen_width = win.loss.curve.opts["pen"].widthF()
    win.appearance.presentation_action.trigger()
    assert _background(win.loss.plot_widget) == (0, 0, 0)  # high contrast: pure black
    assert _background(win.fit.layout_widget) == (0, 0, 0)
    _wait_window_colour(qtbot, win, dark=True)
    assert app.font().pointSizeF() > font.pointSizeF() * 1.5
    assert win.loss.curve.opts["pen"].widthF() >= 2.5 * pen_width
    assert win.loss.plot.getAxis("left").textPen().color().getRgb()[:3] == (255, 255, 255)
    # Switching the theme while presenting keeps presentation mode.
    win.appearance.theme_actions["light"].trigger()
    assert win.appearance.presenting and _background(win.loss.plot_widget) == (255, 255, 255)
    win.appearance.theme_actions["dark"].trigger()
    win.appearance.presentation_action.trigger()
    assert _background(win.loss.plot_widget) == normal_dark
    assert app.font() == font and win.loss.curve.opts["pen"].widthF() == pen_width


def test_plots_opened_after_a_switch_follow_the_theme(window, qtbot):
    win = window
    win.appearance.theme_actions["dark"].trigger()
    win.robustness_action.trigger()  # Run ▸ Robustness…: a window made after the switch
    view = win.robustness_view
    qtbot.waitUntil(view.isVisible, timeout=5000)
    plot = view.plot
    assert max(_background(plot.plot_widget)) < 60
    assert plot.plot.getAxis("left").textPen().color().lightness() > 180
    # Already open windows follow later switches too, presentation mode included.
    win.appearance.presentation_action.trigger()
    assert _background(plot.plot_widget) == (0, 0, 0)
    assert plot.curve.opts["pen"].widthF() >= 5
    win.appearance.presentation_action.trigger()
    win.appearance.theme_actions["light"].trigger()
    assert _background(plot.plot_widget) == (255, 255, 255)
    assert plot.curve.opts["pen"].widthF() == pytest.approx(2)
    view.close()


def test_leaving_presentation_before_closing_saves_the_normal_layout(window, qtbot, isolated_home):
    from app import settings

    win = window
    docks = _open_docks(win)
    win.appearance.presentation_action.trigger()
    win.close()  # closes while presenting: the saved layout is still the normal one
    assert not win.appearance.presenting
    _shut(win)
    again = _open(qtbot)
    try:
        assert settings.settings().value(appearance.SETTINGS_KEY) is None  # presentation is not stored
        assert not again.appearance.presenting
        assert _open_docks(again) == docks
    finally:
        _shut(again)


def test_theme_and_presentation_keys_are_listed_without_clashes(window):
    from widgets.shortcuts_dialog import menu_shortcuts

    rows = menu_shortcuts(window)
    keys = [keys for _menu, _command, keys, _tip in rows]
    assert len(keys) == len(set(keys))
    commands = {command: keys for _menu, command, keys, _tip in rows}
    assert commands["Presentation mode"] == "F5" and commands["Full screen"] == "F11"


def test_reset_layout_while_presenting_keeps_the_presentation_layout(window, qtbot):
    before = _open_docks(window)
    _press(qtbot, window, Qt.Key.Key_F5)
    assert window.appearance.presenting
    reset = next(a for a in window.menus["view"].actions() if a.text().replace("&", "") == "Reset layout")
    reset.trigger()
    assert not (_open_docks(window) & SECONDARY)  # the secondary docks stay hidden
    assert set(MAIN_DOCKS) <= _open_docks(window)
    _press(qtbot, window, Qt.Key.Key_F5)
    assert not window.appearance.presenting and _open_docks(window) == before


_STALE_TAB_BARS_SCRIPT = """
import os, sys, time
sys.path.insert(0, os.getcwd())
from PySide6.QtWidgets import QTabBar
from app.application import create_app
from app.main_window import MainWindow

app = create_app()
win = MainWindow()
win.resize(1400, 850)
win.show()

def pump(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        time.sleep(0.01)

def visible_bars():
    return sum(1 for b in win.findChildren(QTabBar) if b.parent() is win and b.isVisible())

while not win.tasks:
    pump(0.1)
win.browser.select_task("llmsrbench/lsr-synth/material_science/MatSci1")
pump(1.0)
counts = [visible_bars()]
for _ in range(2):
    win.appearance.set_presentation(True)
    pump(0.5)
    win.appearance.set_presentation(False)
    pump(0.5)
    counts.append(visible_bars())
win._reset_layout()
pump(0.5)
counts.append(visible_bars())
print("BARS", *counts)
win.close()
"""


def test_no_stale_tab_bars_after_presentation_or_reset(tmp_path):
    """Qt 6 leaves the old dock tab bars on screen after restoreState (leaving presentation mode,
    Reset layout), drawn over the panels; the window hides them. Run in a fresh process: the
    leftover shows in a window that has only ever had this layout (before the fix: 1 2 3 4)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    env = {**os.environ, "KEPLERLAB_HOME": str(tmp_path), "QT_QPA_PLATFORM": "offscreen",
           "KEPLERLAB_NO_WELCOME": "1"}
    done = subprocess.run([sys.executable, "-c", _STALE_TAB_BARS_SCRIPT], cwd=Path(__file__).resolve().parents[2],
                          env=env, capture_output=True, text=True, timeout=300)
    line = next((ln for ln in done.stdout.splitlines() if ln.startswith("BARS")), None)
    assert line is not None, done.stdout + done.stderr
    counts = [int(n) for n in line.split()[1:]]
    assert counts[0] >= 1 and counts == [counts[0]] * len(counts), counts
