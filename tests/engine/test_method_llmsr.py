"""LLM-SR end to end against the scripted OpenAI-compatible server, with the real openai client."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from engine import methods as m
from engine.methods.llm_support import extract_function
from engine.methods.llmsr import LLMSR, Island, Program
from engine.runner import RunFinished, execute
from engine.store import RunStore
from engine.tasks import registry
from tests.hostile_programs import SENSIBLE, fenced, hostile
from tests.llm_server import FakeLLMServer

TASK = "llmsrbench/lsr-synth/chemistry/CKR2"


def _config(server, calls, **extra):
    return {
        "llm": {"base_url": server.base_url, "model": "fake-model", "retry_base_delay": 0.01, "max_retries": 2,
                "timeout": 10},
        "max_llm_calls": calls,
        "llm_cache": "off",
        "program_seconds": 2.0,
        "evaluators": 2,
        **extra,
    }


def _run(task_id, method, config, store, context=None):
    task = registry.get_task(task_id)
    context = context or m.RunContext()
    events = list(execute(task, method, config, context, store))
    return events, events[-1]


def test_prompt_shows_two_examples_in_ascending_score_and_ends_with_header():
    task = registry.get_task(TASK)
    method = LLMSR()
    seed = method.seed_program(task)
    h = m.Hypothesis(1, seed, True, loss=0.5)
    worse, better = Program(seed, -2.0, h), Program(seed.replace("params[2]", "params[3]"), -1.0, h)
    text = method.prompt(task, [worse, better], 10)[0]["content"]
    assert text.index("def equation_v0(") < text.index("def equation_v1(") < text.index("def equation_v2(")
    assert "Improved version of `equation_v0`" in text
    assert text.rstrip().endswith('"""Improved version of `equation_v1`."""')
    assert "params[9]" in text and "BFGS" in text
    # no data values and no ground truth in the prompt
    assert "0.03294" not in text and "cos(log" not in text


def test_island_sampling_prefers_better_clusters_and_shorter_programs():
    import random

    island = Island()
    h = m.Hypothesis(1, "", True, loss=1.0)
    for score, n in ((-10.0, 3), (-1.0, 3), (-0.1, 1)):
        for i in range(n):
            island.add(Program("x" * (10 + 50 * i), score, h))
    rng = random.Random(0)
    picks = [island.sample(2, 0.1, rng) for _ in range(300)]
    assert all(p[0].score <= p[1].score for p in picks)
    best_share = sum(any(q.score == -0.1 for q in p) for p in picks) / len(picks)
    assert best_share > 0.9
    lengths = [q.length for p in picks for q in p if q.score == -1.0]
    assert np.mean(lengths) < 60  # the short member of the -1 cluster dominates


def test_extract_function_handles_bodies_prose_and_ancestor_calls():
    header = "def equation(t: np.ndarray, A: np.ndarray, params: np.ndarray) -> np.ndarray:"
    src, why = extract_function("    return params[0] * A\n", "equation", header=header)
    assert why is None and "def equation(" in src and "return params[0] * A" in src
    src, why = extract_function(fenced("def equation_v2(t, A, params):\n    return params[0]*t\n\nprint('x')"),
                                "equation")
    assert "def equation(t, A, params)" in src and "print" not in src
    src, why = extract_function("def f(t, A, params):\n    return equation_v1(t, A, params) * 2\n", "equation",
                                forbidden=lambda n: n.startswith("equation_v"))
    assert src is None and "equation_v1" in why
    src, why = extract_function("no code at all", "equation")
    assert src is None and "no Python function" in why
    src, why = extract_function("def equation(t, A, params):\n    return (\n", "equation")
    assert src is None


def test_llmsr_finds_ckr2_law_with_exact_budget_and_failures_recorded(tmp_path):
    good = fenced(SENSIBLE[0])
    script = [
        {"text": fenced(SENSIBLE[1])},
        {"status": 429, "retry_after": "0"},
        {"text": good},
        {"status": 500},
        {"raw": "not json at all"},
        {"text": "Sorry, I cannot help with that."},
        {"text": fenced(SENSIBLE[2])},
        {"empty_content": True},
    ]
    with FakeLLMServer(script, default={"text": fenced(SENSIBLE[3])}) as server, \
            RunStore(tmp_path / "runs.sqlite3") as store:
        events, result = _run(TASK, "llmsr", _config(server, 8, samples_per_prompt=4, islands=2), store)
        assert isinstance(result, RunFinished) and result.status == "finished", result.error
        assert result.stop_reason == "budget"
        assert result.llm["calls"] == 8 == server.answered
        assert result.llm["failures"] >= 4  # 429, 500, malformed, empty
        hyps = [e for e in events if isinstance(e, m.Hypothesis)]
        assert any(not h.ok and "no Python function" in (h.error or "") for h in hyps)
        assert min(h.loss for h in hyps if h.ok) < 1e-7  # BFGS with numerical gradients (LLM-SR's fit)
        # The law: -k*A**2 - k*A + kw*cos(log(A+1)) with k = 0.03294, kw = 0.01962
        assert result.metrics["symbolic"]["equivalent"] is True, result.expression
        assert result.metrics["id"]["nmse"] < 1e-7
        calls = store.llm_calls(result.run_id)
        assert sum(c["status"] == "ok" for c in calls) == 8
        assert any(c["status"] == "error" for c in calls)
        assert all(c["purpose"].startswith("propose") for c in calls)
        stored = store.events(result.run_id, "hypothesis")
        assert len(stored) == len(hyps)


def test_llmsr_contains_hostile_programs_and_goes_on(tmp_path, monkeypatch):
    monkeypatch.setenv("KEPLER_TEST_SECRET", "s3cr3t-value-42")
    outside = tmp_path / "outside"
    outside.mkdir()
    with FakeLLMServer() as server:
        bad = hostile(str(outside), server.port, ["KEPLER_TEST_SECRET"])
        picks = ["read secrets from the environment", "write outside the temp dir", "wrong return type",
                 "syntax error", "open a socket", "kill the parent"]
        server.script = [{"text": bad[name]} for name in picks] + [{"text": fenced(SENSIBLE[0])}]
        server.default = {"text": fenced(SENSIBLE[3])}
        with RunStore(tmp_path / "runs.sqlite3") as store:
            events, result = _run(TASK, "llmsr", _config(server, 8, samples_per_prompt=4, islands=1), store)
        assert result.status == "finished" and result.llm["calls"] == 8
        failed = {e.call_seq: e.error for e in events if isinstance(e, m.Hypothesis) and not e.ok}
        # Refused by the sandbox: the socket (no network), reading the secret raises with None
        # in it (scrubbed environment), the wrong type and the syntax error. Writing outside and
        # killing the parent run to completion (their attempts fail inside) and change nothing.
        assert len(failed) >= 4
        assert any("Permission denied" in (e or "") or "Network is unreachable" in (e or "") for e in failed.values())
        assert any("LEAK" in (e or "") and "KEPLER_TEST_SECRET': None" in e for e in failed.values())
        assert "s3cr3t-value-42" not in (tmp_path / "runs.sqlite3").read_bytes().decode("utf-8", "replace")
        assert not any(p.name != "outside" for p in tmp_path.iterdir() if p.name.startswith("escaped"))
        assert list(outside.iterdir()) == []
        assert not any(r["path"].endswith("/escape") for r in server.requests)
        assert result.metrics["symbolic"]["equivalent"] is True


def test_llmsr_stop_ends_within_seconds(tmp_path):
    """Stop while the LLM takes its time (30 s here) ends the run within seconds, with the seed
    skeleton, evaluated before the first prompt, as its model."""
    with FakeLLMServer(default={"text": fenced(SENSIBLE[1]), "delay": 30.0}) as server, \
            RunStore(tmp_path / "runs.sqlite3") as store:
        context = m.RunContext()
        stopped = []

        def stop_once_prompted():  # (a fixed delay raced the seed's evaluation on a slow machine)
            deadline = time.monotonic() + 120
            while not server.requests and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(0.5)  # well into the wait for the reply
            stopped.append(time.monotonic())
            context.cancel()

        threading.Thread(target=stop_once_prompted, daemon=True).start()
        _, result = _run(TASK, "llmsr", _config(server, 50), store, context)
        assert stopped and time.monotonic() - stopped[0] < 10
        assert result.status == "cancelled" and result.stop_reason == "cancelled"
        assert result.expression  # the seed skeleton is always a model


def test_llmsr_replays_a_recorded_run_offline(tmp_path, monkeypatch):
    monkeypatch.setenv("KEPLERLAB_HOME", str(tmp_path / "home"))
    script = [{"text": fenced(s)} for s in SENSIBLE] * 2
    with FakeLLMServer(script, default={"text": fenced(SENSIBLE[3])}) as server:
        config = _config(server, 8, islands=2, llm_cache="record")
        with RunStore(tmp_path / "runs.sqlite3") as store:
            _, recorded = _run(TASK, "llmsr", config, store)
    assert recorded.status == "finished"
    # The server is gone: replay must not need it.
    with RunStore(tmp_path / "runs.sqlite3") as store:
        _, replayed = _run(TASK, "llmsr", dict(config, llm_cache="replay"), store)
        assert replayed.status == "finished", replayed.error
        assert replayed.expression == recorded.expression
        assert replayed.llm["calls"] == recorded.llm["calls"] and replayed.llm["cached"] == recorded.llm["calls"]
        assert all(c["status"] == "cached" for c in store.llm_calls(replayed.run_id))


def test_direct_prompting_uses_five_samples_and_no_data(tmp_path):
    with FakeLLMServer([{"text": fenced(s)} for s in SENSIBLE], default={"text": "no idea"}) as server, \
            RunStore(tmp_path / "runs.sqlite3") as store:
        events, result = _run(TASK, "direct", _config(server, 5), store)
        assert result.status == "finished" and result.llm["calls"] == 5 == server.answered
        body = server.completions()[0]["body"]["messages"][0]["content"]
        assert "0.3141" not in body  # neither the data nor the initial condition
        assert result.metrics["symbolic"]["equivalent"] is True


@pytest.mark.parametrize("task_id", ["feynman/I.12.1", "erbench/syneq/d1/syneq-d1-001"])
def test_llmsr_runs_on_other_suites(tmp_path, task_id):
    try:
        task = registry.get_task(task_id)
    except KeyError:
        task = registry.all_tasks(task_id.split("/")[0])[0]
    names = task.input_names
    body = " + ".join(f"params[{i}] * {n}" for i, n in enumerate(names))
    program = f"def equation({', '.join(names)}, params):\n    return {body} * {names[0]}\n"
    with FakeLLMServer(default={"text": fenced(program)}) as server, RunStore(tmp_path / "r.sqlite3") as store:
        _, result = _run(task.id, "llmsr", _config(server, 4, islands=1), store)
        assert result.status == "finished", result.error
        assert result.llm["calls"] == 4


def test_llm_judge_option_stores_verdict_and_call(tmp_path):
    from engine.llm import LLMSettings

    script = [{"text": fenced(s)} for s in SENSIBLE] + [{"text": fenced(SENSIBLE[0])}]
    with FakeLLMServer(script, default={"text": "Both are the same sum of terms.\nVerdict: yes"}) as server, \
            RunStore(tmp_path / "runs.sqlite3") as store:
        task = registry.get_task(TASK)
        judge = LLMSettings(base_url=server.base_url, model="judge-model", retry_base_delay=0.01)
        events = list(execute(task, "direct", _config(server, 5), m.RunContext(), store, judge=judge))
        result = events[-1]
        assert result.status == "finished"
        assert result.metrics["judge"]["equivalent"] is True
        assert "Verdict: yes" in result.metrics["judge"]["reasoning"]
        assert result.llm["calls"] == 5  # the judge's call is not charged to the method's budget
        calls = store.llm_calls(result.run_id)
        assert [c["purpose"] for c in calls][-1] == "judge" and calls[-1]["model"] == "judge-model"
        judge_prompt = server.completions()[-1]["body"]["messages"][-1]["content"]
        assert "0.03294" not in judge_prompt


def test_llmsr_gives_up_on_an_endpoint_that_always_fails(tmp_path):
    with FakeLLMServer(default={"status": 500}) as server, RunStore(tmp_path / "r.sqlite3") as store:
        config = _config(server, 100)
        config["llm"]["max_retries"] = 0
        events, result = _run(TASK, "llmsr", config, store)
        assert result.status == "finished" and result.stop_reason == "llm-failures"
        assert result.llm["calls"] == 0 and result.llm["failures"] >= 10
        assert any(isinstance(e, m.Log) and "in a row" in e.message for e in events)


def test_a_degenerate_reply_is_a_failed_hypothesis_not_a_failed_run(tmp_path):
    endless = "```python\ndef equation(t, A, params):\n    return " + "A+" * 4000 + "A\n```"
    huge = "```python\n" + "x = 1\n" * 20000 + "```"
    with FakeLLMServer([{"text": endless}, {"text": huge}], default={"text": fenced(SENSIBLE[3])}) as server, \
            RunStore(tmp_path / "r.sqlite3") as store:
        events, result = _run(TASK, "llmsr", _config(server, 4, islands=1, evaluators=1), store)
    assert result.status == "finished", result.error
    errors = [e.error for e in events if isinstance(e, m.Hypothesis) and not e.ok]
    assert any("cannot be parsed" in e or "not valid Python" in e or "too long" in e for e in errors), errors


def test_the_time_limit_holds_while_waiting_for_a_slow_endpoint(tmp_path):
    with FakeLLMServer(default={"text": fenced(SENSIBLE[1]), "delay": 20.0}) as server, \
            RunStore(tmp_path / "r.sqlite3") as store:
        t0 = time.monotonic()
        _, result = _run(TASK, "llmsr", _config(server, 50, seconds=2.0), store)
        assert time.monotonic() - t0 < 8
    assert result.status == "finished" and result.stop_reason == "time" and result.expression


def test_stop_before_any_model_is_a_cancelled_run(tmp_path):
    with FakeLLMServer(default={"text": fenced(SENSIBLE[1])}) as server, RunStore(tmp_path / "r.sqlite3") as store:
        context = m.RunContext()
        context.cancel()
        _, result = _run(TASK, "llmsr", _config(server, 5), store, context)
    assert result.status == "cancelled" and result.stop_reason == "cancelled" and result.error is None


def test_concurrent_requests_replay_in_recorded_order(tmp_path, monkeypatch):
    monkeypatch.setenv("KEPLERLAB_HOME", str(tmp_path / "home"))
    programs = [SENSIBLE[1], SENSIBLE[2], SENSIBLE[3], SENSIBLE[0]]
    # Replies come back in another order than asked: later requests answer first.
    script = [{"text": fenced(p), "delay": d} for p, d in zip(programs, (0.6, 0.4, 0.2, 0.0))]
    with FakeLLMServer(script, default={"text": fenced(SENSIBLE[3])}) as server:
        config = _config(server, 4, islands=1, samples_per_prompt=4, llm_cache="record")
        config["llm"]["concurrency"] = 4
        with RunStore(tmp_path / "r.sqlite3") as store:
            recorded_events, recorded = _run(TASK, "llmsr", config, store)
    with RunStore(tmp_path / "r.sqlite3") as store:
        replay_events, replayed = _run(TASK, "llmsr", dict(config, llm_cache="replay"), store)

    def programs_of(events):
        return [e.program for e in events if isinstance(e, m.Hypothesis)]

    assert programs_of(replay_events) == programs_of(recorded_events)
    assert replayed.expression == recorded.expression


def test_each_call_event_carries_the_budget_including_itself(tmp_path):
    with FakeLLMServer(default={"text": fenced(SENSIBLE[3])}) as server, RunStore(tmp_path / "r.sqlite3") as store:
        events, result = _run(TASK, "llmsr", _config(server, 6, islands=1, samples_per_prompt=2), store)
    calls = [e for e in events if isinstance(e, m.LLMCall)]
    assert [c.seq for c in calls] == list(range(1, len(calls) + 1))
    assert [c.budget["calls"] for c in calls if c.status == "ok"] == list(range(1, 7))


def test_direct_prompting_says_when_every_request_was_refused(tmp_path):
    with FakeLLMServer(default={"status": 401, "message": "bad key"}) as server, \
            RunStore(tmp_path / "r.sqlite3") as store:
        events, result = _run(TASK, "direct", _config(server, 5), store)
    assert result.status == "finished" and result.llm["calls"] == 0
    assert any(isinstance(e, m.Log) and e.level == "error" and "no usable reply" in e.message for e in events)
