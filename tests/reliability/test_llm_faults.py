"""Faulty LLM endpoints (issue 10): time-outs, 429 with and without Retry-After, 5xx (with
Retry-After as an HTTP date), connection resets and hang-ups, replies cut off before their end,
malformed JSON, empty content, a wrong model name, a refused key.

For every fault the client retries it (or not, for a refusal that would only repeat), waits what
Retry-After asks (capped), says what happened in plain words, and the budget counts exactly what
the server answered: the scripted server (tests/llm_server.py) logs what it did with each request,
and the budget, the call records and the run store's ``llm_calls`` are checked against that log.
Then whole LLM-SR runs: one against a server that mixes every fault finishes with its budget
spent exactly; runs against a wrong model name, a dead endpoint and an always-500 server stop
with a readable reason.
"""

from __future__ import annotations

import time

import pytest

from engine import methods as m
from engine.llm import Budget, LLMCallFailed, LLMClient, LLMSettings
from engine.runner import execute
from engine.store import RunStore
from engine.tasks import registry
from tests.hostile_programs import SENSIBLE, fenced
from tests.llm_server import FakeLLMServer

TASK = "llmsrbench/lsr-synth/chemistry/CKR2"
MESSAGES = [{"role": "user", "content": "Propose f(x)."}]
KEY_ENV = "KEPLERLAB_TEST_FAULT_KEY"
KEY = "sk-test-fault-4c1e9a7d0b"


def settings_for(server, **kw) -> LLMSettings:
    # A generous time-out: on a loaded machine a prompt reply must not turn into a time-out.
    values = dict(base_url=server.base_url, model="fake-model", timeout=5.0, max_retries=3, retry_base_delay=0.01,
                  retry_max_delay=2.0, api_key_env=KEY_ENV)
    values.update(kw)
    return LLMSettings(**values)


def settled(server, timeout: float = 10.0) -> list[dict]:
    """The server's completion requests once it has decided every reply (a reply the client
    gave up on is only known as abandoned when the server wakes up to send it)."""
    deadline = time.monotonic() + timeout
    while True:
        requests = server.completions()
        if all(r["reply"]["outcome"] is not None for r in requests) or time.monotonic() > deadline:
            return requests
        time.sleep(0.02)


def expected_budget(server) -> dict:
    """What the budget must say, from what the server actually did."""
    requests = settled(server)
    replies = [r["reply"] for r in requests]
    calls = sum(r["outcome"] == "ok" for r in replies)
    return {
        "calls": calls,
        "failures": len(replies) - calls,  # every other request the client saw fail
        "malformed": sum(r["outcome"] in ("malformed", "empty") for r in replies),
        # tokens are billed for every whole JSON reply the client read, successful or not
        "prompt_tokens": sum(r["usage"][0] for r in replies if r["usage"]),
        "completion_tokens": sum(r["usage"][1] for r in replies if r["usage"]),
    }


def assert_budget_exact(budget: dict, server) -> None:
    expected = expected_budget(server)
    assert {k: budget[k] for k in expected} == expected
    assert budget["calls"] == server.answered


def assert_readable(text: str) -> None:
    assert text and "Traceback" not in text and 'File "' not in text and len(text) <= 600, text


@pytest.fixture
def recorded(tmp_path):
    """A run store with one LLM run, and an ``on_call`` that records into it."""
    with RunStore(tmp_path / "runs.sqlite3") as store:
        run_id = store.create_run(TASK, "llmsr", {}, 0)
        yield store, run_id, lambda record: store.add_llm_call(run_id, record)


# --------------------------------------------------------------------------- one fault, then a reply

RETRYABLE = {
    "time-out": ({"delay": 2.0, "text": "late"}, "timed out: no reply within 1 s"),
    "429 without Retry-After": ({"status": 429, "message": "Rate limit reached"}, "HTTP 429 rate limited: Rate limit"),
    "500": ({"status": 500, "message": "The server had an error"}, "HTTP 500 server error: The server had an error"),
    "502 from a proxy": ({"status": 502, "message": "upstream"}, "HTTP 502 bad gateway"),
    "connection reset": ({"reset": True}, "Connection reset by peer"),
    "hang-up without a reply": ({"close": True}, "Server disconnected without sending a response"),
    "body cut off": ({"truncate": 30, "text": "a reply that never arrives whole"}, "the reply was cut off"),
    "stream cut off": ({"chunked": True, "truncate": 30, "text": "a stream cut short"}, "the reply was cut off"),
    "malformed JSON": ({"raw": '{"choices": [{"message": '}, "malformed reply: the body is not valid JSON"),
    "HTML instead of JSON": ({"raw": "<html>Bad gateway</html>", "content_type": "text/html"},
                             "malformed reply: no choices"),
    "empty content": ({"empty_content": True}, "empty reply"),
    "no choices": ({"empty_choices": True}, "malformed reply: no choices"),
}


@pytest.mark.parametrize("fault", list(RETRYABLE))
def test_each_fault_is_retried_reported_and_counted_exactly(fault, recorded, monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY)
    store, run_id, on_call = recorded
    step, words = RETRYABLE[fault]
    records = []
    with FakeLLMServer([step], default={"text": "the answer", "prompt_tokens": 7, "completion_tokens": 3}) as server:
        client = LLMClient(settings_for(server, timeout=1.0 if fault == "time-out" else 5.0), Budget(max_calls=5),
                           on_call=lambda r: (records.append(r), on_call(r)))
        assert client.complete(MESSAGES).texts == ["the answer"]
        assert len(server.completions()) == 2  # the fault, then one retry that succeeded
        assert_budget_exact(client.budget.snapshot(), server)
    failed, ok = records
    assert (failed.status, failed.attempts, ok.status, ok.attempts) == ("error", 1, "ok", 2)
    assert words in failed.error, failed.error
    assert_readable(failed.error)
    rows = store.llm_calls(run_id)
    assert [(r["status"], r["attempts"]) for r in rows] == [("error", 1), ("ok", 2)]
    assert rows[0]["error"] == failed.error and rows[1]["replies"] == ["the answer"]
    assert sum(r["prompt_tokens"] for r in rows) == client.budget.prompt_tokens


def test_retry_after_is_honoured_as_seconds_ms_and_http_date_and_capped():
    script = [{"status": 503, "retry_after_date": 2},  # an HTTP date 1-2 s ahead (dates have whole seconds)
              {"status": 429, "retry_after_ms": 300},
              {"status": 429, "retry_after": "3600"},  # an hour: capped at retry_max_delay
              {"status": 429, "retry_after": "0.4"},
              {"text": "ok"}]
    with FakeLLMServer(script) as server:
        client = LLMClient(settings_for(server, max_retries=4, retry_base_delay=0.001, retry_max_delay=1.2))
        assert client.complete(MESSAGES).texts == ["ok"]
        times = [r["t"] for r in server.completions()]
        assert_budget_exact(client.budget.snapshot(), server)
    gaps = [b - a for a, b in zip(times, times[1:])]
    assert 0.9 <= gaps[0] <= 1.2 + 1.0, gaps  # the date, within the cap
    assert 0.28 <= gaps[1] < 0.3 + 1.0, gaps
    assert 1.15 <= gaps[2] < 1.2 + 1.0, gaps  # waited the cap, not an hour
    assert 0.38 <= gaps[3] < 0.4 + 1.0, gaps


def test_a_fault_that_never_clears_fails_after_exactly_the_retries():
    for step, words in (({"reset": True}, "Connection reset by peer"), ({"status": 500}, "HTTP 500")):
        with FakeLLMServer(default=step) as server:
            records = []
            client = LLMClient(settings_for(server, max_retries=2), on_call=records.append)
            with pytest.raises(LLMCallFailed) as info:
                client.complete(MESSAGES)
            assert len(server.completions()) == 3 == len(records) == info.value.attempts
            assert_budget_exact(client.budget.snapshot(), server)
        assert str(info.value).startswith("all 3 attempts failed; last error: ") and words in str(info.value)
        assert_readable(str(info.value))


def test_a_dead_endpoint_fails_after_the_retries_and_says_where():
    server = FakeLLMServer().start()
    server.stop()  # nothing listens on that port any more
    records = []
    client = LLMClient(settings_for(server, max_retries=2), on_call=records.append)
    with pytest.raises(LLMCallFailed) as info:
        client.complete(MESSAGES)
    assert len(records) == 3 and client.budget.failures == 3 and client.budget.calls == 0
    assert f"{server.base_url}: Connection refused" in str(info.value)
    assert_readable(str(info.value))
    report = client.test_connection()  # the settings dialog's "Test connection" says the same
    assert not report.ok and report.error.endswith("connection error: Connection refused"), report.error


REFUSED = {
    "wrong model name": (dict(check_model=True), dict(model="gpt-nonexistent"), 404,
                         ["The model `gpt-nonexistent` does not exist", "model_not_found", "check the model name"]),
    "wrong API key": (dict(api_key="sk-the-right-one"), {}, 401,
                      ["HTTP 401 unauthorized", "invalid_api_key", f"environment variable {KEY_ENV}"]),
    "forbidden": ({}, {}, 403, ["HTTP 403 forbidden", "may not use this model"]),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_a_refusal_is_not_retried_and_says_what_to_check(case, recorded, monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY)
    store, run_id, on_call = recorded
    server_kw, settings_kw, status, words = REFUSED[case]
    script = [{"status": 403, "message": "Project does not have access"}] if status == 403 else []
    with FakeLLMServer(script, **server_kw) as server:
        client = LLMClient(settings_for(server, **settings_kw), on_call=on_call)
        with pytest.raises(LLMCallFailed) as info:
            client.complete(MESSAGES)
        assert len(server.completions()) == 1  # not retried: it would be refused again
        assert_budget_exact(client.budget.snapshot(), server)
    error = info.value
    assert error.status_code == status and error.attempts == 1
    for word in words:
        assert word in str(error), str(error)
    assert_readable(str(error))
    assert KEY not in str(error)
    [row] = store.llm_calls(run_id)
    assert row["status"] == "error" and row["error"] in str(error)


# --------------------------------------------------------------------------- whole LLM-SR runs


def _config(server, calls, **llm):
    settings = {"base_url": server.base_url, "model": "fake-model", "timeout": 2.0, "max_retries": 20,
                "retry_base_delay": 0.01, "retry_max_delay": 0.5, "concurrency": 2}
    settings.update(llm)
    return {"llm": settings, "max_llm_calls": calls, "llm_cache": "off", "program_seconds": 2.0, "evaluators": 1,
            "islands": 1, "samples_per_prompt": 2}


def _run(config, store):
    events = list(execute(registry.get_task(TASK), "llmsr", config, m.RunContext(), store))
    return events, events[-1]


def _logs(events, level=None) -> list[str]:
    return [e.message for e in events if isinstance(e, m.Log) and (level is None or e.level == level)]


@pytest.mark.slow
def test_llmsr_run_through_every_fault_finishes_with_an_exact_budget(tmp_path):
    faults = [{"delay": 3.0, "text": "late"}]  # well past the run's 2 s time-out, even on a loaded machine
    faults += [step for name, (step, _) in RETRYABLE.items() if name != "time-out"] + [
        {"status": 429, "retry_after": "0.2"},
        {"status": 503, "retry_after_date": 1},
        {"status": 404, "message": "The model `fake-model` does not exist", "code": "model_not_found"},
    ]
    calls = len(faults) + 1  # more than the faults: the whole script is used
    script = []
    for i, fault in enumerate(faults):
        script += [fault, {"text": fenced(SENSIBLE[1 + i % 3]), "prompt_tokens": 100 + i, "completion_tokens": 20 + i}]
    with FakeLLMServer(script, default={"text": fenced(SENSIBLE[2])}) as server, \
            RunStore(tmp_path / "runs.sqlite3") as store:
        events, result = _run(_config(server, calls), store)
        expected = expected_budget(server)
        asked = len(server.completions())
        rows = store.llm_calls(result.run_id)
        stored = store.get_run(result.run_id)
    assert result.status == "finished" and result.stop_reason == "budget", (result.error, _logs(events))
    assert result.expression
    # The budget is exactly what the server answered: every good reply a call, every fault a failure.
    assert result.llm["calls"] == calls == expected["calls"]
    assert {k: result.llm[k] for k in expected} == expected
    assert expected["failures"] == len(faults) and expected["malformed"] == 4  # JSON, HTML, empty x2
    # Every attempt, failed or not, is in the store with its status and error.
    assert len(rows) == asked == calls + len(faults)
    assert sum(r["status"] == "ok" for r in rows) == calls
    errors = [r["error"] for r in rows if r["status"] == "error"]
    assert len(errors) == len(faults)
    for error in errors:
        assert_readable(error)
    # The 404 made one request fail for good; the run said so and went on.
    assert any("1 LLM requests failed after their retries; the run went on" in t for t in _logs(events))
    assert (stored.status, stored.stop_reason) == ("finished", "budget")
    assert {k: stored.metrics["llm"][k] for k in expected} == expected  # the stored run says the same


def test_llmsr_run_with_a_wrong_model_name_stops_at_once_and_says_why(tmp_path):
    with FakeLLMServer(check_model=True) as server, RunStore(tmp_path / "runs.sqlite3") as store:
        events, result = _run(_config(server, 50, model="gpt-nonexistent"), store)
        asked = len(server.completions())
        rows = store.llm_calls(result.run_id)
    assert result.status == "finished" and result.stop_reason == "llm-failures"
    assert asked == 2  # one batch of two requests, no retries, no second batch
    assert result.llm["calls"] == 0 and result.llm["failures"] == 2
    [why] = [t for t in _logs(events, "error") if t.startswith("stopping")]
    assert "no usable reply can come from the LLM endpoint" in why
    assert "The model `gpt-nonexistent` does not exist" in why and "check the model name" in why
    assert_readable(why)
    assert [r["status"] for r in rows] == ["error", "error"]


def test_llmsr_run_against_an_always_failing_endpoint_stops_with_a_readable_reason(tmp_path):
    with FakeLLMServer(default={"status": 500, "message": "The server had an error"}) as server, \
            RunStore(tmp_path / "runs.sqlite3") as store:
        events, result = _run(_config(server, 50, max_retries=1, retry_base_delay=0.001), store)
        rows = store.llm_calls(result.run_id)
    assert result.status == "finished" and result.stop_reason == "llm-failures"
    assert result.llm["calls"] == 0 and result.llm["failures"] == len(rows) >= 20  # 10 requests x 2 attempts
    [why] = [t for t in _logs(events, "error") if t.startswith("stopping")]
    assert "LLM requests failed in a row" in why
    assert "HTTP 500 server error: The server had an error" in why
    assert_readable(why)


def test_llmsr_run_against_a_dead_endpoint_stops_after_its_first_requests(tmp_path):
    """Nothing listens at the address: the first batch's requests fail for good (each after its
    retries) and the run stops there, saying where it looked, instead of trying ten batches."""
    server = FakeLLMServer().start()
    server.stop()
    with RunStore(tmp_path / "runs.sqlite3") as store:
        events, result = _run(_config(server, 50, max_retries=1, retry_base_delay=0.001), store)
        rows = store.llm_calls(result.run_id)
    assert result.status == "finished" and result.stop_reason == "llm-failures"
    assert result.expression  # the seed skeleton, scored without the LLM
    assert result.llm["calls"] == 0 and result.llm["failures"] == len(rows) == 4  # one batch: 2 requests x 2 attempts
    [why] = [t for t in _logs(events, "error") if t.startswith("stopping")]
    assert f"no server answers at the LLM endpoint {server.base_url}" in why
    assert "Connection refused" in why and "LLM settings" in why
    assert_readable(why)
    assert not any("the run went on" in t for t in _logs(events))  # it did not


def _session(server, *, cache="off", resume=None):
    """An LLM session of a run against ``server``, quick to give up on a request."""
    from engine.methods.llm_support import LLMSession

    config = {"llm": {"base_url": server.base_url, "model": "fake-model", "max_retries": 1,
                      "retry_base_delay": 0.001, "concurrency": 2}, "max_llm_calls": 50, "llm_cache": cache}
    context = m.RunContext()
    context.resume = resume  # as engine.runner sets it for a resumed run
    return LLMSession(config, context, sandbox=False)


def test_a_replayed_dead_endpoint_stops_where_the_recording_did(isolated_home):
    server = FakeLLMServer().start()
    server.stop()
    with _session(server, cache="record") as recorded:
        assert recorded.ask(MESSAGES, 2) == [] and recorded.should_stop() == "llm-failures"
        assert recorded.unreachable
    with _session(server, cache="replay") as replayed:  # no server is asked
        assert replayed.ask(MESSAGES, 2) == [] and replayed.should_stop() == "llm-failures"
        assert replayed.unreachable and replayed.stop_log().message == recorded.stop_log().message


def test_a_resumed_run_whose_endpoint_answered_before_is_not_stopped_at_once():
    from engine.resume import ResumeState

    server = FakeLLMServer().start()
    server.stop()
    spent = {"calls": 7, "cached": 0, "failures": 0, "prompt_tokens": 700, "completion_tokens": 70, "cost": 0.0}
    state = ResumeState("r1", TASK, "llmsr", {}, 0, 12.0, llm=spent)
    with _session(server, resume=state) as resumed:
        assert resumed.ask(MESSAGES, 2) == [] and resumed.unreachable_requests == 2
        assert resumed.stop_reason is None  # its server answered seven times before the crash


def test_only_a_refused_connection_or_an_unknown_host_counts_as_no_server():
    import socket

    from engine.llm.client import _no_server

    def connection_error(cause: BaseException) -> Exception:
        try:
            try:
                raise cause
            except OSError as exc:
                raise RuntimeError("Connection error.") from exc
        except RuntimeError as outer:
            return outer

    assert _no_server(connection_error(ConnectionRefusedError(111, "Connection refused")))
    assert _no_server(connection_error(socket.gaierror(socket.EAI_NONAME, "Name or service not known")))
    assert not _no_server(connection_error(socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")))
    assert not _no_server(connection_error(ConnectionResetError(104, "Connection reset by peer")))
    assert not _no_server(RuntimeError("Connection error."))


def test_an_endpoint_that_answered_once_gets_the_usual_patience():
    """A server that answered this run and then went away may come back: the session keeps
    asking (ten requests in a row fail before it stops), where one that never answered stops at
    its first batch. A server answering with errors is never taken for a missing one."""
    server = FakeLLMServer(default={"text": "an answer"}).start()
    with _session(server) as answered_once:
        assert [text for text, _seq in answered_once.ask(MESSAGES)] == ["an answer"]
        server.stop()
        assert answered_once.ask(MESSAGES, 2) == [] and answered_once.unreachable_requests == 2
        assert answered_once.stop_reason is None and answered_once.should_stop() is None
    with _session(server) as never_answered:  # the same dead address, in a new run
        assert never_answered.ask(MESSAGES, 2) == []
        assert never_answered.should_stop() == "llm-failures" and never_answered.unreachable
    with FakeLLMServer(default={"status": 500}) as failing, _session(failing) as erring:
        assert erring.ask(MESSAGES, 2) == [] and erring.unreachable_requests == 0
        assert erring.stop_reason is None


def test_cli_run_with_a_wrong_model_name_prints_the_reason_without_a_traceback(isolated_home, capsys):
    from engine.cli import main

    with FakeLLMServer(check_model=True) as server:
        code = main(["run", "--task", TASK, "--method", "llmsr", "--llm-base-url", server.base_url,
                     "--llm-model", "no-such-model", "--max-llm-calls", "5",
                     "--set", "program_seconds=2", "--set", "islands=1", "--set", "evaluators=1"])
        asked = len(server.completions())
    out, err = capsys.readouterr()
    assert code == 0 and asked == 4  # one batch (samples_per_prompt=4), then it stopped
    assert "finished (llm-failures)" in out
    assert "error: stopping: no usable reply can come from the LLM endpoint" in err
    assert "The model `no-such-model` does not exist" in err and "--llm-model" in err
    assert "Traceback" not in out + err


def test_the_window_says_why_an_llm_run_stopped_when_the_model_name_is_wrong(qtbot, isolated_home):
    """Pressing Start on LLM-SR with a model the endpoint does not have: the run ends at once and
    the run panel, the status bar and the run history say what to check, without a traceback."""
    pytest.importorskip("pytestqt")
    from PySide6.QtCore import Qt

    from app import settings
    from app.application import create_app
    from app.main_window import MainWindow

    with FakeLLMServer(check_model=True) as server:
        settings.save_llm_settings({"llm": {"base_url": server.base_url, "model": "no-such-model", "timeout": 5},
                                    "llm_cache": "off", "max_llm_calls": 5})
        create_app()
        win = MainWindow(restore_layout=False)
        qtbot.addWidget(win)
        win.show()
        try:
            qtbot.waitUntil(lambda: len(win.tasks) > 0, timeout=15000)
            win.browser.select_task(TASK)
            win.run_panel.method_box.setCurrentIndex(win.run_panel.method_box.findData("llmsr"))
            for name, value in (("samples_per_prompt", 1), ("islands", 1), ("evaluators", 1)):
                win.run_panel.set_value(name, value)
            qtbot.waitUntil(lambda: win.run_panel.start_button.isEnabled(), timeout=10000)
            with qtbot.waitSignal(win.controller.idle, timeout=60000):
                qtbot.mouseClick(win.run_panel.start_button, Qt.MouseButton.LeftButton)
            shown = win.run_panel.status.text()
            assert "no usable reply can come from the LLM endpoint" in shown, shown
            assert "`no-such-model` does not exist" in shown and "Traceback" not in shown
            assert len(server.completions()) == 1  # refused once: not retried, no second request
            record = win.store.get_run(win.displayed_run)
            assert record.stop_reason == "llm-failures" and "does not exist" in record.error
        finally:
            win.controller.shutdown()
            win.loader.wait_all()
            win.close()
