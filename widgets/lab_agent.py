"""“Let an agent try” in the lab panel (issue 5).

An agent (NewtonBench's vanilla LLM agent, the code-assisted one, or the no-LLM baseline) works on
the lab panel's current task: :func:`engine.lab.agents.run_agent` runs on a QThread
(``app.worker.start_job``), its experiments go into the panel's experiment table as rows marked
as the agent's (so a person's and an agent's experiments sit side by side), its conversation goes
into a read-only transcript beside the plots, and its final law and score go into the score area
(never the ground truth). Stop cancels through the run context; the GUI thread never waits.

Every agent action is also emitted through the panel's ``event`` signal (kinds ``agent_start``,
``agent_experiment``, ``agent_message`` (roles system / user / assistant, and ``code`` for a
Python block of the code-assisted agent), ``agent_submission``, ``agent_result``) so the study
mode records them.

Object names: ``labAgentGroup``, ``labAgentChoice``, ``labAgentStart``, ``labAgentStop``,
``labAgentStatus``, ``labAgentShowTranscript``, ``labTranscript``, ``labTranscriptBox``.
"""

from __future__ import annotations

import math
import time
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QFontDatabase, QTextCursor
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QGridLayout,
    QGroupBox,
    QLabel,
    QPushButton,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

#: The agents offered, in this order, with their labels in the picker.
AGENT_CHOICES = (
    ("vanilla", "LLM agent (vanilla)"),
    ("code", "LLM agent with Python (code-assisted)"),
    ("baseline", "Baseline (no LLM)"),
)
LLM_AGENTS = ("vanilla", "code")

#: Colours of the transcript's roles (Okabe–Ito, readable on white).
ROLE_COLOURS = {
    "system": "#6b6b6b",
    "user": "#0072B2",  # the environment (the lab)
    "assistant": "#B35900",  # the agent
    "code": "#7a3e9d",
    "experiment": "#1e7a4f",
    "submission": "#009E73",
    "log": "#888888",
    "error": "#b03a2e",
}
ROLE_TITLES = {"system": "system", "user": "lab", "assistant": "agent"}
#: Lines of the (long, standing) system prompt shown before it is cut.
SYSTEM_LINES = 8
#: Tint of an agent's rows in the experiment table.
AGENT_ROW_TINT = "#fff1dc"

NO_ENDPOINT_TEXT = ("No LLM endpoint is configured: set one in Run ▸ LLM settings… (or pick the baseline, "
                    "which needs no LLM).")


def agent_label(agent: str) -> str:
    return dict(AGENT_CHOICES).get(agent, agent)


def short_agent_name(agent: str) -> str:
    """What the experiment table's "by" column says for the agent's rows."""
    return {"vanilla": "agent: LLM", "code": "agent: LLM+Python", "baseline": "agent: baseline"}.get(
        agent, f"agent: {agent}")


def llm_endpoint_saved() -> bool:
    """Whether Run ▸ LLM settings… has saved an endpoint (the built-in default is only a guess)."""
    from app.settings import settings

    s = settings()
    value = s.value("llm/settings")
    return isinstance(value, str) and bool(value.strip())


def agent_config(agent: str, *, noise: float, max_rounds: int | None, seed: int,
                 saved: dict | None = None) -> dict[str, Any]:
    """The configuration the panel gives ``run_agent``: the agent's defaults, the saved LLM
    settings (LLM agents only; ``saved`` defaults to :func:`app.settings.load_llm_settings`),
    the panel's noise level and round limit (None: NewtonBench's 10) and the session's seed."""
    from engine.lab.agents import DEFAULT_ROUNDS, default_config

    defaults = default_config(agent)
    config: dict[str, Any] = {}
    if agent in LLM_AGENTS:
        from app.settings import load_llm_settings, merge_llm_config

        config = merge_llm_config(defaults, config, load_llm_settings() if saved is None else saved)
    config.update(noise=float(noise), max_rounds=int(max_rounds or DEFAULT_ROUNDS), seed=int(seed) % (2 ** 32))
    return config


def public_evaluation(evaluation: dict | None) -> dict | None:
    """The evaluation without the ground truth (and with a symbolic reason that does not show it)."""
    if evaluation is None:
        return None
    from widgets.lab_panel import public_reason

    public = {k: v for k, v in evaluation.items() if k not in ("ground_truth", "truth")}
    public["symbolic"] = dict(public.get("symbolic") or {})
    public["symbolic"]["reason"] = public_reason(public["symbolic"].get("reason", ""))
    return public


def _esc(text: Any) -> str:
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _finite(value) -> float | None:
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def _pre(text: str, colour: str = "#222") -> str:
    return (f"<pre style='margin: 0 0 0 12px; color: {colour}; white-space: pre-wrap;'>{_esc(text.rstrip())}"
            "</pre>")


def _head(role: str, title: str, round_no: int | None = None) -> str:
    colour = ROLE_COLOURS.get(role, "#222")
    where = f" <span style='color:#888'>· round {round_no}</span>" if round_no else ""
    return f"<p style='margin: 6px 0 0 0'><b style='color:{colour}'>{_esc(title)}</b>{where}</p>"


def transcript_html(event) -> str | None:
    """One block of the transcript for an agent event (None: not shown)."""
    from engine.lab.agents import AgentCode, AgentExperiment, AgentMessage, AgentResult, AgentSubmission
    from engine.methods.base import Log

    if isinstance(event, AgentMessage):
        text = event.text
        if event.role == "system":
            lines = text.splitlines()
            if len(lines) > SYSTEM_LINES:
                text = "\n".join(lines[:SYSTEM_LINES]) + f"\n… ({len(lines) - SYSTEM_LINES} more lines of instructions)"
        colour = {"assistant": "#3d2200", "system": "#555"}.get(event.role, "#12324a")
        return _head(event.role, ROLE_TITLES.get(event.role, event.role), event.round) + _pre(text, colour)
    if isinstance(event, AgentExperiment):
        if event.error:
            return (_head("error", "experiment not run", event.round)
                    + _pre(event.error, ROLE_COLOURS["error"]))
        n = len(event.results)
        return (f"<p style='margin: 2px 0 0 12px; color:{ROLE_COLOURS['experiment']}'>▶ {n} experiment"
                f"{'s' if n != 1 else ''} measured; added to the table</p>")
    if isinstance(event, AgentCode):
        status = "ran" if event.ok else ("not counted: " if not event.counted else "") + "failed"
        block = _head("code", f"python ({status}, {event.seconds:.2g} s)", event.round) + _pre(event.source, "#3b1d4d")
        if event.output:
            block += _pre("output:\n" + event.output, "#333")
        if event.error:
            block += _pre("error: " + event.error, ROLE_COLOURS["error"])
        return block
    if isinstance(event, AgentSubmission):
        how = {"submitted": "submitted", "forced": "submitted when the rounds ran out",
               "missing": "no law: the NaN function stands in", "fitted": "fitted"}.get(event.how, event.how)
        return _head("submission", f"law ({how})", event.round) + _pre(event.law, "#0b4d3a")
    if isinstance(event, Log):
        colour = ROLE_COLOURS["error"] if event.level in ("warning", "error") else ROLE_COLOURS["log"]
        return f"<p style='margin: 2px 0 0 0; color:{colour}'><i>{_esc(event.message)}</i></p>"
    if isinstance(event, AgentResult):
        ev = public_evaluation(event.evaluation)
        if ev is None:
            text = f"ended ({event.stop_reason}) after {event.rounds} rounds, {event.experiments} experiments; not scored"
        else:
            rm = _finite(ev.get("rmsle"))
            verdict = {True: "symbolically equivalent", False: "not equivalent"}.get(
                (ev.get("symbolic") or {}).get("equivalent"), "undecided")
            text = (f"ended ({event.stop_reason}) after {event.rounds} rounds, {event.experiments} experiments: "
                    f"RMSLE {'—' if rm is None else f'{rm:.3g}'}, {verdict}")
        return f"<p style='margin: 8px 0 0 0'><b>■ {_esc(text)}</b></p>"
    return None


class TranscriptView(QTextEdit):
    """The agent's transcript: read-only, monospace, roles coloured."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("labTranscript")
        self.setAccessibleName("Agent transcript")
        self.setReadOnly(True)
        self.setUndoRedoEnabled(False)
        font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        font.setPointSizeF(max(7.5, font.pointSizeF() - 1))
        self.setFont(font)
        self.document().setDefaultStyleSheet("pre { font-family: monospace; }")
        self.setPlaceholderText("When an agent works on the task, its conversation appears here: the lab's "
                                "messages, the agent's replies, its Python analyses and the law it submits.")
        self._blocks: list[str] = []

    def add(self, html: str) -> None:
        self._blocks.append(html)
        bar = self.verticalScrollBar()
        at_end = bar.value() >= bar.maximum() - 4
        cursor = self.textCursor()
        cursor.movePosition(QTextCursor.MoveOperation.End)
        if not self.document().isEmpty():
            cursor.insertBlock()
        cursor.insertHtml(html)
        if at_end:
            bar.setValue(bar.maximum())

    def clear_transcript(self) -> None:
        self._blocks = []
        self.clear()

    def blocks(self) -> list[str]:
        return list(self._blocks)


class AgentSection(QGroupBox):
    """The agent controls of the lab panel's control column."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__("Let an agent try", parent)
        self.setObjectName("labAgentGroup")
        self.choice = QComboBox()
        self.choice.setObjectName("labAgentChoice")
        self.choice.setAccessibleName("Agent")
        for name, label in AGENT_CHOICES:
            self.choice.addItem(label, name)
        self.choice.setToolTip("Which agent works on this task: an LLM (endpoint from Run ▸ LLM settings…), an LLM "
                               "that may also run Python in the sandbox, or the no-LLM baseline")
        self.start_button = QPushButton("Start agent")
        self.start_button.setObjectName("labAgentStart")
        self.start_button.setToolTip("Let the agent run experiments on this task with the noise and round limit "
                                     "above; its rows appear in the table, marked as the agent's")
        self.stop_button = QPushButton("Stop")
        self.stop_button.setObjectName("labAgentStop")
        self.stop_button.setToolTip("Stop the agent (its experiments stay in the table)")
        self.stop_button.setEnabled(False)
        self.show_transcript = QCheckBox("Show transcript")
        self.show_transcript.setObjectName("labAgentShowTranscript")
        self.show_transcript.setToolTip("Show the agent's conversation beside the plots")
        self.status = QLabel("An agent can work on the same task; compare its experiments with yours.")
        self.status.setObjectName("labAgentStatus")
        self.status.setWordWrap(True)
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self.status.setStyleSheet("color: palette(placeholder-text);")
        self.status.setMinimumHeight(50)
        self.status.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        grid = QGridLayout(self)
        grid.addWidget(self.choice, 0, 0, 1, 2)
        grid.addWidget(self.start_button, 1, 0)
        grid.addWidget(self.stop_button, 1, 1)
        grid.addWidget(self.show_transcript, 2, 0, 1, 2)
        grid.addWidget(self.status, 3, 0, 1, 2)

    def say(self, text: str, level: str = "info") -> None:
        colour = {"info": "#555", "ok": "#1e7a4f", "error": "#b03a2e", "busy": "#8a5a00"}.get(level, "#555")
        self.status.setStyleSheet(f"color: {colour};")
        self.status.setText(text)


def transcript_box(view: TranscriptView) -> QWidget:
    box = QWidget()
    box.setObjectName("labTranscriptBox")
    layout = QVBoxLayout(box)
    layout.setContentsMargins(2, 2, 2, 2)
    title = QLabel("<b>Agent transcript</b> <span style='color:#888'>(<span style='color:#0072B2'>lab</span>, "
                   "<span style='color:#B35900'>agent</span>, <span style='color:#7a3e9d'>python</span>, "
                   "<span style='color:#009E73'>law</span>)</span>")
    layout.addWidget(title)
    layout.addWidget(view, 1)
    return box


class AgentRunner(QObject):
    """Runs one agent at a time for a :class:`~widgets.lab_panel.LabPanel` and feeds its events
    into the panel (table, transcript, score area, ``event`` signal)."""

    finished = Signal(object)  # the public result: dict (law, evaluation, stop_reason, …) or {"error"}

    def __init__(self, panel, section: AgentSection, transcript: TranscriptView):
        super().__init__(panel)
        self.panel = panel
        self.section = section
        self.transcript = transcript
        self.job = None
        self.context = None
        self.agent: str | None = None
        self._session = None
        self._stopping = False
        self._calls = 0
        self._experiments = 0
        self._round = 0
        self._started = 0.0
        self._noise_level = 0.0
        self._result: dict | None = None
        section.start_button.clicked.connect(lambda: self.start())
        section.stop_button.clicked.connect(self.stop)

    # ------------------------------------------------------------------ control

    def is_running(self) -> bool:
        return self.job is not None

    def start(self, agent: str | None = None) -> bool:
        """Start ``agent`` (default: the picker's) on the panel's task; False with a message when
        it cannot start (already running, no task, an LLM agent with no endpoint saved)."""
        from app.worker import start_job
        from engine.lab.agents import run_agent
        from engine.methods.base import RunContext

        panel = self.panel
        if self.job is not None or panel.task is None or panel.session is None:
            return False
        if agent is not None:
            index = self.section.choice.findData(agent)
            if index < 0:
                raise KeyError(f"unknown agent {agent!r}")
            self.section.choice.setCurrentIndex(index)
        agent = self.section.choice.currentData()
        if agent in LLM_AGENTS and not llm_endpoint_saved():
            self.section.say(NO_ENDPOINT_TEXT, "error")
            panel._emit("agent_start", ok=False, agent=agent, error="no LLM endpoint configured")
            return False
        session = panel.session
        task = panel.task
        try:
            config = agent_config(agent, noise=panel.noise_level(), max_rounds=panel._round_limit, seed=session.seed)
        except Exception as exc:  # noqa: BLE001 -- damaged settings: say so, do not crash
            self.section.say(f"Cannot start the agent: {type(exc).__name__}: {exc}", "error")
            return False
        self.agent = agent
        self._session = session
        self._noise_level = float(config["noise"])
        self._result = None
        self._stopping = False
        self._calls = self._experiments = self._round = 0
        self._started = time.monotonic()
        session.agent_result = None
        panel._show_score()
        self.transcript.clear_transcript()
        self.section.show_transcript.setChecked(True)
        context = RunContext()
        self.context = context
        llm = config.get("llm") or {}
        panel._emit("agent_start", ok=True, agent=agent, noise=config["noise"], max_rounds=config["max_rounds"],
                    seed=config["seed"], model=llm.get("model") if agent in LLM_AGENTS else None,
                    base_url=llm.get("base_url") if agent in LLM_AGENTS else None)
        task_id = task.id
        job = start_job(lambda: run_agent(task_id, agent, config, context), name=f"lab-agent-{agent}")
        self.job = job
        panel._jobs.add(job)
        job.item.connect(self._on_item)
        job.failed.connect(self._on_failed)
        job.finished.connect(lambda job=job: self._on_finished(job))
        self._update_buttons()
        self.section.say(f"{agent_label(agent)} is working on the task…", "busy")
        return True

    def stop(self) -> None:
        """Ask the agent to stop (returns at once; the agent ends within about a second)."""
        if self.job is None or self.context is None:
            return
        self._stopping = True
        self.context.cancel()
        self.section.stop_button.setEnabled(False)
        self.section.say("Stopping the agent…", "busy")
        self.panel._emit("agent_stop", agent=self.agent)

    def _update_buttons(self) -> None:
        running = self.job is not None
        self.section.start_button.setEnabled(not running and self.panel.task is not None)
        self.section.stop_button.setEnabled(running and not self._stopping)
        self.section.choice.setEnabled(not running)

    # ------------------------------------------------------------------ events of the run

    def _on_item(self, event) -> None:
        from engine.lab.agents import AgentCode, AgentExperiment, AgentMessage, AgentResult, AgentSubmission
        from engine.methods.base import LLMCall

        panel = self.panel
        html = transcript_html(event)
        if html is not None:
            self.transcript.add(html)
        if isinstance(event, LLMCall):
            if getattr(event, "status", None) in ("ok", "cached"):
                self._calls += 1
            self._progress()
        elif isinstance(event, AgentMessage):
            self._round = max(self._round, event.round)
            panel._emit("agent_message", agent=self.agent, role=event.role, text=event.text, round=event.round)
            self._progress()
        elif isinstance(event, AgentCode):
            panel._emit("agent_message", agent=self.agent, role="code", text=event.source, round=event.round,
                        ok=event.ok, output=event.output, error=event.error, counted=event.counted)
        elif isinstance(event, AgentExperiment):
            self._round = max(self._round, event.round)
            self._add_experiments(event)
            self._progress()
        elif isinstance(event, AgentSubmission):
            panel._emit("agent_submission", agent=self.agent, law=event.law, how=event.how, round=event.round)
            self.section.say("The agent submitted a law; scoring it…", "busy")
        elif isinstance(event, AgentResult):
            self._on_result(event)

    def _progress(self) -> None:
        if self._stopping:
            return
        text = f"{agent_label(self.agent)} · round {self._round} · {self._experiments} experiments"
        if self.agent in LLM_AGENTS:
            text += f" · LLM calls {self._calls}"
        self.section.say(text, "busy")

    def _add_experiments(self, event) -> None:
        from widgets.lab_panel import Experiment

        panel = self.panel
        session = self._session
        if event.error:
            panel._emit("agent_experiment", agent=self.agent, ok=False, round=event.round, inputs=event.inputs,
                        error=event.error)
            return
        outputs = session.task.system.outputs
        now = time.time()
        by = short_agent_name(self.agent)
        for params, result in zip(event.inputs, event.results):
            named = dict(result) if isinstance(result, dict) else {outputs[0].name: result}
            session.experiments.append(Experiment(dict(params), result, named, self._noise_level, event.round, now,
                                                  by=by))
        self._experiments += len(event.results)
        panel._emit("agent_experiment", agent=self.agent, ok=True, round=event.round, inputs=event.inputs,
                    results=event.results, noise=self._noise_level, index=len(session.experiments))
        if session is panel.session:
            panel._refresh_table()
            panel.select_experiment(len(session.experiments) - 1)
            panel._auto_axes()
            panel._refresh_plots()
            panel._update_state()

    def _on_result(self, event) -> None:
        panel = self.panel
        public = public_evaluation(event.evaluation)
        record = {"agent": self.agent, "law": event.law, "stop_reason": event.stop_reason, "rounds": event.rounds,
                  "experiments": event.experiments, "llm_calls": event.llm_calls, "seconds": event.seconds,
                  "evaluation": public}
        self._session.agent_result = record
        sym = (public or {}).get("symbolic") or {}
        panel._emit("agent_result", agent=self.agent, law=event.law, stop_reason=event.stop_reason,
                    rounds=event.rounds, experiments=event.experiments, llm_calls=event.llm_calls,
                    seconds=event.seconds, rmsle=(public or {}).get("rmsle"), equivalent=sym.get("equivalent"),
                    error=(public or {}).get("error"))
        if self._session is panel.session:
            panel._show_score()
        if public is None:
            self.section.say(f"The agent stopped ({event.stop_reason}) after {event.rounds} rounds and "
                             f"{event.experiments} experiments; nothing was scored.", "info")
        else:
            verdict = {True: "symbolically equivalent", False: "not equivalent"}.get(sym.get("equivalent"),
                                                                                    "undecided")
            rm = _finite(public.get("rmsle"))
            self.section.say(f"Done ({event.stop_reason}): RMSLE {'—' if rm is None else f'{rm:.3g}'}, {verdict}. "
                             "The score is below the hypothesis.", "ok")
        self._result = record

    def _on_failed(self, message: str) -> None:
        first = message.split("\n", 1)[0]
        self.transcript.add(f"<p style='color:{ROLE_COLOURS['error']}'><b>The agent failed:</b> {_esc(first)}</p>")
        self.section.say(f"The agent failed: {first}", "error")
        self.panel._emit("agent_result", agent=self.agent, ok=False, error=first, stop_reason="failed")
        self._result = {"agent": self.agent, "error": first, "stop_reason": "failed"}

    def _on_finished(self, job) -> None:
        self.panel._jobs.discard(job)
        if job is not self.job:
            return
        result = self._result or {"agent": self.agent, "stop_reason": "cancelled",
                                                    "evaluation": None}
        self._result = None
        self.job = None
        self.context = None
        self._stopping = False
        self._update_buttons()
        self.finished.emit(result)
