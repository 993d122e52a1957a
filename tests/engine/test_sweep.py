"""Sweeps (issue 8): planning, the local process pool, a local Dask cluster (loopback only),
stopping and resuming, lost workers, and a sweep process killed outright."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine.store import RunStore
from engine.sweep import PlanError, SweepSpec, UnitDone, UnitRetried, plan, run_sweep, sweep
from engine.sweep.backends import DaskBackend, LocalPool
from engine.sweep.runner import SweepContext, SweepEnded, SweepPlanned

ROOT = Path(__file__).resolve().parents[2]
TWO = ("llmsrbench/lsr-synth/material_science/MatSci1", "llmsrbench/lsr-synth/material_science/MatSci2")


def spec(*suites, methods=("gp",), seeds=1, seconds=1.0, **kw) -> SweepSpec:
    return SweepSpec(tuple(suites or TWO), tuple(methods), seeds, seconds, **kw)


# ----------------------------------------------------------------------------- planning


def test_plan_crosses_tasks_methods_and_seeds_and_names_what_it_skips():
    planned = plan(SweepSpec(("llmsrbench/lsr-synth/material_science", "symbolbench/bn/faure_cellcycle"),
                             ("gp", "bn-search"), seeds=2, seconds=3))
    units = planned.units
    assert len(units) == (25 * 1 + 1 * 1) * 2  # gp on the 25 laws, bn-search on the network, two seeds
    assert [u.seq for u in units] == list(range(len(units)))
    assert {u.seed for u in units} == {0, 1}
    assert all(u.config["seconds"] == 3 and u.config["seed"] == u.seed for u in units if u.method == "gp")
    assert any("gp: 1 'boolean_network' tasks skipped" in s for s in planned.skipped)
    assert any("bn-search: 25 'function' tasks skipped" in s for s in planned.skipped)


def test_noise_picks_each_suites_noisy_variant():
    units = plan(SweepSpec(("llmsrbench/lsr-synth/material_science/MatSci1", "surfacebench/explicit/TFS/TFS8",
                            "symbolbench/cde/odebench-05"), ("gp",), noise=5)).units
    ids = [u.task_id for u in units]
    assert ids == ["erbench/variants/noise/0.05/llmsrbench/lsr-synth/material_science/MatSci1",
                   "surfacebench/explicit/TFS/TFS8/noise-5", "symbolbench/cde/odebench-05/noise-5"]
    planned = plan(SweepSpec(("surfacebench/explicit/TFS/TFS8", "llmsrbench/lsr-synth/material_science/MatSci1"),
                             ("gp",), noise=2))
    assert [u.task_id.rsplit("/", 1)[-1] for u in planned.units] == ["MatSci1"]
    assert any("SurfaceBench has noise levels 1, 5, 10" in s for s in planned.skipped)


def test_newtonbench_tasks_run_with_agents():
    planned = plan(SweepSpec(("newtonbench/m0_gravity/v0/easy",), ("agent:baseline", "gp")))
    assert [u.task_id for u in planned.units] == ["newtonbench/m0_gravity/v0/easy/vanilla",
                                                  "newtonbench/m0_gravity/v0/easy/simple",
                                                  "newtonbench/m0_gravity/v0/easy/complex"]
    assert all(u.lab and u.method == "agent:baseline" for u in planned.units)
    assert any("gp: 3 NewtonBench lab tasks" in s for s in planned.skipped)


@pytest.mark.parametrize("bad, message", [
    (SweepSpec(("nosuch/suite",), ("gp",)), "no task matches 'nosuch/suite'"),
    (SweepSpec(TWO, ("nosuch",)), "unknown method 'nosuch'"),
    (SweepSpec(TWO, ("gp",), seeds=0), "at least 1"),
    (SweepSpec(("symbolbench/bn/faure_cellcycle",), ("gp",)), "no runnable task × method pair"),
    (SweepSpec(("symbolbench/bn/faure_cellcycle",), ("bn-search",), noise=5), "no runnable"),
])
def test_a_bad_plan_is_refused_with_a_reason(bad, message):
    with pytest.raises(PlanError, match=message):
        plan(bad)


def test_the_plan_key_identifies_the_plan():
    assert spec().key() == spec().key()
    assert spec().key() != spec(seeds=2).key() != spec(seconds=2.0).key()


# ----------------------------------------------------------------------------- running


@pytest.fixture
def store(tmp_path):
    with RunStore(tmp_path / "runs.sqlite3") as s:
        yield s


@pytest.mark.slow
def test_local_pool_sweep_records_every_run_and_resume_skips_them(store):
    backend = LocalPool(1)
    try:
        ended = run_sweep(spec(seeds=2), store, backend)
        assert ended.status == "finished" and ended.counts == {"finished": 4}
        runs = store.list_runs()
        assert len(runs) == 4 and {r.status for r in runs} == {"finished"}
        assert sorted((r.task_id, r.seed) for r in runs) == sorted((t, s) for t in TWO for s in (0, 1))
        assert all(r.metrics["id"]["nmse"] is not None and store.progress(r.id) for r in runs)  # the whole run came back
        units = store.sweep_units(ended.sweep_id)
        assert all(u["attempts"] == 1 and u["run_id"] and u["worker"] for u in units)
        events = list(sweep(spec(seeds=2), store, backend, resume=True))
        planned = events[0]
        assert isinstance(planned, SweepPlanned) and planned.resumed and planned.todo == 0 and planned.done_before == 4
        assert planned.sweep_id == ended.sweep_id
        assert len(store.list_runs()) == 4  # nothing ran again
    finally:
        backend.close()


@pytest.mark.slow
def test_a_stopped_sweep_resumes_with_only_what_was_left(store):
    backend = LocalPool(1)
    context = SweepContext()
    four = spec("llmsrbench/lsr-synth/material_science/MatSci1", "llmsrbench/lsr-synth/material_science/MatSci2",
                "llmsrbench/lsr-synth/material_science/MatSci3", "llmsrbench/lsr-synth/material_science/MatSci4",
                seconds=1.0)
    try:
        done = []
        for event in sweep(four, store, backend, context=context):
            if isinstance(event, UnitDone):
                done.append(event)
                context.cancel()  # Stop after the first result
            if isinstance(event, SweepEnded):
                ended = event
        assert ended.status == "stopped" and "--resume" in ended.message
        # What was running when Stop came ended as cancelled (its best model scored); the rest is pending.
        assert done[0].status == "finished"
        assert set(ended.counts) <= {"finished", "cancelled", "pending"} and ended.counts.get("pending", 0) >= 1
        resumed = run_sweep(four, store, backend, resume=True)
        assert resumed.sweep_id == ended.sweep_id and resumed.counts == {"finished": 4}
        finished = [r for r in store.list_runs() if r.status == "finished"]
        assert sorted(r.task_id for r in finished) == sorted(four.suites)  # each task finished exactly once
    finally:
        backend.close()


@pytest.mark.slow
def test_a_lost_pool_worker_is_retried_and_recorded(store, tmp_path, monkeypatch):
    from tests import sweep_faults

    monkeypatch.setenv("KEPLERLAB_TEST_CRASH", "0")  # the first unit's worker dies while unit 1 waits in the queue
    monkeypatch.setenv("KEPLERLAB_TEST_CRASH_DIR", str(tmp_path))
    backend = LocalPool(1, work_fn=sweep_faults.pool_crash_once)
    try:
        events = list(sweep(spec(), store, backend))
    finally:
        backend.close()
    retried = [e for e in events if isinstance(e, UnitRetried)]
    assert [e.task_id for e in retried] == [TWO[0]] and "ended unexpectedly" in retried[0].reason
    assert events[-1].counts == {"finished": 2}
    crashed, waiting = store.sweep_units(events[-1].sweep_id)
    assert crashed["attempts"] == 2 and [h["outcome"] for h in crashed["history"]] == ["lost", "finished"]
    # The unit queued behind it never ran on the dead worker: no attempt is charged to it.
    assert waiting["attempts"] == 1 and [h["outcome"] for h in waiting["history"]] == ["finished"]


@pytest.mark.slow
def test_sweep_on_a_local_dask_cluster_survives_a_lost_worker(store, tmp_path, monkeypatch):
    """Two Dask workers on loopback; the worker running unit 0 dies once. Dask reschedules it,
    the sweep records the lost attempt, and every run ends in the store."""
    from tests import sweep_faults

    monkeypatch.setenv("KEPLERLAB_TEST_CRASH", "0")
    monkeypatch.setenv("KEPLERLAB_TEST_CRASH_DIR", str(tmp_path))
    backend = DaskBackend(workers=2, work_fn=sweep_faults.dask_crash_once)
    try:
        assert backend.address.startswith("tcp://127.0.0.1:") and backend.workers == 2
        events = list(sweep(spec(*TWO, "llmsrbench/lsr-synth/material_science/MatSci3"), store, backend))
    finally:
        backend.close()
    ended = events[-1]
    assert ended.status == "finished" and ended.counts == {"finished": 3}
    assert len({e.worker for e in events if isinstance(e, UnitDone)}) >= 1
    unit = store.sweep_units(ended.sweep_id)[0]
    assert [h["outcome"] for h in unit["history"]][-1] == "finished"
    assert unit["attempts"] >= 2 and unit["history"][0]["outcome"] == "lost"
    assert len(store.list_runs()) == 3


@pytest.mark.slow
def test_a_killed_sweep_is_marked_interrupted_and_resume_finishes_it(tmp_path):
    db = tmp_path / "runs.sqlite3"
    env = {**os.environ, "KEPLERLAB_HOME": str(tmp_path / "home")}
    env.pop("KEPLERLAB_TEST_CRASH", None)
    args = [sys.executable, "-m", "engine.cli", "bench", "--suite", ",".join(TWO), "--method", "gp",
            "--seconds", "3", "--db", str(db)]
    process = subprocess.Popen(args, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # wait until the first unit is running
            if db.exists():
                with RunStore(db) as s:
                    sweeps = s.list_sweeps()
                    if sweeps and sweeps[0]["units"].get("running") == 2:  # both dispatched
                        break
            time.sleep(0.2)
        else:
            pytest.fail("the sweep never started a unit")
    finally:
        os.killpg(process.pid, signal.SIGKILL)  # the sweep and its workers, like a power cut
        process.wait(30)
    with RunStore(db) as s:
        sweep_row = s.list_sweeps()[0]
        assert sweep_row["status"] == "interrupted"
        assert set(sweep_row["units"]) == {"interrupted"}  # dispatched when killed: to be run again
    done = subprocess.run(args + ["--resume", "--json", "--quiet"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == "finished" and result["units"] == {"finished": 2}
    assert result["sweep_id"] == sweep_row["id"]


@pytest.mark.slow
def test_newtonbench_agents_are_swept_and_recorded_as_runs(store):
    """A NewtonBench agent's session becomes an ordinary run, which the report tabulates."""
    from engine.report import collect, layouts

    backend = LocalPool(1)
    try:
        ended = run_sweep(SweepSpec(("newtonbench/m0_gravity/v0/easy/vanilla",), ("agent:baseline",)), store, backend)
    finally:
        backend.close()
    assert ended.counts == {"finished": 1}
    (run,) = store.list_runs()
    assert run.task_id == "newtonbench/m0_gravity/v0/easy/vanilla" and run.method == "agent:baseline"
    assert run.metrics["newtonbench"]["rmsle"] < 1e-6 and run.metrics["symbolic"]["equivalent"] is True
    assert run.metrics["agent"]["experiments"] > 0 and "mass1" in run.expression
    assert "agent_experiment" in {e["kind"] for e in store.events(run.id)}  # the session's actions came back
    results = collect.load_results(store, suite="newtonbench")
    summary = [t for t in layouts.build_tables(results, published=[]) if t.benchmark == "newtonbench"][0]
    ours = [r for r in summary.rows if r["row"] != "published"][0]
    assert any(value == 100.0 for value in ours.values())  # SA of the easy / vanilla cell


@pytest.mark.slow
def test_units_queued_when_stop_comes_never_start(store):
    """Stop while unit 0 runs and unit 1 waits in the one-worker pool's queue: unit 0 ends as
    cancelled (its best model kept), unit 1 reaches the worker after Stop and never starts,
    unit 2 was never handed out. Stop comes on unit 0's *start* (not on its dispatch: the
    spawned worker may not have picked it up yet, and then it too would rightly never start)."""
    backend = LocalPool(1)
    context = SweepContext()
    events = []
    try:
        # A long budget: unit 0 can only end through the Stop, whatever the machine's load.
        for event in sweep(spec(*TWO, "llmsrbench/lsr-synth/material_science/MatSci3", seconds=30.0), store, backend,
                           context=context):
            events.append(event)
            if event.kind == "unit_started" and event.seq == 0:
                context.cancel()
    finally:
        backend.close()
    ended = events[-1]
    assert ended.status == "stopped"
    assert [e.seq for e in events if e.kind == "unit_dispatched"] == [0, 1]  # the window of one worker: two
    assert [e.seq for e in events if e.kind == "unit_started"] == [0]
    units = store.sweep_units(ended.sweep_id)
    assert [u["status"] for u in units] == ["cancelled", "pending", "pending"]
    assert [r.task_id for r in store.list_runs()] == [TWO[0]]  # unit 1 reached the worker after Stop: no run
    assert store.list_runs()[0].status == "cancelled"


def test_a_sweep_still_running_elsewhere_is_not_resumed_twice(store):
    live = spec()
    from engine.sweep.plan import plan as make_plan

    units = [{"task_id": u.task_id, "method": u.method, "seed": u.seed, "config": u.config}
             for u in make_plan(live).units]
    sweep_id = store.create_sweep(live.to_json(), live.key(), "local", units)  # this (live) process runs it
    with pytest.raises(PlanError, match=f"sweep {sweep_id} is still running"):
        next(iter(sweep(live, store, LocalPool.__new__(LocalPool), resume=True)))


@pytest.mark.parametrize("argv, message", [
    (["--scheduler", "foo"], "must be a Dask scheduler address such as tcp://host:8786"),
    (["--scheduler", ""], "must be a Dask scheduler address"),
    (["--retry-failed"], "--retry-failed goes with --resume"),
    (["--seconds", "0"], "--seconds must be a positive"),
    (["--noise", "nan"], "--noise must be a percentage"),
])
def test_bench_refuses_bad_options_with_a_message(argv, message, capsys, tmp_path):
    from engine.cli import EXIT_USAGE, main

    code = main(["bench", "--suite", TWO[0], "--method", "gp", "--db", str(tmp_path / "x.db"), *argv])
    assert code == EXIT_USAGE and message in capsys.readouterr().err
    assert not (tmp_path / "x.db").exists() or not RunStore(tmp_path / "x.db").list_sweeps()
