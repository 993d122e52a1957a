"""Resuming a run whose process died (architecture rule 6: "a run can be ... resumed after a crash").

Everything a run produces is committed to the run store as it happens, so after ``kill -9`` the
store holds the run's events, Pareto reports, hypotheses and LLM calls up to the last one; the
next :class:`~engine.store.RunStore` to open the file marks the run ``interrupted``.
:func:`load` reads that record back into a :class:`ResumeState`, and
:func:`engine.runner.execute` with ``resume=<run id>`` continues the same run:

- the same run id, configuration and task; new events follow the old ones, after a
  ``resumed`` event that says what was restored;
- the time budget is what was left: the run's configured ``seconds`` minus the time it had
  already run (measured from its recorded events, so time spent dead does not count);
- an LLM method's budget starts with the calls, tokens and dollars already spent, so the run's
  totals stay exact across the crash for every recorded call (a reply in flight at the moment
  of a kill was billed by the provider but never recorded: at most one per concurrent request);
- methods that can pick up their state do so from ``context.resume``: genetic programming keeps
  the Pareto front it had found (the new search adds to it), LLM-SR puts every program it had
  evaluated back into its islands. Other methods start their search again with the remaining
  budget and say so in the log; what they had found stays in the run's history either way.

Nothing here imports Qt: the CLI (``keplerlab resume``) and the window share it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from .store import RunStore

#: A resumed run gets at least this many seconds, so a run killed just before its end can
#: still choose and report its model (and say it overran its budget by that much).
MIN_SECONDS = 2.0


class ResumeError(ValueError):
    """The run cannot be resumed; the message says why."""


@dataclass
class ResumeState:
    run_id: str
    task_id: str
    method: str
    config: dict
    resumes: int  # how many times it was resumed before this one
    elapsed: float  # seconds it ran, over all its lives
    front: list[dict] = field(default_factory=list)  # its last Pareto report: expression, complexity, loss
    hypotheses: list[dict] = field(default_factory=list)  # every Hypothesis event, in order
    iterations: int = 0  # the last Progress event's iteration
    evaluations: int = 0  # the last Progress event's evaluation count
    llm: dict = field(default_factory=dict)  # what its LLM calls spent (see _llm_spent)

    @property
    def seconds_left(self) -> float | None:
        """The run's time budget minus what it used; None when it has no time limit."""
        total = self.config.get("seconds")
        if not total:
            return None
        return max(MIN_SECONDS, float(total) - self.elapsed)

    def describe(self) -> str:
        parts = [f"{self.elapsed:.1f} s already run"]
        if self.front:
            parts.append(f"{len(self.front)} Pareto models kept")
        if self.hypotheses:
            parts.append(f"{len(self.hypotheses)} hypotheses kept")
        if self.llm.get("records"):
            parts.append(f"{self.llm['calls']} LLM calls already spent")
        left = self.seconds_left
        parts.append("no time limit" if left is None else f"{left:.1f} s of budget left")
        return ", ".join(parts)

    def to_event(self) -> dict:
        """The ``resumed`` event's payload (for people reading the run; :func:`_elapsed` adds up
        the lives from the events' times, not from these numbers)."""
        return {
            "resume": self.resumes + 1,
            "elapsed_before": round(self.elapsed, 3),
            "seconds_left": self.seconds_left,
            "front": len(self.front),
            "hypotheses": len(self.hypotheses),
            "llm_calls": int(self.llm.get("calls", 0)),
            "message": f"Resumed after an interruption: {self.describe()}.",
        }


def _elapsed(started_at: float, events: list[dict]) -> float:
    """Seconds the run was alive: each life starts at the run's start or at a ``resumed``
    event and ends at the last event recorded before the next one."""
    total = 0.0
    life_start, life_end = started_at, started_at
    for event in events:
        if event["kind"] == "resumed":
            total += max(0.0, life_end - life_start)
            life_start = life_end = event["t"]
        else:
            life_end = max(life_end, event["t"])
    return total + max(0.0, life_end - life_start)


def _llm_spent(calls: list[dict]) -> dict:
    """The budget counters as engine.llm.Budget keeps them, from the recorded calls: a call is a
    successful (or cached) reply; every recorded error is one failed attempt; tokens and cost
    are charged for every response that reported them."""
    ok = [c for c in calls if c.get("status") in ("ok", "cached") and (c.get("purpose") or "") != "judge"]
    mine = [c for c in calls if (c.get("purpose") or "") != "judge"]
    return {
        "records": len(calls),  # every row, judge included: the LLM seq numbering continues after them
        "calls": len(ok),
        "cached": sum(1 for c in ok if c.get("status") == "cached"),
        "failures": sum(1 for c in mine if c.get("status") == "error"),
        "prompt_tokens": sum(int(c.get("prompt_tokens") or 0) for c in mine),
        "completion_tokens": sum(int(c.get("completion_tokens") or 0) for c in mine),
        "cost": sum(float(c.get("cost") or 0.0) for c in mine),
    }


def load(store: RunStore, run_id: str) -> ResumeState:
    """What an interrupted run had done, from the store. ResumeError if it cannot be resumed."""
    record = store.get_run(run_id)
    if record is None:
        raise ResumeError(f"there is no run {run_id!r} in the run store at {store.path}")
    if record.status == "running":
        raise ResumeError(f"run {run_id} is still running (in another window or process); "
                          "it can be resumed only after that process has ended")
    if record.status != "interrupted":
        raise ResumeError(f"run {run_id} is {record.status}; only an interrupted run can be resumed")
    events = store.events(run_id)
    progress = [e for e in events if e["kind"] == "progress"]
    hypotheses = [{k: v for k, v in e.items() if k not in ("seq", "kind", "t")}
                  for e in events if e["kind"] == "hypothesis"]
    front = [{"expression": c["expression"], "complexity": int(c["complexity"]),
              "loss": math.inf if c["loss"] is None else float(c["loss"])} for c in store.last_front(run_id)]
    return ResumeState(
        run_id=run_id,
        task_id=record.task_id,
        method=record.method,
        config=dict(record.config),
        resumes=sum(1 for e in events if e["kind"] == "resumed"),
        elapsed=_elapsed(record.started_at, events),
        front=front,
        hypotheses=hypotheses,
        iterations=int(progress[-1].get("iteration") or 0) if progress else 0,
        evaluations=int(progress[-1].get("evaluations") or 0) if progress else 0,
        llm=_llm_spent(store.llm_calls(run_id)),
    )


def restore_budget(budget: Any, state: ResumeState | None) -> None:
    """Charge an LLM method's new budget with what the run spent before it was interrupted."""
    if state is None or not state.llm:
        return
    spent = state.llm
    budget.calls += int(spent["calls"])
    budget.cached += int(spent["cached"])
    budget.failures += int(spent["failures"])
    budget.prompt_tokens += int(spent["prompt_tokens"])
    budget.completion_tokens += int(spent["completion_tokens"])
    budget.cost += float(spent["cost"])
