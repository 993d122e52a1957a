"""Comparing two stored runs: pick two in the history, press Compare, read the dialog."""

from __future__ import annotations

import math

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMenu

pytest.importorskip("pytestqt")

from app.application import create_app  # noqa: E402
from app.main_window import MainWindow  # noqa: E402
from engine import paths  # noqa: E402
from engine.store import RunStore  # noqa: E402
from stored_runs import FRONT, LINEAR, TRUTH, add_run  # noqa: E402

SHORT_FRONT = FRONT[:3]


@pytest.fixture
def two_runs(qtbot, isolated_home):
    with RunStore(paths.default_db_path()) as store:
        good = add_run(store, seed=1, metrics={
            "train": {"nmse": 0.04, "acc_0.1": 1.0}, "id": {"nmse": 0.001, "acc_0.1": 1.0},
            "ood": {"nmse": 0.01, "acc_0.1": 0.0}})
        worse = add_run(store, front=SHORT_FRONT, chosen=LINEAR, seed=2, losses=(0.9, 0.5, 0.2), metrics={
            "train": {"nmse": 0.05, "acc_0.1": 0.0}, "id": {"nmse": 0.2, "acc_0.1": 0.0},
            "ood": {"nmse": math.inf, "acc_0.1": 0.0}})
    create_app()
    win = MainWindow()
    qtbot.addWidget(win)
    win.show()
    qtbot.waitUntil(lambda: len(win.tasks) > 0, timeout=15000)
    yield win, good, worse
    for scorer in (win.scorer, *win._compare_scorers):
        scorer.cancel()
    qtbot.waitUntil(lambda: not win.loader.busy() and not any(
        s.busy() for s in (win.scorer, *win._compare_scorers)), timeout=30000)


def _row_center(table, run_id):
    row = next(r for r in range(table.rowCount()) if table.item(r, 0).data(Qt.ItemDataRole.UserRole + 1) == run_id)
    return table.visualItemRect(table.item(row, 2)).center()


def test_select_two_runs_and_compare_them(two_runs, qtbot):
    win, good, worse = two_runs
    history = win.history
    assert not history.compare_button.isEnabled()
    table = history.table
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=_row_center(table, good))
    assert not history.compare_button.isEnabled()
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.ControlModifier,
                     pos=_row_center(table, worse))
    assert sorted(history.selected_run_ids()) == sorted([good, worse])
    assert history.compare_button.isEnabled()
    qtbot.mouseClick(history.compare_button, Qt.MouseButton.LeftButton)

    dialog = win.compare_dialog
    assert dialog is not None and dialog.isVisible()
    assert sorted(dialog.run_ids()) == sorted([good, worse])
    # Two curves, one per run, with every progress point; the legend names both runs.
    counts = sorted(len(curve.getData()[0]) for curve in dialog.curves)
    assert counts == [3, 5]
    labels = [label.text for _, label in dialog.legend.items]
    assert len(labels) == 2 and any(good in t for t in labels) and any(worse in t for t in labels)
    # Both candidate tables, each with its run's final front.
    sizes = {side.run.record.id: side.table.row_count() for side in dialog.sides}
    assert sizes == {good: len(FRONT), worse: len(SHORT_FRONT)}
    # The better value of each metric is highlighted in the good run's column.
    good_col = [s.run.record.id for s in dialog.sides].index(good)
    marked = dialog.highlighted()
    for metric in ("Train NMSE", "ID NMSE", "OOD NMSE", "Acc₀.₁ ID"):
        assert marked[metric] == good_col, metric
    assert "Acc₀.₁ OOD" not in marked  # a tie: nothing highlighted
    assert "Complexity" not in marked  # a trade-off, not a score
    sa_row = [dialog.metrics.verticalHeaderItem(r).text() for r in range(dialog.metrics.rowCount())].index("SA")
    assert dialog.metrics.isRowHidden(sa_row)  # neither run recorded SA
    # The candidates' test metrics fill in there too.
    good_table = dialog.sides[good_col].table
    view = good_table.view
    truth_row = next(r for r in range(view.model().rowCount()) if view.model().index(r, 6).data() == TRUTH)
    qtbot.waitUntil(lambda: view.model().index(truth_row, 3).data() not in ("", "…"), timeout=30000)

    # Switching the x axis to seconds redraws both curves against elapsed time.
    dialog.x_axis.setCurrentIndex(1)
    assert max(max(curve.getData()[0]) for curve in dialog.curves) == pytest.approx(2.0)


def test_compare_from_the_menu_and_the_history_context_menu(two_runs, qtbot, monkeypatch):
    win, good, worse = two_runs
    run_menu = next(a.menu() for a in win.menuBar().actions() if a.text() == "&Run")
    next(a for a in run_menu.actions() if a.text() == "&Compare runs…").trigger()
    dialog = win.compare_dialog
    assert dialog.isVisible() and sorted(dialog.run_ids()) == sorted([good, worse])
    # The user picks the same run on both sides from the combo box.
    dialog.sides[1].combo.setCurrentIndex(dialog.sides[0].combo.currentIndex())
    assert dialog.run_ids()[0] == dialog.run_ids()[1]
    assert dialog.highlighted() == {}
    dialog.close()

    opened = []
    monkeypatch.setattr(QMenu, "popup", lambda self, *a: opened.append(self))
    win.history.select_runs([good, worse])
    win.history.table.customContextMenuRequested.emit(_row_center(win.history.table, good))
    action = next(a for a in opened[-1].actions() if a.text().startswith("Compare"))
    assert action.isEnabled()
    action.trigger()
    assert win.compare_dialog is not dialog and win.compare_dialog.isVisible()


def test_symbolic_accuracy_as_runs_store_it_is_compared(qtbot, isolated_home):
    """A run records SA as metrics["symbolic"]["equivalent"]: the dialog shows it and marks the better."""
    base = {"train": {"nmse": 0.04}, "id": {"nmse": 0.05}, "ood": {"nmse": 0.1}}
    with RunStore(paths.default_db_path()) as store:
        found = add_run(store, seed=1, metrics={**base, "symbolic": {"equivalent": True, "reason": "same law"}})
        missed = add_run(store, seed=2, metrics={**base, "symbolic": {"equivalent": False, "reason": "other"}})
    create_app()
    win = MainWindow()
    qtbot.addWidget(win)
    win.show()
    qtbot.waitUntil(lambda: len(win.tasks) > 0, timeout=15000)
    dialog = win.compare_runs(found, missed)
    labels = [dialog.metrics.verticalHeaderItem(r).text() for r in range(dialog.metrics.rowCount())]
    sa_row = labels.index("SA")
    assert not dialog.metrics.isRowHidden(sa_row)
    cells = [dialog.metrics.item(sa_row, c).text() for c in range(2)]
    assert cells[0] != cells[1] and all(cells)
    assert "SA" in dialog.highlighted() and dialog.highlighted()["SA"] == 0
    dialog.close()
    for scorer in (win.scorer, *win._compare_scorers):
        scorer.cancel()
    qtbot.waitUntil(lambda: not win.loader.busy() and not any(
        s.busy() for s in (win.scorer, *win._compare_scorers)), timeout=30000)
