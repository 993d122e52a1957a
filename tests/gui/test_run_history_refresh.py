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
    history.table.sortByColumn(sort_col, order)
    history.set_runs(records)
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
        history.table.sortByColumn(sort_col, order)
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
