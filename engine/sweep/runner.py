"""Driving a sweep: plan it (or pick up the one to resume), hand its units to a backend, import
every finished run into the run store, and report progress as plain events.

:func:`sweep` is a generator, like :func:`engine.runner.execute`: the CLI iterates it in the
foreground with a progress bar, the window moves it onto a QThread. ``context.cancel()`` stops a
sweep cleanly: no new unit starts, running units are asked to stop (each ends as ``cancelled``
with its best model scored and stored), and the sweep is marked ``stopped``; ``--resume`` runs
what is left. A second cancel (``context.force``) stops at once: running units are abandoned and
marked ``interrupted``.

Unit states in ``sweep_units``: pending → running → finished | failed | cancelled |
interrupted | lost. Resuming skips finished units and failed runs (a method that failed on a
task fails again; its run says why; ``retry_failed`` runs them too) and runs every other one
again, including units that failed before any run existed. A unit that reaches a worker after
Stop does not start; a unit waiting in the queue of a pool whose worker died is queued again
without spending an attempt. Two processes never resume the same live sweep.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field
from typing import Any, Iterator

from .. import methods as m
from ..store import RunStore, StoreError
from ..store.db import _unjson
from . import backends as b
from .plan import LAB_METHODS, Plan, PlanError, SweepSpec, Unit, plan

#: Attempts of a unit whose worker is lost before it is reported lost.
MAX_ATTEMPTS = 3
#: How long a stopping sweep waits for running units to hand back their cancelled runs.
STOP_GRACE = 60.0


@dataclass
class SweepPlanned:
    sweep_id: str
    total: int  # units in the whole sweep
    todo: int  # units this invocation runs
    done_before: int  # finished earlier (a resumed sweep)
    backend: str
    skipped: list[str] = field(default_factory=list)
    resumed: bool = False
    workers: int = 1
    kind: str = "sweep_planned"


@dataclass
class UnitDispatched:
    seq: int
    task_id: str
    method: str
    seed: int
    kind: str = "unit_dispatched"


@dataclass
class UnitStarted:
    seq: int
    worker: str
    kind: str = "unit_started"


@dataclass
class UnitRetried:
    seq: int
    task_id: str
    attempt: int
    reason: str
    kind: str = "unit_retried"


@dataclass
class UnitDone:
    seq: int
    task_id: str
    method: str
    seed: int
    status: str  # finished, failed, cancelled, interrupted, lost
    run_id: str | None
    expression: str | None
    nmse: float | None  # test-ID NMSE, where the task has it
    seconds: float | None
    worker: str | None
    attempts: int
    error: str | None = None
    kind: str = "unit_done"


@dataclass
class SweepEnded:
    sweep_id: str
    status: str  # finished, stopped, failed (the cluster went away)
    counts: dict
    seconds: float
    message: str = ""
    kind: str = "sweep_ended"

    def to_json(self) -> dict:
        return {"sweep_id": self.sweep_id, "status": self.status, "units": self.counts,
                "seconds": round(self.seconds, 3), "message": self.message}


class SweepContext(m.RunContext):
    """A sweep's stop switch: ``cancel()`` stops cleanly, a second ``cancel()`` at once."""

    def __init__(self):
        super().__init__()
        self.force = False

    def cancel(self) -> None:
        if self.cancelled:
            self.force = True
        super().cancel()


def _nmse(metrics: dict | None) -> float | None:
    value = ((metrics or {}).get("id") or {}).get("nmse")
    return float(value) if isinstance(value, (int, float)) else None


def _prepare(spec: SweepSpec, store: RunStore, backend_name: str, resume: bool | str
             ) -> tuple[str, list[dict], list[str], bool]:
    """The sweep to run and its units still to do."""
    sweep_id = None
    if resume:
        sweep_id = resume if isinstance(resume, str) else store.latest_sweep(spec.key())
        if isinstance(resume, str) and store.get_sweep(resume) is None:
            raise PlanError(f"no sweep '{resume}' in {store.path}")
    # A resumed sweep's units are in the store: the plan is only counted (for what it skips).
    planned: Plan = plan(spec, count_only=sweep_id is not None)
    if sweep_id is not None:
        store.mark_interrupted()  # a sweep whose process died since the store was opened
        row = store.get_sweep(sweep_id) or {}
        if row.get("status") == "running":  # still alive somewhere: two runs of one unit would race
            raise PlanError(f"sweep {sweep_id} is still running (process {row.get('pid')} on {row.get('host')}); "
                            "stop it first, or wait for it to end")
        store.reopen_sweep(sweep_id, backend_name)
        return sweep_id, store.sweep_units(sweep_id), planned.skipped, True
    units = [{"task_id": u.task_id, "method": u.method, "seed": u.seed, "config": u.config} for u in planned.units]
    sweep_id = store.create_sweep(spec.to_json(), spec.key(), backend_name, units)
    return sweep_id, store.sweep_units(sweep_id), planned.skipped, False


def _to_do(unit: dict, retry_failed: bool) -> bool:
    """Whether a resumed sweep runs ``unit`` (again)."""
    if unit["status"] == "finished":
        return False
    if unit["status"] == "failed":
        # A run that failed says why and would fail again; a unit that failed before any run
        # existed (a worker without this task, a broken install) is worth another try.
        return retry_failed or not unit.get("run_id")
    return True


def sweep(spec: SweepSpec, store: RunStore, backend: Any, *, resume: bool | str = False,
          retry_failed: bool = False, context: SweepContext | None = None,
          poll: float = 0.2) -> Iterator[object]:
    """Run ``spec`` on ``backend`` (see :mod:`.backends`), recording into ``store``.

    Yields :class:`SweepPlanned`, then :class:`UnitDispatched` / :class:`UnitStarted` /
    :class:`UnitRetried` / :class:`UnitDone` as units move, and finally :class:`SweepEnded`.
    ``resume`` is True (the latest sweep with the same plan) or a sweep id; ``retry_failed``
    also runs again the units whose run failed."""
    context = context or SweepContext()
    started = time.monotonic()
    sweep_id, units, skipped, resumed = _prepare(spec, store, getattr(backend, "kind", "local"), resume)
    todo = [u for u in units if _to_do(u, retry_failed)]
    backend.reset()
    yield SweepPlanned(sweep_id, len(units), len(todo), len(units) - len(todo), backend.describe(), skipped, resumed,
                       workers=max(1, int(getattr(backend, "workers", 1) or 1)))
    for unit in todo:
        if unit["status"] != "pending":
            store.update_unit(sweep_id, unit["seq"], status="pending", error=None)
    queue = list(todo)
    in_flight: dict[Any, dict] = {}
    attempts = {u["seq"]: u["attempts"] for u in todo}
    workers: dict[int, str] = {}
    window = max(2, 2 * int(getattr(backend, "workers", 1) or 1))
    # Units handed back unstarted by broken pools since anything last ran: workers that die as
    # they start (a broken install, no memory) would otherwise be replaced for ever.
    unstarted_losses = 0
    status = "finished"
    message = ""
    stop_deadline: float | None = None

    def payload(unit: dict) -> dict:
        lab = unit["method"] in LAB_METHODS
        return Unit(unit["seq"], unit["task_id"], unit["method"], unit["seed"], unit["config"], lab).payload()

    def abandon(reason: str) -> Iterator[UnitDone]:
        """Units still out when the sweep ends early: recorded as interrupted, for --resume."""
        for unit in in_flight.values():
            store.update_unit(sweep_id, unit["seq"], status="interrupted", error=reason)
            yield UnitDone(unit["seq"], unit["task_id"], unit["method"], unit["seed"], "interrupted",
                           None, None, None, None, workers.get(unit["seq"]), attempts[unit["seq"]], reason)
        in_flight.clear()

    try:
        while queue or in_flight:
            if context.cancelled and stop_deadline is None:
                status = "stopped"
                backend.stop()
                stop_deadline = time.monotonic() + STOP_GRACE
                queue.clear()  # units never started stay pending, for --resume
            if stop_deadline is not None and time.monotonic() > stop_deadline:
                context.force = True  # a unit that ignores the stop request is killed with its worker
            if context.force:
                yield from abandon("the sweep was stopped")
                message = "stopped at once; running units were abandoned"
                break
            try:
                while queue and len(in_flight) < window:
                    unit = queue.pop(0)
                    future = backend.submit(payload(unit))
                    in_flight[future] = unit
                    store.update_unit(sweep_id, unit["seq"], status="running", error=None)
                    yield UnitDispatched(unit["seq"], unit["task_id"], unit["method"], unit["seed"])
            except Exception as exc:  # the client is closed, the scheduler gone
                raise b.BackendLost(f"cannot hand units to {backend.describe()}: {exc}") from None
            done = backend.wait(list(in_flight), timeout=poll) if in_flight else set()
            # Starts are read after the wait: a unit that started and ended within one poll is
            # still announced before its result.
            for seq, worker, again in backend.started():
                previous = workers.get(seq)
                if again:  # Dask started it again: the worker that had it was lost
                    attempts[seq] += 1
                    store.update_unit(sweep_id, seq, status="running", worker=worker,
                                      attempt={"worker": previous, "outcome": "lost", "error": "worker lost; rescheduled by Dask"})
                    task_id = next((u["task_id"] for u in in_flight.values() if u["seq"] == seq), "")
                    yield UnitRetried(seq, task_id, attempts[seq], f"worker {previous} lost; rescheduled on {worker}")
                else:
                    store.update_unit(sweep_id, seq, status="running", worker=worker)
                workers[seq] = worker
                yield UnitStarted(seq, worker)
            for future in done:
                unit = in_flight.pop(future)
                seq = unit["seq"]
                try:
                    outcome = backend.outcome(future)
                except b.WorkerLost as exc:
                    if not exc.started:  # it was waiting in the broken pool's queue: no attempt spent
                        unstarted_losses += 1
                        if unstarted_losses > MAX_ATTEMPTS * window:
                            in_flight[future] = unit  # abandoned (interrupted) with the others
                            raise b.BackendLost("the workers end before they start any unit (they crash as "
                                                f"they start: {exc})")
                        store.update_unit(sweep_id, seq, status="pending", error=None)
                        if not context.cancelled:
                            queue.insert(0, unit)
                        continue
                    unstarted_losses = 0
                    attempts[seq] += 1
                    store.update_unit(sweep_id, seq, status="pending", error=str(exc),
                                      attempt={"worker": workers.get(seq), "outcome": "lost", "error": str(exc)})
                    if attempts[seq] < MAX_ATTEMPTS and not context.cancelled:
                        queue.insert(0, unit)
                        yield UnitRetried(seq, unit["task_id"], attempts[seq], str(exc))
                    else:
                        store.update_unit(sweep_id, seq, status="lost" if not context.cancelled else "pending",
                                          error=str(exc))
                        yield UnitDone(seq, unit["task_id"], unit["method"], unit["seed"], "lost", None, None, None,
                                       None, workers.get(seq), attempts[seq], str(exc))
                    continue
                except b.BackendLost:
                    in_flight[future] = unit
                    raise
                except Exception as exc:  # the work function itself raised (a bug in this build)
                    attempts[seq] += 1
                    error = f"{type(exc).__name__}: {exc}"
                    store.update_unit(sweep_id, seq, status="failed", error=error,
                                      attempt={"worker": workers.get(seq), "outcome": "error", "error": error})
                    yield UnitDone(seq, unit["task_id"], unit["method"], unit["seed"], "failed", None, None, None,
                                   None, workers.get(seq), attempts[seq], error)
                    continue
                unstarted_losses = 0
                unit_status = outcome.get("status") or "failed"
                if unit_status == "not-started":  # reached a worker after Stop: still to do
                    store.update_unit(sweep_id, seq, status="pending", error=None)
                    continue
                bundle = outcome.get("run")
                run = bundle["run"] if bundle else {}
                worker = outcome.get("worker") or workers.get(seq)
                try:
                    run_id = store.import_run(bundle) if bundle else None
                except StoreError as exc:  # this run is lost to the store; the unit runs again on --resume
                    error = f"the run could not be stored: {exc}"
                    store.update_unit(sweep_id, seq, status="interrupted", worker=worker, error=error)
                    yield UnitDone(seq, unit["task_id"], unit["method"], unit["seed"], "interrupted", None, None, None,
                                   None, worker, attempts[seq], error)
                    continue
                attempts[seq] += 1
                store.update_unit(sweep_id, seq, status=unit_status, run_id=run_id, worker=worker,
                                  error=outcome.get("error"),
                                  attempt={"worker": worker, "outcome": unit_status, "error": outcome.get("error")})
                yield UnitDone(seq, unit["task_id"], unit["method"], unit["seed"], unit_status, run_id,
                               run.get("expression"), _nmse(_unjson(run.get("metrics"))), run.get("seconds"),
                               worker, attempts[seq], outcome.get("error"))
    except b.BackendLost as exc:
        yield from abandon(str(exc))
        status, message = "failed", f"{exc}; --resume runs the rest"
    except BaseException:
        store.finish_sweep(sweep_id, "interrupted", "the sweep's process stopped with an error")
        for unit in in_flight.values():
            store.update_unit(sweep_id, unit["seq"], status="interrupted", error="the sweep was interrupted")
        raise
    counts = (store.get_sweep(sweep_id) or {}).get("units", {})
    if status == "finished" and any(counts.get(k) for k in ("pending", "interrupted", "lost", "running")):
        message = message or "some units were lost; --resume runs them again"
    if status == "stopped" and not message:
        message = "stopped; --resume runs the rest"
    store.finish_sweep(sweep_id, status, message or None)
    yield SweepEnded(sweep_id, status, counts, time.monotonic() - started, message)


def run_sweep(spec: SweepSpec, store: RunStore, backend: Any, **kwargs) -> SweepEnded:
    """:func:`sweep` run to its end; returns the final event."""
    ended = None
    for event in sweep(spec, store, backend, **kwargs):
        if isinstance(event, SweepEnded):
            ended = event
    assert ended is not None
    return ended


def eta(durations: list[float], remaining: int, workers: int) -> float | None:
    """Seconds left: the median unit time × the units left ÷ the workers (None before the
    first unit ends)."""
    if not durations or remaining <= 0:
        return 0.0 if remaining <= 0 else None
    return statistics.median(durations) * remaining / max(1, workers)
