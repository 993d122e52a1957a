"""The LLM panel, fed as a run feeds it (LLMCall / Hypothesis events) and as a stored run opens
(the store's dicts): the budget meter, the call list, expanding a call to read its prompt and
reply, programs with their score or failure, the failures-only filter, the empty state, and the
main window's LLM dock, settings action and replay."""

from __future__ import annotations

import time

import pytest
from PySide6.QtCore import QModelIndex, QPoint, Qt
from PySide6.QtGui import QFontInfo

pytest.importorskip("pytestqt")

from app.application import create_app  # noqa: E402
from engine.methods import Hypothesis, LLMCall, Log, Progress  # noqa: E402
from engine.store import RunStore  # noqa: E402
from tests.gui.llm_events import REPLIES, SYSTEM, as_store_dicts, budget, run_events  # noqa: E402
from widgets.llm_panel import (COL_CALL, COL_PURPOSE, COL_RESULT, COL_STATUS, COL_TOKENS, IDLE_TEXT,  # noqa: E402
                               NO_LLM_TEXT, LLMPanel)


@pytest.fixture
def panel(qtbot):
    create_app()
    widget = LLMPanel()
    qtbot.addWidget(widget)
    widget.resize(900, 700)
    widget.show()
    return widget


def cell(panel, row: int, col: int, parent: QModelIndex = QModelIndex()) -> str:
    return panel.model.index(row, col, parent).data()


def feed(panel, qtbot, events) -> None:
    panel.clear()
    panel.set_budget_limits({"max_calls": 40, "max_cost": 0.05})
    for event in events:
        panel.add_event(event)
    qtbot.waitUntil(lambda: panel.pending() == 0, timeout=2000)  # applied by the panel's own timer


def test_idle_and_no_llm_empty_states(panel):
    assert panel.is_empty_state() and panel.empty_text() == IDLE_TEXT
    panel.load_run([], [])
    assert panel.is_empty_state()
    assert panel.empty_text().startswith("This run used no LLM. Pick an LLM method (LLM-SR, LaSR, SGA, DataBlind, "
                                         "OpenEvolve) and set the endpoint in Run ▸ LLM settings…")
    assert panel.message.isVisible()
    panel.show_no_llm()
    assert panel.empty_text() == NO_LLM_TEXT
    # An LLM run that ended before its first request is not "no LLM".
    panel.load_run([], [], used_llm=True)
    assert not panel.is_empty_state() and panel.row_count() == 0


def test_live_events_fill_the_meter_and_the_call_list(panel, qtbot):
    events = run_events(n_calls=12, max_calls=40, max_cost=0.05)
    panel.add_event(Progress(1, 0.5, 10, 0.1))  # not an LLM event: ignored
    panel.add_event(Log("hello"))
    feed(panel, qtbot, events)
    assert panel.row_count() == 12
    assert [cell(panel, r, COL_CALL) for r in (0, 3, 11)] == ["#1", "#4", "#12"]
    assert cell(panel, 3, COL_STATUS) == "✗ error"
    assert cell(panel, 3, COL_RESULT).startswith("429 Too Many Requests")
    assert cell(panel, 4, COL_STATUS) == "✓ ok · try 2"
    assert cell(panel, 1, COL_PURPOSE) == "propose"
    assert cell(panel, 1, COL_TOKENS) == "630 → 192"
    assert cell(panel, 0, COL_RESULT).startswith("program failed: the function in the reply is not valid Python")
    assert cell(panel, 2, COL_RESULT) == "1 program · best NMSE 0.00562"

    last = [e for e in events if isinstance(e, LLMCall)][-1].budget
    meter = panel.meter
    assert meter.calls_bar.text() == "11 / 40" and meter.calls_bar.value() == 11
    assert meter.cost_bar.text() == f"${last['cost']:.5f} / $0.050"
    total = last["prompt_tokens"] + last["completion_tokens"]
    assert meter.tokens_label.text() == (f"{last['prompt_tokens']:,} prompt + {last['completion_tokens']:,} "
                                         f"completion = {total:,}")
    assert meter.failures_label.text() == "1" and meter.cached_label.text() == "0"
    assert panel.count_label.text() == "12 requests · 11 programs (4 failed)"
    assert panel.summary() == f"LLM 11/40 calls · {total:,} tokens · ${last['cost']:.5f}"


def test_expanding_a_call_shows_prompt_reply_and_programs(panel, qtbot):
    feed(panel, qtbot, run_events(n_calls=6))
    call = panel.call_index(3)
    assert not panel.tree.isExpanded(call)
    # A click on the row's expand arrow, as a user does.
    arrow = QPoint(panel.tree.indentation() // 2, panel.tree.visualRect(call).center().y())
    qtbot.mouseClick(panel.tree.viewport(), Qt.MouseButton.LeftButton, pos=arrow)
    assert panel.tree.isExpanded(call)
    kinds = [panel.model.index(r, 0, call).data(Qt.ItemDataRole.UserRole + 1)
             for r in range(panel.model.rowCount(call))]
    assert kinds == ["message", "message", "reply", "hypothesis"]
    system = panel.model.index(0, 0, call).data()
    assert system.startswith("system · ") and SYSTEM in system
    reply = panel.model.index(2, 0, call)
    assert REPLIES[0] in reply.data()
    program = panel.model.index(3, 0, call)
    assert program.data().startswith("✓ program 3 · train NMSE 0.00562 · complexity 19")
    assert "def equation(t, x, v, params):" in program.data()
    assert panel.tree.isFirstColumnSpanned(3, call)  # messages and programs use the full width
    # Selecting a row shows its full text below, in monospace.
    panel.tree.setCurrentIndex(reply)
    assert panel.detail.toPlainText() == REPLIES[0]
    assert panel.detail.isReadOnly() and QFontInfo(panel.detail.font()).fixedPitch()
    panel.tree.setCurrentIndex(call)
    transcript = panel.detail.toPlainText()
    assert "── system" in transcript and "── user" in transcript and "══ reply" in transcript
    assert panel.detail_title.text().startswith("Call #3 · propose · ok · gpt-4o-mini")
    # The Left key collapses the call again.
    panel.tree.setFocus()
    qtbot.keyClick(panel.tree, Qt.Key.Key_Left)
    assert not panel.tree.isExpanded(call)


def test_failed_programs_and_calls_are_red_and_filterable(panel, qtbot):
    feed(panel, qtbot, run_events(n_calls=12))
    failed_call = panel.call_index(1)
    program = panel.model.index(panel.model.rowCount(failed_call) - 1, 0, failed_call)
    header = program.data(Qt.ItemDataRole.UserRole + 2)[0]
    assert header.startswith("✗ program 1 · island 2 — failed: the function in the reply is not valid Python")
    assert program.data(Qt.ItemDataRole.UserRole + 2)[1].name() == "#b42318"  # red
    assert panel.call_index(4).siblingAtColumn(COL_STATUS).data(Qt.ItemDataRole.ForegroundRole).name() == "#b42318"
    qtbot.mouseClick(panel.failures_only, Qt.MouseButton.LeftButton)
    shown = [cell(panel, r, COL_CALL) for r in range(panel.row_count())]
    assert shown == ["#1", "#4", "#7", "#9", "#10"]  # syntax errors, the 429, the time-out
    # A failure arriving later for a hidden call brings it into the filtered list, in order.
    panel.add_event(Hypothesis(99, "def equation(t, x, v, params): return x", False,
                               error="NaN on the training data", call_seq=2))
    qtbot.waitUntil(lambda: panel.row_count() == 6, timeout=2000)
    assert [cell(panel, r, COL_CALL) for r in range(3)] == ["#1", "#2", "#4"]
    qtbot.mouseClick(panel.failures_only, Qt.MouseButton.LeftButton)
    assert panel.row_count() == 12


def test_hypotheses_before_their_call_and_seed_programs(panel, qtbot):
    panel.clear()
    panel.add_event(Hypothesis(1, "def equation(t, x, v, params): return params[0]*x", True, loss=0.8,
                               origin="seed skeleton"))  # no call: a row of its own
    panel.add_event(Hypothesis(2, "def equation(t, x, v, params): return -x", True, loss=0.1, call_seq=1))
    panel.flush()
    assert panel.row_count() == 1 and cell(panel, 0, 0).startswith("✓ program 1 · train NMSE 0.8 · seed skeleton")
    panel.add_event(LLMCall(1, "ok", "m", [{"role": "user", "content": "hi"}], ["-x"], 5, 3, 0.2))
    panel.flush()
    assert panel.row_count() == 2
    call = panel.call_index(1)
    assert cell(panel, 1, COL_RESULT) == "1 program · best NMSE 0.1"
    assert panel.model.rowCount(call) == 3  # message, reply, the program that was waiting


def test_load_a_stored_run_from_the_store(panel, qtbot, tmp_path):
    events = run_events(n_calls=8)
    with RunStore(tmp_path / "runs.sqlite3") as store:
        run_id = store.create_run("feynman/I.12.1", "llmsr", {"llm": {}}, 0)
        for event in events:
            if isinstance(event, LLMCall):
                store.add_llm_call(run_id, {k: v for k, v in event.__dict__.items() if k != "budget"})
            else:
                store.add_event(run_id, "hypothesis", event.__dict__)
        calls, hyps = store.llm_calls(run_id), store.events(run_id, "hypothesis")
    assert calls and hyps
    panel.load_run(calls, hyps, limits={"max_calls": 40})
    assert not panel.is_empty_state()
    assert panel.row_count() == 8
    assert panel.meter.calls_bar.text() == "7 / 40"
    assert panel.meter.failures_label.text() == "1"
    assert panel.count_label.text() == "8 requests · 7 programs (2 failed)"
    panel.tree.expand(panel.call_index(3))
    assert panel.model.index(3, 0, panel.call_index(3)).data().startswith("✓ program 3 · train NMSE")
    # The run's final budget, when stored, is what the meter shows.
    final = budget(7, 1, 2, 5000, 900, 0.0123, max_calls=40)
    panel.load_run(*as_store_dicts(events), budget=final)
    assert panel.meter.cached_label.text() == "2" and panel.meter.cost_bar.text() == "$0.012 (no limit)"


def test_thousands_of_calls_stay_responsive(panel, qtbot):
    panel.clear()
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "x" * 2000}]
    started = time.perf_counter()
    for seq in range(1, 3001):
        snapshot = budget(seq, 0, 0, 0, 0, 0, max_calls=None)
        panel.add_event(LLMCall(seq, "ok", "m", messages, [REPLIES[0]], 700, 150, 1.0, budget=snapshot))
        panel.add_event(Hypothesis(seq, "def equation(x, params): return x", seq % 5 != 0, loss=0.1,
                                   error=None if seq % 5 else "NaN", call_seq=seq))
    queued = time.perf_counter() - started
    assert panel.row_count() == 0  # nothing is drawn per event
    qtbot.waitUntil(lambda: panel.row_count() == 3000, timeout=10000)
    assert queued < 5.0  # a gross guard; the speed goal lives in benchmarks/
    started = time.perf_counter()
    panel.flush()
    panel.tree.scrollToBottom()
    panel.repaint()
    assert time.perf_counter() - started < 3.0
    assert panel.meter.calls_bar.text() == "3,000 (no limit)"


# --------------------------------------------------------------------------- the main window


@pytest.fixture
def window(qtbot, isolated_home):
    from app.main_window import MainWindow

    create_app()
    win = MainWindow(restore_layout=False)
    qtbot.addWidget(win)
    win.show()
    yield win
    win.controller.shutdown()
    win.loader.wait_all()


def _store_llm_run(win) -> tuple[str, str]:
    from tests.gui.stored_runs import add_run

    calls, hyps = as_store_dicts(run_events(n_calls=5))
    llm_id = win.store.create_run("feynman/I.12.1", "llmsr",
                                  {"llm": {"base_url": "http://127.0.0.1:9/v1"}, "max_llm_calls": 40}, 0)
    for call in calls:
        win.store.add_llm_call(llm_id, call)
    for h in hyps:
        win.store.add_event(llm_id, "hypothesis", {k: v for k, v in h.items() if k not in ("seq", "kind", "t")})
    win.store.finish_run(llm_id, "finished", seconds=3.0, expression="mu*Nn", complexity=3, train_loss=0.0,
                         metrics={"llm": budget(4, 1, 0, 3000, 600, 0.002, max_calls=40)})
    gp_id = add_run(win.store)
    win.refresh_history()
    return llm_id, gp_id


def test_window_llm_dock_opens_stored_runs_and_enables_replay(window, qtbot):
    assert window.docks["llm"].widget() is window.llm_panel
    run_menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&Run")
    texts = [a.text() for a in run_menu.actions()]
    assert "&LLM settings…" in texts and "Re-run from recorded LLM re&plies" in texts
    llm_id, gp_id = _store_llm_run(window)
    assert not window.replay_action.isEnabled()

    window.history.select_run(llm_id)  # a user clicks the LLM run in the history
    qtbot.waitUntil(lambda: window.llm_panel.row_count() == 5, timeout=4000)
    assert window.replay_action.isEnabled()
    assert window.llm_panel.meter.calls_bar.text() == "4 / 40"
    window.history.select_run(gp_id)
    qtbot.waitUntil(lambda: window.llm_panel.is_empty_state(), timeout=4000)
    assert window.llm_panel.empty_text() == NO_LLM_TEXT
    assert not window.replay_action.isEnabled()


def test_window_merges_saved_llm_settings_into_an_llm_run(window, qtbot, monkeypatch):
    from app import settings

    settings.save_llm_settings({"llm": {"base_url": "http://10.0.0.5:8000/v1", "model": "my-model"},
                                "llm_cache": "off", "max_llm_calls": 77, "llm_prices": {"my-model*": [1, 2]}})
    dialog = window.open_llm_settings()
    assert dialog.isVisible() and dialog.url_edit.text() == "http://10.0.0.5:8000/v1"
    dialog.reject()
    merged = window._with_llm_settings("llmsr", {"seed": 3})
    assert merged["llm"]["model"] == "my-model" and merged["llm_cache"] == "off"
    assert merged["llm_prices"] == {"my-model*": [1.0, 2.0]} and merged["max_llm_calls"] == 77
    assert window._with_llm_settings("llmsr", {"max_llm_calls": 5})["max_llm_calls"] == 5  # the form wins
    assert window._with_llm_settings("gp", {"seed": 3}) == {"seed": 3}
    # The run panel's LLM-call budget starts from the saved default.
    index = window.run_panel.method_box.findData("llmsr")
    window.run_panel.method_box.setCurrentIndex(index)
    assert window.run_panel.config()["max_llm_calls"] == 77


# --------------------------------------------------------------------------- end to end

FEYNMAN = "feynman/I.12.1"  # F = mu * Nn
PROGRAM = "```python\ndef equation(mu, Nn, params):\n    return params[0] * mu * Nn\n```"
BROKEN = "```python\ndef equation(mu, Nn, params):\n    return params[0] * (mu +\n```"


@pytest.mark.slow
def test_an_llmsr_run_from_the_window_shows_its_calls_then_replays_offline(qtbot, isolated_home):
    from app import settings
    from app.main_window import MainWindow
    from engine import methods as m
    from tests.llm_server import FakeLLMServer

    if "llmsr" not in m.METHODS:
        pytest.skip("LLM-SR is not registered yet")
    with FakeLLMServer([{"text": BROKEN}], default={"text": PROGRAM}, models=("fake-model",)) as server:
        settings.save_llm_settings({"llm": {"base_url": server.base_url, "model": "fake-model", "max_retries": 0,
                                            "timeout": 10}, "llm_cache": "record", "max_llm_calls": 3})
        create_app()
        win = MainWindow(restore_layout=False)
        qtbot.addWidget(win)
        win.show()
        try:
            qtbot.waitUntil(lambda: len(win.tasks) > 0, timeout=15000)
            win.browser.select_task(FEYNMAN)
            win.run_panel.method_box.setCurrentIndex(win.run_panel.method_box.findData("llmsr"))
            assert win.run_panel.config()["max_llm_calls"] == 3  # the saved default budget
            for name, value in (("samples_per_prompt", 1), ("islands", 1), ("evaluators", 1)):
                if name in win.run_panel.editors:
                    win.run_panel.set_value(name, value)
            qtbot.waitUntil(lambda: win.run_panel.start_button.isEnabled(), timeout=5000)
            with qtbot.waitSignal(win.controller.idle, timeout=60000):  # every event has arrived
                qtbot.mouseClick(win.run_panel.start_button, Qt.MouseButton.LeftButton)
                assert not win.llm_panel.is_empty_state()
            qtbot.waitUntil(lambda: win.llm_panel.pending() == 0, timeout=2000)
            panel = win.llm_panel
            calls = [panel.model.index(r, COL_CALL).data() for r in range(panel.row_count())]
            # A broken program, then the exact law: LLM-SR stops there, inside its budget of 3.
            assert [c for c in calls if c.startswith("#")] == ["#1", "#2"]
            assert panel.meter.calls_bar.text() == "2 / 3"
            assert len(server.completions()) == 2
            results = " | ".join(panel.model.index(r, COL_RESULT).data() or "" for r in range(panel.row_count()))
            assert "program failed" in results and "best NMSE" in results
            run_id = win.displayed_run

            # Replay the recorded run: the same calls, answered offline.
            win.refresh_history(select=run_id)
            assert win.replay_action.isEnabled()
            with qtbot.waitSignal(win.controller.idle, timeout=60000):
                win.replay_action.trigger()
            qtbot.waitUntil(lambda: panel.pending() == 0, timeout=2000)
            assert len(server.completions()) == 2  # nothing new reached the endpoint
            statuses = [panel.model.index(r, COL_STATUS).data() for r in range(panel.row_count())]
            assert [s for s in statuses if s] == ["↺ cached"] * 2
            replay = win.store.get_run(win.displayed_run)
            assert replay.id != run_id and replay.config["llm_cache"] == "replay"
            assert panel.meter.cached_label.text() == "2"
        finally:
            win.controller.shutdown()
            win.loader.wait_all()
            win.close()


@pytest.mark.slow
def test_a_run_with_the_llm_judge_shows_its_verdict(qtbot, isolated_home):
    from app import settings
    from app.main_window import MainWindow
    from tests.llm_server import FakeLLMServer

    with FakeLLMServer([{"text": PROGRAM}], default={"text": "Both are C0*mu*Nn.\nVerdict: yes"}) as server:
        create_app()
        win = MainWindow(restore_layout=False)
        qtbot.addWidget(win)
        win.show()
        try:
            dialog = win.open_llm_settings()
            dialog.url_edit.setText(server.base_url)
            dialog.model_combo.setEditText("fake-model")
            assert not dialog.judge_check.isChecked()
            qtbot.mouseClick(dialog.judge_check, Qt.MouseButton.LeftButton)
            with qtbot.waitSignal(dialog.saved, timeout=2000):
                dialog.accept()
            assert settings.load_llm_settings()["llm_judge"] is True
            qtbot.waitUntil(lambda: len(win.tasks) > 0, timeout=15000)
            win.browser.select_task(FEYNMAN)
            win.run_panel.method_box.setCurrentIndex(win.run_panel.method_box.findData("direct"))
            assert win.run_panel.config()["max_llm_calls"] == 5  # no saved budget: the method's own
            win.run_panel.set_value("samples", 1)
            win.run_panel.set_value("evaluators", 1)
            qtbot.waitUntil(lambda: win.run_panel.start_button.isEnabled(), timeout=5000)
            with qtbot.waitSignal(win.controller.idle, timeout=60000):
                qtbot.mouseClick(win.run_panel.start_button, Qt.MouseButton.LeftButton)
            assert "LLM judge (fake-model)" in win.result.judge.text() and "yes" in win.result.judge.text()
            assert "Verdict: yes" in win.result.judge.toolTip()
            judge_request = server.completions()[-1]["body"]
            assert judge_request["temperature"] == 0.0
        finally:
            win.controller.shutdown()
            win.loader.wait_all()
            win.close()
