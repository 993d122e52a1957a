"""engine.replay: a stored run's timeline, its state at every step, and the demo's speeds."""

from __future__ import annotations

import math
from collections import Counter

import pytest

from engine import methods as m
from engine.replay import SPEEDS, ReplayError, build_timeline, load_timeline, speed_factor, wall_seconds
from engine.runner import RunFinished, execute
from engine.store import RunStore
from engine.tasks import registry
from tests.gui.llm_events import run_events
from tests.gui.stored_runs import FRONT, add_run

MATSCI1 = "llmsrbench/lsr-synth/material_science/MatSci1"


def _sorted(rows):
    return sorted(rows, key=lambda r: (r["complexity"], r["expression"]))


@pytest.fixture(scope="module")
def gp_run(tmp_path_factory):
    """A real GP run of about 1.5 s on an LSR-Synth task, recorded by engine.runner."""
    store = RunStore(tmp_path_factory.mktemp("replay") / "runs.db")
    task = registry.get_task(MATSCI1)
    config = {"population_size": 200, "generations": 100000, "seconds": 1.5, "threads": 1, "seed": 3}
    items = list(execute(task, "gp", config, m.RunContext(), store))
    result = items[-1]
    assert isinstance(result, RunFinished) and result.status == "finished"
    yield store, result.run_id
    store.close()


def _llm_run(store: RunStore, n_calls: int = 12) -> str:
    """An LLM run written as the runner writes one: calls in their table, everything else as
    events, with a progress point and a front after each good hypothesis."""
    run_id = store.create_run(MATSCI1, "llmsr", {"llm": {"model": "gpt-4o-mini"}, "max_llm_calls": 40,
                                                  "max_llm_cost": 0.05, "seed": 0}, 0)
    best = math.inf
    iteration = 0
    for event in run_events(n_calls):
        payload = m.base.event_payload(event)
        if isinstance(event, m.LLMCall):
            store.add_llm_call(run_id, payload)
            continue
        store.add_event(run_id, "hypothesis", payload)
        if event.ok and event.loss is not None:
            iteration += 1
            best = min(best, event.loss)
            store.add_event(run_id, "progress", {"iteration": iteration, "best_loss": best, "evaluations": iteration,
                                                 "elapsed": 0.0})
            front = [{"expression": "epsilon", "complexity": 1, "loss": 0.9},
                     {"expression": f"{iteration}*epsilon", "complexity": 3, "loss": best}]
            store.add_event(run_id, "pareto", {"iteration": iteration, "candidates": front})
            store.add_pareto(run_id, iteration, front)
    store.add_event(run_id, "final", {"expression": f"{iteration}*epsilon", "complexity": 3, "loss": best})
    store.finish_run(run_id, "finished", seconds=1.0, expression=f"{iteration}*epsilon", complexity=3,
                     train_loss=best, metrics={"train": {"nmse": best}, "llm": {"calls": n_calls - 1}})
    return run_id


# ------------------------------------------------------------------------------ a real GP run


def test_final_state_of_a_gp_run_is_what_the_store_shows(gp_run):
    store, run_id = gp_run
    timeline = build_timeline(store, run_id)
    kinds = Counter(s.kind for s in timeline.steps)
    progress = store.progress(run_id)
    assert kinds["progress"] == len(progress) > 0
    assert kinds["front"] == len(store.events(run_id, "pareto")) > 0
    assert kinds["final"] == 1 and kinds["result"] == 1
    assert timeline.steps[-1].kind == "result"
    assert not timeline.empty and not timeline.used_llm

    final = timeline.final_state()
    assert final.position == len(timeline) and final.finished
    assert final.iterations == [p["iteration"] for p in progress]
    assert final.losses == [p["best_loss"] for p in progress]
    assert _sorted(final.front) == _sorted(store.last_front(run_id))
    assert final.front == store.last_front(run_id)  # same rows in the same order
    assert final.final["expression"] == store.events(run_id, "final")[0]["expression"]
    assert final.llm_calls == [] and final.hypotheses == []


def test_steps_keep_the_recorded_order_and_times(gp_run):
    store, run_id = gp_run
    record = store.get_run(run_id)
    timeline = build_timeline(store, run_id)
    times = [s.t for s in timeline.steps]
    assert times == sorted(times) and times[0] >= 0
    assert [s.index for s in timeline.steps] == list(range(len(timeline)))
    # Events keep the store's sequence; the end is when the run was finished.
    seqs = [s.data["seq"] for s in timeline.steps if s.kind in ("progress", "log", "final")]
    assert seqs == sorted(seqs)
    assert timeline.duration == pytest.approx(record.finished_at - record.started_at)
    events = {e["seq"]: e for e in store.events(run_id)}
    for step in timeline.steps:
        if step.kind == "progress":
            assert step.t == pytest.approx(events[step.data["seq"]]["t"] - record.started_at)
    assert timeline.position_at(-1) == 0
    assert timeline.position_at(timeline.duration) == len(timeline)
    middle = timeline.steps[len(timeline) // 2]
    assert timeline.time_at(timeline.position_at(middle.t)) == pytest.approx(middle.t)


def test_state_grows_step_by_step(gp_run):
    store, run_id = gp_run
    timeline = build_timeline(store, run_id)
    start = timeline.state_at(0)
    assert start.iterations == [] and start.front is None and not start.finished and start.t == 0
    fronts = [i + 1 for i, s in enumerate(timeline.steps) if s.kind == "front"]
    previous = start
    for position in range(1, len(timeline) + 1):
        state = timeline.state_at(position)
        step = timeline.steps[position - 1]
        assert len(state.iterations) == len(previous.iterations) + (step.kind == "progress")
        assert state.iterations[: len(previous.iterations)] == previous.iterations
        if step.kind == "front":
            assert state.front == step.data["candidates"] and state.front_iteration == step.data["iteration"]
        else:
            assert state.front == previous.front
        assert state.finished == (step.kind == "result")
        previous = state
    # The first front differs from the last (the search improved), and shows before it.
    assert timeline.state_at(fronts[0]).front_iteration <= timeline.state_at(fronts[-1]).front_iteration
    assert timeline.state_at(10**6).position == len(timeline)  # clamped
    assert timeline.state_at(-3).position == 0


def test_load_timeline_opens_its_own_connection(gp_run):
    store, run_id = gp_run
    timeline = load_timeline(store.path, run_id)
    assert timeline.final_state().iterations == build_timeline(store, run_id).final_state().iterations


# ------------------------------------------------------------------------------ a recorded LLM run


def test_llm_run_replays_its_calls_and_hypotheses_from_the_store(tmp_path):
    with RunStore(tmp_path / "runs.db") as store:
        run_id = _llm_run(store)
        timeline = build_timeline(store, run_id)
        calls = store.llm_calls(run_id)
        hypotheses = store.events(run_id, "hypothesis")
        final = timeline.final_state()
        assert final.llm_calls == calls and len(calls) == 12
        assert final.hypotheses == hypotheses and len(hypotheses) == 11
        assert final.front == store.last_front(run_id)
        assert final.iterations == [p["iteration"] for p in store.progress(run_id)]
        assert timeline.used_llm
        assert timeline.llm_limits == {"max_calls": 40, "max_cost": 0.05}
        assert timeline.llm_budget == {"calls": 11}
    # Each hypothesis comes after the call it was extracted from, and the calls in their order.
    seen: list[int] = []
    for step in timeline.steps:
        if step.kind == "llm_call":
            assert step.data["kind"] == "llm_call"
            seen.append(step.data["seq"])
        elif step.kind == "hypothesis" and step.data.get("call_seq") is not None:
            assert step.data["call_seq"] in seen
    assert seen == list(range(1, 13))
    # Part way: the calls and hypotheses that had arrived, as the store gives them.
    position = next(i for i, s in enumerate(timeline.steps) if s.kind == "llm_call" and s.data["seq"] == 6) + 1
    state = timeline.state_at(position)
    assert [c["seq"] for c in state.llm_calls] == [1, 2, 3, 4, 5, 6]
    assert state.llm_calls == calls[:6]
    assert all(h["call_seq"] <= 6 for h in state.hypotheses)


def test_calls_stamped_outside_the_run_never_go_backwards(tmp_path):
    with RunStore(tmp_path / "runs.db") as store:
        run_id = store.create_run(MATSCI1, "llmsr", {"llm": {}}, 0)
        store.add_llm_call(run_id, {"t": 1_000.0, "status": "ok", "messages": [], "replies": ["x"]})
        store.add_event(run_id, "progress", {"iteration": 1, "best_loss": 0.5, "evaluations": 1, "elapsed": 0})
        store.add_llm_call(run_id, {"t": 1e12, "status": "ok", "messages": [], "replies": ["y"]})
        store.finish_run(run_id, "finished", seconds=0.5)
        timeline = build_timeline(store, run_id)
    assert [s.kind for s in timeline.steps] == ["llm_call", "progress", "llm_call", "result"]
    times = [s.t for s in timeline.steps]
    assert times[0] == 0.0 and times == sorted(times)


# ------------------------------------------------------------------------------ fronts, failures


def test_fronts_written_without_events_follow_their_iteration(tmp_path):
    with RunStore(tmp_path / "runs.db") as store:
        run_id = add_run(store)  # five progress points, then one front at iteration 50, no event
        timeline = build_timeline(store, run_id)
        assert [s.kind for s in timeline.steps] == ["progress"] * 5 + ["front", "result"]
        assert timeline.final_state().front == store.last_front(run_id)
        assert _sorted(timeline.final_state().front) == _sorted({**c, "iteration": 50} for c in FRONT)
        assert timeline.state_at(5).front is None


def test_a_run_that_recorded_nothing_is_empty_with_a_reason(tmp_path):
    with RunStore(tmp_path / "runs.db") as store:
        silent = store.create_run(MATSCI1, "gp", {}, 0)
        store.finish_run(silent, "failed", seconds=0.0, error="ValueError: no data")
        logged = store.create_run(MATSCI1, "gp", {}, 0)
        store.add_event(logged, "log", {"message": "Traceback ...", "level": "error"})
        store.finish_run(logged, "failed", seconds=0.1, error="RuntimeError: the engine broke")
        first, second = build_timeline(store, silent), build_timeline(store, logged)
    assert first.empty and [s.kind for s in first.steps] == ["result"]
    assert "nothing to replay" in first.empty_message() and "ValueError: no data" in first.empty_message()
    assert second.empty and "the engine broke" in second.empty_message()


def test_unknown_and_running_runs_are_refused(tmp_path):
    with RunStore(tmp_path / "runs.db") as store:
        with pytest.raises(ReplayError, match="no run"):
            build_timeline(store, "nosuchrun")
        running = store.create_run(MATSCI1, "gp", {}, 0)
        with pytest.raises(ReplayError, match="still going"):
            build_timeline(store, running)


# ------------------------------------------------------------------------------ speeds


def test_speeds_scale_the_recorded_times():
    assert [label for label, _ in SPEEDS][:2] == ["Real time", "2×"]
    assert speed_factor(1.0, 60) == 1.0
    assert speed_factor(10.0, 60) == 10.0
    assert wall_seconds(60, 1.0, 60) == 60
    assert wall_seconds(60, 2.0, 60) == 30
    assert wall_seconds(12, 30.0, 60) == pytest.approx(0.4)
    # "Fit to 30 s": a five-minute run plays in half a minute, a two-second run is slowed down.
    assert speed_factor(None, 300) == 10.0
    assert wall_seconds(300, None, 300) == pytest.approx(30)
    assert wall_seconds(150, None, 300) == pytest.approx(15)
    assert wall_seconds(2, None, 2) == pytest.approx(30)
    assert speed_factor(None, 0.0) == math.inf and wall_seconds(0.0, None, 0.0) == 0.0
    for bad in (0, -2, math.nan, math.inf):
        with pytest.raises(ValueError):
            speed_factor(bad, 10)


def test_every_speed_plays_a_real_run_in_the_time_it_says(gp_run):
    store, run_id = gp_run
    timeline = build_timeline(store, run_id)
    for label, speed in SPEEDS:
        wall = wall_seconds(timeline.duration, speed, timeline.duration)
        expected = 30.0 if speed is None else timeline.duration / speed
        assert wall == pytest.approx(expected), label
