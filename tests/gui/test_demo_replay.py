"""Demo mode (Run ▸ Demo replay…): a stored run replayed step by step, as a teacher drives it."""

from __future__ import annotations

import math
import socket
from collections import Counter

import numpy as np
import pytest
from PySide6.QtCore import Qt

pytest.importorskip("pytestqt")

from app.application import create_app  # noqa: E402
from app.demo import SHORTCUT, WAITING_FIT, WAITING_RESULT  # noqa: E402
from app.main_window import MainWindow  # noqa: E402
from engine import methods as m  # noqa: E402
from engine import paths  # noqa: E402
from engine.replay import build_timeline  # noqa: E402
from engine.runner import execute  # noqa: E402
from engine.store import RunStore  # noqa: E402
from engine.tasks import registry  # noqa: E402
from tests.gui.llm_events import run_events  # noqa: E402
from tests.gui.stored_runs import FRONT, LINEAR, MATSCI1, TRUTH  # noqa: E402
from viewers.loss_plot import LOSS_FLOOR  # noqa: E402

CKR1 = "llmsrbench/lsr-synth/chemistry/CKR1"
METRICS = {"train": {"nmse": 0.04, "acc_0.1": 0.0}, "id": {"nmse": 0.05, "acc_0.1": 0.0},
           "ood": {"nmse": math.inf, "acc_0.1": 0.0}}


# ------------------------------------------------------------------------------ stored runs


def _spread(store: RunStore, run_id: str, seconds: float) -> None:
    """Space a hand-written run's records evenly over ``seconds``, as a run of that length
    would have recorded them (the store stamps them with the time they were written)."""
    conn = store.conn
    start = conn.execute("SELECT started_at FROM runs WHERE id=?", (run_id,)).fetchone()[0] - 10_000
    rows = [(t, 0, "llm_calls", seq) for seq, t in conn.execute("SELECT seq, t FROM llm_calls WHERE run_id=?",
                                                                 (run_id,))]
    rows += [(t, 1, "events", seq) for seq, t in conn.execute("SELECT seq, t FROM events WHERE run_id=?", (run_id,))]
    rows.sort()
    with conn:
        for i, (_t, _k, table, seq) in enumerate(rows, start=1):
            conn.execute(f"UPDATE {table} SET t=? WHERE run_id=? AND seq=?",
                         (start + seconds * i / (len(rows) + 1), run_id, seq))
        conn.execute("UPDATE runs SET started_at=?, finished_at=? WHERE id=?", (start, start + seconds, run_id))


def _fronts():
    return [FRONT[:1], FRONT[:2], FRONT[:3], FRONT]


def slow_run(store: RunStore, seconds: float = 20.0, points: int = 40) -> str:
    """A 20-second GP-like run: a progress point every half second, four Pareto fronts."""
    run_id = store.create_run(MATSCI1, "gp", {"seconds": seconds, "seed": 1}, 1)
    fronts = _fronts()
    for i in range(1, points + 1):
        store.add_event(run_id, "progress", {"iteration": i, "best_loss": 0.9 * 0.9 ** i, "evaluations": 100 * i,
                                             "elapsed": i * seconds / points})
        if i % (points // len(fronts)) == 0:
            front = fronts[i // (points // len(fronts)) - 1]
            store.add_event(run_id, "pareto", {"iteration": i, "candidates": front})
            store.add_pareto(run_id, i, front)
    store.add_event(run_id, "final", {"expression": TRUTH, "complexity": 25, "loss": 0.04})
    store.finish_run(run_id, "finished", seconds=seconds, expression=TRUTH, complexity=25, train_loss=0.04,
                     metrics=METRICS, stop_reason="budget")
    _spread(store, run_id, seconds)
    return run_id


def llm_run(store: RunStore) -> str:
    """A recorded LLM-SR run (calls, hypotheses, progress, fronts) whose endpoint is unreachable."""
    config = {"llm": {"model": "gpt-4o-mini", "base_url": "http://127.0.0.1:9/v1"}, "max_llm_calls": 40,
              "max_llm_cost": 0.05, "seed": 0}
    run_id = store.create_run(MATSCI1, "llmsr", config, 0)
    best, iteration = math.inf, 0
    for event in run_events(12):
        payload = m.base.event_payload(event)
        if isinstance(event, m.LLMCall):
            store.add_llm_call(run_id, payload)
            continue
        store.add_event(run_id, "hypothesis", payload)
        if event.ok and event.loss is not None:
            iteration += 1
            best = min(best, event.loss)
            store.add_event(run_id, "progress", {"iteration": iteration, "best_loss": best, "evaluations": iteration,
                                                 "elapsed": float(iteration)})
            front = FRONT[: min(4, iteration)]
            store.add_event(run_id, "pareto", {"iteration": iteration, "candidates": front})
            store.add_pareto(run_id, iteration, front)
    store.add_event(run_id, "final", {"expression": LINEAR, "complexity": 9, "loss": 0.05})
    budget = {"calls": 11, "cached": 0, "failures": 1, "malformed": 0, "prompt_tokens": 7000,
              "completion_tokens": 1500, "cost": 0.002, "limits": {"max_calls": 40, "max_cost": 0.05}}
    store.finish_run(run_id, "finished", seconds=12.0, expression=LINEAR, complexity=9, train_loss=0.05,
                     metrics={**METRICS, "llm": budget}, stop_reason="budget")
    _spread(store, run_id, 12.0)
    return run_id


#: Symbolic accuracy budget (seconds) of the real GP run's final model and of the checks of its
#: front when the window opens it. The app's 5 s made each of these tests wait 20-30 s for two
#: of the front's models whose check always runs out of time; the checks that decide take
#: under 1 s here, so the candidates' answers do not depend on the budget.
GP_SA_SECONDS = 2.0

_GP_RUN: dict = {}  # the real GP run, recorded once and copied into each test's store


def gp_run(store: RunStore) -> str:
    """A real GP run of about two seconds, recorded by engine.runner (once per test session;
    later tests get a copy of the same run)."""
    if "bundle" not in _GP_RUN:
        from engine import runner

        task = registry.get_task(MATSCI1)
        config = {"population_size": 150, "generations": 100000, "seconds": 2.0, "threads": 1, "seed": 5}
        budget, runner.SA_SECONDS = runner.SA_SECONDS, GP_SA_SECONDS
        try:
            items = list(execute(task, "gp", config, m.RunContext(), store))
        finally:
            runner.SA_SECONDS = budget
        assert items[-1].status == "finished"
        _GP_RUN["bundle"] = store.export_run(items[-1].run_id)
        return items[-1].run_id
    return store.import_run(_GP_RUN["bundle"])


@pytest.fixture
def quick_front_checks(monkeypatch):
    """The window checks the front of a real GP run with :data:`GP_SA_SECONDS` per model."""
    import engine.candidates

    monkeypatch.setattr(engine.candidates, "SA_SECONDS", GP_SA_SECONDS)


def _late_end(writer, hours: float = 1.0):
    """``writer``'s run, saved as finished an hour after its last record (its final scoring took
    that long): playing stops for a long time on the step before the result, so a test can look
    at what the steps alone built before the replay opens the stored run."""

    def write(store: RunStore) -> str:
        run_id = writer(store)
        with store.conn:
            store.conn.execute("UPDATE runs SET finished_at = finished_at + ? WHERE id=?", (hours * 3600, run_id))
        return run_id

    write.__name__ = f"late_{writer.__name__}"
    return write


def failed_run(store: RunStore) -> str:
    run_id = store.create_run(MATSCI1, "gp", {"seconds": 2}, 0)
    store.finish_run(run_id, "failed", seconds=0.0, error="ValueError: the data could not be generated")
    return run_id


# ------------------------------------------------------------------------------ the window


def _open(qtbot) -> MainWindow:
    create_app()
    win = MainWindow()
    qtbot.addWidget(win)
    win.show()
    qtbot.waitUntil(lambda: len(win.tasks) > 0, timeout=15000)
    return win


@pytest.fixture
def make_window(qtbot, isolated_home):
    """Write runs with ``writer(store)`` (a list of functions), then open the window on them."""
    opened = []

    def make(*writers):
        with RunStore(paths.default_db_path()) as store:
            ids = [writer(store) for writer in writers]
        win = _open(qtbot)
        opened.append(win)
        return win, ids

    yield make
    for win in opened:
        win.controller.shutdown()
        win.demo.loader.wait_all()
        win.loader.wait_all()
        win.scorer.wait_all()


def _settle(qtbot, win) -> None:
    """Everything opening a run computes off the GUI thread has arrived."""
    qtbot.waitUntil(lambda: not win.loader.busy() and not win.scorer.busy(), timeout=60000)
    qtbot.wait(300)  # queued signals, the panels' refresh timers


def _open_from_history(qtbot, win, run_id: str) -> None:
    """The user clicks the run in the history: the window shows it."""
    assert win.history.select_run(run_id)
    qtbot.waitUntil(lambda: win.displayed_run == run_id and not win.opening_run(), timeout=5000)


def _start_demo(qtbot, win) -> None:
    """Run ▸ Demo replay…, on the run selected in the history."""
    action = next(a for a in win.menus["run"].actions() if a.text() == "&Demo replay…")
    assert action.shortcut().toString() == SHORTCUT and action.isEnabled()
    action.trigger()
    qtbot.waitUntil(lambda: win.demo.timeline is not None, timeout=15000)
    assert win.demo.toolbar.isVisible()


def _snapshot(win) -> dict:
    """What the user sees of a run: loss series, candidates, result, LLM calls and fit."""
    x, y = win.loss.data()
    rows = [(r["expression"], r["complexity"], r["loss"]) for r in win.candidates.rows()]
    table = win.result.table
    result_cells = [[table.item(r, c).text() if table.item(r, c) else "" for c in range(table.columnCount())]
                    for r in range(table.rowCount())]
    panel = win.llm_panel
    tops = [(n.kind, n.data.get("seq"), n.data.get("status"), len(n.children)) for n in panel.model.tops()]
    fit = win.fit.current
    return {
        "loss": (x, y),
        "rows": rows,
        "chosen": win.candidates.chosen_row(),
        "recommended": win.candidates.recommended_row(),
        "final_point": win.candidates.final_point,
        "caption": win.candidates.caption.text(),
        "result": (win.result.equation.text(), win.result.details.text(), win.result.symbolic.text(), result_cells),
        "llm": (panel.is_empty_state(), panel.empty_text(), panel.row_count(), panel.count_label.text(),
                panel.summary(), tops),
        "fit": None if fit is None else (fit.title, {k: (v[0].copy(), v[1].copy()) for k, v in fit.splits.items()}),
        "fit_points": win.fit.plotted_point_count(),
        "fit_header": win.fit.header.text(),
    }


def _assert_same(a: dict, b: dict) -> None:
    np.testing.assert_array_equal(a["loss"][0], b["loss"][0])
    np.testing.assert_array_equal(a["loss"][1], b["loss"][1])
    for key in ("rows", "chosen", "recommended", "final_point", "caption", "result", "llm", "fit_points", "fit_header"):
        assert a[key] == b[key], key
    assert (a["fit"] is None) == (b["fit"] is None)
    if a["fit"] is not None:
        assert a["fit"][0] == b["fit"][0]
        assert a["fit"][1].keys() == b["fit"][1].keys()
        for split in a["fit"][1]:
            for left, right in zip(a["fit"][1][split], b["fit"][1][split]):
                np.testing.assert_array_equal(left, right)


# ------------------------------------------------------------------------------ tests


def test_play_pause_scrub_and_the_end_equals_opening_the_run(make_window, qtbot):
    win, (run_id,) = make_window(slow_run)
    _open_from_history(qtbot, win, run_id)
    _settle(qtbot, win)
    opened = _snapshot(win)
    assert opened["loss"][0].size == 40 and opened["fit"] is not None and opened["chosen"] is not None

    _start_demo(qtbot, win)
    demo, bar = win.demo, win.demo.bar
    timeline = demo.timeline
    # A clean slate: nothing of the run is shown until it is played.
    assert win.loss.point_count() == 0 and win.candidates.row_count() == 0
    assert win.result.equation.text() == WAITING_RESULT and win.fit.header.text() == WAITING_FIT
    assert win.fit.current is None
    assert bar.time_label.text() == f"0.0 s of {timeline.duration:.1f} s · step 0 / {len(timeline)}"

    bar.set_speed("2×")
    qtbot.mouseClick(bar.play_button, Qt.MouseButton.LeftButton)
    assert demo.is_playing() and "Pause" in bar.play_button.text()
    qtbot.waitUntil(lambda: win.loss.point_count() >= 3, timeout=20000)
    grown = win.loss.point_count()
    qtbot.waitUntil(lambda: win.loss.point_count() > grown, timeout=20000)  # still growing
    qtbot.waitUntil(lambda: win.candidates.row_count() >= 1, timeout=20000)  # the first front arrived

    qtbot.mouseClick(bar.play_button, Qt.MouseButton.LeftButton)  # Pause
    assert not demo.is_playing() and "Play" in bar.play_button.text()
    paused_at, points = demo.position, win.loss.point_count()
    qtbot.wait(800)
    assert demo.position == paused_at and win.loss.point_count() == points
    assert f"step {paused_at} / {len(timeline)}" in bar.time_label.text()

    # Forward to the third front, then drag the slider back to just after the first one.
    fronts = [i + 1 for i, s in enumerate(timeline.steps) if s.kind == "front"]
    bar.slider.setValue(fronts[2])
    qtbot.waitUntil(lambda: demo.position == fronts[2], timeout=5000)
    qtbot.wait(120)
    later_points, later_rows = win.loss.point_count(), win.candidates.row_count()
    assert later_rows == 3
    bar.slider.setValue(fronts[0])
    qtbot.waitUntil(lambda: demo.position == fronts[0], timeout=5000)
    qtbot.wait(120)
    expected = timeline.state_at(fronts[0])
    assert win.loss.point_count() == len(expected.iterations) < later_points
    np.testing.assert_array_equal(win.loss.data()[0], expected.iterations)
    assert [r["expression"] for r in win.candidates.rows()] == [c["expression"] for c in FRONT[:1]]
    assert f"at iteration {expected.front_iteration}:" in win.candidates.caption.text()
    assert win.candidates.chosen_row() is None  # no model chosen yet

    # One step back and forward, with the buttons.
    qtbot.mouseClick(bar.back_button, Qt.MouseButton.LeftButton)
    assert demo.position == fronts[0] - 1 and win.candidates.row_count() == 0
    qtbot.mouseClick(bar.forward_button, Qt.MouseButton.LeftButton)
    assert demo.position == fronts[0] and win.candidates.row_count() == 1

    # Jump to the end with the keyboard: the run as the history shows it.
    bar.slider.setFocus()
    qtbot.keyClick(bar.slider, Qt.Key.Key_End)
    qtbot.waitUntil(lambda: demo.position == len(timeline), timeout=5000)
    _settle(qtbot, win)
    assert "Replay" in bar.play_button.text()
    _assert_same(_snapshot(win), opened)

    # Going back from the end hides the result and the fit again; the end brings them back.
    bar.slider.setValue(len(timeline) - 1)
    qtbot.waitUntil(lambda: demo.position == len(timeline) - 1, timeout=5000)
    assert win.result.equation.text() == WAITING_RESULT and win.fit.current is None
    assert win.candidates.chosen_row() is None and win.candidates.final_point is None
    qtbot.mouseClick(bar.forward_button, Qt.MouseButton.LeftButton)
    _settle(qtbot, win)
    _assert_same(_snapshot(win), opened)

    # End demo: the bar goes, the whole run stays on show.
    qtbot.mouseClick(bar.close_button, Qt.MouseButton.LeftButton)
    assert not demo.is_active() and not win.demo.toolbar.isVisible()
    _settle(qtbot, win)
    _assert_same(_snapshot(win), opened)


def test_a_real_gp_run_replays_to_exactly_what_opening_it_shows(make_window, qtbot, quick_front_checks):
    win, (run_id,) = make_window(gp_run)
    _open_from_history(qtbot, win, run_id)
    _settle(qtbot, win)
    opened = _snapshot(win)
    assert opened["loss"][0].size > 0 and opened["rows"] and opened["fit_points"] > 0

    _start_demo(qtbot, win)
    demo = win.demo
    assert win.loss.point_count() == 0
    demo.bar.set_speed("30×")
    qtbot.mouseClick(demo.bar.play_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: demo.position == len(demo.timeline), timeout=30000)
    assert not demo.is_playing()
    _settle(qtbot, win)
    final = _snapshot(win)
    _assert_same(final, opened)
    assert win.result.equation.text() and "run " + run_id in win.result.details.text()


def test_a_recorded_llm_run_replays_offline(make_window, qtbot, monkeypatch):
    win, (run_id,) = make_window(llm_run)
    _open_from_history(qtbot, win, run_id)
    _settle(qtbot, win)
    opened = _snapshot(win)
    assert opened["llm"][2] > 0 and not opened["llm"][0]

    # From here on any attempt to reach an LLM fails loudly: the replay reads the store only.
    attempts = []

    def refuse(*args, **_kwargs):
        attempts.append(args)
        raise OSError("no network in this test")

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    import engine.llm.client as llm_client

    monkeypatch.setattr(llm_client.LLMClient, "__init__", lambda *a, **k: refuse("LLMClient"))

    _start_demo(qtbot, win)
    demo = win.demo
    timeline = demo.timeline
    assert timeline.used_llm
    assert not win.llm_panel.is_empty_state() and win.llm_panel.row_count() == 0

    # Step through to the sixth call: the panel has the calls that had arrived.
    sixth = next(i + 1 for i, s in enumerate(timeline.steps) if s.kind == "llm_call" and s.data["seq"] == 6)
    demo.bar.slider.setValue(sixth - 1)
    qtbot.waitUntil(lambda: demo.position == sixth - 1, timeout=5000)
    qtbot.mouseClick(demo.bar.forward_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: win.llm_panel.pending() == 0, timeout=5000)
    assert sorted(win.llm_panel._calls) == [1, 2, 3, 4, 5, 6]
    assert win.llm_panel.count_label.text().startswith("6 requests")

    # Played to the end: the same calls, hypotheses, meter and text as the opened run.
    demo.bar.set_speed(None)  # fit to 30 s; then straight to the end with the keyboard
    qtbot.keyClick(demo.bar.slider, Qt.Key.Key_End)
    qtbot.waitUntil(lambda: demo.position == len(timeline), timeout=5000)
    _settle(qtbot, win)
    _assert_same(_snapshot(win), opened)
    first = win.llm_panel.call_index(1)
    win.llm_panel.tree.setCurrentIndex(first)
    assert "Damped Duffing oscillator" in win.llm_panel.detail.toPlainText() or \
        "damped nonlinear oscillator" in win.llm_panel.detail.toPlainText()
    assert attempts == []


def test_picking_another_task_ends_the_demo(make_window, qtbot):
    win, (run_id,) = make_window(slow_run)
    _open_from_history(qtbot, win, run_id)
    _start_demo(qtbot, win)
    qtbot.mouseClick(win.demo.bar.play_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: win.loss.point_count() >= 1, timeout=20000)
    assert win.browser.select_task(CKR1)
    assert not win.demo.is_active() and not win.demo.timer.isActive()
    assert not win.demo.toolbar.isVisible()
    assert win.loss.point_count() == 0 and win.candidates.row_count() == 0 and win.displayed_run is None
    qtbot.wait(300)
    assert win.loss.point_count() == 0  # nothing more arrives


def test_opening_another_run_from_the_history_ends_the_demo(make_window, qtbot):
    win, (slow, other) = make_window(slow_run, llm_run)
    _open_from_history(qtbot, win, slow)
    _start_demo(qtbot, win)
    qtbot.mouseClick(win.demo.bar.play_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: win.loss.point_count() >= 1, timeout=20000)
    _open_from_history(qtbot, win, other)
    assert not win.demo.is_active() and not win.demo.toolbar.isVisible()
    _settle(qtbot, win)
    assert win.displayed_run == other
    assert win.loss.point_count() == len(RunStore(win.db_path).progress(other))
    assert win.llm_panel.row_count() > 0


def test_starting_a_run_ends_the_demo_and_no_demo_starts_during_a_run(make_window, qtbot, quick_front_checks):
    win, (run_id,) = make_window(slow_run)
    _open_from_history(qtbot, win, run_id)
    _start_demo(qtbot, win)
    qtbot.mouseClick(win.demo.bar.play_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: win.loss.point_count() >= 1, timeout=20000)
    assert win.run_panel.select_method("gp")
    win.run_panel.set_value("seconds", 1.0)
    qtbot.mouseClick(win.run_panel.start_button, Qt.MouseButton.LeftButton)
    assert win.controller.is_running()
    assert not win.demo.is_active() and not win.demo.toolbar.isVisible()
    assert "a run started" in win.status_label.text()
    # While the run goes, the demo explains why it cannot start.
    qtbot.waitUntil(lambda: not win.demo.action.isEnabled(), timeout=10000)
    assert win.demo.start(run_id) is False
    assert "A run is going" in win.demo.message_box.text()
    win.demo.message_box.close()
    qtbot.waitUntil(lambda: not win.controller.is_running(), timeout=60000)
    qtbot.waitUntil(lambda: win.demo.action.isEnabled(), timeout=10000)
    _settle(qtbot, win)


def test_a_run_with_nothing_recorded_gets_a_message(make_window, qtbot):
    win, (run_id,) = make_window(failed_run)
    _open_from_history(qtbot, win, run_id)
    action = next(a for a in win.menus["run"].actions() if a.text() == "&Demo replay…")
    action.trigger()
    qtbot.waitUntil(lambda: win.demo.message_box is not None, timeout=15000)
    text = win.demo.message_box.text()
    assert "nothing to replay" in text and "the data could not be generated" in text
    assert not win.demo.is_active() and not win.demo.toolbar.isVisible()
    win.demo.message_box.close()


def test_closing_the_window_mid_demo_is_clean(qtbot, isolated_home):
    with RunStore(paths.default_db_path()) as store:
        run_id = slow_run(store)
    win = _open(qtbot)
    _open_from_history(qtbot, win, run_id)
    _start_demo(qtbot, win)
    qtbot.mouseClick(win.demo.bar.play_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: win.loss.point_count() >= 1, timeout=20000)
    demo = win.demo
    win.close()
    assert not demo.timer.isActive() and not demo.is_active()
    assert not demo.loader.busy()
    qtbot.wait(200)  # no tick arrives after the close
    win.controller.shutdown()
    win.loader.wait_all()


def test_timeline_of_the_demo_matches_the_engine(make_window, qtbot):
    """The bar counts the engine's steps and the run's recorded length."""
    win, (run_id,) = make_window(slow_run)
    _open_from_history(qtbot, win, run_id)
    _start_demo(qtbot, win)
    with RunStore(win.db_path) as store:
        timeline = build_timeline(store, run_id)
    assert win.demo.step_count() == len(timeline) == 40 + 4 + 2
    assert win.demo.bar.slider.maximum() == len(timeline)
    assert win.demo.timeline.duration == pytest.approx(20.0)


def test_the_bar_follows_the_application_font(make_window, qtbot):
    """Presentation mode enlarges the application font; the bar stays a quarter larger still."""
    from PySide6.QtWidgets import QApplication

    from widgets.replay_bar import FONT_SCALE

    win, (run_id,) = make_window(slow_run)
    bar = win.demo.bar
    app = QApplication.instance()
    normal = app.font()
    assert bar.font().pointSizeF() == pytest.approx(normal.pointSizeF() * FONT_SCALE)
    bigger = type(normal)(normal)
    bigger.setPointSizeF(normal.pointSizeF() * 1.6)
    try:
        app.setFont(bigger)
        qtbot.waitUntil(lambda: bar.font().pointSizeF() == pytest.approx(bigger.pointSizeF() * FONT_SCALE),
                        timeout=5000)
        assert bar.play_button.font().bold()
    finally:
        app.setFont(normal)
    qtbot.waitUntil(lambda: bar.font().pointSizeF() == pytest.approx(normal.pointSizeF() * FONT_SCALE), timeout=5000)


def test_the_run_history_menu_offers_the_demo(make_window, qtbot):
    win, (run_id,) = make_window(slow_run)
    _open_from_history(qtbot, win, run_id)
    row = win.history.run_ids().index(run_id)
    rect = win.history.table.visualRect(win.history.table.model().index(row, 1))
    win.history.table.customContextMenuRequested.emit(rect.center())
    menu = win.history._menu
    entry = next(a for a in menu.actions() if a.text() == "Demo replay of this run")
    menu.close()
    entry.trigger()
    qtbot.waitUntil(lambda: win.demo.timeline is not None, timeout=15000)
    assert win.demo.timeline.run_id == run_id and win.demo.toolbar.isVisible()


# ------------------------------------------------------------------------------ the steps alone


def _stored(win, run_id: str) -> dict:
    """What the store holds of a run, in the shapes the panels show it."""
    with RunStore(win.db_path) as store:
        progress = store.progress(run_id)
        front = store.last_front(run_id)
        calls = store.llm_calls(run_id)
        hypotheses = store.events(run_id, "hypothesis")
    # LossPlot leaves out losses that are not finite and draws the others no lower than its floor.
    points = [(float(p["iteration"]), max(float(p["best_loss"]), LOSS_FLOOR)) for p in progress
              if p.get("best_loss") is not None and math.isfinite(float(p["best_loss"]))]
    return {"x": np.array([x for x, _ in points]), "y": np.array([y for _, y in points]),
            "rows": [(c["expression"], c["complexity"], c["loss"]) for c in front],
            "calls": [c["seq"] for c in calls], "hypotheses": len(hypotheses)}


def _llm_tree(win) -> Counter:
    # Calls with their hypotheses; hypotheses of no call are listed among the calls live and
    # after them in a stored run, so the tree is compared as a multiset.
    return Counter((n.kind, n.data.get("seq"), n.data.get("status"), len(n.children))
                   for n in win.llm_panel.model.tops())


def _assert_every_step_shown(qtbot, win, stored: dict, opened: dict) -> None:
    """The step before the result: every progress point, the last front and every LLM call and
    hypothesis are on show, built by the replay's steps (the stored run is not opened yet)."""
    qtbot.waitUntil(lambda: win.llm_panel.pending() == 0, timeout=5000)
    x, y = win.loss.data()
    np.testing.assert_array_equal(x, stored["x"])
    np.testing.assert_array_equal(y, stored["y"])
    assert [(r["expression"], r["complexity"], r["loss"]) for r in win.candidates.rows()] == stored["rows"]
    assert win.result.equation.text() == WAITING_RESULT and win.fit.current is None
    assert win.candidates.chosen_row() is None
    if stored["calls"] or stored["hypotheses"]:
        calls = sorted(n.data.get("seq") for n in win.llm_panel.model.tops() if n.kind == "call")
        assert calls == stored["calls"]
        assert _llm_tree(win) == opened["llm_tree"]
        assert win.llm_panel.row_count() == opened["llm"][2]


@pytest.mark.parametrize("writer", [_late_end(slow_run), _late_end(llm_run), _late_end(gp_run)],
                         ids=["hand-written", "llm", "real-gp"])
def test_the_step_before_the_end_shows_every_recorded_step(make_window, qtbot, writer, quick_front_checks):
    """The last step opens the stored run, so comparing the end with opening the run cannot
    catch a step applied wrongly: the step before it is compared with the store itself, reached
    by playing, by dragging forward and by dragging back from the end."""
    win, (run_id,) = make_window(writer)
    _open_from_history(qtbot, win, run_id)
    _settle(qtbot, win)
    opened = _snapshot(win)
    opened["llm_tree"] = _llm_tree(win)
    stored = _stored(win, run_id)
    assert stored["x"].size > 0 and stored["rows"]
    assert (win.llm_panel.row_count() > 0) == bool(stored["calls"])

    _start_demo(qtbot, win)
    demo, bar = win.demo, win.demo.bar
    last = len(demo.timeline) - 1
    assert demo.timeline.steps[last].kind == "result"

    # Played: the result is an hour of run time after the step before it.
    bar.set_speed("30×")
    qtbot.mouseClick(bar.play_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: demo.position == last, timeout=60000)
    qtbot.mouseClick(bar.play_button, Qt.MouseButton.LeftButton)  # Pause
    assert demo.position == last and not demo.is_playing()
    _assert_every_step_shown(qtbot, win, stored, opened)

    # Dragged from the start to there (the steps applied in one go).
    bar.slider.setValue(0)
    qtbot.waitUntil(lambda: demo.position == 0, timeout=5000)
    assert win.loss.point_count() == 0
    bar.slider.setValue(last)
    qtbot.waitUntil(lambda: demo.position == last, timeout=5000)
    _assert_every_step_shown(qtbot, win, stored, opened)

    # Dragged back from the end (the state rebuilt from the timeline).
    qtbot.keyClick(bar.slider, Qt.Key.Key_End)
    qtbot.waitUntil(lambda: demo.position == last + 1, timeout=5000)
    _settle(qtbot, win)
    _assert_same(_snapshot(win), opened)
    bar.slider.setValue(last)
    qtbot.waitUntil(lambda: demo.position == last, timeout=5000)
    _assert_every_step_shown(qtbot, win, stored, opened)
    assert f"step {last} / {last + 1}" in bar.time_label.text()


# ------------------------------------------------------------------------------ other ways in and out


def test_presentation_mode_leaves_the_bar_to_the_demo(make_window, qtbot):
    """Presentation mode restores the layout it saved on entering, toolbars included: the bar
    must still follow the demo, not that layout."""
    win, (run_id,) = make_window(slow_run)
    present = win.appearance.presentation_action
    demo, bar = win.demo, win.demo.bar
    _open_from_history(qtbot, win, run_id)

    # F5, a demo, F5: the demo goes on, with its bar.
    present.trigger()
    assert win.appearance.presenting
    _start_demo(qtbot, win)
    present.trigger()
    assert not win.appearance.presenting
    assert demo.is_active() and demo.toolbar.isVisible()
    assert not demo.toolbar.toggleViewAction().isVisible()  # the bar is the demo's, not a View entry
    qtbot.mouseClick(bar.forward_button, Qt.MouseButton.LeftButton)
    assert demo.position == 1

    # F5 during the demo, End demo, F5: no bar of the ended demo comes back.
    present.trigger()
    assert win.appearance.presenting and demo.toolbar.isVisible()
    qtbot.mouseClick(bar.close_button, Qt.MouseButton.LeftButton)
    assert not demo.is_active() and not demo.toolbar.isVisible()
    present.trigger()
    assert not win.appearance.presenting
    assert not demo.is_active() and not demo.toolbar.isVisible()
    _settle(qtbot, win)
    assert win.displayed_run == run_id and win.loss.point_count() == 40  # End demo showed the run


def test_reset_layout_leaves_the_bar_to_the_demo(make_window, qtbot):
    win, (run_id,) = make_window(slow_run)
    reset = next(a for a in win.menus["view"].actions() if a.text() == "Reset &layout")
    demo, bar = win.demo, win.demo.bar
    _open_from_history(qtbot, win, run_id)
    _start_demo(qtbot, win)
    reset.trigger()
    assert demo.is_active() and demo.toolbar.isVisible()
    qtbot.mouseClick(bar.forward_button, Qt.MouseButton.LeftButton)
    assert demo.position == 1

    # Whatever the first layout holds: here one taken while a demo's bar was on show.
    win._default_state = win.saveState()
    qtbot.mouseClick(bar.close_button, Qt.MouseButton.LeftButton)
    assert not demo.toolbar.isVisible()
    reset.trigger()
    assert not demo.is_active() and not demo.toolbar.isVisible()
    _settle(qtbot, win)


def test_opening_a_recent_or_project_run_ends_the_demo(make_window, qtbot, monkeypatch):
    """File ▸ Recent runs and the project panel open runs without the history's signal; the demo
    ends all the same and does not take the window back at its end."""
    from PySide6.QtWidgets import QMessageBox

    win, (slow, other) = make_window(slow_run, llm_run)
    # The project made here is never saved: closing the window asks about it, and is answered
    # Discard (the window is closed in this test, whatever happens, while the answer holds).
    asked = []
    monkeypatch.setattr(QMessageBox, "question", staticmethod(
        lambda _parent, _title, text, *_a, **_k: asked.append(text) or QMessageBox.StandardButton.Discard))
    try:
        _check_recent_and_project_runs(qtbot, win, slow, other)
    finally:
        win.close()
    assert len(asked) == 1 and not win.isVisible()


def _check_recent_and_project_runs(qtbot, win, slow: str, other: str) -> None:
    demo = win.demo
    _open_from_history(qtbot, win, other)  # now in File ▸ Recent runs
    qtbot.mouseClick(win.session.panel.runs.add_button, Qt.MouseButton.LeftButton)  # and in the project
    assert win.session.panel.run_ids() == [other]
    _settle(qtbot, win)
    other_points = len(RunStore(win.db_path).progress(other))
    _open_from_history(qtbot, win, slow)

    def play_demo():
        _start_demo(qtbot, win)
        demo.set_speed("10×")
        qtbot.mouseClick(demo.bar.play_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: win.loss.point_count() >= 3, timeout=20000)

    def assert_other_stays():
        assert not demo.is_active() and not demo.timer.isActive() and not demo.toolbar.isVisible()
        assert win.displayed_run == other
        _settle(qtbot, win)
        # 2.5 s at 10× is the rest of the 20-second run: its end would have opened it again.
        qtbot.wait(2500)
        assert win.displayed_run == other and win.loss.point_count() == other_points
        assert win.llm_panel.row_count() > 0

    play_demo()
    win.session.recent_runs_menu.aboutToShow.emit()  # opening the menu fills it
    entry = next(a for a in win.session.recent_run_actions() if a.data() == other)
    entry.trigger()
    assert_other_stays()

    _open_from_history(qtbot, win, slow)
    play_demo()
    runs = win.session.panel.runs.list
    runs.setCurrentRow(0)
    qtbot.keyClick(runs, Qt.Key.Key_Return)  # Enter (or a double-click) opens the entry
    assert_other_stays()


def test_the_demo_does_not_use_escape(make_window, qtbot):
    """While presenting, Esc is the window's key to leave presentation mode: nothing of the demo
    (its menu entries, its bar and the bar's controls) may take Esc."""
    from PySide6.QtGui import QAction, QKeySequence, QShortcut

    win, _ids = make_window(slow_run)
    demo = win.demo
    esc = QKeySequence(Qt.Key.Key_Escape)
    objects = [demo.action, demo.history_action]
    for root in (demo, demo.toolbar):
        objects += root.findChildren(QAction) + root.findChildren(QShortcut)
    keys = [k for o in objects for k in (o.shortcuts() if isinstance(o, QAction) else [o.key()])]
    assert esc not in keys
    assert demo.action.shortcut() == QKeySequence(SHORTCUT)
