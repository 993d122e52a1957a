"""A stored run as a timeline, for demo replays (issue 9).

The store keeps everything a run produced, each with the wall-clock time it was recorded: the
method's events (progress points, Pareto reports, logs, hypotheses, the final model), the LLM
calls, and the run's row with its result. :func:`build_timeline` merges them into one ordered
list of :class:`Step` objects, each the change the window saw live at that moment, with its time
in seconds since the run started. :meth:`Timeline.state_at` gives the state after any number of
steps in constant time (every part of the state is a prefix of a list), so a slider can jump
anywhere at once; after the last step the state is what opening the stored run shows: the whole
loss series, the last Pareto front with the chosen model, every LLM call and hypothesis, and the
result.

Everything comes from the store, so a recorded LLM run replays with no network and no key.
No Qt here (architecture rule 1): the GUI side is app/demo.py.
"""

from __future__ import annotations

import bisect
import heapq
import math
from dataclasses import dataclass, field
from pathlib import Path

from .store import RunStore
from .store.db import RunRecord

#: Step kinds, in the words the demo's status line uses.
STEP_KINDS = ("progress", "front", "llm_call", "hypothesis", "log", "final", "result")

#: The demo's speed choices: (label, factor). A factor is run seconds per wall second; None
#: means "fit the whole run into FIT_SECONDS".
FIT_SECONDS = 30.0
SPEEDS: tuple[tuple[str, float | None], ...] = (
    ("Real time", 1.0),
    ("2×", 2.0),
    ("5×", 5.0),
    ("10×", 10.0),
    ("30×", 30.0),
    (f"Fit to {FIT_SECONDS:.0f} s", None),
)


class ReplayError(LookupError):
    """The run cannot be replayed; the message says why, in words for the user."""


@dataclass(frozen=True)
class Step:
    """One change of the window's state, as it happened live."""

    index: int  # position in the timeline, 0-based
    t: float  # seconds since the run started, when the store recorded it
    kind: str  # one of STEP_KINDS
    data: dict  # the event's payload (a front: {"iteration", "candidates"}; the result: {})

    def describe(self) -> str:
        """A short line for the demo's status bar."""
        d = self.data
        if self.kind == "progress":
            return f"iteration {d.get('iteration')}: best training NMSE {_num(d.get('best_loss'))}"
        if self.kind == "front":
            return f"Pareto front at iteration {d.get('iteration')}: {len(d.get('candidates') or [])} models"
        if self.kind == "llm_call":
            return f"LLM call #{d.get('seq')} ({d.get('purpose') or 'request'}): {d.get('status')}"
        if self.kind == "hypothesis":
            verdict = f"NMSE {_num(d.get('loss'))}" if d.get("ok") else (d.get("error") or "failed")
            return f"hypothesis {d.get('index')}: {verdict}"
        if self.kind == "log":
            return f"{d.get('level', 'info')}: {d.get('message', '')}".strip()
        if self.kind == "final":
            return f"the method chose {d.get('expression')}"
        return "the run ended"


def _num(value) -> str:
    try:
        return f"{float(value):.4g}"
    except (TypeError, ValueError):
        return "—"


@dataclass
class ReplayState:
    """What the window shows after some steps of a replay."""

    position: int  # steps applied (0 = nothing yet, len(steps) = the end)
    t: float  # run seconds of the last applied step
    iterations: list[float] = field(default_factory=list)
    losses: list[float] = field(default_factory=list)
    front: list[dict] | None = None  # the newest Pareto front: expression, complexity, loss rows
    front_iteration: int | None = None
    llm_calls: list[dict] = field(default_factory=list)  # as RunStore.llm_calls returns them
    hypotheses: list[dict] = field(default_factory=list)  # as RunStore.events(run, "hypothesis")
    logs: list[dict] = field(default_factory=list)
    final: dict | None = None  # the method's Final event, once it has been reported
    finished: bool = False  # the run's result (metrics, chosen model) is shown


@dataclass
class Timeline:
    """A stored run's steps in the order they happened, with prefix counts for fast seeking."""

    run: RunRecord
    steps: list[Step]
    progress: list[dict]  # every progress event, in order
    fronts: list[dict]  # every Pareto report: {"iteration", "candidates"}
    llm_calls: list[dict]
    hypotheses: list[dict]
    logs: list[dict]
    final: dict | None  # the Final event's payload, if the method reported one
    # _counts[p] = how many of each list the first p steps hold.
    _counts: list[tuple[int, int, int, int, int, bool, bool]] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        counts = [(0, 0, 0, 0, 0, False, False)]
        n_prog = n_front = n_calls = n_hyp = n_logs = 0
        final = finished = False
        for step in self.steps:
            kind = step.kind
            if kind == "progress":
                n_prog += 1
            elif kind == "front":
                n_front += 1
            elif kind == "llm_call":
                n_calls += 1
            elif kind == "hypothesis":
                n_hyp += 1
            elif kind == "log":
                n_logs += 1
            elif kind == "final":
                final = True
            elif kind == "result":
                finished = True
            counts.append((n_prog, n_front, n_calls, n_hyp, n_logs, final, finished))
        self._counts = counts
        self._times = [s.t for s in self.steps]

    # ------------------------------------------------------------------ shape

    def __len__(self) -> int:
        return len(self.steps)

    @property
    def run_id(self) -> str:
        return self.run.id

    @property
    def duration(self) -> float:
        """Run seconds from the start to the last step."""
        return self.steps[-1].t if self.steps else 0.0

    @property
    def empty(self) -> bool:
        """Nothing worth watching was recorded (the run failed at start): no progress, no front,
        no LLM call or hypothesis and no final model; at most a log line and the end."""
        return not any(s.kind not in ("result", "log") for s in self.steps)

    @property
    def used_llm(self) -> bool:
        """The LLM panel shows this run's calls (the window's rule for stored runs)."""
        return bool(self.llm_calls or self.hypotheses or "llm" in (self.run.config or {}))

    @property
    def llm_limits(self) -> dict:
        config = self.run.config or {}
        return {"max_calls": config.get("max_llm_calls"), "max_cost": config.get("max_llm_cost")}

    @property
    def llm_budget(self) -> dict | None:
        """The run's final LLM budget, as stored with its metrics."""
        budget = (self.run.metrics or {}).get("llm")
        return budget if isinstance(budget, dict) else None

    def empty_message(self) -> str:
        """Why there is nothing to replay, for a run with no recorded steps."""
        run = self.run
        why = run.error or run.stop_reason or "nothing was recorded"
        return (f"Run {run.id} ({run.method} on {run.task_id}) recorded no progress, no candidates and no LLM "
                f"call, so there is nothing to replay. It ended {run.status}: {why}.")

    # ------------------------------------------------------------------ seeking

    def time_at(self, position: int) -> float:
        """Run seconds of the last step applied at ``position`` (0 before the first)."""
        position = self._clamp(position)
        return self.steps[position - 1].t if position else 0.0

    def position_at(self, seconds: float) -> int:
        """How many steps had happened ``seconds`` into the run."""
        return bisect.bisect_right(self._times, seconds)

    def _clamp(self, position: int) -> int:
        return max(0, min(int(position), len(self.steps)))

    def state_at(self, position: int) -> ReplayState:
        """The state after the first ``position`` steps (clamped to the timeline)."""
        position = self._clamp(position)
        n_prog, n_front, n_calls, n_hyp, n_logs, final, finished = self._counts[position]
        progress = self.progress[:n_prog]
        front = self.fronts[n_front - 1] if n_front else None
        return ReplayState(
            position=position,
            t=self.time_at(position),
            iterations=[p["iteration"] for p in progress],
            losses=[p["best_loss"] for p in progress],
            front=[dict(c) for c in front["candidates"]] if front else None,
            front_iteration=front["iteration"] if front else None,
            llm_calls=self.llm_calls[:n_calls],
            hypotheses=self.hypotheses[:n_hyp],
            logs=self.logs[:n_logs],
            final=self.final if final else None,
            finished=finished,
        )

    def final_state(self) -> ReplayState:
        return self.state_at(len(self.steps))


# ---------------------------------------------------------------------- timing


def speed_factor(speed: float | None, duration: float, fit_seconds: float = FIT_SECONDS) -> float:
    """Run seconds played per wall-clock second: ``speed`` itself, or for None ("fit to
    ``fit_seconds``") whatever plays ``duration`` in ``fit_seconds``. A run with no length plays
    at once (an infinite factor)."""
    if speed is not None:
        if not (speed > 0 and math.isfinite(speed)):
            raise ValueError(f"a replay speed must be a positive number, not {speed!r}")
        return float(speed)
    if duration <= 0:
        return math.inf
    return duration / fit_seconds


def wall_seconds(run_seconds: float, speed: float | None, duration: float, fit_seconds: float = FIT_SECONDS) -> float:
    """Wall-clock seconds a replay at ``speed`` takes to play ``run_seconds`` of the run."""
    factor = speed_factor(speed, duration, fit_seconds)
    return 0.0 if math.isinf(factor) else run_seconds / factor


# ---------------------------------------------------------------------- building


def _fronts(store: RunStore, run_id: str) -> list[dict]:
    """Every Pareto report in the candidates table, oldest first, each ordered as
    ``RunStore.last_front`` orders the last one."""
    rows = store.conn.execute(
        "SELECT report, iteration, expression, complexity, loss FROM candidates WHERE run_id=? "
        "ORDER BY report, complexity",
        (run_id,),
    ).fetchall()
    reports: dict[int, dict] = {}
    for row in rows:
        report = reports.setdefault(row["report"], {"iteration": row["iteration"], "candidates": []})
        report["candidates"].append({"iteration": row["iteration"], "expression": row["expression"],
                                     "complexity": row["complexity"], "loss": row["loss"]})
    return [reports[k] for k in sorted(reports)]


def build_timeline(store: RunStore, run_id: str) -> Timeline:
    """The timeline of a stored run. Raises :class:`ReplayError` for an unknown run or one still
    going."""
    record = store.get_run(run_id)
    if record is None:
        raise ReplayError(f"There is no run {run_id} in the run store.")
    if record.status == "running":
        raise ReplayError(f"Run {run_id} is still going; replay it once it has ended.")
    events = store.events(run_id)
    calls = store.llm_calls(run_id)
    fronts = _fronts(store, run_id)

    # The Pareto fronts shown come from the candidates table (as opening the run shows the last
    # one); the k-th "pareto" event says when the k-th report happened. A report written without
    # an event (a run imported from elsewhere) comes right after the last progress point of its
    # iteration.
    n_timed = sum(1 for e in events if e["kind"] == "pareto")
    untimed = fronts[n_timed:]
    timed: list[tuple[float, str, dict]] = []  # (wall time, kind, data), in the store's order
    progress, hypotheses, logs = [], [], []
    final = None
    n_front = 0
    for event in events:
        kind = event["kind"]
        if kind == "pareto":
            if n_front < min(n_timed, len(fronts)):
                timed.append((event["t"], "front", fronts[n_front]))
            n_front += 1
            continue
        if kind == "progress":
            progress.append(event)
        elif kind == "hypothesis":
            hypotheses.append(event)
        elif kind == "log":
            logs.append(event)
        elif kind == "final":
            final = event
        else:
            continue  # a kind this version does not know: nothing to show
        timed.append((event["t"], kind, event))
        while untimed and kind == "progress" and untimed[0]["iteration"] <= (event.get("iteration") or 0):
            timed.append((event["t"], "front", untimed.pop(0)))
    last_t = events[-1]["t"] if events else record.started_at
    timed.extend((last_t, "front", front) for front in untimed)  # later than every progress point

    # LLM calls live in their own table; they are merged in by time, a call before the events
    # recorded at the same instant (its hypotheses come after it). heapq.merge keeps each
    # list's own order and takes the earlier head.
    call_items = [(c["t"], "llm_call", {**c, "kind": "llm_call"}) for c in calls]
    merged = list(heapq.merge(call_items, timed, key=lambda item: item[0]))

    start = record.started_at
    steps: list[Step] = []
    previous = 0.0
    for t, kind, data in merged:
        # Seconds since the start, never backwards (a clock step, a hand-written store).
        offset = max(previous, max(0.0, float(t) - start) if math.isfinite(float(t)) else previous)
        steps.append(Step(len(steps), offset, kind, data))
        previous = offset
    end = (record.finished_at - start) if record.finished_at else (record.seconds or previous)
    steps.append(Step(len(steps), max(previous, float(end or 0.0)), "result", {}))
    # The state keeps the calls in the store's own shape (as RunStore.llm_calls returns them).
    return Timeline(record, steps, progress, fronts, calls, hypotheses, logs, final)


def load_timeline(db_path: str | Path, run_id: str) -> Timeline:
    """:func:`build_timeline` on its own connection (for a worker thread)."""
    with RunStore(Path(db_path)) as store:
        return build_timeline(store, run_id)
