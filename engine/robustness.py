"""Robustness sweeps: a method's recovery rate along one of ERBench's axes (ERBench §4.2, Fig. 6).

:func:`sweep` runs a method on the variants (:mod:`engine.tasks.variants`) of a few base tasks at
every level of one axis, for one or more seeds, through :func:`engine.runner.execute`, so every
run is recorded in the run store like any other. Each run's final expression is checked with
ERBench's numeric recovery criterion (:func:`engine.metrics.recovery.recovered`) against the
task's ground truth on its recovery domain, and the results are summarised per level: runs,
recovered runs, recovery rate and the median in-domain test NMSE.

Sweeps are resumable: a run already in the store for the same variant task, method, seed and
time budget, that finished, is reused instead of run again. A run stopped by the user (status
``cancelled``) is neither counted nor reused. A run that failed counts as not recovered.

This module is engine code: a generator of plain events, no threads, no Qt.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Iterable, Iterator, Sequence

import numpy as np

from . import methods as m
from .metrics.recovery import recovered
from .runner import RunFinished, execute, resolve_config
from .store import RunStore
from .tasks import variants as v
from .tasks.model import Task


@dataclass
class SweepStarted:
    axis: str
    levels: list[str]
    total: int  # planned runs
    kind: str = "sweep_started"


@dataclass
class SweepRunStarted:
    index: int  # 0-based position in the plan
    total: int
    task_id: str
    level: str
    seed: int
    kind: str = "sweep_run_started"


@dataclass
class SweepRun:
    """One finished (or reused) run of the sweep and its recovery."""

    level: str
    base_task_id: str
    task_id: str
    seed: int
    run_id: str | None
    status: str
    expression: str | None
    recovered: bool
    nmse: float | None  # in-domain test NMSE of the final model
    reused: bool = False
    kind: str = "sweep_run"


@dataclass
class LevelRow:
    level: str
    runs: int
    recovered: int
    rate: float | None  # None when no run has finished at this level
    median_nmse: float | None

    def to_json(self) -> dict:
        return {"level": self.level, "runs": self.runs, "recovered": self.recovered,
                "rate": self.rate, "median_nmse": self.median_nmse}


@dataclass
class SweepFinished:
    axis: str
    rows: list[LevelRow]
    cancelled: bool
    results: list[SweepRun] = field(default_factory=list)
    kind: str = "sweep_finished"


# --------------------------------------------------------------------------- planning


def plan(base_tasks: Sequence[Task], axis: str, levels: Iterable | None = None) -> list[tuple[str, Task, Task]]:
    """``(level, base task, variant)`` for every base task and level, level-major.

    For ``dimensionality`` every base task appears once, at its own number of inputs; ``levels``
    (if given) keeps only those dimensions.
    """
    if axis == "dimensionality":
        wanted = {v.normalize_level(axis, lv) for lv in levels} if levels else None
        out = []
        for d, tasks in v.group_by_dimension(base_tasks).items():
            if wanted is None or str(d) in wanted:
                out += [(str(d), t, v.make_variant(t, axis, d)) for t in tasks]
        return out
    norm = [v.normalize_level(axis, lv) for lv in (levels or v.LEVELS[axis])]
    return [(lv, t, v.make_variant(t, axis, lv)) for lv in norm for t in base_tasks]


def plan_levels(plan_rows: Sequence[tuple[str, Task, Task]]) -> list[str]:
    seen: list[str] = []
    for level, _, _ in plan_rows:
        if level not in seen:
            seen.append(level)
    return seen


# --------------------------------------------------------------------------- scoring


def recovery_of(task: Task, expression: str | None) -> bool:
    """ERBench recovery of ``expression`` against the task's truth on its recovery domain."""
    if not expression:
        return False
    try:
        return recovered(task.ground_truth.expression, expression, task.input_names,
                         domain=task.metadata.get("recovery_domain"))
    except ValueError:  # the truth is undefined on the domain: cannot be judged
        return False


def _nmse(metrics: dict | None) -> float | None:
    try:
        value = float((metrics or {})["id"]["nmse"])
    except (KeyError, TypeError, ValueError):
        return None
    return None if math.isnan(value) else value


def summarize(results: Iterable[SweepRun], levels: Sequence[str]) -> list[LevelRow]:
    """One row per level: runs, recovered, rate and median in-domain NMSE (cancelled runs are
    left out)."""
    rows = []
    results = [r for r in results if r.status != "cancelled"]
    for level in levels:
        mine = [r for r in results if r.level == level]
        nmses = [r.nmse for r in mine if r.nmse is not None]
        hits = sum(1 for r in mine if r.recovered)
        rows.append(LevelRow(
            level=level,
            runs=len(mine),
            recovered=hits,
            rate=hits / len(mine) if mine else None,
            median_nmse=float(np.median(nmses)) if nmses else None,
        ))
    return rows


# --------------------------------------------------------------------------- running


class _LinkedContext(m.RunContext):
    """A run's context that is also cancelled when the whole sweep is."""

    def __init__(self, parent: m.RunContext, seconds: float | None):
        super().__init__(seconds=seconds)
        self.parent = parent

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set() or self.parent.cancelled


def method_config(method: str, seed: int, seconds: float | None, config: dict | None = None) -> dict:
    """The config of one run: ``config`` plus the seed and time budget, where the method has them."""
    defaults = m.get_method(method).default_config()
    out = dict(config or {})
    if "seed" in defaults:
        out["seed"] = int(seed)
    if seconds is not None and "seconds" in defaults:
        out["seconds"] = float(seconds)
    return out


def find_reusable(store: RunStore, task_id: str, method: str, config: dict):
    """The most recent finished run of ``method`` on ``task_id`` made with exactly ``config``
    (the method's whole resolved configuration: seed, time budget and every other parameter),
    or None. A run with other settings is never counted for this sweep."""
    wanted = json.loads(json.dumps(config, sort_keys=True, default=str))
    for record in store.list_runs(task_id, limit=1000):
        if record.method != method or record.status != "finished":
            continue
        stored = json.loads(json.dumps(record.config or {}, sort_keys=True, default=str))
        if stored == wanted:
            return record
    return None


def sweep(
    base_tasks: Sequence[Task],
    axis: str,
    method: str,
    store: RunStore,
    levels: Iterable | None = None,
    seeds: Sequence[int] = (0,),
    seconds: float | None = None,
    config: dict | None = None,
    context: m.RunContext | None = None,
    reuse: bool = True,
) -> Iterator[object]:
    """Run ``method`` over the variants of ``base_tasks`` along ``axis``; a generator of events.

    Yields :class:`SweepStarted`, then for every planned run a :class:`SweepRunStarted`, the
    runner's own events (only for runs actually executed), and a :class:`SweepRun`; finally a
    :class:`SweepFinished` with the table. ``context.cancel()`` stops the current run (it is
    recorded as cancelled) and ends the sweep. Order: seed, then level, then task, so a first
    point per level appears early.
    """
    context = context or m.RunContext()
    rows = plan(base_tasks, axis, levels)
    levels_used = plan_levels(rows)
    order = [(seed, level, base, task) for seed in seeds for (level, base, task) in rows]
    yield SweepStarted(axis, levels_used, len(order))
    results: list[SweepRun] = []
    for index, (seed, level, base, task) in enumerate(order):
        if context.cancelled:
            break
        yield SweepRunStarted(index, len(order), task.id, level, int(seed))
        run_config = method_config(method, seed, seconds, config)
        resolved = resolve_config(m.get_method(method), run_config)
        record = find_reusable(store, task.id, method, resolved) if reuse else None
        if record is not None:
            result = SweepRun(level, base.id, task.id, int(seed), record.id, record.status, record.expression,
                              recovery_of(task, record.expression), _nmse(record.metrics), reused=True)
        else:
            run_context = _LinkedContext(context, seconds)
            finished: RunFinished | None = None
            for event in execute(task, method, run_config, run_context, store):
                if isinstance(event, RunFinished):
                    finished = event
                yield event
            if finished is None:  # pragma: no cover - execute always ends with RunFinished
                continue
            hit = recovery_of(task, finished.expression) if finished.status == "finished" else False
            result = SweepRun(level, base.id, task.id, int(seed), finished.run_id, finished.status,
                              finished.expression, hit, _nmse(finished.metrics))
        results.append(result)
        yield result
    yield SweepFinished(axis, summarize(results, levels_used), context.cancelled, results)


def run_sweep(*args, **kwargs) -> list[LevelRow]:
    """:func:`sweep` run to the end; returns the table (axis level → runs, recovered, rate,
    median NMSE)."""
    table: list[LevelRow] = []
    for event in sweep(*args, **kwargs):
        if isinstance(event, SweepFinished):
            table = event.rows
    return table
