"""The run history refreshes at every run's start and end. A run that starts appears in its
place in the table's sort order and a run that ends shows its result, without the rows being
rebuilt: the selection stays, and the table reads exactly as a history built afresh."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

pytest.importorskip("pytestqt")

from app.application import create_app  # noqa: E402
from engine.store import RunStore  # noqa: E402
from stored_runs import add_run  # noqa: E402
from widgets.run_history import RunHistory  # noqa: E402

NMSE_ID = 4  # the history's "NMSE ID" column


def _cells(history: RunHistory) -> list[list[str]]:
    table = history.table
    return [[table.item(r, c).text() for c in range(table.columnCount())] for r in range(table.rowCount())]


def _fresh(qtbot, records, sort_col: int, order) -> RunHistory:
    history = RunHistory()
    qtbot.addWidget(history)
    history.table.horizontalHeader().setSortIndicator(sort_col, order)
    history.set_runs(records)
    qtbot.waitUntil(lambda: not history.filling(), timeout=5000)
    return history


@pytest.mark.parametrize("sort_col,order", [(0, Qt.SortOrder.DescendingOrder), (NMSE_ID, Qt.SortOrder.AscendingOrder)])
def test_a_run_starting_and_ending_updates_its_row_in_place(qtbot, tmp_path, sort_col, order):
    create_app()
    with RunStore(tmp_path / "runs.sqlite3") as store:
        losses = [(0.9, 0.5, 0.1 * (1 + seed % 7)) for seed in range(40)]
        for seed, curve in enumerate(losses):
            add_run(store, seed=seed, losses=curve,
                    metrics={"id": {"nmse": 0.01 * (1 + seed % 9)}, "ood": {"nmse": 0.2}, "train": {"nmse": 0.1}})
        history = RunHistory()
        qtbot.addWidget(history)
        history.resize(900, 400)
        history.show()
        history.table.horizontalHeader().setSortIndicator(sort_col, order)
        history.set_runs(store.list_runs())
        picked = history.run_ids()[5]
        history.select_run(picked, emit=False)
        first_item = history.table.item(0, 0)

        # A run starts: the refresh adds its row; the others are the same items as before.
        running = store.create_run("llmsrbench/lsr-synth/material_science/MatSci1", "gp", {"seconds": 2}, 99)
        history.set_runs(store.list_runs())
        assert len(history.run_ids()) == 41 and running in history.run_ids()
        assert history.selected_run_id() == picked
        assert any(history.table.item(r, 0) is first_item for r in range(41))  # not rebuilt
        assert _cells(history) == _cells(_fresh(qtbot, store.list_runs(), sort_col, order))

        # It ends with the best test error of all: its row shows it, in its sorted place.
        store.finish_run(running, "finished", seconds=1.0, expression="x0", complexity=1, train_loss=0.001,
                         metrics={"id": {"nmse": 0.0001}, "ood": {"nmse": 0.3}, "train": {"nmse": 0.001}})
        history.set_runs(store.list_runs())
        row = history.run_ids().index(running)
        assert history.table.item(row, 3).text() == "finished" and history.table.item(row, NMSE_ID).text() == "0.0001"
        if sort_col == NMSE_ID:
            assert row == 0
        assert history.selected_run_id() == picked
        assert _cells(history) == _cells(_fresh(qtbot, store.list_runs(), sort_col, order))
        assert history.count.text() == "41 runs"

        # The run the user is watching ends: its row is written again, and stays selected.
        watched = store.create_run("llmsrbench/lsr-synth/material_science/MatSci1", "gp", {"seconds": 2}, 98)
        history.set_runs(store.list_runs())
        history.select_run(watched, emit=False)
        store.finish_run(watched, "finished", seconds=1.0, expression="x0", complexity=1, train_loss=0.002,
                         metrics={"id": {"nmse": 0.0002}, "ood": {"nmse": 0.3}, "train": {"nmse": 0.002}})
        history.set_runs(store.list_runs())
        assert history.selected_run_id() == watched
        assert history.table.item(history.run_ids().index(watched), 3).text() == "finished"
        history.select_run(picked, emit=False)

        # The store's newest 500 move on (a sweep adds runs): the oldest leave, the new come.
        kept = history.table.item(history.run_ids().index(running), 0)
        newer = store.create_run("llmsrbench/lsr-synth/material_science/MatSci2", "gp", {"seconds": 2}, 100)
        window = store.list_runs(limit=38)
        history.set_runs(window)
        assert len(history.run_ids()) == 38 and newer in history.run_ids()
        assert history.table.item(history.run_ids().index(running), 0) is kept  # not rebuilt
        if picked in {r.id for r in window}:
            assert history.selected_run_id() == picked
        assert _cells(history) == _cells(_fresh(qtbot, window, sort_col, order))

        # A far shorter list (another task's runs): the other rows go.
        other = [r for r in store.list_runs() if r.id in (running, newer)]
        history.set_runs(other)
        assert sorted(history.run_ids()) == sorted([running, newer]) and history.selected_run_id() is None
        assert _cells(history) == _cells(_fresh(qtbot, other, sort_col, order))


def _shown(qtbot) -> RunHistory:
    """A run history on screen, as in the window's dock."""
    create_app()
    history = RunHistory()
    qtbot.addWidget(history)
    history.resize(900, 400)
    history.show()
    return history


def _records(n: int, start: float = 1.7e9) -> list:
    """``n`` finished runs, newest first, with test errors in no particular order."""
    from engine.store import RunRecord

    out = []
    for i in range(n):
        nmse = None if i % 11 == 0 else 10.0 ** -((i * 7) % 13)
        out.append(RunRecord(id=f"run{i:04d}", task_id=f"bench/set/Task{i % 5}", method="gp", config={}, seed=i,
                             status="finished", started_at=start - 60 * i, finished_at=start - 60 * i + 30, seconds=30,
                             expression=f"x0*{i}", complexity=3, train_loss=0.1,
                             metrics={"id": {"nmse": nmse}, "ood": {"nmse": 0.5}}))
    return out


def test_a_click_on_a_column_header_sorts_the_runs_and_keeps_the_selection(qtbot):
    from PySide6.QtCore import QPoint
    from PySide6.QtTest import QTest

    history = _shown(qtbot)
    records = _records(40)
    history.set_runs(records)
    assert history.run_ids() == [r.id for r in records]  # newest first
    history.select_run("run0007", emit=False)
    header = history.table.horizontalHeader()

    def click(column: int) -> None:
        x = header.sectionViewportPosition(column) + header.sectionSize(column) // 2
        QTest.mouseClick(header.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(x, header.height() // 2))

    def nmse(run_id: str) -> float:
        value = next(r for r in records if r.id == run_id).metrics["id"]["nmse"]
        return float("inf") if value is None else value

    click(NMSE_ID)
    first = [nmse(i) for i in history.run_ids()]
    click(NMSE_ID)
    second = [nmse(i) for i in history.run_ids()]
    # One click sorts one way, the next the other; runs without an error sort as the largest.
    assert {tuple(first), tuple(second)} == {tuple(sorted(first)), tuple(sorted(first, reverse=True))}
    assert first != second and history.selected_run_id() == "run0007"
    assert history.table.item(history.run_ids().index("run0007"), NMSE_ID).text() == "1e-10"
    # A refresh keeps the order the user picked.
    history.set_runs(records[:39])
    again = [nmse(i) for i in history.run_ids()]
    assert len(again) == 39 and again == sorted(again, reverse=second[0] > second[-1])
    assert _cells(history) == _cells(_fresh(qtbot, records[:39], NMSE_ID, header.sortIndicatorOrder()))


def test_a_long_history_is_written_over_several_turns_and_reads_as_one_built_at_once(qtbot):
    """A sweep's runs replacing a long history: the rows are written a few dozen per turn of the
    event loop, so that the window answers in between; a newer list supersedes the rest."""
    from widgets import run_history

    history = _shown(qtbot)
    old = _records(300, start=1.6e9)
    history.set_runs(old)
    qtbot.waitUntil(lambda: not history.filling(), timeout=5000)
    history.select_run(old[3].id, emit=False)
    signals = []
    history.runs_changed.connect(lambda: signals.append(history.table.rowCount()))

    new = _records(300)[:297] + old[:3]  # a sweep's runs and the three newest of before
    inserted = []
    history.table.model().rowsInserted.connect(lambda _parent, first, last: inserted.append((first, last)))
    history.set_runs(new)
    assert history.filling() and history.table.rowCount() == run_history.FILL_ROWS and not signals
    qtbot.waitUntil(lambda: not history.filling(), timeout=5000)
    # The first rows in the call itself, the rest in parts on later turns of the event loop.
    assert inserted == [(0, 79), (80, 159), (160, 239), (240, 299)]
    assert signals == [300]  # listeners hear of it once it is whole
    assert _cells(history) == _cells(_fresh(qtbot, new, 0, Qt.SortOrder.DescendingOrder))
    assert history.selected_run_id() == old[3].id and history.count.text() == "300 runs"

    # The same list again while it is being written (a run's end refreshes twice): the fill goes on.
    history.set_runs(old)
    history.set_runs(new)
    signals.clear()
    written = history.table.item(0, 0)
    history.set_runs(list(new))
    assert history.filling() and history.table.item(0, 0) is written
    qtbot.waitUntil(lambda: not history.filling(), timeout=5000)
    assert signals == [300] and history.table.item(0, 0) is written

    # A newer list while one is being written: the rest of the first is never written.
    history.set_runs(old)
    history.set_runs(new[:200])
    qtbot.waitUntil(lambda: not history.filling(), timeout=5000)
    qtbot.wait(50)
    assert history.run_ids() == [r.id for r in new[:200]]
    assert _cells(history) == _cells(_fresh(qtbot, new[:200], 0, Qt.SortOrder.DescendingOrder))

    # A row the user picks while the rows come in stays picked.
    history.set_runs(old)
    history.select_run(old[1].id, emit=True)
    qtbot.waitUntil(lambda: not history.filling(), timeout=5000)
    assert history.selected_run_id() == old[1].id

    # A run picked (by the window, after a run's end) before its row has come is selected once it has.
    picked = []
    history.run_selected.connect(picked.append)
    late = _fresh(qtbot, new, 0, Qt.SortOrder.DescendingOrder).run_ids()[250]
    history.set_runs(new)
    assert late not in history.run_ids() and history.select_run(late)
    qtbot.waitUntil(lambda: not history.filling(), timeout=5000)
    assert history.selected_run_id() == late and picked == [late]


def _window(qtbot):
    """The main window on the test's store, shown, its task catalog loaded."""
    from app.main_window import MainWindow

    create_app()
    win = MainWindow()
    qtbot.addWidget(win)
    win.show()
    qtbot.waitUntil(lambda: len(win.tasks) > 0, timeout=15000)
    return win


def test_a_run_ending_over_a_long_history_shows_in_it_finished_and_selected(qtbot, isolated_home):
    """With more runs than one fill writes (a sweep's), the history is read on a thread and
    written in parts after the run's end; the run shows there finished, selected, and the run
    stays on show."""
    from engine import paths
    from widgets import run_history

    with RunStore(paths.default_db_path()) as store:
        for seed in range(run_history.FILL_ROWS + 20):
            add_run(store, seed=seed)
    win = _window(qtbot)
    qtbot.waitUntil(lambda: not win.history.filling(), timeout=15000)
    assert len(win.history.run_ids()) == run_history.FILL_ROWS + 20
    win.browser.select_task("llmsrbench/lsr-synth/material_science/MatSci1")
    qtbot.waitUntil(lambda: win.run_panel.start_button.isEnabled(), timeout=5000)
    seconds = win.run_panel.editors["seconds"]
    seconds.selectAll()
    qtbot.keyClicks(seconds, "1")
    qtbot.mouseClick(win.run_panel.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not win.controller.is_running(), timeout=60000)
    run_id = win.controller.run_id

    def shown() -> bool:
        ids = win.history.run_ids()
        return (not win.history.filling() and run_id in ids
                and win.history.table.item(ids.index(run_id), 3).text() == "finished")

    qtbot.waitUntil(shown, timeout=10000)
    assert win.history.selected_run_id() == run_id and win.displayed_run == run_id
    assert len(win.history.run_ids()) == run_history.FILL_ROWS + 21
    win.controller.shutdown()
    win.loader.wait_all()
    win.scorer.wait_all()


def test_a_history_closed_in_the_middle_of_a_fill_leaves_nothing_behind(qtbot):
    """The rest of a fill is tied to the widget: closing the window mid-fill raises nothing."""
    create_app()
    history = RunHistory()
    history.show()
    history.set_runs(_records(300))
    assert history.filling()
    history.deleteLater()
    qtbot.wait(100)  # pytest-qt fails the test on an exception in a Qt callback


def test_during_a_fill_the_selection_is_the_one_to_come_and_a_pick_survives_a_newer_list(qtbot):
    history = _shown(qtbot)
    records = _records(300)
    history.set_runs(records)
    qtbot.waitUntil(lambda: not history.filling(), timeout=5000)
    history.select_run(records[4].id, emit=False)
    history.set_runs(_records(300, start=1.8e9)[:150] + records[:150])  # a sweep's runs come in
    assert history.filling() and history.selected_run_ids() == [records[4].id]  # Compare, Re-run see it

    # A run picked (with a click's signal) before its row came, then a newer list: it still opens.
    opened = []
    history.run_selected.connect(opened.append)
    late = records[140].id
    assert history.select_run(late) and history.selected_run_ids() == [late]
    history.set_runs(_records(300, start=1.9e9)[:100] + records[:150])
    qtbot.waitUntil(lambda: not history.filling(), timeout=5000)
    assert history.selected_run_id() == late and opened == [late]


def test_runs_whose_error_is_not_a_number_sort_last_and_refresh_in_place(qtbot):
    create_app()
    records = _records(30)
    for rec in records[::4]:
        rec.metrics["id"]["nmse"] = float("nan")
    history = _fresh(qtbot, records, NMSE_ID, Qt.SortOrder.AscendingOrder)
    texts = [history.table.item(r, NMSE_ID).text() for r in range(30)]
    # Eight NaN and two missing errors, all after every number.
    assert set(texts[-10:]) == {"nan", "—"} and texts.count("nan") == 8 and not {"nan", "—"} & set(texts[:-10])
    first = history.table.item(0, 0)
    newer = _records(1, start=1.75e9)
    history.set_runs(newer + records)
    assert history.table.item(history.run_ids().index(records[1].id), 0) is not None
    assert any(history.table.item(r, 0) is first for r in range(31))  # written in place, not rebuilt


def test_a_run_selected_by_the_window_is_the_only_one_selected_even_with_ctrl_held(qtbot):
    """The window selects the run that just ended; the user may be holding Ctrl (here: the
    last click was a Ctrl-click, as when picking two runs to compare)."""
    from PySide6.QtTest import QTest

    history = _shown(qtbot)
    records = _records(10)
    history.set_runs(records)
    rect = history.table.visualRect(history.table.model().index(2, 0))
    QTest.mouseClick(history.table.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.ControlModifier,
                     rect.center())
    assert history.selected_run_ids() == [records[2].id]
    history.select_run(records[5].id, emit=False)
    assert history.selected_run_ids() == [records[5].id]


def test_a_long_history_is_read_on_a_thread_and_a_short_one_at_once(qtbot, isolated_home, monkeypatch):
    """A history of more runs than the window reads at once (a sweep's) is read on a thread with
    a connection of its own: the window's thread only counts the runs. A short one (the runs
    of one task, with "Only the selected task") is read at once. A read that fails says so and
    leaves the runs on show."""
    import threading

    from app.main_window import HISTORY_READ_ASIDE, MainWindow
    from engine import paths
    from engine.store import StoreError

    other = "llmsrbench/lsr-synth/material_science/MatSci2"
    with RunStore(paths.default_db_path()) as store:
        for seed in range(HISTORY_READ_ASIDE):
            add_run(store, seed=seed)
        few = [add_run(store, seed=seed, task_id=other) for seed in range(3)]
    on_gui_thread = []
    real_list_runs = RunStore.list_runs

    def list_runs(store, *args, **kwargs):
        on_gui_thread.append(threading.current_thread() is threading.main_thread())
        return real_list_runs(store, *args, **kwargs)

    monkeypatch.setattr(RunStore, "list_runs", list_runs)
    create_app()
    win = MainWindow()
    qtbot.addWidget(win)
    # The last session's run is opened and asked for in the history before its list has come
    # (as the session restores it): it is selected when the list comes.
    assert win.history.run_ids() == []
    last = few[1]
    win.open_run(last)
    assert not win.history.select_run(last, emit=False)
    win.show()
    qtbot.waitUntil(lambda: len(win.tasks) > 0 and len(win.history.run_ids()) == HISTORY_READ_ASIDE + 3
                    and not win.history.filling(), timeout=15000)
    assert on_gui_thread and not any(on_gui_thread)
    assert win.history.selected_run_ids() == [last] and win.displayed_run == last

    # Only the runs of a task with three: read at once, on the window's thread.
    assert win.browser.select_task(other)
    qtbot.mouseClick(win.history.only_task, Qt.MouseButton.LeftButton)
    assert sorted(win.history.run_ids()) == sorted(few) and on_gui_thread[-1]

    # Back to every run; the read fails: the message is shown and the three runs stay.
    def cannot_read(*_args, **_kwargs):
        raise StoreError("the disk holding the run store went away")

    monkeypatch.setattr(RunStore, "list_runs", cannot_read)
    qtbot.mouseClick(win.history.only_task, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "Could not read the run store" in win.status_label.text(), timeout=10000)
    assert "went away" in win.status_label.text() and sorted(win.history.run_ids()) == sorted(few)
    win.loader.wait_all()


def test_a_live_runs_fit_is_drawn_a_turn_later_unless_the_panels_moved_on(qtbot, isolated_home):
    """The fit that follows a run's result is drawn on a later turn of the event loop (its turn in
    the window's queue of steps); if a run is opened, started or replayed in between, that late
    fit is dropped."""
    import numpy as np

    from engine import paths
    from engine.fits import FitData, FitReady

    with RunStore(paths.default_db_path()) as store:
        run_id = add_run(store)
    win = _window(qtbot)
    win.open_run(run_id)
    # The stored run's own fit first: it is computed on the engine host, and arriving after the
    # fits below (as on a busy CI machine) it would replace them, being a fit of the same run.
    qtbot.waitUntil(lambda: win.fit.current is not None, timeout=15000)
    win.loader.wait_all()
    y = np.linspace(0, 1, 50)

    def ready(title: str) -> FitReady:
        return FitReady(run_id, "llmsrbench/lsr-synth/material_science/MatSci1", "x", None,
                        FitData("y", {"train": (y, y)}, title=title))

    late = ready("the late fit")
    win.controller.fit_ready.emit(late)
    assert win.fit.current is not late.fit  # not in the result's turn
    win.cancel_open_run()  # the demo replay takes the panels over
    qtbot.wait(100)
    assert win.fit.current is not late.fit
    on_time = ready("the fit")
    win.controller.fit_ready.emit(on_time)
    qtbot.waitUntil(lambda: win.fit.current is on_time.fit, timeout=5000)
    win.loader.wait_all()
    win.scorer.wait_all()
