"""The first-run welcome tour, driven as a newcomer would: clicks on the card's buttons, picking
a task in the browser, the Run panel's Stop, Help ▸ Welcome tour."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QApplication

pytest.importorskip("pytestqt")

from app import welcome  # noqa: E402
from app.application import create_app  # noqa: E402
from app.main_window import MainWindow  # noqa: E402

CKR2 = "llmsrbench/lsr-synth/chemistry/CKR2"
LEFT = Qt.MouseButton.LeftButton


def _open(qtbot) -> MainWindow:
    create_app()
    win = MainWindow()
    qtbot.addWidget(win)
    win.resize(1500, 950)
    win.show()
    qtbot.waitUntil(lambda: len(win.tasks) > 0, timeout=15000)
    return win


def _shut(win) -> None:
    win.controller.shutdown()
    win.loader.wait_all()


@pytest.fixture
def first_start(isolated_home, monkeypatch):
    """A fresh home where the welcome is allowed to open by itself."""
    monkeypatch.delenv(welcome.ENV_OFF, raising=False)
    return isolated_home


@pytest.fixture
def tour(qtbot, first_start):
    """The window of a first start, with the tour's card showing."""
    win = _open(qtbot)
    qtbot.waitUntil(win.welcome.is_open, timeout=5000)
    yield win
    _shut(win)


def _click(qtbot, button) -> None:
    assert button.isVisible() and button.isEnabled(), button.text()
    qtbot.mouseClick(button, LEFT)


def _done_stored() -> bool:
    return welcome.is_done()


def _help_action(win, text: str):
    return next(a for a in win.menus["help"].actions() if a.text().replace("&", "") == text)


def test_first_start_shows_the_card_once_the_catalog_is_in_and_a_second_start_does_not(qtbot, first_start):
    win = _open(qtbot)
    qtbot.waitUntil(win.welcome.is_open, timeout=5000)
    card = win.welcome.card
    assert card.step_label.text() == "Step 1 of 3"
    assert card.title.text() == "Pick a task"
    assert card.action_button.text() == "Pick one for me"
    # Not modal: the window under it still takes input, and the card lies inside the window.
    assert QApplication.activeModalWidget() is None
    assert win.rect().contains(card.geometry())
    assert card.parentWidget() is win
    # The browser is pointed at while on this step.
    light = win.welcome.spotlights[0]
    assert light.isVisible() and light.target is win.docks["browser"]
    win.close()  # the tour was seen
    _shut(win)
    assert _done_stored()

    again = _open(qtbot)
    qtbot.wait(300)  # the tour would open right after the catalog arrives
    assert not again.welcome.is_open()
    _shut(again)


def test_the_test_suite_switch_keeps_it_closed_and_help_opens_it(qtbot, isolated_home):
    win = _open(qtbot)  # KEPLERLAB_NO_WELCOME is set by tests/conftest.py
    qtbot.wait(300)
    assert not win.welcome.is_open()
    _help_action(win, "Welcome tour").trigger()
    assert win.welcome.is_open()
    assert win.welcome.card.step_label.text() == "Step 1 of 3"
    _shut(win)


def test_full_walkthrough_pick_run_reveal_done(qtbot, first_start, monkeypatch):
    monkeypatch.setattr(welcome, "RUN_SECONDS", 2)  # a short run for the test
    win = _open(qtbot)
    qtbot.waitUntil(win.welcome.is_open, timeout=5000)
    card = win.welcome.card

    _click(qtbot, card.action_button)  # Pick one for me
    assert win.browser.current_task_id() == welcome.FIRST_TASK
    assert win.current_task.id == welcome.FIRST_TASK
    assert card.step_label.text() == "Step 2 of 3"
    assert card.title.text() == "Run a discovery"
    assert win.welcome.spotlights[0].target is win.docks["run"]

    assert card.action_button.text() == "Start a 2-second run"
    _click(qtbot, card.action_button)
    assert win.controller.is_running()
    assert win.run_panel.current_method().name == "gp"
    assert win.run_panel.config()["seconds"] == 2
    assert not card.action_button.isEnabled()  # one run at a time
    qtbot.waitUntil(lambda: "best training error" in card.status.text() or card.title.text() == "Reveal the law",
                    timeout=60000)
    qtbot.waitUntil(lambda: card.title.text() == "Reveal the law", timeout=120000)
    assert card.step_label.text() == "Step 3 of 3"
    assert "Found:" in card.body.text()
    assert "Symbolic accuracy" in card.status.text()

    assert not win.detail.reveal_button.isChecked()
    _click(qtbot, card.action_button)  # Reveal the ground truth
    assert win.detail.reveal_button.isChecked()
    assert win.detail.truth.isVisible()
    assert "Pwr" in win.detail.truth.text()
    assert "What next" in card.extra.text()
    assert card.action_button.text() == "Done"

    _click(qtbot, card.action_button)  # Done
    assert not card.isVisible()
    assert not any(light.isVisible() for light in win.welcome.spotlights)
    assert _done_stored()
    assert "Tour finished" in win.status_label.text()
    _shut(win)


def test_picking_a_task_yourself_completes_step_one(tour, qtbot):
    card = tour.welcome.card
    assert not card.next_button.isEnabled()  # nothing picked yet
    qtbot.keyClicks(tour.browser.search, "CKR2")
    assert tour.browser.select_task(CKR2)  # as clicking it in the filtered tree does
    assert card.step_label.text() == "Step 2 of 3"
    assert "CKR2" in card.body.text()
    # Back shows the choice and lets the user go on with Next.
    _click(qtbot, card.back_button)
    assert card.step_label.text() == "Step 1 of 3"
    assert "CKR2" in card.status.text()
    _click(qtbot, card.next_button)
    assert card.step_label.text() == "Step 2 of 3"


def test_a_stopped_run_is_reported_and_can_be_run_again(tour, qtbot, monkeypatch):
    card = tour.welcome.card
    tour.welcome.run_seconds = 120  # long enough to be stopped by hand
    _click(qtbot, card.action_button)  # Pick one for me
    _click(qtbot, card.action_button)  # Start
    qtbot.waitUntil(lambda: tour.run_panel.stop_button.isEnabled(), timeout=10000)
    # A task picked during the run: the card says the run keeps going on the first one.
    assert tour.browser.select_task(CKR2)
    assert "while the run goes on" in card.status.text()
    assert tour.browser.select_task(welcome.FIRST_TASK)
    qtbot.mouseClick(tour.run_panel.stop_button, LEFT)
    qtbot.waitUntil(lambda: not tour.controller.is_running(), timeout=60000)
    qtbot.waitUntil(lambda: "stopped" in card.status.text(), timeout=10000)
    assert card.step_label.text() == "Step 2 of 3"  # still here, ready to retry
    assert card.action_button.isEnabled() and card.action_button.text().startswith("Run again")


def test_a_run_that_cannot_start_says_why(tour, qtbot, monkeypatch):
    card = tour.welcome.card
    _click(qtbot, card.action_button)  # Pick one for me

    def broken(*_args, **_kwargs):
        raise RuntimeError("the engine is missing")

    monkeypatch.setattr(tour.controller, "start", broken)
    _click(qtbot, card.action_button)
    assert "did not start" in card.status.text() and "engine is missing" in card.status.text()
    assert card.action_button.isEnabled()  # try again
    assert card.step_label.text() == "Step 2 of 3"


def test_skip_hides_and_remembers_and_help_reopens_at_step_one(tour, qtbot):
    card = tour.welcome.card
    _click(qtbot, card.action_button)  # to step 2
    assert card.step_label.text() == "Step 2 of 3"
    _click(qtbot, card.skip_button)
    assert not card.isVisible()
    assert _done_stored()
    assert "skipped" in tour.status_label.text()

    _help_action(tour, "Welcome tour").trigger()
    assert card.isVisible()
    assert card.step_label.text() == "Step 1 of 3"
    # The task is still selected, so step 1 is already complete: Next is ready.
    assert card.next_button.isEnabled()
    _click(qtbot, card.close_button)
    assert not card.isVisible()


def test_the_card_follows_the_window_and_can_be_dragged(tour, qtbot):
    card = tour.welcome.card
    before = card.geometry()
    tour.resize(1150, 760)
    qtbot.waitUntil(lambda: card.geometry() != before, timeout=5000)
    assert tour.rect().contains(card.geometry())
    # Dragged out of the way, it stays where it was put (inside the window).
    qtbot.wait(100)
    placed = card.pos()
    qtbot.mousePress(card, LEFT, pos=QPoint(30, 10))
    qtbot.mouseMove(card, QPoint(30 - 200, 10 - 150))
    qtbot.mouseRelease(card, LEFT, pos=QPoint(30 - 200, 10 - 150))
    moved = card.pos()
    assert moved.x() < placed.x() - 100 and moved.y() < placed.y() - 100
    tour.resize(1200, 800)
    qtbot.wait(100)
    assert card.pos() == moved
    assert tour.rect().contains(card.geometry())
