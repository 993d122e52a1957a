"""Clicking through the run history keeps the history in front: each run opened fills the Task
and Fit panels behind their tabs instead of hiding the history (they share a tab group in the
default layout), so the next run is one click away. Opened from elsewhere (File ▸ Recent runs), or with another tab in front, a run's panels still
come forward."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

pytest.importorskip("pytestqt")

from app.application import create_app  # noqa: E402
from app.main_window import MainWindow  # noqa: E402
from engine import paths  # noqa: E402
from engine.store import RunStore  # noqa: E402
from stored_runs import MATSCI1, add_run  # noqa: E402

CKR1 = "llmsrbench/lsr-synth/chemistry/CKR1"
CKR1_FRONT = [{"expression": "-0.5*A", "complexity": 3, "loss": 0.2},
              {"expression": "-0.5*A + 0.1*t", "complexity": 7, "loss": 0.1}]


@pytest.fixture
def window(qtbot, isolated_home):
    with RunStore(paths.default_db_path()) as store:
        runs = {"matsci": add_run(store),
                "ckr1": add_run(store, front=CKR1_FRONT, chosen="-0.5*A + 0.1*t", task_id=CKR1, seed=2)}
    create_app()
    win = MainWindow(restore_layout=False)
    qtbot.addWidget(win)
    win.resize(1400, 900)
    win.show()
    qtbot.waitUntil(lambda: len(win.tasks) > 0, timeout=15000)
    win.runs = runs
    yield win
    win.scorer.cancel()
    qtbot.waitUntil(lambda: not win.loader.busy() and not win.scorer.busy(), timeout=30000)


def _in_front(dock) -> bool:
    """On screen: Qt keeps a dock behind another tab "visible", moved out of the window."""
    return dock.isVisible() and not dock.visibleRegion().isEmpty()


def _click_run(qtbot, win, run_id: str) -> None:
    table = win.history.table
    row = win.history.run_ids().index(run_id)
    rect = table.visualItemRect(table.item(row, 1))
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def test_runs_opened_from_the_history_leave_the_history_in_front(window, qtbot):
    win = window
    history, fit, detail = win.docks["history"], win.docks["fit"], win.docks["detail"]
    assert history in win.tabifiedDockWidgets(fit)  # the default layout this is about
    history.raise_()
    qtbot.waitUntil(lambda: _in_front(history), timeout=5000)
    for key in ("matsci", "ckr1", "matsci"):  # each click changes task, so Task and Fit change
        _click_run(qtbot, win, win.runs[key])
        qtbot.waitUntil(lambda: win.fit.current is not None and win.displayed_run == win.runs[key], timeout=30000)
        assert win.current_task.id == (MATSCI1 if key == "matsci" else CKR1)
        assert _in_front(history) and not _in_front(fit) and not _in_front(detail)
        assert win.history.selected_run_id() == win.runs[key]
    assert win.fit.current.title and win.detail.preview is not None

    # With another tab in front (the history floated elsewhere, say), a run picked in the
    # history brings its fit forward as before; so does one opened from File ▸ Recent runs.
    detail.raise_()
    qtbot.waitUntil(lambda: _in_front(detail), timeout=5000)
    win.history.select_run(win.runs["ckr1"])
    qtbot.waitUntil(lambda: _in_front(fit), timeout=30000)
    history.raise_()
    qtbot.waitUntil(lambda: _in_front(history), timeout=5000)
    entry = next(a for a in win.session.recent_run_actions() if a.data() == win.runs["matsci"])
    entry.trigger()  # not a click in the history: the run's panels come forward over it
    qtbot.waitUntil(lambda: win.displayed_run == win.runs["matsci"] and _in_front(fit), timeout=30000)
    # And a task picked in the browser shows its Task panel even over the history.
    history.raise_()
    qtbot.waitUntil(lambda: _in_front(history), timeout=5000)
    assert win.browser.select_task("feynman/I.6.2a")
    qtbot.waitUntil(lambda: _in_front(detail), timeout=5000)
