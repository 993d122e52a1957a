"""NewtonBench's agents on the lab (issue 5), as generators of events the GUI and CLI show live.

:func:`run_agent` runs one agent on one :class:`~engine.lab.LabTask` and yields events:

* ``vanilla`` — an LLM that may only run experiments or submit (NewtonBench's vanilla agent):
  at most ``max_rounds`` rounds (10), one action per reply, then one forced-submission request.
* ``code`` — the same plus ``<python>`` blocks (NewtonBench's code-assisted agent). The blocks
  run **only in the sandbox** (:meth:`engine.sandbox.SandboxPool.run_code`: separate process,
  CPU and wall-clock limits, no network, writes only to a private directory, scrubbed
  environment). The reference ``exec``s them in its own process with no time limit; we do not.
* ``baseline`` — no LLM: plans experiments over the evaluation ranges, fits a power law by least
  squares in log space (exponents snapped to simple fractions, e or π) and, when that is not exact, runs
  the GP engine for a short budget; submits the better of the two as an expression. Vanilla
  systems only: on a simple or complex system the observable is not the law, and a generic
  baseline cannot undo the apparatus, so it records data and submits the "no law" (NaN) answer.

Protocol details follow the reference (paper §3.2, C.1; repo ``utils/*_agent.py``), in our own
words: the LAST ``<run_experiment>`` block of a reply is run (a JSON list of parameter sets or one
object); a complete ``<final_law>`` ends the session and the last ``def discovered_law`` in it is
the law; anything else gets a reminder and uses up the round; a request the apparatus refuses is
answered with the reason and also uses up the round. The code agent's reply priority is
``<final_law>``, then ``<python>`` if its last block comes after the last ``<run_experiment>``,
then the experiment. A python block with a syntax error is answered without using up the round
(at most :data:`FREE_RETRIES` times per round), as the reference does for blocks failing its
validation. A session without a law submits ``return float('nan')``.

Results shown to the LLM: vanilla scalars in full precision, simulated series and named values
rounded to 7 significant digits as the reference formats them (``%.6e``). The events carry the
unrounded values.

Events (besides ``LLMCall`` from the session and ``Log``): :class:`AgentMessage`,
:class:`AgentExperiment`, :class:`AgentCode`, :class:`AgentSubmission`, and last
:class:`AgentResult` with the evaluation (:func:`engine.lab.evaluate.evaluate_law`). No Qt here.
"""

from __future__ import annotations

import ast
import json
import math
import re
import time
from concurrent.futures import wait
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, ClassVar, Iterator

import numpy as np

from ..methods.base import Final, Log, RunContext
from . import ExperimentError, LabTask, Noise, get_task, parse_inputs, run_experiments
from .evaluate import FUNCTION_NAME, evaluate_law

AGENTS = {
    "vanilla": ("LLM agent", "An LLM plans experiments, reads the results and submits a law (NewtonBench's "
                             "vanilla agent: up to 10 rounds, one action per round)."),
    "code": ("LLM agent with Python", "Like the LLM agent, and it may also run Python analyses; they run only "
                                      "in the sandbox (NewtonBench's code-assisted agent)."),
    "baseline": ("Baseline (no LLM)", "Sweeps every input over its evaluation range, fits a power law and, "
                                      "if that is not exact, runs GP briefly; vanilla systems only."),
}

DEFAULT_ROUNDS = 10
DEFAULT_TEMPERATURE = 0.4
FREE_RETRIES = 2  # python blocks with syntax errors answered per round without using it up
MAX_CODE_CHARS = 50_000
POLL = 0.1

EXPERIMENT_OPEN, EXPERIMENT_CLOSE = "<run_experiment>", "</run_experiment>"
LAW_OPEN, LAW_CLOSE = "<final_law>", "</final_law>"
PYTHON_OPEN, PYTHON_CLOSE = "<python>", "</python>"


# --------------------------------------------------------------------------- events


@dataclass
class AgentMessage:
    """One message of the conversation: ``system``, ``user`` (the environment) or ``assistant``."""

    role: str
    text: str
    round: int = 0  # 0: the opening prompts; the forced submission is max_rounds + 1
    kind: ClassVar[str] = "agent_message"


@dataclass
class AgentExperiment:
    """One round's experiments: the parameter sets (completed with defaults) and one result per
    set (a number, or a dict of numbers / lists), or ``error`` when the request was refused."""

    round: int
    inputs: list[dict]
    results: list[Any]
    error: str | None = None
    kind: ClassVar[str] = "agent_experiment"


@dataclass
class AgentCode:
    """One ``<python>`` block of the code agent, run in the sandbox."""

    round: int
    source: str
    ok: bool
    output: str = ""
    error: str | None = None
    seconds: float = 0.0
    counted: bool = True  # False: a syntax error answered without using up the round
    kind: ClassVar[str] = "agent_code"


@dataclass
class AgentSubmission:
    """The law the agent submitted (a ``discovered_law`` function or an expression).

    ``how``: ``submitted`` (in a round), ``forced`` (after the last round), ``missing`` (no law:
    the NaN function stands in) or ``fitted`` (the baseline)."""

    round: int
    law: str
    how: str
    kind: ClassVar[str] = "agent_submission"


@dataclass
class AgentResult:
    """The end of a session: the law and its evaluation (None when the run was cancelled)."""

    task: str
    agent: str
    law: str | None
    evaluation: dict | None
    stop_reason: str  # submitted, forced, missing, fitted, cancelled, time, budget, llm-failures, replay-end
    rounds: int  # rounds used
    experiments: int  # parameter sets measured
    llm_calls: int = 0
    seconds: float = 0.0
    details: dict[str, Any] = field(default_factory=dict)
    kind: ClassVar[str] = "agent_result"


# --------------------------------------------------------------------------- configuration


def default_config(agent: str) -> dict[str, Any]:
    """The configuration keys of ``agent`` with their defaults."""
    if agent not in AGENTS:
        raise KeyError(f"unknown agent {agent!r}; choose one of {', '.join(AGENTS)}")
    config: dict[str, Any] = {"max_rounds": DEFAULT_ROUNDS, "noise": 0.0, "seed": 0}
    if agent in ("vanilla", "code"):
        from ..methods.llm_support import llm_defaults

        # Vanilla: every round plus the forced submission; code: plus the free syntax retries.
        calls = DEFAULT_ROUNDS + 1 + (FREE_RETRIES * DEFAULT_ROUNDS if agent == "code" else 0)
        config.update(llm_defaults(calls))
        config.update(temperature=DEFAULT_TEMPERATURE, max_sets=None)
        if agent == "code":
            config.update(program_seconds=30.0)
    else:
        config.update(gp_seconds=25.0, baseline_rounds=4, threads=2)
    return config


# --------------------------------------------------------------------------- prompts


def _humanize(name: str) -> str:
    return name.replace("_", " ")


def signature(task: LabTask) -> str:
    return f"def {FUNCTION_NAME}({', '.join(task.module.law_inputs)}):"


def nan_law(task: LabTask) -> str:
    """What a session without a law submits (as the reference does)."""
    return f"{signature(task)}\n    return float('nan')\n"


def system_prompt(agent: str, max_rounds: int = DEFAULT_ROUNDS, cpu_seconds: float = 30.0) -> str:
    """The LLM agent's standing instructions (our own wording of the reference's protocol)."""
    lines = [
        "You are a research assistant in a simulated universe. Its physical laws need not be the ones "
        "of our universe. Your job is to find one hidden law by designing experiments, studying the "
        "measurements and, at the end, writing the law down as a Python function. Keep strictly to "
        "the protocol below.",
        "",
        "Protocol:",
        "1. The next message describes the mission and the apparatus.",
        "2. Each reply of yours is one round and carries exactly one action:",
        f"   - {EXPERIMENT_OPEN}[ ... JSON list of parameter sets ... ]{EXPERIMENT_CLOSE} to take measurements;",
    ]
    if agent == "code":
        lines.append(f"   - {PYTHON_OPEN} ... Python code ... {PYTHON_CLOSE} to compute or analyse something;")
    lines += [
        f"   - {LAW_OPEN} def {FUNCTION_NAME}(...): ... {LAW_CLOSE} to hand in your answer, which ends the "
        "session.",
        "   Do not combine actions, and do not repeat a tag within one reply.",
        "3. Measurements come back inside <experiment_output> tags: one result per parameter set, in the "
        "order you sent them.",
        "4. A result of NaN means the quantity could not be computed there (for example the square root or "
        "arcsine of a value outside its domain, or an overflow). Such points carry no information; move "
        "your inputs to where the law is defined.",
        f"5. You have at most {max_rounds} rounds. Spend them well: vary every input over many orders of "
        "magnitude, propose hypotheses, and check each one against fresh measurements before you hand "
        "in the law.",
        "6. After an experiment, wait for its output before planning the next step.",
    ]
    if agent == "code":
        lines += [
            f"7. Python code in a {PYTHON_OPEN} block runs in an isolated process (numpy and scipy are "
            f"available; no files, no network; about {cpu_seconds:g} s of CPU time). Whatever it prints comes "
            "back inside <python_output> tags. Every block starts from scratch: nothing is kept between "
            "blocks, so put the numbers you need into the code itself.",
            "8. Use Python for anything beyond mental arithmetic: logarithms and powers, fitting exponents "
            "and constants, comparing a candidate law with the measurements, error measures.",
            "9. A Python run uses up a round, exactly like an experiment. Never use Python to run experiments "
            "or to submit the law; those go in their own tags.",
        ]
    return "\n".join(lines)


def _format_number(value: Any) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return f"{value:g}" if isinstance(value, (int, float)) else str(value)


def _describe_input(p) -> str:
    unit = f" [{p.unit}]" if p.unit else ""
    bits = [f"default {_format_number(p.default)}"]
    if p.minimum is not None or p.maximum is not None:
        lo = "-inf" if p.minimum is None else _format_number(p.minimum)
        hi = "inf" if p.maximum is None else _format_number(p.maximum)
        bits.append(f"allowed {lo} to {hi}")
    if p.integer:
        bits.append("whole numbers only")
    return f"- `{p.name}`: {p.description or _humanize(p.name)}{unit} ({'; '.join(bits)})"


def _returns_a_number(system) -> bool:
    """Whether the apparatus answers with a bare number (not an object of named readings), found
    by running it once on a stand-in law (the hidden law is not used)."""
    try:
        out = system.simulate(lambda *args: 1.0, system.complete({}), Noise(0.0))
    except Exception:  # noqa: BLE001 -- unknown: describe it by its outputs
        return system.name == "vanilla" and len(system.outputs) == 1
    return not isinstance(out, dict)


def _describe_outputs(system) -> str:
    outputs = system.outputs
    if len(outputs) == 1 and _returns_a_number(system):
        o = outputs[0]
        unit = f" [{o.unit}]" if o.unit else ""
        return f"Each parameter set gives one number: {o.description or _humanize(o.name)}{unit}."
    lines = ["Each parameter set gives an object with these keys:"]
    for o in outputs:
        unit = f" [{o.unit}]" if o.unit else ""
        what = "a list of numbers" if o.series else "a number"
        lines.append(f"- `{o.name}` ({what}): {o.description or _humanize(o.name)}{unit}")
    return "\n".join(lines)


def _example_sets(system) -> str:
    first = {p.name: p.default for p in system.inputs}
    second = dict(first)
    if system.inputs:
        p = system.inputs[0]
        bumped = p.default * 2 if p.default else 1.0
        if p.maximum is not None and bumped > p.maximum:
            bumped = p.default / 2 if p.default else p.maximum
        second[p.name] = int(bumped) if p.integer else bumped
    return json.dumps([first, second])


def task_prompt(task: LabTask, agent: str, noise: float = 0.0, max_sets: int | None = None) -> str:
    """The mission: objective, apparatus (JSON keys, defaults, outputs), noise, submission rules."""
    module, system = task.module, task.system
    law_inputs = module.law_inputs
    target = _humanize(module.law_output)
    lines = [
        "**Mission.** You act as a physicist in a simulated universe and must discover one of its physical "
        f"laws: the {target} ({module.title.lower()}) as a function of {', '.join(law_inputs)}. Which factors "
        "matter, the constants and the form of the law may all differ from the physics you know. No "
        "formula is given; everything must come from your measurements.",
        "",
        f"**Apparatus: {system.title}.** {system.description}",
    ]
    if system.name != "vanilla":
        lines.append(f"The hidden law ({target} from {', '.join(law_inputs)}) acts inside this apparatus; "
                     "only the relations described here are known to hold. Other textbook relations may "
                     "or may not apply in this universe.")
    lines += ["", "You set these inputs (JSON keys; a key you leave out takes its default):"]
    lines += [_describe_input(p) for p in system.inputs]
    lines += ["", _describe_outputs(system), ""]
    lines += [
        "**Running experiments.** Write a JSON list of parameter sets inside the experiment tags, with no "
        "comments in the JSON. For example:",
        EXPERIMENT_OPEN,
        _example_sets(system),
        EXPERIMENT_CLOSE,
        "You get back one result per set, in order:",
        "<experiment_output>",
        "[result 1, result 2]",
        "</experiment_output>",
    ]
    if max_sets:
        lines.append(f"At most {max_sets} parameter sets per round.")
    if noise:
        lines.append("Every measurement carries **random noise**, as real sensors do.")
    else:
        lines.append("Measurements are **noise-free**: exact and repeatable.")
    descriptions = module.descriptions or {}
    lines += [
        "",
        f"**Submitting.** When you are confident, hand in a single Python function inside {LAW_OPEN} tags:",
        f"1. Its name is `{FUNCTION_NAME}` and its signature is exactly `{signature(task)}`",
        f"2. It returns the {target} for one set of arguments (plain numbers):",
    ]
    lines += [f"   - `{name}`: {descriptions.get(name, _humanize(name))}" for name in law_inputs]
    lines += [
        "3. Keep every argument in the signature, even one your law does not use.",
        "4. Define any constant as a local variable inside the function body, never as an argument.",
        "5. Import what you need (math, numpy) inside the function body.",
        f"6. No comments or explanations inside the function or the {LAW_OPEN} block; only the "
        f"{LAW_OPEN} block in that final reply.",
        "",
        "**Keep in mind.** This universe's law may depend on different factors, with different constants, "
        "in a different form from the one you know. Probe inputs over a very wide span of scales (many "
        "orders of magnitude, where the apparatus allows) so the law holds everywhere, not just near the "
        "defaults.",
    ]
    return "\n".join(lines)


def _invalid_message(agent: str) -> str:
    if agent == "code":
        return (f"No usable action in your reply. Use {EXPERIMENT_OPEN} with a JSON list of parameter sets, "
                f"{PYTHON_OPEN} with code to run, or {LAW_OPEN} to hand in the law.")
    return (f"No usable action in your reply. Use {EXPERIMENT_OPEN} with a JSON list of parameter sets, or hand "
            f"in the law inside {LAW_OPEN} tags.")


def _forced_message(task: LabTask) -> str:
    return (f"All your rounds are used. Hand in your final law now inside {LAW_OPEN} tags, as the function "
            f"`{signature(task)}` with any constants defined inside its body and no comments.")


def _code_reminder(round_no: int, max_rounds: int) -> str:
    return (f"(Round {round_no} of {max_rounds}. Next action: measure with {EXPERIMENT_OPEN}, analyse with "
            f"{PYTHON_OPEN}, or hand in the law with {LAW_OPEN} once you are sure. Either action uses up the "
            "round, so choose well.)")


CODE_TIP = f"Tip: a {PYTHON_OPEN} block can analyse these numbers (copy them into the code)."


# --------------------------------------------------------------------------- parsing replies


def last_block(text: str, open_tag: str, close_tag: str, *, require_close: bool = True) -> str | None:
    """The content of the last ``open_tag`` … ``close_tag`` block, or None. Without a closing tag
    after the last opening one, the rest of the text (only when ``require_close`` is False)."""
    start = text.rfind(open_tag)
    if start < 0:
        return None
    body_start = start + len(open_tag)
    end = text.find(close_tag, body_start)
    if end < 0:
        return None if require_close else text[body_start:]
    return text[body_start:end]


def _strip_fences(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if not ln.strip().startswith("```")]
    return "\n".join(lines).strip()


_LAW = re.compile(rf"(def\s+{FUNCTION_NAME}.*?)(?=\ndef|\Z)", re.S)


def extract_law(reply: str, *, require_close: bool = True) -> str | None:
    """The last ``def discovered_law…`` (up to the next top-level ``def`` or the end) inside the
    last ``<final_law>`` block, as the reference extracts it; None without one."""
    block = last_block(reply, LAW_OPEN, LAW_CLOSE, require_close=require_close)
    if block is None:
        return None
    matches = _LAW.findall(_strip_fences(block))
    if not matches:
        return None
    return matches[-1].rstrip() + "\n"


def parse_experiment(reply: str) -> list[dict] | None:
    """The parameter sets of the last ``<run_experiment>`` block; None without a block.
    Raises ExperimentError when the block is not a JSON list of objects (or one object)."""
    block = last_block(reply, EXPERIMENT_OPEN, EXPERIMENT_CLOSE, require_close=False)
    if block is None:
        return None
    text = _strip_fences(block)
    if not text:
        raise ExperimentError("the experiment block is empty; put a JSON list of parameter sets in it")
    return parse_inputs(text)


def _plain(value: Any) -> Any:
    """Results as plain Python (floats, lists, dicts), for events and JSON."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [_plain(v) for v in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value)
    return value


def _rounded(value: Any, digits: int = 7) -> Any:
    if isinstance(value, dict):
        return {k: _rounded(v, digits) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v, digits) for v in value]
    if isinstance(value, float) and math.isfinite(value):
        return float(f"{value:.{digits - 1}e}")
    return value


def format_results(results: list[Any]) -> str:
    """The ``<experiment_output>`` text: scalars in full precision, system readings to 7 digits."""
    shown = [r if not isinstance(r, (dict, list)) else _rounded(r) for r in results]
    return "<experiment_output>\n" + json.dumps(shown, allow_nan=True) + "\n</experiment_output>"


# --------------------------------------------------------------------------- the entry point


def run_agent(task: LabTask | str, agent: str, config: dict[str, Any] | None,
              context: RunContext) -> Iterator[Any]:
    """Run ``agent`` (``vanilla``, ``code`` or ``baseline``) on ``task``; yields events, the last
    one an :class:`AgentResult`. Polls ``context.cancelled``; a Stop ends the session without an
    evaluation. Configuration: see :func:`default_config` (``llm``, ``max_llm_calls``,
    ``llm_cache``, ``max_rounds``, ``noise``, ``seed``, ``temperature``, ...)."""
    if isinstance(task, str):
        task = get_task(task)
    merged = default_config(agent)
    merged.update(config or {})
    if agent == "baseline":
        yield from _run_baseline(task, merged, context)
    else:
        yield from _run_llm_agent(task, agent, merged, context)


def _evaluate(task: LabTask, law: str, seed: int) -> dict:
    return evaluate_law(task, law, seed=seed)


# --------------------------------------------------------------------------- LLM agents


class _Session:
    """One LLM agent session's state (its conversation, counters, noise generator)."""

    def __init__(self, task: LabTask, agent: str, config: dict[str, Any]):
        self.task = task
        self.agent = agent
        self.max_rounds = max(1, int(config.get("max_rounds") or DEFAULT_ROUNDS))
        self.noise = Noise(float(config.get("noise") or 0.0), seed=int(config.get("seed") or 0))
        self.temperature = float(config.get("temperature", DEFAULT_TEMPERATURE))
        max_sets = config.get("max_sets")
        self.max_sets = int(max_sets) if max_sets else None
        self.experiments = 0
        self.rounds = 0


def _run_llm_agent(task: LabTask, agent: str, config: dict[str, Any], context: RunContext) -> Iterator[Any]:
    from ..methods.llm_support import LLMSession, RunCancelled

    started = time.monotonic()
    state = _Session(task, agent, config)
    llm_config = dict(config)
    llm_config.setdefault("evaluators", 1)
    law: str | None = None
    how = "missing"
    stop_reason = "missing"
    calls = 0
    # The code agent's sandbox only runs its <python> blocks: no fitting, no SciPy at start-up.
    with LLMSession(llm_config, context, sandbox=(agent == "code"), fitting=False) as session:
        yield Log(f"{AGENTS[agent][0]} on {task.id}: {session.describe()}; up to {state.max_rounds} rounds, "
                  f"noise {state.noise.level:g}, temperature {state.temperature:g}")
        if agent == "code":
            note = session.protections_log()
            if note is not None:
                yield note
        cpu = float(config.get("program_seconds") or 30.0)
        system_text = system_prompt(agent, state.max_rounds, cpu)
        user_text = task_prompt(task, agent, state.noise.level, state.max_sets)
        messages: list[dict] = [{"role": "system", "content": system_text}, {"role": "user", "content": user_text}]
        yield AgentMessage("system", system_text, 0)
        yield AgentMessage("user", user_text, 0)
        try:
            round_no = 1
            free = FREE_RETRIES
            while round_no <= state.max_rounds:
                if agent == "code":
                    reminder = _code_reminder(round_no, state.max_rounds)
                    if not messages[-1]["content"].endswith(reminder):  # not again after a failed request
                        messages[-1] = dict(messages[-1], content=messages[-1]["content"] + "\n\n" + reminder)
                answers = session.ask(messages, 1, purpose=f"round {round_no}", temperature=state.temperature)
                yield from session.drain()
                if not answers:
                    reason = session.should_stop()
                    if reason:
                        stop_reason = reason
                        note = session.stop_log()
                        yield note if note is not None else Log(f"stopping: {reason}", "warning")
                        break
                    yield Log(f"round {round_no}: the LLM request failed; the round is lost", "warning")
                    state.rounds = round_no
                    round_no += 1
                    continue
                reply, _seq = answers[0]
                calls += 1
                messages.append({"role": "assistant", "content": reply})
                yield AgentMessage("assistant", reply, round_no)
                state.rounds = round_no

                found = extract_law(reply)
                if found is not None:
                    law, how, stop_reason = found, "submitted", "submitted"
                    break
                if LAW_OPEN in reply and LAW_CLOSE in reply:
                    yield Log(f"round {round_no}: the final-law block holds no `def {FUNCTION_NAME}(...)`; "
                              "treated as a missing law", "warning")
                    law, how, stop_reason = None, "missing", "missing"
                    break

                feedback: str
                counted = True
                python_at = reply.rfind(PYTHON_OPEN) if agent == "code" else -1
                if python_at >= 0 and python_at > reply.rfind(EXPERIMENT_OPEN):
                    feedback, counted = yield from _python_action(session, state, reply, round_no, free)
                    if not counted:
                        free -= 1
                elif reply.rfind(EXPERIMENT_OPEN) >= 0:
                    feedback = yield from _experiment_action(state, reply, round_no)
                    if agent == "code" and feedback.startswith("<experiment_output>"):
                        feedback += "\n" + CODE_TIP
                else:
                    feedback = _invalid_message(agent)
                messages.append({"role": "user", "content": feedback})
                yield AgentMessage("user", feedback, round_no)
                if counted:
                    round_no += 1
                    free = FREE_RETRIES
            else:
                # Every round used without a law: one forced-submission request.
                forced = _forced_message(task)
                messages.append({"role": "user", "content": forced})
                yield AgentMessage("user", forced, state.max_rounds + 1)
                answers = session.ask(messages, 1, purpose="forced submission", temperature=state.temperature)
                yield from session.drain()
                if answers:
                    reply = answers[0][0]
                    calls += 1
                    messages.append({"role": "assistant", "content": reply})
                    yield AgentMessage("assistant", reply, state.max_rounds + 1)
                    found = extract_law(reply, require_close=False)
                    if found is not None:
                        law, how, stop_reason = found, "forced", "forced"
                else:
                    stop_reason = session.should_stop() or "missing"
        except RunCancelled as exc:
            yield from session.drain()
            yield Log("stopped" if exc.reason == "cancelled" else "out of time; stopping", "warning")
            if exc.reason == "cancelled":
                yield AgentResult(task.id, agent, law, None, "cancelled", state.rounds, state.experiments, calls,
                                  time.monotonic() - started)
                return
            stop_reason = "time"
        yield from session.closing()
        details = {"budget": session.budget.snapshot(), "failed_requests": session.failed_requests}
    if law is None:
        law, how = nan_law(task), "missing"
        yield Log("no law was submitted; scoring the NaN function, as the reference does", "warning")
    yield AgentSubmission(state.rounds, law, how)
    if context.cancelled:
        yield AgentResult(task.id, agent, law, None, "cancelled", state.rounds, state.experiments, calls,
                          time.monotonic() - started)
        return
    evaluation = _evaluate(task, law, int(config.get("seed") or 0))
    yield AgentResult(task.id, agent, law, evaluation, stop_reason, state.rounds, state.experiments, calls,
                      time.monotonic() - started, details)


def _experiment_action(state: _Session, reply: str, round_no: int) -> Iterator[Any]:
    """Run the reply's last experiment block; yields the AgentExperiment, returns the feedback."""
    try:
        sets = parse_experiment(reply)
        if sets is None:
            raise ExperimentError(f"no {EXPERIMENT_OPEN} block")
    except ExperimentError as exc:
        yield AgentExperiment(round_no, [], [], str(exc))
        return (f"Your experiment request was not run: {exc}. Nothing was measured and this round is used up. "
                f"Send a JSON list of parameter sets (objects) inside {EXPERIMENT_OPEN} tags, without comments.")
    system = state.task.system
    try:
        results = run_experiments(state.task, sets, state.noise, max_sets=state.max_sets)
    except ExperimentError as exc:
        yield AgentExperiment(round_no, [dict(s) for s in sets], [], str(exc))
        return f"Your experiment request was not run: {exc}. Nothing was measured and this round is used up."
    except Exception as exc:  # noqa: BLE001 -- a simulator failure is the round's problem, not the run's
        yield Log(f"round {round_no}: the apparatus failed: {type(exc).__name__}: {exc}", "error")
        yield AgentExperiment(round_no, [dict(s) for s in sets], [], f"{type(exc).__name__}: {exc}")
        return "The apparatus failed on this request; nothing was measured and this round is used up."
    completed = [system.complete(s) for s in sets]
    plain = [_plain(r) for r in results]
    state.experiments += len(plain)
    yield AgentExperiment(round_no, completed, plain)
    return format_results(plain)


def _python_action(session, state: _Session, reply: str, round_no: int, free: int) -> Iterator[Any]:
    """Run the reply's last python block in the sandbox; yields its AgentCode, returns
    ``(feedback, counted)`` (``counted``: the round is used up)."""
    source = last_block(reply, PYTHON_OPEN, PYTHON_CLOSE, require_close=False) or ""
    source = _strip_fences(source)
    if len(source) > MAX_CODE_CHARS:
        yield AgentCode(round_no, source[:2000], False, error="the code is too long", counted=True)
        return (f"<python_output>\nNot run: the code is {len(source):,} characters long (at most "
                f"{MAX_CODE_CHARS:,}).\n</python_output>", True)
    try:
        ast.parse(source)  # parsing only; the code itself runs in the sandbox
    except SyntaxError as exc:
        counted = free <= 0
        error = f"SyntaxError: {exc.msg} (line {exc.lineno})"
        yield AgentCode(round_no, source, False, error=error, counted=counted)
        tail = "this round is used up." if counted else "this did not use up the round; send corrected code."
        return f"<python_output>\nNot run: {error}; {tail}\n</python_output>", counted
    except (ValueError, RecursionError, MemoryError) as exc:
        yield AgentCode(round_no, source, False, error=f"cannot be parsed ({type(exc).__name__})", counted=True)
        return f"<python_output>\nNot run: the code cannot be parsed ({type(exc).__name__}).\n</python_output>", True
    result = _run_code(session, source)
    yield AgentCode(round_no, source, result.ok, result.output, result.error, result.seconds, True)
    output = result.output.rstrip("\n")
    if result.ok:
        text = output if output else "(the code printed nothing; use print() to see results)"
    else:
        text = f"The code failed: {result.error}"
        if output:
            text += f"\nIt printed before failing:\n{output}"
    return f"<python_output>\n{text}\n</python_output>", True


def _run_code(session, source: str):
    """``session.pool.run_code(source)``, waited for cancellably (Stop kills the workers)."""
    from ..methods.llm_support import RunCancelled, _in_thread

    pool = session.pool
    future = _in_thread(pool.run_code, source)
    while True:
        try:
            session.check()
        except RunCancelled:
            pool.close()
            raise
        done, _ = wait([future], timeout=POLL)
        if done:
            return future.result()


# --------------------------------------------------------------------------- the baseline


def law_argument_keys(task: LabTask) -> dict[str, str] | None:
    """Which JSON key of the vanilla apparatus feeds which argument of the law (e.g. m8's
    ``temperature`` → ``T``), found by running the apparatus once on a recording stand-in for
    the hidden law (distinct input values, so each argument identifies its key). None when the
    wiring cannot be read (then keys are matched by position)."""
    system = task.system
    values: dict[str, float] = {}
    for p in system.inputs:
        lo, hi = _input_range(task, p)
        v = float(p.default)
        for k in range(1, 50):  # distinct values, inside what the apparatus accepts
            if v not in values.values():
                break
            v = lo + (hi - lo) * (0.1 + 0.017 * k)
            v = float(round(v)) if p.integer else v
        values[p.name] = v
    seen: list[tuple] = []

    def spy(*args):
        seen.append(args)
        return 1.0

    try:
        system.simulate(spy, system.complete(values), Noise(0.0))
    except Exception:  # noqa: BLE001 -- a stand-in law may upset a simulator; fall back to positions
        return None
    if not seen or len(seen[0]) != len(task.module.law_inputs):
        return None
    by_value = {}
    for name, v in values.items():
        by_value.setdefault(v, []).append(name)
    out = {}
    for arg, value in zip(task.module.law_inputs, seen[0]):
        names = by_value.get(float(value), [])
        if len(names) != 1:
            return None
        out[arg] = names[0]
    return out


def _input_range(task: LabTask, p, law_arg: str | None = None) -> tuple[float, float]:
    """The span the baseline sweeps: the law argument's evaluation range, inside what the
    apparatus accepts; else the slider; else a decade around the default."""
    lo = hi = None
    if law_arg is not None and law_arg in task.module.sampling:
        _, lo, hi = task.module.sampling[law_arg]
    elif p.slider is not None:
        lo, hi = p.slider
    if lo is None:
        base = abs(p.default) or 1.0
        lo, hi = base / 10, base * 10
    if p.minimum is not None:
        lo, hi = max(lo, p.minimum), max(hi, p.minimum)
    if p.maximum is not None:
        lo, hi = min(lo, p.maximum), min(hi, p.maximum)
    return float(lo), float(hi)


def plan_experiments(task: LabTask, rounds: int = 4, per_input: int = 8, joint: int = 20,
                     seed: int = 0) -> list[list[dict]]:
    """The baseline's rounds of parameter sets: first every input swept alone over its span
    (log-spaced where the span is sampled logarithmically) with the others at the centre, then
    random joint samples. For three inputs and 4 rounds: 24 + 3 × 20 = 84 sets."""
    system = task.system
    keys = law_argument_keys(task) if system.name == "vanilla" else None
    arg_of = {v: k for k, v in (keys or {}).items()}
    if keys is None and system.name == "vanilla" and len(system.inputs) == len(task.module.law_inputs):
        arg_of = dict(zip((p.name for p in system.inputs), task.module.law_inputs))
    rng = np.random.default_rng(seed)
    spans = {}
    for p in system.inputs:
        arg = arg_of.get(p.name)
        lo, hi = _input_range(task, p, arg)
        kind = task.module.sampling.get(arg, ("log" if p.log else "uniform",))[0] if arg else (
            "log" if p.log else "uniform")
        if kind == "log" and lo <= 0:
            kind = "uniform"
        spans[p.name] = (kind, lo, hi, p)

    def centre(name):
        kind, lo, hi, p = spans[name]
        if lo <= p.default <= hi:
            return p.default
        return math.sqrt(lo * hi) if kind == "log" else (lo + hi) / 2

    def fix(p, v):
        return int(round(v)) if p.integer else float(v)

    sweep = []
    for name, (kind, lo, hi, p) in spans.items():
        grid = np.geomspace(lo, hi, per_input) if kind == "log" else np.linspace(lo, hi, per_input)
        if lo == hi:
            grid = np.array([lo])
        for v in grid:
            params = {n: fix(spans[n][3], centre(n)) for n in spans}
            params[name] = fix(p, v)
            sweep.append(params)
    plan = [sweep]
    for _ in range(max(0, rounds - 1)):
        batch = []
        for _ in range(joint):
            params = {}
            for name, (kind, lo, hi, p) in spans.items():
                v = math.exp(rng.uniform(math.log(lo), math.log(hi))) if kind == "log" else rng.uniform(lo, hi)
                params[name] = fix(p, v)
            batch.append(params)
        plan.append(batch)
    return plan


def _snap(value: float, tolerance: float) -> tuple[float, str] | None:
    """The simplest exponent within ``tolerance`` of ``value``, as ``(value, text of |value|)``:
    a fraction with denominator 1–5 or 10, else ±e, ±π or ±(e ± 1) (NewtonBench shifts laws by
    such exponents too); None when there is none."""
    for den in (1, 2, 3, 4, 5, 10):
        frac = Fraction(round(value * den), den)
        if abs(float(frac) - value) <= tolerance:
            size = abs(frac)
            if size.denominator == 1:
                text = str(size.numerator)
            elif size.denominator in (2, 4, 5, 10):
                text = f"{float(size):g}"
            else:
                text = f"({size.numerator}/{size.denominator})"
            return float(frac), text
    for constant, text in ((math.e, "e"), (math.pi, "pi"), (math.e + 1, "(e + 1)"), (math.e - 1, "(e - 1)")):
        for candidate in (constant, -constant):
            if abs(candidate - value) <= tolerance:
                return candidate, text
    return None


def _power_text(name: str, size_text: str) -> str:
    return name if size_text == "1" else f"{name}**{size_text}"


def fit_power_law(X: np.ndarray, y: np.ndarray, names: list[str], noise: float = 0.0) -> dict | None:
    """Least squares of log|y| = a + Σ bᵢ log xᵢ, exponents snapped to simple fractions (or ±e,
    ±π) when the data allow. Returns ``{expression, rms, exact}`` (``rms`` of the log residuals) or None when
    the data cannot take logarithms (signs change, zeros, non-positive inputs)."""
    keep = np.isfinite(y) & np.all(np.isfinite(X), axis=1)
    X, y = X[keep], y[keep]
    if len(y) < len(names) + 2 or np.any(y == 0):
        return None
    sign = np.sign(y[0])
    if not np.all(np.sign(y) == sign):
        return None
    usable = [j for j in range(X.shape[1]) if np.all(X[:, j] > 0) and np.ptp(X[:, j]) > 0]
    if len(usable) < X.shape[1]:
        # An input that is not positive everywhere must not matter for a pure power law.
        if any(np.ptp(X[:, j]) > 0 for j in range(X.shape[1]) if j not in usable):
            return None
    A = np.column_stack([np.ones(len(y))] + [np.log(X[:, j]) for j in usable])
    ly = np.log(np.abs(y))
    coef, *_ = np.linalg.lstsq(A, ly, rcond=None)
    resid = ly - A @ coef
    rms = float(np.sqrt(np.mean(resid ** 2)))
    dof = max(1, len(y) - A.shape[1])
    sigma2 = float(resid @ resid) / dof
    try:
        cov = sigma2 * np.linalg.inv(A.T @ A)
        se = np.sqrt(np.maximum(np.diag(cov), 0.0))
    except np.linalg.LinAlgError:
        se = np.zeros(A.shape[1])
    exponents = []
    for i, j in enumerate(usable, start=1):
        tol = max(1e-6, 3 * float(se[i]), 3 * noise)
        snapped = _snap(float(coef[i]), min(tol, 0.05))
        exponents.append((j, snapped, float(coef[i])))
    if all(s is not None for _, s, _ in exponents):
        fixed = sum(s[0] * np.log(X[:, j]) for j, s, _ in exponents) if exponents else np.zeros(len(y))
        log_c = float(np.mean(ly - fixed))
        snapped_rms = float(np.sqrt(np.mean((ly - fixed - log_c) ** 2)))
        if snapped_rms <= max(1.5 * rms, 1e-9, 2 * noise):
            c = sign * math.exp(log_c)
            numerator = [_power_text(names[j], s[1]) for j, s, _ in exponents if s[0] > 0]
            denominator = [_power_text(names[j], s[1]) for j, s, _ in exponents if s[0] < 0]
            constant = f"{c:.10g}"
            if constant in ("1", "-1") and numerator:
                text = ("-" if constant == "-1" else "") + "*".join(numerator)
            else:
                text = constant + "".join(f"*{f}" for f in numerator)
            if denominator:
                text += "/" + ("(" + "*".join(denominator) + ")" if len(denominator) > 1 else denominator[0])
            return {"expression": text, "rms": snapped_rms, "exact": snapped_rms <= max(1e-6, 2 * noise),
                    "snapped": True}
    c = sign * math.exp(float(coef[0]))
    text = f"{c:.10g}" + "".join(f"*{names[j]}**{b:.8g}" for j, _, b in exponents)
    return {"expression": text, "rms": rms, "exact": rms <= max(1e-6, 2 * noise), "snapped": False}


def _rmsle_on(expression: str, names: list[str], X: np.ndarray, y: np.ndarray) -> float:
    from ..expr import parse
    from ..expr.tools import compile_numpy
    from .evaluate import rmsle

    try:
        func = compile_numpy(parse(expression, names), names)
        with np.errstate(all="ignore"):
            predicted = np.broadcast_to(np.asarray(func(X), dtype=float), (len(y),))
    except Exception:  # noqa: BLE001 -- an unusable candidate scores NaN
        return float("nan")
    return rmsle(predicted, y)


def _gp_fit(task: LabTask, X: np.ndarray, y: np.ndarray, config: dict, context: RunContext) -> Iterator[Any]:
    """Run the GP engine on the collected points; yields its logs, returns its Final or None."""
    from ..methods.gp import GeneticProgramming
    from ..tasks.model import GroundTruth, Split, Task, TaskData, Variable

    names = list(task.module.law_inputs)
    data = TaskData({"train": Split("train", X, y)})
    adhoc = Task(
        id=f"{task.id}#baseline", suite="newtonbench/baseline", kind="function", name=task.module_name,
        group=task.module.title, title=f"{task.title} (baseline data)",
        variables=[Variable(n, "input", task.module.descriptions.get(n, n)) for n in names]
        + [Variable(task.module.law_output, "target", _humanize(task.module.law_output))],
        ground_truth=GroundTruth(""), context="", builder=lambda _t: data,
    )
    gp_config = {"seconds": float(config.get("gp_seconds") or 25.0), "seed": int(config.get("seed") or 0),
                 "threads": int(config.get("threads") or 2), "population_size": 500}
    final = None
    try:
        for event in GeneticProgramming().run(adhoc, gp_config, context):
            if isinstance(event, Log):
                yield Log("GP: " + event.message, event.level)
            elif isinstance(event, Final):
                final = event
    except (ValueError, RuntimeError) as exc:
        yield Log(f"GP could not run on these data: {exc}", "warning")
        return None
    return final


def _run_baseline(task: LabTask, config: dict[str, Any], context: RunContext) -> Iterator[Any]:
    started = time.monotonic()
    seed = int(config.get("seed") or 0)
    noise_level = float(config.get("noise") or 0.0)
    noise = Noise(noise_level, seed=seed)
    max_rounds = max(1, int(config.get("max_rounds") or DEFAULT_ROUNDS))
    rounds = max(1, min(int(config.get("baseline_rounds") or 4), max_rounds))
    system = task.system
    names = list(task.module.law_inputs)
    yield Log(f"Baseline agent (no LLM) on {task.id}: {rounds} rounds of planned experiments, then a power-law "
              "fit and, if that is not exact, GP")
    keys = law_argument_keys(task) if system.name == "vanilla" else None
    if system.name == "vanilla" and keys is None:
        keys = dict(zip(names, (p.name for p in system.inputs)))
        yield Log("could not read which input feeds which law argument; matching them by position", "warning")
    plan = plan_experiments(task, rounds, seed=seed)
    rows: list[dict] = []
    outs: list[Any] = []
    used = 0
    for round_no, batch in enumerate(plan, start=1):
        if context.cancelled:
            yield AgentResult(task.id, "baseline", None, None, "cancelled", used, len(rows), 0,
                              time.monotonic() - started)
            return
        try:
            results = [_plain(r) for r in run_experiments(task, batch, noise)]
        except ExperimentError as exc:
            yield AgentExperiment(round_no, batch, [], str(exc))
            yield Log(f"round {round_no}: the apparatus refused the planned sets: {exc}", "warning")
            used = round_no
            continue
        completed = [system.complete(s) for s in batch]
        yield AgentExperiment(round_no, completed, results)
        rows += completed
        outs += results
        used = round_no

    if system.name != "vanilla":
        yield Log(f"the baseline cannot turn the {system.title.lower()} readings into the law: it does not model "
                  "the apparatus (its assisting relations), so it submits the NaN law. Use the vanilla system "
                  "or an LLM agent for this task.", "warning")
        law, how, reason, details = nan_law(task), "missing", "missing", {"points": len(rows)}
    else:
        X = np.array([[float(r[keys[a]]) for a in names] for r in rows], dtype=float).reshape(len(rows), len(names))
        y = np.array([float(v) if isinstance(v, (int, float)) else float("nan") for v in outs], dtype=float)
        finite = np.isfinite(y)
        yield Log(f"{int(finite.sum())} of {len(y)} measurements are finite")
        X, y = X[finite], y[finite]
        candidates: list[tuple[str, str]] = []
        power = fit_power_law(X, y, names, noise_level) if len(y) else None
        details: dict[str, Any] = {"points": int(len(y))}
        if power is not None:
            details["power_law"] = power
            yield Log(f"power-law fit: {power['expression']} (RMS log residual {power['rms']:.3g}"
                      + (", exact" if power["exact"] else "") + ")")
            candidates.append(("power law", power["expression"]))
        if (power is None or not power["exact"]) and len(y) >= 3 and not context.cancelled:
            final = yield from _gp_fit(task, X, y, config, context)
            if final is not None:
                details["gp"] = {"expression": final.expression, "loss": final.loss, "stop": final.stop_reason}
                candidates.append(("GP", final.expression))
        if context.cancelled:
            yield AgentResult(task.id, "baseline", None, None, "cancelled", used, len(rows), 0,
                              time.monotonic() - started)
            return
        scored = [(_rmsle_on(text, names, X, y), label, text) for label, text in candidates]
        scored = [s for s in scored if math.isfinite(s[0])]
        if scored:
            score, label, law = min(scored, key=lambda s: s[0])
            details["chosen"] = label
            details["data_rmsle"] = score
            yield Log(f"chose the {label} model (RMSLE {score:.3g} on the collected data)")
            how, reason = "fitted", "fitted"
        else:
            yield Log("no model could be fitted to the measurements; submitting the NaN law", "warning")
            law, how, reason = nan_law(task), "missing", "missing"
    yield AgentSubmission(used, law, how)
    evaluation = _evaluate(task, law, seed)
    yield AgentResult(task.id, "baseline", law, evaluation, reason, used, len(rows), 0,
                      time.monotonic() - started, details)


__all__ = [
    "AGENTS", "AgentCode", "AgentExperiment", "AgentMessage", "AgentResult", "AgentSubmission", "default_config",
    "extract_law", "fit_power_law", "format_results", "law_argument_keys", "nan_law", "parse_experiment",
    "plan_experiments", "run_agent", "system_prompt", "task_prompt",
]
