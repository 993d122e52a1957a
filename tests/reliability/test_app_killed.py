"""The window killed with ``kill -9`` during a GP run, then started again: the run is shown as
interrupted with everything it had recorded, the status bar offers to resume it, and the
run history's "Resume this run" continues it to the end in the window (docs/guarantees.md)."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from PySide6.QtWidgets import QMessageBox

pytest.importorskip("pytestqt")

from app.application import create_app  # noqa: E402
from app.main_window import MainWindow  # noqa: E402
from engine import paths  # noqa: E402
from engine.store import StoreError  # noqa: E402

HERE = Path(__file__).resolve().parent
CKR2 = "llmsrbench/lsr-synth/chemistry/CKR2"


def _count(db: Path, sql: str) -> int:
    if not db.exists():
        return 0
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    try:
        return conn.execute(sql).fetchone()[0]
    except sqlite3.OperationalError:
        return 0
    finally:
        conn.close()


@pytest.mark.slow
def test_window_killed_mid_run_then_resumed_from_the_history(qtbot, isolated_home, monkeypatch):
    told: list[str] = []
    monkeypatch.setattr(QMessageBox, "information", staticmethod(lambda *a, **k: told.append(a[2])))
    env = dict(os.environ, KEPLERLAB_HOME=str(isolated_home), QT_QPA_PLATFORM="offscreen")
    env.pop("DISPLAY", None)
    app = subprocess.Popen([sys.executable, str(HERE / "crash_app.py"), "run", CKR2, "12"], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = app.stdout.readline()
    assert line.startswith("started "), app.stderr.read()
    run_id = line.split()[1]
    db = paths.default_db_path()
    deadline = time.monotonic() + 60
    while _count(db, "SELECT COUNT(DISTINCT report) FROM candidates") < 2:
        assert time.monotonic() < deadline and app.poll() is None, "the window's run reported no front"
        time.sleep(0.1)
    recorded = _count(db, "SELECT COUNT(*) FROM candidates")
    os.kill(app.pid, signal.SIGKILL)
    app.communicate(timeout=30)

    create_app()
    win = MainWindow()
    qtbot.addWidget(win)
    win.show()
    qtbot.waitUntil(lambda: len(win.tasks) > 0, timeout=20000)
    try:
        qtbot.waitUntil(lambda: win.store.get_run(run_id).status == "interrupted", timeout=20000)
        assert win.store.candidate_count(run_id) == recorded  # nothing recorded before the kill is lost
        # (At once, or within a moment: the killed window's engine process may outlive it by
        # that much, and its run is marked once it has gone.)
        notice = win.recovery.notice
        qtbot.waitUntil(notice.isVisible, timeout=20000)
        assert "A run was interrupted" in notice.text() and "Resume" in notice.text()
        qtbot.waitUntil(lambda: "was interrupted" in win.result.equation.text(), timeout=5000)
        assert "Resume interrupted run" in win.result.equation.text()
        # The session comes back with the killed run on show and selected, ready to resume.
        assert win.displayed_run == run_id and win.history.selected_run_ids() == [run_id]
        win.history.table.clearSelection()
        assert not win.recovery.action.isEnabled()  # nothing selected: the entry waits for a choice
        assert win.history.select_run(run_id)
        assert win.recovery.history_action.isEnabled() and win.recovery.action.isEnabled()
        win.recovery.history_action.trigger()  # the history's right-click "Resume this run"
        assert win.controller.is_running() and win.controller.run_id in (None, run_id)
        assert not win.recovery.notice.isVisible()
        # The curve goes on from the points recorded before the kill.
        assert win.loss.point_count() > 0
        qtbot.waitUntil(lambda: not win.controller.is_running(), timeout=60000)
        record = win.store.get_run(run_id)
        assert record.status == "finished" and record.expression
        assert win.store.candidate_count(run_id) > recorded
        assert "finished" in win.run_panel.status.text()
        assert not win.recovery.notice.isVisible() and told == []
        # A finished run cannot be resumed: the entry is off and a direct call says why.
        win.history.select_run(run_id)
        assert not win.recovery.history_action.isEnabled()
        assert not win.recovery.resume(run_id) and "only an interrupted run" in told[-1]
    finally:
        win.scorer.cancel()
        qtbot.waitUntil(lambda: not win.loader.busy() and not win.scorer.busy(), timeout=30000)
        win.close()
        win.controller.shutdown()
        win.loader.wait_all()


# A process that records a run as going on and then lives on until it is killed: as the engine
# process of a window killed a moment ago, which ends only when it sees its pipe close.
LINGERER = """
import sys
from engine.store import RunStore
store = RunStore()
print(store.create_run(sys.argv[1], "gp", {}, 0), flush=True)
sys.stdin.read()
"""


def test_a_run_whose_process_ends_after_the_window_opened_is_offered_for_resuming(qtbot, isolated_home,
                                                                                  monkeypatch):
    env = dict(os.environ, KEPLERLAB_HOME=str(isolated_home))
    lingerer = subprocess.Popen([sys.executable, "-c", LINGERER, CKR2], env=env, cwd=str(HERE.parents[1]),
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        run_id = lingerer.stdout.readline().strip()
        assert run_id, "the lingering process recorded no run"
        create_app()
        win = MainWindow(restore_layout=False)
        qtbot.addWidget(win)
        win.show()
        qtbot.waitUntil(lambda: len(win.tasks) > 0, timeout=20000)
        try:
            # Its process is alive: the run is going on as far as anyone can tell.
            assert win.store.get_run(run_id).status == "running"
            assert not win.recovery.notice.isVisible()
            assert win.history.select_run(run_id)
            qtbot.waitUntil(lambda: not win.opening_run(), timeout=5000)
            assert "running" in win.result.equation.text()
            os.kill(lingerer.pid, signal.SIGKILL)
            lingerer.wait(timeout=30)
            # Within a moment, without a restart: marked, offered, and shown as interrupted.
            qtbot.waitUntil(win.recovery.notice.isVisible, timeout=5000)
            assert "A run was interrupted" in win.recovery.notice.text()
            assert win.store.get_run(run_id).status == "interrupted"
            assert [r.status for r in win.history.records() if r.id == run_id] == ["interrupted"]
            qtbot.waitUntil(lambda: "was interrupted" in win.result.equation.text(), timeout=5000)
            assert win.history.select_run(run_id)
            assert win.recovery.history_action.isEnabled()
            qtbot.waitUntil(lambda: not win.recovery._linger.isActive(), timeout=5000)  # nothing left to watch
            # A read of the store that fails for a moment does not take the offer away.
            real = win.store.interrupted_runs
            monkeypatch.setattr(win.store, "interrupted_runs", lambda *a: (_ for _ in ()).throw(
                StoreError("the run store is busy", "locked")))
            win.refresh_history()
            assert win.recovery.notice.isVisible()
            monkeypatch.setattr(win.store, "interrupted_runs", real)
        finally:
            win.close()
            win.controller.shutdown()
            win.loader.wait_all()
    finally:
        if lingerer.poll() is None:
            lingerer.kill()
            lingerer.wait(timeout=30)
