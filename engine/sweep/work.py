"""One unit of a sweep, run headless wherever it lands: a process of the local pool or a Dask
worker on another machine.

The worker writes the run into a run store of its own (a temporary file), so it needs no access
to the user's database; it hands the whole run back (:meth:`RunStore.export_run`: the row, every
event, the Pareto reports, the LLM calls) and the sweep's coordinator imports it. A stop request
reaches a running unit through ``stop`` (polled every half second): the run then ends as
``cancelled`` with its best model scored, like a Stop in the window.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import socket
import tempfile
import threading
import time
import traceback
from typing import Any, Callable

#: How often a running unit checks for a stop request (seconds).
STOP_POLL = 0.5


def _watch(stop: Callable[[], bool] | None, context: Any, done: threading.Event) -> threading.Thread | None:
    if stop is None:
        return None

    def loop() -> None:
        while not done.wait(STOP_POLL):
            try:
                if stop():
                    context.cancel()
                    return
            except Exception:  # the coordinator has gone: finish the run, it will not be collected
                return

    thread = threading.Thread(target=loop, name="sweep-stop-watch", daemon=True)
    thread.start()
    return thread


def _run_method(unit: dict, store: Any, context: Any) -> str:
    from ..runner import RunFinished, execute
    from ..tasks.registry import get_task

    task = get_task(unit["task_id"])
    run_id = None
    for event in execute(task, unit["method"], unit["config"], context, store):
        if isinstance(event, RunFinished):  # always the last event
            run_id = event.run_id
    return run_id


def _run_agent(unit: dict, store: Any, context: Any) -> str:
    """NewtonBench: an agent's session, recorded as a run (method ``agent:<name>``)."""
    from ..lab import agents, get_task

    task = get_task(unit["task_id"])
    agent = unit["method"].split(":", 1)[1]
    config = dict(unit["config"])
    run_id = store.create_run(task.id, unit["method"], config, config.get("seed"))
    started = time.monotonic()
    result = None
    try:
        for event in agents.run_agent(task, agent, config, context):
            if isinstance(event, agents.AgentResult):
                result = event
            else:
                payload = dataclasses.asdict(event) if dataclasses.is_dataclass(event) else {"value": repr(event)}
                store.add_event(run_id, getattr(event, "kind", "event"), payload)
    except Exception as exc:
        store.finish_run(run_id, "failed", seconds=time.monotonic() - started, error=f"{type(exc).__name__}: {exc}")
        return run_id
    if result is None:
        store.finish_run(run_id, "failed", seconds=time.monotonic() - started, error="the agent ended without a result")
        return run_id
    evaluation = result.evaluation or {}
    metrics = {
        "newtonbench": {k: evaluation.get(k) for k in ("rmsle", "exact_accuracy", "n", "error")},
        "agent": {"stop_reason": result.stop_reason, "rounds": result.rounds, "experiments": result.experiments,
                  "llm_calls": result.llm_calls},
    }
    if evaluation.get("symbolic"):
        metrics["symbolic"] = evaluation["symbolic"]
    status = "cancelled" if result.stop_reason == "cancelled" else "finished"
    store.finish_run(run_id, status, seconds=result.seconds, expression=result.law, metrics=metrics,
                     stop_reason=result.stop_reason, error=evaluation.get("error"))
    return run_id


def worker_name() -> str:
    try:
        from distributed import get_worker

        return get_worker().address
    except (ImportError, ValueError):
        return f"{socket.gethostname()}:{os.getpid()}"


def _threads_for(unit: dict, threads: int | None) -> dict:
    """A method with its own worker threads (GP) gets the cores this worker was given, unless
    the sweep set them: two workers on two cores should not each start two threads."""
    if threads is None or unit["lab"]:
        return unit
    from .. import methods as m

    if "threads" in m.get_method(unit["method"]).default_config() and "threads" not in unit["config"]:
        unit = {**unit, "config": {**unit["config"], "threads": max(1, int(threads))}}
    return unit


def _stopping(stop: Callable[[], bool] | None) -> bool:
    if stop is None:
        return False
    try:
        return bool(stop())
    except Exception:  # the coordinator has gone: nobody will collect the result
        return True


def _not_started() -> dict:
    return {"status": "not-started", "run": None, "worker": worker_name(), "error": None}


def run_unit(unit: dict, stop: Callable[[], bool] | None = None, threads: int | None = None, *,
             checked: bool = False) -> dict:
    """Run one unit (a :meth:`Unit.payload`); returns ``{"status", "run": bundle | None,
    "worker", "error"}``. Never raises for a failing method: that is a failed run. A unit that
    finds the sweep already stopping returns status ``not-started`` and records nothing
    (``checked``: the caller has just looked, and announced the start)."""
    from .. import methods as m
    from ..store import RunStore

    if not checked and _stopping(stop):  # queued before Stop, reached a worker after it: it never starts
        return _not_started()
    unit = _threads_for(unit, threads)
    folder = tempfile.mkdtemp(prefix="keplerlab-unit-")
    done = threading.Event()
    context = m.RunContext()
    watcher = _watch(stop, context, done)
    try:
        store = RunStore(os.path.join(folder, "unit.sqlite3"))
        try:
            try:
                run_id = (_run_agent if unit["lab"] else _run_method)(unit, store, context)
            except Exception as exc:  # an unknown task, a bad configuration: the unit fails
                return {"status": "failed", "run": None, "worker": worker_name(),
                        "error": f"{type(exc).__name__}: {exc}", "trace": traceback.format_exc(limit=5)}
            bundle = store.export_run(run_id) if run_id else None
        finally:
            store.close()
        status = bundle["run"]["status"] if bundle else "failed"
        return {"status": status, "run": bundle, "worker": worker_name(),
                "error": bundle["run"]["error"] if bundle else "no run was recorded"}
    finally:
        done.set()
        if watcher is not None:
            watcher.join(1.0)
        shutil.rmtree(folder, ignore_errors=True)


def file_stop(path: str) -> Callable[[], bool]:
    """A stop request that is a file appearing (the local process pool: same machine)."""
    return lambda: os.path.exists(path)


def start_marker(stop_path: str, seq: int) -> str:
    """The file a pool worker creates when it starts unit ``seq`` (it holds the worker's name):
    the coordinator announces the start from it, and if the pool breaks, units with a marker
    were running (a lost attempt), the others were only queued."""
    return os.path.join(os.path.dirname(stop_path), f"started-{seq}")


def run_unit_file_stop(unit: dict, stop_path: str, threads: int | None = None) -> dict:
    """:func:`run_unit` for the local process pool (module-level, so it pickles by name).

    The stop request is read *before* the start marker is written: a unit with a marker always
    runs and ends with a run (finished, cancelled or failed), one without never starts, so the
    coordinator's ``UnitStarted`` means what it says."""
    stop = file_stop(stop_path)
    if _stopping(stop):
        return _not_started()
    marker = start_marker(stop_path, unit["seq"])
    with open(marker + ".tmp", "w") as out:  # renamed into place: never read half-written
        out.write(worker_name())
    os.replace(marker + ".tmp", marker)
    return run_unit(unit, stop, threads, checked=True)


def run_unit_dask(unit: dict, event_name: str, threads: int | None = None) -> dict:
    """:func:`run_unit` on a Dask worker: announces its start (so the coordinator can tell a
    unit rescheduled after a lost worker) and stops when the sweep's ``distributed.Event`` is set."""
    from distributed import Event, get_worker

    worker = get_worker()
    try:
        worker.log_event("keplerlab-sweep", {"seq": unit["seq"], "token": unit.get("token"), "worker": worker.address,
                                             "what": "started"})
    except Exception:  # an older scheduler without events: only the announcement is lost
        pass
    event = Event(event_name)
    nthreads = getattr(worker, "nthreads", None) or 1
    return run_unit(unit, event.is_set, threads if threads is not None else nthreads)
