"""The window's engine work in engine hosts (engine.host): a run goes on in a process of its
own, a killed one leaves a run that resumes, and clicking through runs does not pile up
processes."""

from __future__ import annotations

import os
import signal
import sqlite3
import sys

import pytest
from PySide6.QtCore import Qt

pytest.importorskip("pytestqt")

from app.application import create_app  # noqa: E402
from app.controllers import KILL_AFTER  # noqa: E402
from app.main_window import MainWindow  # noqa: E402
from engine import host, paths  # noqa: E402
from engine.store import RunStore  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from stored_runs import FRONT, add_run  # noqa: E402

CKR1 = "llmsrbench/lsr-synth/chemistry/CKR1"


@pytest.fixture
def window(qtbot, isolated_home):
    create_app()
    win = MainWindow(restore_layout=False)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitUntil(lambda: len(win.tasks) > 0, timeout=20000)
    yield win
    win.controller.shutdown()
    win.loader.wait_all()
    win.scorer.wait_all()


def _pid_of_run(run_id: str) -> int:
    with sqlite3.connect(paths.default_db_path()) as db:
        return db.execute("SELECT pid FROM runs WHERE id=?", (run_id,)).fetchone()[0]


def _start(qtbot, win, task_id: str, seconds: float) -> None:
    assert win.browser.select_task(task_id)
    win.run_panel.set_value("seconds", seconds)
    qtbot.waitUntil(lambda: win.run_panel.start_button.isEnabled(), timeout=10000)
    qtbot.mouseClick(win.run_panel.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: win.controller.run_id is not None and win.loss.point_count() >= 2, timeout=60000)


@pytest.mark.slow
def test_a_run_goes_on_in_an_engine_process_and_its_results_reach_the_window(window, qtbot):
    _start(qtbot, window, CKR1, 4)
    run_id = window.controller.run_id
    worker = window.controller.call._host
    assert worker is not None and worker.pid != os.getpid()
    assert _pid_of_run(run_id) == worker.pid  # the run is recorded by that process
    qtbot.waitUntil(lambda: not window.controller.is_running(), timeout=60000)
    # The final model's fit and metrics, computed in that process, are drawn here.
    qtbot.waitUntil(lambda: window.fit.plotted_point_count() > 0, timeout=30000)
    record = window.store.get_run(run_id)
    assert record.status == "finished" and record.expression
    assert window.result.value("id", "nmse") is not None


@pytest.mark.slow
def test_a_killed_engine_process_leaves_an_interrupted_run_that_resume_finishes(window, qtbot):
    _start(qtbot, window, CKR1, 60)
    run_id = window.controller.run_id
    points = window.loss.point_count()
    os.kill(window.controller.call._host.pid, signal.SIGKILL)  # out of memory, a crash in C, a kill
    qtbot.waitUntil(lambda: "ended unexpectedly" in window.run_panel.status.text(), timeout=20000)
    qtbot.waitUntil(lambda: not window.controller.is_running(), timeout=20000)
    status = window.run_panel.status.text()
    assert "ended unexpectedly (killed by SIGKILL)" in status and "Resume interrupted run" in status
    assert window.store.get_run(run_id).status == "interrupted"  # now, not at the next start
    assert window.result.equation.text().startswith(f"Run {run_id} was interrupted")
    qtbot.waitUntil(lambda: window.recovery.notice.isVisible(), timeout=5000)
    assert "interrupted" in window.recovery.notice.text()

    assert window.recovery.resume(run_id)
    # Once it goes on (a Stop before its new process has taken it up leaves it interrupted, and
    # resumable: under a loaded machine that can take a while) ...
    qtbot.waitUntil(lambda: window.controller.run_id == run_id, timeout=30000)
    window.controller.stop()  # ... the rest of its 60 s is not needed: a Stop ends it with its best model
    qtbot.waitUntil(lambda: not window.controller.is_running(), timeout=60000)
    record = window.store.get_run(run_id)
    assert record.status in ("finished", "cancelled") and record.expression
    assert window.loss.point_count() >= points  # the curve went on from what was stored


def test_clicking_through_runs_quickly_leaves_few_engine_processes(window, qtbot):
    with RunStore(paths.default_db_path()) as store:  # four runs of MatSci1, each with its own front
        ids = [add_run(store, seed=seed) for seed in range(4)]
    window.refresh_history()
    qtbot.waitUntil(lambda: set(ids) <= set(window.history.run_ids()), timeout=10000)
    for _round in range(3):
        for run_id in ids:
            window.history.select_run(run_id)
            qtbot.wait(60)  # faster than a front can be scored: each click supersedes the last
    # Soon after the clicks, only what the last click asked for (scores, fit, preview) is still
    # at work: superseded work was stopped (without that, 25 processes were busy here).
    qtbot.waitUntil(lambda: sum(h.busy() for h in host.pool().hosts()) <= 3, timeout=int(1000 * (KILL_AFTER + 3)))
    qtbot.waitUntil(lambda: not window.scorer.busy() and not window.loader.busy(), timeout=60000)
    assert host.wait_idle(10)
    hosts = host.pool().hosts()
    assert len(hosts) <= host.pool().keep  # idle ones kept warm, no more
    assert all(h.alive() for h in hosts)
    # The last click's front was scored in full.
    assert window.displayed_run == ids[-1]
    # Its last scores come as queued signals that may follow the scoring thread's end.
    def scored_in_full():
        scores = window.candidates.score_dicts()
        return len(scores) == len(FRONT) and all(s["sa_status"] == "done" for s in scores.values())

    qtbot.waitUntil(scored_in_full, timeout=10000)
