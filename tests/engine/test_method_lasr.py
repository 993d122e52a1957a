"""LaSR (engine/methods/lasr.py): the concept-guided regularised evolution, end to end through the
runner against the scripted OpenAI-compatible server of tests/llm_server.py, plus its pieces
(reply parsing, expression trees, constraints)."""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from hostile_programs import hostile  # noqa: E402
from llm_server import FakeLLMServer  # noqa: E402

from engine import methods  # noqa: E402
from engine.expr import compile_numpy, parse  # noqa: E402
from engine.methods import lasr  # noqa: E402
from engine.methods.base import RunContext  # noqa: E402
from engine.runner import RunFinished, execute  # noqa: E402
from engine.store import RunStore  # noqa: E402
from engine.tasks.registry import all_tasks, get_task  # noqa: E402

CKR2 = "llmsrbench/lsr-synth/chemistry/CKR2"
LAW = "-0.03*A**2 - 0.03*A + 0.02*cos(log(A + 1))"


@pytest.fixture(autouse=True)
def registered(monkeypatch):
    monkeypatch.setitem(methods.METHODS, "lasr", "engine.methods.lasr:LaSR")


def fenced_list(items: list[str], prose: str = "Some reasoning about the candidates.") -> str:
    return f"{prose}\n\n```json\n{json.dumps(items, indent=1)}\n```\n"


def small_config(server, calls: int, **extra) -> dict:
    config = {
        "llm": {"base_url": server.base_url, "model": "fake-model", "retry_base_delay": 0.01, "max_retries": 2,
                "concurrency": 1},
        "max_llm_calls": calls,
        "llm_cache": "off",
        "seconds": 30,
        "llm_rate": 0.02,
        "iterations": 3,
        "cycles": 10,
        "populations": 4,
        "population_size": 20,
    }
    config.update(extra)
    return config


def run(task, config, store, context=None):
    events = list(execute(task, "lasr", config, context or RunContext(), store))
    finished = events[-1]
    assert isinstance(finished, RunFinished)
    return events, finished


def of_kind(events, kind):
    return [e for e in events if getattr(e, "kind", None) == kind]


# ------------------------------------------------------------------------------ end to end


def test_scripted_run_spends_the_exact_budget_and_reports_every_proposal(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    with FakeLLMServer() as server:
        bad = hostile(str(outside), server.port, ["OPENAI_API_KEY"])
        server.script = [
            {"text": fenced_list([LAW, "-0.03*A**2 + 0.02", "0.1*A + C"])},
            {"text": fenced_list(["-0.03*A**2 +", "__import__('os').system('touch /tmp/lasr-escaped')",
                                  "open('/etc/passwd').read()", "9**9**9**9", "tanh(A)"])},
            {"status": 429, "retry_after": "0"},
            {"text": bad["open a socket"]},
            {"status": 500},
            {"text": bad["prose only"]},
            {"text": bad["infinite loop"]},
        ]
        server.default = {"text": fenced_list(["-0.05*A + 0.02", "0.02*cos(A)", "A*exp(-t)"])}
        store = RunStore(tmp_path / "runs.sqlite3")
        events, finished = run(get_task(CKR2), small_config(server, 8), store)
        answered = server.answered
        paths = [r["path"] for r in server.requests]

    assert finished.status == "finished", finished.error
    assert finished.stop_reason == "budget"
    assert finished.llm["calls"] == answered == 8
    # The proposed law had its constants fitted: nothing reported can be worse than it.
    hyps = of_kind(events, "hypothesis")
    law = [h for h in hyps if h.ok and h.program == LAW]
    assert law and law[0].loss < 1e-10 and law[0].complexity and law[0].origin.startswith("LLM ")
    assert parse(law[0].expression, ["t", "A"]) is not None
    assert finished.train_loss < 1e-10
    # Failures carry reasons, and hostile text was refused by the parser, never run.
    errors = [h.error for h in hyps if not h.ok]
    assert any("not a valid expression" in e and "attribute" in e for e in errors)
    assert any("cannot parse" in e for e in errors)
    assert any("no JSON list" in e for e in errors)
    assert any("tanh" in e and "not among the operators" in e for e in errors)
    assert all(h.call_seq for h in hyps)
    assert not Path("/tmp/lasr-escaped").exists()
    assert not any(outside.iterdir())
    assert not any(p.startswith("/escape") for p in paths)
    # Every attempt is stored, with what it was for.
    calls = store.llm_calls(finished.run_id)
    assert sum(c["status"] == "ok" for c in calls) == 8
    assert {c["status"] for c in calls} == {"ok", "error"}
    assert all(c["purpose"] in ("LLM init", "LLM mutation", "LLM crossover", "concept abstraction",
                                "concept evolution") for c in calls)
    final = of_kind(events, "final")
    assert len(final) == 1 and final[0].stop_reason == "budget"
    assert of_kind(events, "progress") and of_kind(events, "pareto")


def test_the_law_proposed_at_the_first_llm_init_call_is_the_final_model(tmp_path):
    task = next(t for t in all_tasks("feynman") if t.id == "feynman/I.14.3")  # U = m*g*z
    assert task.ground_truth.expression == "m*g*z"
    with FakeLLMServer([{"text": fenced_list(["2.0*m*g*z", "m*g + z", "m*z"])}],
                       default={"text": "I have no further suggestions."}) as server:
        store = RunStore(tmp_path / "runs.sqlite3")
        events, finished = run(task, small_config(server, 6, seconds=15, iterations=2), store)
    assert finished.status == "finished", finished.error
    calls = store.llm_calls(finished.run_id)
    assert calls[0]["purpose"] == "LLM init"
    first = of_kind(events, "hypothesis")[0]
    assert first.ok and first.origin == "LLM init" and first.loss < 1e-12
    assert finished.metrics["symbolic"]["equivalent"] is True
    assert finished.train_loss < 1e-12
    data = task.load_data().splits["test_id"]
    predicted = compile_numpy(parse(finished.expression, task.input_names), task.input_names)(data.X)
    assert np.allclose(predicted, data.y, rtol=1e-6)


def test_concept_library_updates_are_logged(tmp_path):
    ideas = ["The rate falls with the square of the concentration.",
             "A logarithm of one plus the concentration appears inside a cosine.",
             "Time does not enter the law explicitly."]
    with FakeLLMServer(default={"text": fenced_list(ideas)}) as server:
        store = RunStore(tmp_path / "runs.sqlite3")
        config = small_config(server, 10, llm_rate=0.0, iterations=1, cycles=3)
        events, finished = run(get_task(CKR2), config, store)
        answered = server.answered
        prompts = [r["body"]["messages"] for r in server.completions()]
    assert finished.status == "finished" and finished.stop_reason == "completed"
    # One abstraction and two evolution calls after the iteration.
    assert finished.llm["calls"] == answered == 3
    assert [c["purpose"] for c in store.llm_calls(finished.run_id)] == \
        ["concept abstraction", "concept evolution", "concept evolution"]
    logs = [e.message for e in of_kind(events, "log") if e.message.startswith("Concept library")]
    assert len(logs) == 3
    assert any(idea in logs[0] for idea in ideas)
    # The abstraction prompt shows good expressions; evolution prompts show library concepts.
    assert "fit the data well" in prompts[0][-1]["content"]
    assert any(idea in prompts[1][-1]["content"] for idea in ideas)
    assert not of_kind(events, "hypothesis")


def test_concurrent_requests_keep_the_budget_exact(tmp_path):
    with FakeLLMServer(default={"text": fenced_list([LAW, "0.02*cos(A)"])}, hold=0.05) as server:
        config = small_config(server, 12, llm_rate=0.05, iterations=50, cycles=20)
        config["llm"]["concurrency"] = 4
        events, finished = run(get_task(CKR2), config, RunStore(tmp_path / "runs.sqlite3"))
        answered, in_flight = server.answered, server.max_in_flight
    assert finished.status == "finished", finished.error
    assert finished.stop_reason == "budget"
    assert finished.llm["calls"] == answered == 12
    assert in_flight > 1
    assert len(of_kind(events, "llm_call")) == 12


def test_stop_from_another_thread_ends_the_run_quickly(tmp_path):
    with FakeLLMServer(default={"text": fenced_list([LAW])}, hold=0.3) as server:
        context = RunContext()
        cancelled_at: list[float] = []

        def stopper():
            deadline = time.monotonic() + 30
            while server.answered < 1 and time.monotonic() < deadline:
                time.sleep(0.01)
            cancelled_at.append(time.monotonic())
            context.cancel()

        thread = threading.Thread(target=stopper, daemon=True)
        thread.start()
        config = small_config(server, 1000, llm_rate=0.05, iterations=1000, cycles=50, seconds=60)
        events, finished = run(get_task(CKR2), config, RunStore(tmp_path / "runs.sqlite3"), context)
        ended = time.monotonic()
        thread.join(5)
    assert cancelled_at, "the LLM was never called"
    assert finished.status == "cancelled"
    assert finished.stop_reason == "cancelled"
    assert ended - cancelled_at[0] < 15  # the run was allowed 60 s
    assert len(of_kind(events, "final")) == 1


def test_a_recorded_run_replays_offline_to_the_same_model(tmp_path, monkeypatch):
    monkeypatch.setenv("KEPLERLAB_HOME", str(tmp_path / "home"))
    replies = [{"text": fenced_list([LAW, "-0.05*A + 0.02"])},
               {"text": fenced_list(["The decay is quadratic in A.", "cos(log(A + 1)) is a source term."])},
               {"text": fenced_list(["0.02*cos(A) - 0.03*A**2"])}]
    store = RunStore(tmp_path / "runs.sqlite3")
    with FakeLLMServer(replies * 2, default={"text": fenced_list(["A*t", "0.01*exp(-A)"])}) as server:
        config = small_config(server, 7, llm_cache="record", seconds=0, iterations=2)
        _, recorded = run(get_task(CKR2), config, store)
    assert recorded.status == "finished", recorded.error
    config["llm_cache"] = "replay"
    _, replayed = run(get_task(CKR2), config, store)
    assert replayed.status == "finished", replayed.error
    assert replayed.expression == recorded.expression
    assert replayed.stop_reason == recorded.stop_reason
    assert replayed.llm["calls"] == recorded.llm["calls"] == 7


def test_a_dead_endpoint_ends_the_run_and_the_log_says_why(tmp_path):
    server = FakeLLMServer().start()
    server.stop()  # nothing listens at its address any more
    with RunStore(tmp_path / "runs.sqlite3") as store:
        events, finished = run(get_task(CKR2), small_config(server, 5), store)
    assert finished.status == "finished" and finished.stop_reason == "llm-failures"
    assert finished.expression  # the evolution's best model so far
    logs = [e.message for e in events if isinstance(e, methods.Log)]
    assert any(t.startswith(f"stopping: no server answers at the LLM endpoint {server.base_url}") for t in logs)
    assert not any("fell back to the symbolic ones" in t for t in logs)  # it did not go on


def test_without_llm_operators_it_is_plain_regularised_evolution(tmp_path):
    config = {"llm_rate": 0.0, "concept_every": 0, "iterations": 3, "cycles": 10, "populations": 3,
              "population_size": 20, "seconds": 30, "llm_cache": "off"}
    events, finished = run(get_task("feynman/I.14.3"), config, RunStore(tmp_path / "runs.sqlite3"))
    assert finished.status == "finished" and finished.stop_reason == "completed"
    assert finished.llm["calls"] == 0
    assert [p.iteration for p in of_kind(events, "progress")] == [1, 2, 3]
    assert np.isfinite(finished.train_loss)
    assert not of_kind(events, "hypothesis") and not of_kind(events, "llm_call")


def test_a_generation_of_ten_populations_is_fast():
    task = get_task(CKR2)
    config = {**lasr.LaSR().default_config(), "llm_rate": 0.0, "concept_every": 0}
    search = lasr._Search(task, config, RunContext())
    list(search.initialise())
    started = time.monotonic()
    for _ in range(11):  # 11 cycles x 3 offspring x 10 populations = one generation of 10 x 33
        list(search.cycle())
    assert time.monotonic() - started < 10  # a gross guard; see benchmarks/
    assert all(len(pop) == 33 for pop in search.pops)


# ------------------------------------------------------------------------------ pieces


@pytest.mark.parametrize("reply, expected", [
    ('Ideas.\n```json\n["x + 1", "sin(x)"]\n```', ["x + 1", "sin(x)"]),
    ('Here: ["a*b", "a/b",]', ["a*b", "a/b"]),
    ('```\n["one"]\n```\nand later ```json\n["two", "three"]\n```', ["two", "three"]),
    ("no list at all", []),
    ('```json\n["1", "2", "3", "4", "5", "6", "7"]\n```', ["1", "2", "3", "4", "5"]),
    ('```json\n{"a": 1}\n```', []),
])
def test_reply_items(reply, expected):
    assert lasr.reply_items(reply) == expected


def test_trees_round_trip_through_sympy_and_agree_with_compile_numpy():
    names = ["t", "A"]
    index = {n: i for i, n in enumerate(names)}
    allowed = set(lasr.DEFAULT_OPERATORS)
    rng = np.random.default_rng(0)
    X = rng.uniform(0.1, 2.0, size=(50, 2))
    cols = [X[:, 0], X[:, 1]]
    for text in [LAW, "A/(t + 1)", "sqrt(A)*exp(-t/2)", "1/sqrt(A + t)", "A**1.5 - t**-2", "-(A - t)",
                 "cosh(A) - tan(t)*3"]:
        expr = parse(text, names)
        tree = lasr.from_sympy(expr, index, allowed)
        values = lasr.evaluate_tree(tree, cols, 50)
        assert np.allclose(values, compile_numpy(expr, names)(X))
        back = lasr.to_sympy(tree, [parse(n, names) for n in names])
        assert np.allclose(compile_numpy(back, names)(X), values)
        shown = lasr.show_tree(tree, names, digits=17)
        assert np.allclose(compile_numpy(parse(shown, names), names)(X), values)


def test_operators_outside_the_set_are_refused():
    with pytest.raises(lasr.Unsupported, match="tanh"):
        lasr.from_sympy(parse("tanh(x)", ["x"]), {"x": 0}, set(lasr.DEFAULT_OPERATORS))
    with pytest.raises(lasr.Unsupported, match="asin"):
        lasr.from_sympy(parse("asin(x)", ["x"]), {"x": 0}, set(lasr.DEFAULT_OPERATORS))
    with pytest.raises(lasr.Unsupported):
        lasr.from_sympy(parse("x + log(-2)", ["x"]), {"x": 0}, set(lasr.DEFAULT_OPERATORS))


def test_constraints_and_simplification():
    x = (1, 0)
    assert lasr.check_constraints((2, "sin", (2, "cos", x)), 30) is False
    assert lasr.check_constraints((2, "exp", (2, "log", x)), 30) is False
    assert lasr.check_constraints((2, "sin", (2, "exp", x)), 30) is True
    big = x
    for _ in range(20):
        big = (3, "+", big, x)
    assert lasr.check_constraints(big, 30) is False
    folded = lasr.simplify_tree((3, "*", (0, 2.0), (3, "*", (0, 3.0), (3, "+", (0, 1.0), (0, 1.0)))))
    assert folded == (0, 12.0)
    merged = lasr.simplify_tree((3, "+", (0, 1.0), (3, "+", x, (0, 2.0))))
    assert merged == (3, "+", (0, 3.0), x)
