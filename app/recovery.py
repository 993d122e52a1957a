"""Resuming runs that a crash interrupted (issue 10; the engine side is engine/resume.py).

A run whose process died (a crash, ``kill -9``, a power cut) keeps everything it recorded, and
the next store to open the file marks it ``interrupted``. This module offers to continue it:

- a notice in the status bar when interrupted runs exist, with a link that resumes the newest;
- Run ▸ Resume interrupted run and the run history's right-click "Resume this run", for the
  selected interrupted run;
- the resumed run draws on from where it was: the loss curve and the Pareto front start with
  what the store holds, and new points follow. When it ends, its LLM calls (old and new) are
  read back from the store into the LLM panel.

A window started right after a crash may find the dead window's runs still 'running': the
engine process that ran them ends when it sees the pipe to its window close (on a busy
machine, a moment later), and a store marks a run interrupted only once its process is gone.
Those runs are looked at again every half second for up to 20 s, and the notice, the history
and the run on show follow.

Nothing here computes: the store reads are single-row or one run's progress (a few ms), and the
run itself goes through MainWindow.start_run onto the run thread like any other.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QLabel, QMessageBox

#: How often, and how many times, runs left 'running' by a window that just died are looked at.
LINGER_CHECK_MS = 500
LINGER_CHECKS = 40


class Recovery(QObject):
    def __init__(self, window):
        super().__init__(window)
        self.window = window
        self.resumed_run: str | None = None  # the run this module resumed, while it goes on

        self.action = QAction("Resume &interrupted run", window)
        self.action.setStatusTip("Continue the selected interrupted run (its process ended unexpectedly) with "
                                 "the budget it had left; everything it had recorded is kept")
        self.action.triggered.connect(lambda: self.resume())
        self.action.setEnabled(False)
        window.menus["run"].addAction(self.action)
        self.history_action = QAction("Resume this run", window)
        self.history_action.setStatusTip(self.action.statusTip())
        self.history_action.triggered.connect(lambda: self.resume())
        self.history_action.setEnabled(False)
        window.history.context_actions.append(self.history_action)

        self.notice = QLabel("")
        self.notice.setTextFormat(Qt.TextFormat.RichText)
        self.notice.setTextInteractionFlags(Qt.TextInteractionFlag.LinksAccessibleByMouse)
        self.notice.linkActivated.connect(lambda _link: self.resume(self.latest()))
        self.notice.setVisible(False)
        window.statusBar().addPermanentWidget(self.notice)

        window.history.runs_changed.connect(self._update)
        # The selection model's signal, not the table's: the table's is blocked when a run is
        # selected from code (session restore, Recent runs), and the entry must follow those too.
        # A selection only enables the entries (no store read); the notice follows the history.
        window.history.table.selectionModel().selectionChanged.connect(lambda *_a: self._update_actions())
        window.controller.started.connect(lambda _e: self._update())
        window.controller.idle.connect(self._on_idle)

        self._lingering = set(self._running_elsewhere())
        self._lingering_checks = 0
        self._linger = QTimer(self)
        self._linger.setInterval(LINGER_CHECK_MS)
        self._linger.timeout.connect(self._check_lingering)
        if self._lingering:
            self._linger.start()

    # ------------------------------------------------------------------ state

    def interrupted(self) -> list | None:
        """Interrupted runs in the store, newest first (None when the store cannot be read)."""
        if self.window.store is None:
            return []
        try:
            return self.window.store.interrupted_runs()
        except Exception:  # noqa: BLE001 -- a store fault is reported where the history is read
            return None

    def latest(self) -> str | None:
        runs = self.interrupted()
        return runs[0].id if runs else None

    def _selected(self):
        """The selected run's record as the history shows it (no store read)."""
        history = self.window.history
        run_id = history.selected_run_id() if len(history.selected_run_ids()) == 1 else None
        return next((r for r in history.records() if r.id == run_id), None) if run_id else None

    def _update_actions(self) -> None:
        record = self._selected()
        can = record is not None and record.status == "interrupted" and not self.window.controller.is_running()
        self.action.setEnabled(can)
        self.history_action.setEnabled(can)

    def _running_elsewhere(self) -> list[str]:
        """Runs 'running' on this host that this window is not running (no store read error
        reaches the user from here: the history reports those)."""
        store = self.window.store
        if store is None or store.read_only:
            return []
        try:
            ids = store.running_on_this_host()
        except Exception:  # noqa: BLE001
            return []
        return [i for i in ids if i != self.window.controller.run_id]

    def _check_lingering(self) -> None:
        """Mark the runs whose process has ended since the window opened; show what changed."""
        self._lingering_checks += 1
        window = self.window
        try:
            marked = window.store.mark_interrupted()
        except Exception:  # noqa: BLE001
            marked = 0
        still = set(self._running_elsewhere())
        ended, self._lingering = self._lingering - still, self._lingering & still
        if marked:
            window.refresh_history()  # the notice follows (runs_changed)
            if window.displayed_run in ended and not window.controller.is_running():
                window.open_run(window.displayed_run)  # it said 'running'; now it can be resumed
        if not self._lingering or self._lingering_checks >= LINGER_CHECKS:
            self._linger.stop()

    def _update(self) -> None:
        self._update_actions()
        running = self.window.controller.is_running()
        runs = [] if running else self.interrupted()  # an indexed lookup (runs_interrupted)
        if runs is None:  # a read that failed (a busy moment of the store) keeps what is shown
            return
        if runs:
            several = f"{len(runs)} runs were" if len(runs) > 1 else "A run was"
            self.notice.setText(f"{several} interrupted · <a href='resume'>Resume the latest</a>")
            self.notice.setToolTip("Their processes ended unexpectedly; everything they recorded is kept.\n"
                                   "Right-click a run in the run history to resume that one.\n"
                                   + "\n".join(f"{r.id}: {r.method} on {r.task_id}" for r in runs[:10]))
        self.notice.setVisible(bool(runs))

    # ------------------------------------------------------------------ resuming

    def resume(self, run_id: str | None = None) -> bool:
        """Continue ``run_id`` (default: the selected run). False, with a message, if it cannot."""
        window = self.window
        title = "Resume interrupted run"
        try:
            record = window.store.get_run(run_id) if (run_id and window.store is not None) else self._selected()
        except Exception as exc:  # noqa: BLE001 -- a store fault: say so, never raise into Qt
            QMessageBox.warning(window, title, f"Cannot read the run store: {exc}")
            return False
        if record is None:
            QMessageBox.information(window, title, "Select an interrupted run in the run history.")
            return False
        if record.status != "interrupted":
            QMessageBox.information(window, title, f"Run {record.id} is {record.status}; only an interrupted "
                                                   "run can be resumed.")
            return False
        if window.controller.is_running():
            QMessageBox.information(window, title, "A run is going; stop it or wait for it to end first.")
            return False
        task = window.task_for(record.task_id)
        if task is None:
            QMessageBox.information(window, title, f"The task {record.task_id} is not in this version's catalog "
                                                   "(an imported task that was removed?), so the run cannot go on.")
            return False
        try:
            # Read before the run goes on: what its new life records arrives as live events.
            progress = window.store.progress(record.id)
            front = window.store.last_front(record.id)
        except Exception as exc:  # noqa: BLE001
            QMessageBox.warning(window, title, f"Cannot read run {record.id} from the run store: {exc}")
            return False
        if window.current_task is None or window.current_task.id != task.id:
            window.select_task_or_variant(task)
        self.resumed_run = record.id
        window.start_run(record.method, dict(record.config), task=task, resume=record.id)
        if not window.controller.is_running():
            self.resumed_run = None
            return False
        # The curve and the front go on from what the run had recorded (start_run cleared them).
        window.loss.set_series([p["iteration"] for p in progress], [p["best_loss"] for p in progress])
        if front:
            window.candidates.set_front(front, front[-1]["iteration"])
        if window._is_llm_run(record):
            window._load_llm_calls(record)  # the calls before the crash (off the GUI thread)
        window.run_panel.show_status(f"Resuming run {record.id}…")
        self._update()
        return True

    def _on_idle(self) -> None:
        run_id, self.resumed_run = self.resumed_run, None
        if run_id is not None and run_id == self.window.displayed_run and self.window.store is not None:
            try:
                record = self.window.store.get_run(run_id)
            except Exception:  # noqa: BLE001 -- the history reports store faults
                record = None
            if record is not None and self.window._is_llm_run(record):
                self.window._load_llm_calls(record)  # the calls from before the crash too
        self._update()


def install(window) -> Recovery:
    return Recovery(window)
