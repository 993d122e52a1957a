"""Sessions and projects (issue 9).

Session: what was open comes back at the next start — the selected task (a noise variant too),
the run whose results were shown, the recent tasks and runs, and the open project with its
unsaved notes (the dock layout is MainWindow's). The small part (the selected task and run, the
recent lists) goes to ``settings.ini`` under ``session/`` when it changes. The open project —
its file, title, lists and the notes, which may be long — goes to a draft file of its own
(``session-project.json`` in the data folder, written whole or not at all by
engine.atomic) shortly after typing stops, when the project changes and when the window closes;
so choosing tasks and runs never rewrites the notes, and a crash loses at most the last second
of typing. A window made with ``restore_layout=False`` (the self-test, screenshots) neither
restores nor writes the session.

Projects: File ▸ New project / Open project… / Save project / Save project as… and the Project
dock (widgets/project_panel.py) gather tasks, runs and notes into a ``.klab`` file
(engine/project.py) that a colleague or a class opens in their own installation. Files are
read, written and imported off the GUI thread; the window title carries the project's name and
Qt's modified mark; closing with unsaved changes asks Save / Discard / Cancel.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDockWidget, QFileDialog, QMenu, QMessageBox

from engine import paths
from engine import project as pj
from engine.atomic import write_atomically
from engine.store import RunStore, StoreError
from engine.tasks import registry
from widgets.project_panel import ProjectPanel

from . import settings
from .controllers import Loader

#: Entries in File ▸ Recent runs and File ▸ Recent tasks.
RECENT_LIMIT = 10
#: Typing in the notes is written to the session this long after the last key (ms).
DRAFT_DELAY_MS = 700
PROJECT_FILTER = "Kepler Lab projects (*.klab);;All files (*)"

_KEY_TASK = "session/last_task"  # the name the window used before sessions had a module
_KEY_RUN = "session/last_run"
_KEY_RECENT_RUNS = "session/recent_runs"
_KEY_RECENT_TASKS = "session/recent_tasks"
_KEY_PROJECT = "session/project"  # where earlier versions kept the project draft (read once, then removed)
#: The open project's draft (file, title, lists, notes), beside settings.ini.
DRAFT_FILE = "session-project.json"


def draft_path() -> Path:
    return paths.data_dir() / DRAFT_FILE


def _read_draft():
    """The draft file's text, or None (missing or unreadable: the session starts without it)."""
    try:
        return draft_path().read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def install(window, restore: bool = True) -> "Session":
    return Session(window, restore)


def _json_list(value) -> list[str]:
    if not isinstance(value, str) or not value:
        return []
    try:
        items = json.loads(value)
    except ValueError:
        return []
    return [i for i in items if isinstance(i, str)][:RECENT_LIMIT] if isinstance(items, list) else []


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


class Session(QObject):
    """The window's session and its project; see the module notes."""

    #: The project changed on disk or in memory (title, modified mark).
    project_changed = Signal()
    #: A project file has been opened: its engine.project.OpenReport.
    project_opened = Signal(object)
    #: A project file has been written: its path.
    project_saved = Signal(str)

    def __init__(self, window, restore: bool = True):
        super().__init__(window)
        self.window = window
        self.persist = restore
        self.loader = Loader(self)  # project files are read and written here, off the GUI thread
        self.loader.ready.connect(self._on_ready)
        self.loader.error.connect(self._on_error)
        self.path: Path | None = None  # the project's file, once saved or opened
        self.created: str | None = None
        self.dirty = False
        self._edits = 0  # counts edits, so a save knows whether more came while it ran
        self._saving_edits: int | None = None
        self._after_save = None  # what to do once the file is written (close, open another…)
        self._open_path: Path | None = None
        self._open_edits = 0
        self._quiet_open = False
        self._select_after_open = True
        self._restoring = False
        self._catalog_seen = False
        self._after_catalog: list = []
        self._pending: set[str] = set()  # project files being read ("open") or written ("save")
        self._close_when_idle = False  # the window was closed while one was: close once done

        s = settings.settings()
        self.recent_runs = _json_list(s.value(_KEY_RECENT_RUNS))
        self.recent_tasks = _json_list(s.value(_KEY_RECENT_TASKS))
        saved_task, saved_run = s.value(_KEY_TASK), s.value(_KEY_RUN)
        saved_project = _read_draft()
        if saved_project is None:
            saved_project = s.value(_KEY_PROJECT)

        self.panel = ProjectPanel()
        self.dock = self._add_dock()
        self.panel.set_location(self._location())
        # Reading or writing a project file shows in the status bar's activity indicator.
        self.loader.activity.connect(self._on_activity)
        self._build_actions()

        self._draft_timer = QTimer(self)
        self._draft_timer.setSingleShot(True)
        self._draft_timer.setInterval(DRAFT_DELAY_MS)
        self._draft_timer.timeout.connect(self.save_draft)

        self.panel.edited.connect(self._on_edited)
        self.panel.task_activated.connect(self.show_task)
        self.panel.run_activated.connect(self.show_run)
        self.panel.add_task_requested.connect(self.add_current_task)
        self.panel.add_run_requested.connect(self.add_displayed_run)
        window.browser.task_selected.connect(self._on_task_chosen)
        window.detail.variant_requested.connect(self._on_task_chosen)
        window.history.run_selected.connect(self._on_run_shown)
        window.controller.started.connect(lambda event: self._on_run_shown(event.run_id))
        window.controller.finished.connect(lambda _r: self._rebuild_recent_runs())
        window.loader.ready.connect(self._on_window_loaded)
        window.close_hooks.append(self._on_close)
        # The unsaved-project question must be able to keep the window open, which a close hook
        # (run inside MainWindow.closeEvent) cannot: an event filter sees the close event first.
        window.installEventFilter(self)

        if restore:
            self._restore(saved_task, saved_run, saved_project)
        self._rebuild_recent_runs()
        self._rebuild_recent_tasks()
        self._update_title()

    # ------------------------------------------------------------------ construction

    def _add_dock(self) -> QDockWidget:
        window = self.window
        dock = QDockWidget("Project", window)
        dock.setObjectName("dock-project")
        dock.setWidget(self.panel)
        dock.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetMovable
                         | QDockWidget.DockWidgetFeature.DockWidgetFloatable
                         | QDockWidget.DockWidgetFeature.DockWidgetClosable)
        # Beside the run history. MainWindow installs the session before it restores the saved
        # layout, so the dock is part of both the default layout (View ▸ Reset layout) and the
        # saved one; if the window restored its layout first, Qt still kept the dock's place.
        if not window.restoreDockWidget(dock):
            window.addDockWidget(Qt.DockWidgetArea.TopDockWidgetArea, dock)
            if "history" in window.docks:
                window.tabifyDockWidget(window.docks["history"], dock)
        window.docks["project"] = dock
        view = window.menus.get("view")
        if view is not None:
            before = getattr(window, "lab_action", None)
            if before is not None and before in view.actions():
                view.insertAction(before, dock.toggleViewAction())
            else:
                view.addAction(dock.toggleViewAction())
        return dock

    def _build_actions(self) -> None:
        window = self.window
        menu = window.menus["file"]
        first = menu.actions()[0] if menu.actions() else None

        def action(text: str, slot, keys: str | None = None, tip: str = "") -> QAction:
            act = QAction(text, self)
            if keys:
                act.setShortcut(QKeySequence(keys))
            act.setStatusTip(tip)
            act.setToolTip(tip)
            act.triggered.connect(lambda _checked=False: slot())
            return act

        self.new_action = action("&New project", self.new_project,
                                 tip="Start an empty project: a title, notes, tasks and runs to share")
        self.open_action = action("&Open project…", self.open_project_dialog, "Ctrl+O",
                                  "Open a .klab project: its runs join your run history")
        self.save_action = action("&Save project", self.save_project, "Ctrl+S",
                                  "Save the project's title, notes, tasks and runs to its .klab file")
        self.save_as_action = action("Save project &as…", self.save_project_as, "Ctrl+Shift+S",
                                     "Save the project to a new .klab file")
        self.recent_runs_menu = QMenu("Recent &runs", window)
        self.recent_runs_menu.setToolTipsVisible(True)
        self.recent_runs_menu.aboutToShow.connect(self._rebuild_recent_runs)
        self.recent_tasks_menu = QMenu("Recent &tasks", window)
        self.recent_tasks_menu.setToolTipsVisible(True)
        self.recent_tasks_menu.aboutToShow.connect(self._rebuild_recent_tasks)
        for act in (self.new_action, self.open_action, self.save_action, self.save_as_action):
            menu.insertAction(first, act)
        menu.insertSeparator(first)
        menu.insertMenu(first, self.recent_runs_menu)
        menu.insertMenu(first, self.recent_tasks_menu)
        menu.insertSeparator(first)

    # ------------------------------------------------------------------ the session

    def _state(self) -> dict:
        return {
            "path": str(self.path) if self.path else None,
            "created": self.created,
            "title": self.panel.title(),
            "notes": self.panel.notes_text(),
            "tasks": self.panel.task_ids(),
            "runs": self.panel.run_ids(),
            "dirty": self.dirty,
        }

    def save_session(self) -> None:
        """Write the whole session: the selection and recent lists, and the project's draft."""
        self.save_selection()
        self.save_draft()

    def save_selection(self) -> None:
        """Write the selected task and run and the recent lists to settings.ini (small: done on
        every selection; no-op for a window that does not restore)."""
        if not self.persist:
            return
        w = self.window
        s = settings.settings()  # written back to the file when it goes out of scope
        task = w.current_task.id if w.current_task is not None else None
        for key, value in ((_KEY_TASK, task), (_KEY_RUN, w.displayed_run)):
            if value:
                s.setValue(key, value)
            else:
                s.remove(key)
        s.setValue(_KEY_RECENT_RUNS, json.dumps(self.recent_runs))
        s.setValue(_KEY_RECENT_TASKS, json.dumps(self.recent_tasks))

    def save_draft(self) -> None:
        """Write the open project (file, title, lists, notes) to the draft file; called by the
        draft timer after typing, when the project changes and when the window closes."""
        self._draft_timer.stop()
        if not self.persist:
            return
        text = json.dumps(self._state(), ensure_ascii=False)
        target = draft_path()
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            write_atomically(target, lambda fh: fh.write(text))
        except OSError as exc:
            self._say(f"Could not keep the project's draft in {target}: {exc.strerror or exc}")
            return
        s = settings.settings()
        if s.contains(_KEY_PROJECT):  # moved to the draft file
            s.remove(_KEY_PROJECT)

    def _restore(self, saved_task, saved_run, saved_project) -> None:
        """Put back the project at once; the task and the run once the catalog has loaded."""
        state = None
        if isinstance(saved_project, str) and saved_project:
            try:
                state = json.loads(saved_project)
            except ValueError:
                state = None
        if isinstance(state, dict):
            self._apply_state(state)
        task = saved_task if isinstance(saved_task, str) and saved_task else None
        run = saved_run if isinstance(saved_run, str) and saved_run else None
        if task or run:
            self._when_catalog(lambda: self._restore_selection(task, run))

    def _apply_state(self, state: dict) -> None:
        def ids(key):
            value = state.get(key)
            return [i for i in value if isinstance(i, str)] if isinstance(value, list) else []

        path = Path(state["path"]) if isinstance(state.get("path"), str) and state["path"] else None
        title = state.get("title") if isinstance(state.get("title"), str) else ""
        notes = state.get("notes") if isinstance(state.get("notes"), str) else ""
        self.created = state.get("created") if isinstance(state.get("created"), str) else None
        self._show_project(title, notes, ids("tasks"), ids("runs"), path)
        self.dirty = bool(state.get("dirty"))
        if path is None:
            return
        if not path.exists():
            self.path = None
            self.dirty = self.dirty or not self.panel.is_empty()
            self._note(f"The project file {path} is no longer there; its notes and lists are kept here "
                      "(File ▸ Save project as… to keep them).")
        elif not self.dirty:
            self.open_project(path, select=False, quiet=True)  # the file may have changed meanwhile

    def _restore_selection(self, task_id: str | None, run_id: str | None) -> None:
        w = self.window
        notes = []
        self._restoring = True
        try:
            if run_id:
                if w.store is not None and w.store.get_run(run_id) is not None:
                    w.open_run(run_id)
                    w.history.select_run(run_id, emit=False)
                else:
                    notes.append(f"the run {run_id} of your last session is no longer in the run store")
            if task_id and (w.current_task is None or w.current_task.id != task_id):
                if not self._select_task(task_id):
                    notes.append(f"the task {task_id} of your last session is not in the catalog")
        finally:
            self._restoring = False
        if notes:
            self._say("Skipped: " + "; ".join(notes) + ".")

    def _select_task(self, task_id: str) -> bool:
        """Select a task in the browser, or a noise variant through its base task."""
        w = self.window
        if task_id in w.tasks:
            return w.browser.select_task(task_id)
        task = w.task_for(task_id)
        base = task.metadata.get("base_task") if task is not None else None
        if base and base in w.tasks and w.browser.select_task(base):
            w.on_variant_requested(task_id)
            return w.current_task is not None and w.current_task.id == task_id
        return False

    def _when_catalog(self, callback) -> None:
        if self._catalog_seen and self.window.tasks:
            callback()
        else:
            self._after_catalog.append(callback)

    def _on_window_loaded(self, channel: str, _result) -> None:
        if channel != "catalog":
            return
        self._catalog_seen = True
        pending, self._after_catalog = self._after_catalog, []
        for callback in pending:
            callback()
        self._relabel_tasks()
        self._rebuild_recent_tasks()

    # A click in the browser or the history only notes the item: the menus are rebuilt when they
    # open (aboutToShow), not on every click (two rebuilds, a store read per run, cost the click
    # 10 ms).
    def _on_task_chosen(self, task_id: str) -> None:
        if not self._restoring:
            self._remember(self.recent_tasks, task_id)
        self.save_selection()

    def _on_run_shown(self, run_id: str) -> None:
        if run_id:
            self._remember(self.recent_runs, run_id)
        self.save_selection()

    @staticmethod
    def _remember(items: list[str], item: str) -> None:
        if item in items:
            items.remove(item)
        items.insert(0, item)
        del items[RECENT_LIMIT:]

    def _on_close(self) -> None:
        self.save_session()
        self.loader.wait_all()

    def _say(self, text: str) -> None:
        self.window.status_label.setText(text)

    def _note(self, text: str) -> None:
        """A message about the restored session: shown now, and again after the catalog has loaded
        (the window then reports the task count in the same place)."""
        self._say(text)
        if not self._catalog_seen:
            self._when_catalog(lambda: self._say(text))

    # ------------------------------------------------------------------ recent runs and tasks

    def run_label(self, run_id: str) -> tuple[str, str]:
        """The text and tooltip of a run in the menus and the project panel: task, method, test-ID
        NMSE and date."""
        record = self.window.store.get_run(run_id) if self.window.store is not None else None
        if record is None:
            return f"{run_id} (not in your run store)", f"Run {run_id} is not in {self.window.db_path}"
        nmse = (record.metrics.get("id") or {}).get("nmse") if isinstance(record.metrics, dict) else None
        score = f"NMSE {nmse:.3g}" if isinstance(nmse, (int, float)) else record.status
        date = time.strftime("%Y-%m-%d %H:%M", time.localtime(record.started_at))
        name = record.task_id.rsplit("/", 1)[-1]
        label = f"{_short(name, 40)} · {record.method} · {score} · {date}"
        tip = f"Run {run_id}: {record.method} on {record.task_id}, {record.status}"
        if record.expression:
            tip += f"\n{_short(record.expression, 200)}"
        return label, tip

    def task_label(self, task_id: str) -> tuple[str, str]:
        task = self.window.tasks.get(task_id)
        group = task_id.rsplit("/", 1)[0] if "/" in task_id else ""
        if task is None:
            name = task_id.rsplit("/", 1)[-1]
            return (f"{name} · {group}" if group else name), task_id
        return f"{task.name} · {group}", f"{task.title}\n{task_id}"

    def _rebuild_recent_runs(self) -> None:
        self._fill_recent(self.recent_runs_menu, self.recent_runs, self.run_label, self.open_recent_run,
                          "No runs yet", self.clear_recent_runs)

    def _rebuild_recent_tasks(self) -> None:
        self._fill_recent(self.recent_tasks_menu, self.recent_tasks, self.task_label, self.show_task,
                          "No tasks yet", self.clear_recent_tasks)

    @staticmethod
    def _fill_recent(menu: QMenu, ids: list[str], label_of, open_one, empty: str, clear_list) -> None:
        """A File ▸ Recent … menu: one entry per id (newest first), then Clear list."""
        menu.clear()
        for item_id in ids:
            label, tip = label_of(item_id)
            act = menu.addAction(label.replace("&", "&&"))
            act.setData(item_id)
            act.setToolTip(tip)
            act.triggered.connect(lambda _c=False, i=item_id: open_one(i))
        if not ids:
            menu.addAction(empty).setEnabled(False)
        menu.addSeparator()
        clear = menu.addAction("Clear list")
        clear.setEnabled(bool(ids))
        clear.triggered.connect(clear_list)

    def recent_run_actions(self) -> list[QAction]:
        """The entries of File ▸ Recent runs that open a run (the menu as it opens)."""
        self._rebuild_recent_runs()
        return [a for a in self.recent_runs_menu.actions() if a.data()]

    def open_recent_run(self, run_id: str) -> bool:
        return self.show_run(run_id)

    def clear_recent_runs(self) -> None:
        self.recent_runs.clear()
        self._rebuild_recent_runs()
        self.save_selection()

    def clear_recent_tasks(self) -> None:
        self.recent_tasks.clear()
        self._rebuild_recent_tasks()
        self.save_selection()

    # ------------------------------------------------------------------ showing a task or a run

    def show_task(self, task_id: str) -> bool:
        if not self.window.tasks:
            self._say("The task catalog is still loading; try again in a moment.")
            return False
        if self._select_task(task_id):
            self.window.docks["browser"].show()
            return True
        self._say(f"The task {task_id} is not in this installation's catalog.")
        return False

    def show_run(self, run_id: str) -> bool:
        w = self.window
        if w.store is None or w.store.get_run(run_id) is None:
            self._say(f"The run {run_id} is not in your run store.")
            if run_id in self.recent_runs:
                self.recent_runs.remove(run_id)
                self._rebuild_recent_runs()
                self.save_selection()
            return False
        w.open_run(run_id)
        w.history.select_run(run_id, emit=False)
        self._on_run_shown(run_id)
        return True

    # ------------------------------------------------------------------ the project in the panel

    def _show_project(self, title: str, notes: str, tasks: list[str], runs: list[str], path: Path | None) -> None:
        self.path = path
        self.panel.set_project(title, notes, [(t, *self.task_label(t)) for t in tasks],
                               [(r, *self.run_label(r)) for r in runs], self._location())

    def _location(self) -> str:
        return f"Saved in {self.path}" if self.path else "Not saved yet (File ▸ Save project)"

    def _relabel_tasks(self) -> None:
        self.panel.tasks.relabel({t: self.task_label(t) for t in self.panel.task_ids()})

    def project_name(self) -> str:
        if self.panel.title():
            return self.panel.title().replace("[*]", "[ * ]")  # [*] is Qt's modified mark in titles
        return self.path.stem if self.path else "Untitled project"

    def _on_edited(self) -> None:
        self._edits += 1
        self.dirty = True
        self._update_title()  # the title may have changed too
        self._draft_timer.start()  # the notes survive a crash

    def _set_clean(self) -> None:
        self.dirty = False
        self.panel.set_location(self._location())
        self._update_title()
        self.save_session()

    def _update_title(self) -> None:
        if self.path is None and self.panel.is_empty():
            self.window.setWindowTitle("Kepler Lab")
        else:
            # Qt draws the [*] placeholder as "*" (or the platform's mark) while the window is modified.
            self.window.setWindowTitle(f"{self.project_name()}[*] — Kepler Lab")
        self.window.setWindowModified(self.dirty)
        self.project_changed.emit()

    def add_current_task(self) -> bool:
        task = self.window.current_task
        if task is None:
            self._say("Select a task in the task browser first.")
            return False
        added = self.panel.add_task(task.id, *self.task_label(task.id))
        self._say(f"Added {task.id} to the project." if added else f"{task.id} is already in the project.")
        return added

    def add_displayed_run(self) -> bool:
        run_id = self.window.displayed_run
        if not run_id:
            self._say("Open a run from the run history (or run a method) first.")
            return False
        added = self.panel.add_run(run_id, *self.run_label(run_id))
        self._say(f"Added run {run_id} to the project." if added else f"Run {run_id} is already in the project.")
        return added

    # ------------------------------------------------------------------ New / Open / Save

    def ask_unsaved(self, doing: str) -> QMessageBox.StandardButton:
        """Save / Discard / Cancel for unsaved project changes before ``doing``."""
        buttons = QMessageBox.StandardButton
        return QMessageBox.question(
            self.window, "Unsaved project",
            f"The project “{self.project_name()}” has changes that are not saved.\n\nSave them before {doing}?",
            buttons.Save | buttons.Discard | buttons.Cancel, buttons.Save)

    def _may_replace(self, doing: str, then) -> bool:
        """Whether the open project may be replaced now. With unsaved changes the user chooses:
        Discard (yes), Cancel (no) or Save (no for now: ``then`` runs once the file is written)."""
        if not self.dirty:
            return True
        answer = self.ask_unsaved(doing)
        if answer == QMessageBox.StandardButton.Discard:
            return True
        if answer == QMessageBox.StandardButton.Save:
            self._after_save = then
            self.save_project()
        return False

    def new_project(self) -> bool:
        if not self._may_replace("starting a new project", self.new_project):
            return False
        self.created = None
        self._show_project("", "", [], [], None)
        self._set_clean()
        self.dock.show()
        self.dock.raise_()
        self.panel.title_edit.setFocus()
        self._say("New project: give it a title, write notes, add tasks and runs, then File ▸ Save project.")
        return True

    def open_project_dialog(self) -> None:
        if not self._may_replace("opening another project", self.open_project_dialog):
            return
        start = str(self.path.parent) if self.path else str(Path.home())
        path, _ = QFileDialog.getOpenFileName(self.window, "Open project", start, PROJECT_FILTER)
        if path:
            self.open_project(path)

    def open_project(self, path, select: bool = True, quiet: bool = False) -> None:
        """Read a project file and add its runs and imported tasks, off the GUI thread; then show
        it. ``quiet`` (reopening at start): problems go to the status bar, not a dialog."""
        path = Path(path)
        db_path = self.window.db_path

        def work(path=path):
            # read_project checks the whole file before anything is touched; open_into adds it
            # all or nothing, so a ProjectError or StoreError means nothing was changed.
            try:
                project = pj.read_project(path)
                with RunStore(db_path) as store:
                    report = pj.open_into(project, store)
            except (pj.ProjectError, StoreError) as exc:
                return "failed", path, str(exc)
            project.user_tasks.clear()  # installed; the panel needs only the lists
            return "opened", path, (project, report)

        self._quiet_open = quiet
        self._select_after_open = select
        self._open_path = path
        self._open_edits = self._edits
        self._busy("open", f"Opening the project {path.name}…")
        self.loader.request("open", work)

    def save_project(self) -> None:
        if self.path is None:
            self.save_project_as()
        else:
            self.save_to(self.path)

    def save_project_as(self) -> None:
        name = "".join(c if c.isalnum() or c in " -_." else "_" for c in self.project_name()).strip() or "project"
        start = self.path if self.path else Path.home() / f"{name}{pj.SUFFIX}"
        path, _ = QFileDialog.getSaveFileName(self.window, "Save project as", str(start), PROJECT_FILTER)
        if path:
            if Path(path).suffix.lower() != pj.SUFFIX:
                path += pj.SUFFIX
            self.save_to(path)
        else:
            self._after_save = None

    def save_to(self, path) -> bool:
        """Write the project to ``path`` off the GUI thread."""
        path = Path(path)
        w = self.window
        runs = self.panel.run_ids()
        if w.controller.is_running() and w.controller.run_id in runs:
            self._after_save = None
            QMessageBox.information(w, "Save project", f"The run {w.controller.run_id} in the project is still "
                                    "going; save the project when it has ended.")
            return False
        db_path = w.db_path
        snapshot = dict(task_ids=self.panel.task_ids(), run_ids=runs, notes=self.panel.notes_text(),
                        title=self.panel.title(),
                        current_task=w.current_task.id if w.current_task is not None else None,
                        created=self.created)
        self._saving_edits = self._edits

        def work(path=path, snapshot=snapshot):
            try:
                with RunStore(db_path) as store:
                    return "saved", path, pj.save_project(path, store, **snapshot)
            except (pj.ProjectError, StoreError) as exc:
                return "failed", path, str(exc)

        self._busy("save", f"Saving the project to {path}…")
        self.loader.request("save", work)
        return True

    def _busy(self, channel: str, text: str) -> None:
        self._pending.add(channel)
        self.window.activity.begin(f"project:{channel}", text)
        self._say(text)

    def busy(self) -> bool:
        """Whether a project file is being read or written."""
        return bool(self._pending)

    def _on_activity(self, channel: str, going: bool) -> None:
        if going:
            return
        self._pending.discard(channel)
        self.window.activity.end(f"project:{channel}")
        if self._close_when_idle and not self._pending:
            # The window was closed while the file was read or written: close it now (it asks
            # about unsaved changes again if there still are some).
            self._close_when_idle = False
            QTimer.singleShot(0, self.window.close)

    def _on_error(self, channel: str, message: str) -> None:
        """An unexpected failure in a worker (expected ones come back as results)."""
        self._on_ready(channel, ("error", None, message))

    def _on_ready(self, channel: str, result) -> None:
        outcome, path, payload = result
        w = self.window
        if channel == "save":
            if outcome in ("failed", "error"):
                self._after_save = None
                self._close_when_idle = False  # the window stays open with the unsaved project
                self._say(f"The project was not saved: {payload}")
                QMessageBox.warning(w, "Could not save the project", f"{payload}\n\nNothing was lost: the project "
                                    "is still open here; try another folder or name.")
                return
            saved: pj.SaveResult = payload
            self.path, self.created = saved.path, saved.created
            more_edits = self._saving_edits is not None and self._edits != self._saving_edits
            self.dirty = more_edits
            self.panel.set_location(self._location())
            self._update_title()
            self.save_session()
            note = f"Project saved to {saved.path} ({len(saved.runs)} runs, {saved.bytes / 1e6:.1f} MB)"
            if saved.missing_user_tasks:
                note += f"; the data of {', '.join(saved.missing_user_tasks)} are not here and were not included"
            self._say(note + ".")
            self.project_saved.emit(str(saved.path))
            then, self._after_save = self._after_save, None
            if then is not None:
                # With edits made during the save, ``then`` (close, new, open) asks about them again.
                QTimer.singleShot(0, then)
        elif channel == "open":
            quiet = self._quiet_open
            path = path or self._open_path
            if outcome in ("failed", "error"):
                if outcome == "failed":  # an expected fault, found before anything was added
                    after = "Nothing was changed: no run or task of the project was added."
                else:  # something unforeseen: the store's transaction was rolled back, but say less
                    after = ("Opening stopped on an unexpected error. The project's runs are added all together "
                             "or not at all; check the run history.")
                if quiet:
                    self._note(f"Could not reopen the project {path}: {payload}. Its notes and lists from your last "
                              "session are kept here.")
                else:
                    self._say(f"The project was not opened: {payload}")
                    QMessageBox.warning(w, "Could not open the project", f"{payload}\n\n{after}")
                return
            project, report = payload
            self._opened(path, project, report, quiet)

    def _opened(self, path: Path, project: pj.Project, report: pj.OpenReport, quiet: bool) -> None:
        w = self.window
        if quiet and self._edits != self._open_edits:
            # Reopened at start while the user was already editing: their edits win.
            w.refresh_history()
            return
        self.created = project.created or None
        self._show_project(project.title, project.notes, project.tasks, project.runs, path)
        self._set_clean()
        w.refresh_history()
        if report.installed_tasks:
            # New imported tasks: read the catalog again (off the GUI thread) before selecting.
            self._catalog_seen = False
            w.loader.request("catalog", registry.all_tasks)
        if self._select_after_open and project.current_task:
            current = project.current_task

            def select():
                if not self._select_task(current):
                    self._say(f"The project's task {current} is not in this installation's catalog.")

            self._when_catalog(select)
        if not quiet:
            self.dock.show()
            self.dock.raise_()
            summary = f"Opened the project {project.name}: {report.summary()}."
            self._say(summary)
            if report.installed_tasks:
                # The reloaded catalog reports its task count in the status bar: say it again after.
                self._when_catalog(lambda: self._say(summary))
            if report.conflicts:
                QMessageBox.warning(w, "Project opened with conflicts", "\n\n".join(report.conflicts))
        self.project_opened.emit(report)

    # ------------------------------------------------------------------ closing

    def eventFilter(self, obj, event) -> bool:
        try:
            closing = obj is self.window and event.type() == QEvent.Type.Close
        except RuntimeError:  # the window is being destroyed
            return False
        if closing and self._pending:
            # A project file is being written or read: closing now would cut it off (or lose
            # the question about unsaved changes). The close is queued until it is done.
            self._close_when_idle = True
            if "save" in self._pending:
                self._say("Saving the project… the window closes when it is written.")
            else:
                self._say("Opening the project… the window closes when it has been opened.")
            event.ignore()
            return True
        if closing and self.dirty:
            answer = self.ask_unsaved("closing Kepler Lab")
            if answer == QMessageBox.StandardButton.Discard:
                self.dirty = False  # the session keeps no stale draft of discarded edits
                self._restore_saved_notes_on_discard()
                return False
            if answer == QMessageBox.StandardButton.Save:
                self._after_save = self.window.close
                self.save_project()  # the window closes once the file is written
            event.ignore()
            return True
        return super().eventFilter(obj, event)

    def _restore_saved_notes_on_discard(self) -> None:
        """Discarded edits must not come back at the next start: the session then remembers the
        project file as saved (it is reopened from disk) or no project at all."""
        if self.path is None:
            self._show_project("", "", [], [], None)
        self.save_session()


__all__ = ["Session", "install", "RECENT_LIMIT"]
