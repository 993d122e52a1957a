"""Study mode in the window (issue 5): participants work through a study's tasks in the lab panel.

File ▸ Open study… → a participant id → the lab panel switches to the participant's current task
with the task picker, noise, round limit and Reset locked, the study's noise and round limit
applied, and every ``panel.event`` written to the study's session store as it happens (see
:mod:`engine.lab.study`). A study bar (object name ``studyBar``) shows "task k of N", the time
left and the Next task button; scores are shown according to the study's ``show_scores``; the
last task ends with a summary. File ▸ Study results… opens the instructor view: the aggregate
table with Export CSV / JSON.

The lab panel is not modified: it is driven through its public API and object names. Restoring a
resumed task's experiments writes the panel's public ``session`` and calls its refresh methods.
"""

from __future__ import annotations

from pathlib import Path
from html import escape

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (QDialog, QDialogButtonBox, QFileDialog, QHBoxLayout, QHeaderView, QInputDialog,
                               QLabel, QMainWindow, QMessageBox, QPushButton, QTableWidget, QTableWidgetItem,
                               QToolBar, QVBoxLayout, QWidget)

from engine.lab.study import (Study, StudyError, StudySession, aggregate, export_csv, export_json, load_study,
                              table_from_events, task_summary)
from engine.metrics.glossary import explain

STUDY_FILTER = "Study files (*.toml *.json);;All files (*)"
#: Lab panel controls a participant must not touch during a study (disabled) or see (hidden).
LOCKED = ("labTaskPicker", "labNoise", "labRoundLimit")
HIDDEN = ("labReset",)


def _fmt_seconds(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    return f"{seconds // 60}:{seconds % 60:02d}"


def _fmt(value, digits: int = 3) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.{digits}g}"
    return str(value)


class StudyBar(QWidget):
    """Status of the running study and its Next task button."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("studyBar")
        self.status = QLabel()
        self.status.setObjectName("studyStatus")
        self.status.setTextFormat(Qt.TextFormat.RichText)
        self.timer_label = QLabel()
        self.timer_label.setObjectName("studyTime")
        self.next_button = QPushButton("Next task ▸")
        self.next_button.setObjectName("studyNext")
        self.next_button.setToolTip("Finish this task and go on to the next one")
        self.end_button = QPushButton("Leave study")
        self.end_button.setObjectName("studyLeave")
        self.end_button.setToolTip("Stop for now; the same participant id resumes where you left off")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(6, 2, 6, 2)
        layout.addWidget(self.status, 1)
        layout.addWidget(self.timer_label)
        layout.addWidget(self.next_button)
        layout.addWidget(self.end_button)


class StudyController(QObject):
    """Runs a study on a :class:`widgets.lab_panel.LabPanel`.

    ``interactive=False`` (tests) never opens a dialog: errors are kept in ``last_error`` and
    the end summary in ``last_summary``."""

    started = Signal(str)  # participant
    task_started = Signal(str)  # task id
    finished = Signal(str)  # summary (HTML)
    closed = Signal()

    def __init__(self, panel, window: QWidget | None = None, show_lab=None, interactive: bool = True,
                 store_path: str | Path | None = None):
        super().__init__(window)
        self.panel = panel
        self.window = window
        self.show_lab = show_lab
        self.interactive = interactive
        self.store_path = store_path
        self.study: Study | None = None
        self.session: StudySession | None = None
        self.last_error: str | None = None
        self.last_summary: str | None = None
        self.results_dialog: InstructorDialog | None = None
        self._hidden_before: dict[str, bool] = {}
        self.bar = StudyBar()
        self.bar.next_button.clicked.connect(lambda: self.next_task())
        self.bar.end_button.clicked.connect(self.close_study)
        self.toolbar = None
        if isinstance(window, QMainWindow):
            self.toolbar = QToolBar("Study", window)
            self.toolbar.setObjectName("studyToolbar")
            self.toolbar.setMovable(False)
            self.toolbar.addWidget(self.bar)
            window.addToolBar(Qt.ToolBarArea.TopToolBarArea, self.toolbar)
            self.toolbar.hide()
        self.timer = QTimer(self)
        self.timer.setInterval(1000)
        self.timer.timeout.connect(self._tick)
        self.open_action = QAction("Open stud&y…", self)
        self.open_action.setStatusTip("Run a human-baseline study: pick a study file, then enter a participant id")
        self.open_action.triggered.connect(lambda: self.open_study())
        self.results_action = QAction("Study res&ults…", self)
        self.results_action.setStatusTip("Instructor view: accuracy, RMSLE, experiments and time per task; export")
        self.results_action.triggered.connect(lambda: self.open_results())

    # ------------------------------------------------------------------ messages

    def _error(self, title: str, message: str) -> None:
        self.last_error = message
        if self.interactive:
            QMessageBox.warning(self.window, title, message)

    def _dialog_parent(self) -> QWidget | None:
        return self.window if isinstance(self.window, QWidget) else None

    # ------------------------------------------------------------------ starting

    def open_study(self, path: str | Path | None = None, participant: str | None = None) -> bool:
        """Load a study file and start or resume a participant. Asks for what is not given."""
        if path is None:
            path, _ = QFileDialog.getOpenFileName(self._dialog_parent(), "Open study", "", STUDY_FILTER)
            if not path:
                return False
        try:
            study = load_study(path)
        except StudyError as exc:
            self._error("Study file not usable", str(exc))
            return False
        if participant is None:
            participant, ok = QInputDialog.getText(self._dialog_parent(), study.title,
                                                   f"<b>{escape(study.title)}</b><br>{len(study.tasks)} tasks.<br><br>"
                                                   "Participant id:")
            if not ok or not participant.strip():
                return False
        return self.start(study, participant)

    def start(self, study: Study, participant: str) -> bool:
        if self.session is not None:
            self.close_study()
        try:
            session = StudySession.open(study, participant, self.store_path)
        except StudyError as exc:
            self._error("Cannot start the study", str(exc))
            return False
        self.study, self.session = study, session
        self.last_summary = None
        self.last_error = None
        self._lock(True)
        self.panel.event.connect(self._on_event)
        if self.toolbar is not None:
            self.toolbar.show()
        if self.show_lab is not None:
            self.show_lab()
        self.started.emit(session.participant)
        if session.finished:
            self._finish()
        else:
            self._enter_task()
            self.timer.start()
        return True

    def _lock(self, on: bool) -> None:
        for name in LOCKED:
            w = self.panel.findChild(QWidget, name)
            if w is not None:
                w.setEnabled(not on)
        for name in HIDDEN + ("labScore",):
            w = self.panel.findChild(QWidget, name)
            if w is None:
                continue
            if on and (name != "labScore" or self.study.show_scores != "immediately"):
                w.setVisible(False)
            elif not on:
                w.setVisible(True)
        for w in self.panel.findChildren(QWidget):  # an agent runner, if the panel has one
            if w.objectName().startswith("labAgent"):
                w.setEnabled(not on)

    def _enter_task(self) -> None:
        """Show the participant's current task in the panel, as the store has it."""
        s, panel = self.session, self.panel
        task = s.current_task
        if not panel.set_task(task):
            self._error("Task not available", f"The lab cannot open {task}.")
            return
        panel.set_noise(self.study.noise)
        self._restore(task)
        panel.set_round_limit(self.study.round_limit)  # also refreshes the panel's buttons
        self._update_status()
        self.task_started.emit(task)

    def _restore(self, task: str) -> None:
        """Make the panel's table for this task what the store recorded (a resumed participant
        gets their experiments back; a table from before the study is dropped)."""
        from widgets.lab_panel import Experiment

        panel, ps = self.panel, self.panel.session
        events = self.session.events(task)
        outputs = panel.task.system.outputs
        rebuilt = []
        for e in table_from_events(events):
            result = e["result"]
            named = dict(result) if isinstance(result, dict) else {outputs[0].name: result}
            rebuilt.append(Experiment(dict(e["inputs"] or {}), result, named, float(e["noise"] or 0.0),
                                      int(e["round"] or 0), float(e["t"])))
        hyps = [e["payload"].get("text", "") for e in events if e["kind"] == "hypothesis"]
        ps.experiments[:] = rebuilt
        ps.batch.clear()
        ps.rounds = task_summary(events)["rounds"]
        ps.fit = None
        ps.score = None
        text = hyps[-1] if hyps else ""
        ps.hypothesis = ps.logged_hypothesis = text
        panel.set_hypothesis(text)
        for name in ("_show_fit_text", "_show_score", "_refresh_table", "_refresh_plots"):
            method = getattr(panel, name, None)
            if method is not None:
                method()

    # ------------------------------------------------------------------ recording

    def _on_event(self, event: dict) -> None:
        if self.session is None or self.session.finished:
            return
        try:
            self.session.record(event)
        except Exception as exc:  # noqa: BLE001 -- a full disk must not lose the participant silently
            self._error("Study data not saved", f"The event could not be written to {self.session.store.path}: "
                        f"{type(exc).__name__}: {exc}")
            return
        kind = event.get("kind")
        if kind == "batch_add" and int(event.get("size") or 0) > self.study.max_sets_per_round:
            ps = self.panel.session
            if ps is not None and ps.batch:
                ps.batch.pop()
            self.panel.set_round_limit(self.study.round_limit)  # refreshes the counter and buttons
            self.bar.status.setText(self._status_html() + f" · <span style='color:#b03a2e'>at most "
                                    f"{self.study.max_sets_per_round} parameter sets per round</span>")
            return
        if kind == "submit" and self.study.show_scores != "immediately":
            self.bar.status.setText(self._status_html() + " · <span style='color:#1e7a4f'>submission recorded"
                                    "</span>")
            return
        if kind in ("experiment", "submit", "reset", "undo"):
            self._update_status()

    # ------------------------------------------------------------------ status and time

    def _status_html(self) -> str:
        s = self.session
        if s is None:
            return ""
        if s.finished:
            return f"<b>{escape(self.study.title)}</b> · {s.participant} · finished"
        note = " · <i>resumed after an interruption: everything recorded is kept</i>" if s.interrupted else ""
        return (f"<b>{escape(self.study.title)}</b> · participant {s.participant} · task <b>{s.index + 1}</b> of "
                f"{s.n_tasks} · rounds {s.rounds_used()} of {self.study.round_limit}{note}")

    def _update_status(self) -> None:
        self.bar.status.setText(self._status_html())
        s = self.session
        last = s is not None and not s.finished and s.index == s.n_tasks - 1
        self.bar.next_button.setText("Finish ▸" if last else "Next task ▸")
        self.bar.next_button.setEnabled(s is not None and not s.finished)
        self._tick()

    def _tick(self) -> None:
        s = self.session
        if s is None or s.finished:
            self.bar.timer_label.setText("")
            return
        left = s.time_left()
        if left is None:
            self.bar.timer_label.setText(f"time on task {_fmt_seconds(s.time_on_task())}")
            return
        self.bar.timer_label.setText(f"time left <b>{_fmt_seconds(left)}</b>")
        if left <= 0:
            self.next_task(reason="time", confirm=False)

    # ------------------------------------------------------------------ moving on

    def next_task(self, reason: str = "next", confirm: bool = True) -> str | None:
        """End the current task; the next task id, or None at the end (the summary follows)."""
        s = self.session
        if s is None or s.finished:
            return None
        if confirm and self.interactive and s.last_submission() is None:
            answer = QMessageBox.question(self._dialog_parent(), "Next task",
                                          "You have not submitted a law for this task. Move on anyway?")
            if answer != QMessageBox.StandardButton.Yes:
                return None
        self.panel.shutdown()  # a submission being scored is recorded on this task first
        try:
            task = s.next_task(reason=reason)
        except Exception as exc:  # noqa: BLE001 -- a full or locked session file: say so, stay on the task
            self._error("Study data not saved", f"Moving on could not be written to {s.store.path}: {exc}. "
                        "You stay on this task; everything recorded before is kept.")
            return None
        if task is None:
            self._finish()
            return None
        self._enter_task()
        return task

    def summary_html(self) -> str:
        s = self.session
        show = self.study.show_scores in ("end", "immediately")
        head = "<tr><th>#</th><th>task</th><th>experiments</th><th>rounds</th><th>time</th>"
        head += "<th>RMSLE</th><th>form</th></tr>" if show else "</tr>"
        rows = []
        for i, task in enumerate(s.order, 1):
            summ = task_summary(s.events(task))
            cells = [str(i), task.split("/", 1)[1], str(summ["experiments"]), str(summ["rounds"]),
                     _fmt_seconds(summ["seconds"])]
            if show:
                sub = summ["submission"] or {}
                eq = sub.get("equivalent")
                cells += [_fmt(sub.get("rmsle")), "—" if not sub else ("✓" if eq else "✗" if eq is False else "?")]
            rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
        return (f"<b>{escape(self.study.title)}</b>: all {s.n_tasks} tasks done. Thank you, {s.participant}!"
                f"<table cellspacing=6>{head}{''.join(rows)}</table>")

    def _finish(self) -> None:
        self.timer.stop()
        self.last_summary = self.summary_html()
        self._update_status()
        self.bar.status.setText(self._status_html())
        for name in ("labRun", "labAddBatch", "labFit", "labSubmit"):
            w = self.panel.findChild(QWidget, name)
            if w is not None:
                w.setEnabled(False)
        self.finished.emit(self.last_summary)
        if self.interactive:
            QMessageBox.information(self._dialog_parent(), "Study finished", self.last_summary)

    def close_study(self) -> None:
        """Leave the study (everything is already stored) and give the panel back."""
        if self.session is None:
            return
        self.timer.stop()
        try:
            self.panel.event.disconnect(self._on_event)
        except (RuntimeError, TypeError):
            pass
        self.panel.shutdown()
        try:
            self.session.leave()
        except Exception:  # noqa: BLE001 -- a store fault on leaving loses nothing recorded before
            self.session.close()
        self.session = None
        self._lock(False)
        self.panel.set_round_limit(None)
        if self.toolbar is not None:
            self.toolbar.hide()
        self.closed.emit()

    # ------------------------------------------------------------------ instructor

    def open_results(self, path: str | Path | None = None) -> InstructorDialog | None:
        """File ▸ Study results…: the aggregate of a study file (the open study by default)."""
        study = self.study
        if path is None and study is None:
            path, _ = QFileDialog.getOpenFileName(self._dialog_parent(), "Study results", "", STUDY_FILTER)
            if not path:
                return None
        if path is not None:
            try:
                study = load_study(path)
            except StudyError as exc:
                self._error("Study file not usable", str(exc))
                return None
        try:
            dialog = InstructorDialog(study, self.store_path, self._dialog_parent(), interactive=self.interactive)
        except StudyError as exc:
            self._error("Study results", str(exc))
            return None
        self.results_dialog = dialog
        dialog.show()
        return dialog


class InstructorDialog(QDialog):
    """The aggregate per participant and task, the means per task, and exports."""

    COLUMNS = ("participant", "task", "accuracy", "RMSLE", "experiments", "rounds", "time", "submitted")
    TIPS = (
        "The participant's id as typed at the start of the study.",
        "The lab task (system, difficulty and domain).",
        "Symbolic accuracy: the share of submitted laws equivalent to the hidden law once constants may differ "
        "(NewtonBench's SA).",
        explain("rmsle"),
        "How many experiments the participant ran before submitting.",
        "How many rounds of experiments (one round is one press of Run).",
        "Time from opening the task to submitting the law.",
        "Whether a law was submitted before the task ended.",
    )

    def __init__(self, study: Study, store_path=None, parent: QWidget | None = None, interactive: bool = True):
        super().__init__(parent)
        self.setObjectName("studyResults")
        self.setWindowTitle(f"Study results — {study.title}")
        self.resize(900, 500)
        self.study = study
        self.store_path = store_path
        self.interactive = interactive
        self.summary = QLabel()
        self.summary.setObjectName("studySummary")
        self.table = QTableWidget(0, len(self.COLUMNS))
        self.table.setObjectName("studyAggregate")
        self.table.setHorizontalHeaderLabels(list(self.COLUMNS))
        for c, tip in enumerate(self.TIPS):
            self.table.horizontalHeaderItem(c).setToolTip(tip)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.refresh_button = QPushButton("Refresh")
        self.refresh_button.setObjectName("studyRefresh")
        self.csv_button = QPushButton("Export CSV…")
        self.csv_button.setObjectName("studyExportCsv")
        self.json_button = QPushButton("Export JSON…")
        self.json_button.setObjectName("studyExportJson")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.close)
        row = QHBoxLayout()
        for b in (self.refresh_button, self.csv_button, self.json_button):
            row.addWidget(b)
        row.addStretch(1)
        row.addWidget(buttons)
        self.paper_table = QTableWidget(0, 0)
        self.paper_table.setObjectName("studyPaperComparison")
        self.paper_table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.paper_note = QLabel()
        self.paper_note.setObjectName("studyPaperNote")
        self.paper_note.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addWidget(self.table, 2)
        layout.addWidget(QLabel("<b>Beside the paper's LLM agents</b>"))
        layout.addWidget(self.paper_table, 1)
        layout.addWidget(self.paper_note)
        layout.addLayout(row)
        self.refresh_button.clicked.connect(self.refresh)
        self.csv_button.clicked.connect(lambda: self.export("csv"))
        self.json_button.clicked.connect(lambda: self.export("json"))
        self.aggregate: dict = {}
        self.refresh()

    def refresh(self) -> dict:
        self.aggregate = agg = aggregate(self.study, self.store_path)
        rows = [(r["participant"], r["task"], _fmt(r["accuracy"]), _fmt(r["rmsle"]), str(r["experiments"]),
                 str(r["rounds"]), _fmt_seconds(r["seconds"]), "yes" if r["submitted"] else "no")
                for r in agg["rows"]]
        rows += [("mean", t["task"], _fmt(t["accuracy"]), _fmt(t["rmsle"]), _fmt(t["experiments"]),
                  _fmt(t["rounds"]), "—" if t["seconds"] is None else _fmt_seconds(t["seconds"]),
                  f"{t['submitted']} of {t['participants']}") for t in agg["tasks"]]
        self.table.setRowCount(len(rows))
        for i, values in enumerate(rows):
            for j, v in enumerate(values):
                item = QTableWidgetItem(v)
                if values[0] == "mean":
                    font = item.font()
                    font.setBold(True)
                    item.setFont(font)
                self.table.setItem(i, j, item)
        self.summary.setText(f"<b>{escape(self.study.title)}</b> · {len(agg['participants'])} participants · "
                             f"{len(self.study.tasks)} tasks · accuracy is the symbolic check of each final "
                             "submission (1 = equivalent)")
        self._show_paper(agg)
        return agg

    def _show_paper(self, agg: dict) -> None:
        """Per task: the study's mean accuracy beside the paper's LLM agents on the same kind of
        task (same system and difficulty, averaged over the 12 domains)."""
        from engine.lab import get_task
        from engine.lab.paper import SOURCE, paper_accuracy

        models = list(paper_accuracy("vanilla", "easy"))
        headers = ["task", "people (%)"] + [f"{m} (%)" for m in models]
        self.paper_table.setColumnCount(len(headers))
        self.paper_table.setHorizontalHeaderLabels(headers)
        self.paper_table.setRowCount(len(agg["tasks"]))
        for i, t in enumerate(agg["tasks"]):
            task = get_task(t["task"])
            people = "—" if t["accuracy"] is None else f"{100 * t['accuracy']:.0f}"
            values = [t["task"], people] + [f"{v:.1f}" for v in
                                            paper_accuracy(task.system_name, task.difficulty).values()]
            for j, v in enumerate(values):
                self.paper_table.setItem(i, j, QTableWidgetItem(v))
        self.paper_note.setText(f"LLM agents: {SOURCE}, vanilla agent, for tasks of the same system and "
                                "difficulty.")
        self.paper_table.resizeColumnsToContents()  # the models' names in full

    def export(self, fmt: str, path: str | Path | None = None) -> Path | None:
        if path is None:
            suggested = str(self.study.path.with_suffix(f".results.{fmt}"))
            path, _ = QFileDialog.getSaveFileName(self, f"Export study as {fmt.upper()}", suggested,
                                                  f"{fmt.upper()} (*.{fmt})")
            if not path:
                return None
        try:
            (export_csv if fmt == "csv" else export_json)(self.study, path, store_path=self.store_path)
        except (OSError, StudyError) as exc:
            if self.interactive:
                QMessageBox.warning(self, "Export failed", f"{path}: {exc}")
            return None
        return Path(path)


__all__ = ["StudyController", "StudyBar", "InstructorDialog"]
