"""The Pareto plot and the candidate table, linked both ways, driven with the mouse."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QEvent, QPointF, Qt
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import QApplication

pytest.importorskip("pytestqt")

from app.application import create_app  # noqa: E402
from app.main_window import MainWindow  # noqa: E402
from engine import paths  # noqa: E402
from engine.store import RunStore  # noqa: E402
from stored_runs import FRONT, LINEAR, MATSCI1, TRUTH, add_run  # noqa: E402


def _open(qtbot) -> MainWindow:
    create_app()
    win = MainWindow()
    qtbot.addWidget(win)
    win.show()
    qtbot.waitUntil(lambda: len(win.tasks) > 0, timeout=15000)
    return win


@pytest.fixture
def shown_run(qtbot, isolated_home):
    """A window showing a stored MatSci1 run picked from the history."""
    with RunStore(paths.default_db_path()) as store:
        run_id = add_run(store)
    win = _open(qtbot)
    assert win.history.run_ids() == [run_id]
    win.history.table.selectRow(0)
    qtbot.waitUntil(lambda: win.candidates.row_count() == len(FRONT), timeout=10000)
    yield win
    win.scorer.cancel()
    qtbot.waitUntil(lambda: not win.loader.busy() and not win.scorer.busy(), timeout=30000)


def _row_of(win, expression):
    return [r["expression"] for r in win.candidates.rows()].index(expression)


def _marker_pos(item):
    return [tuple(p) for p in np.asarray(item.getData()).T] if item.getData()[0] is not None else []


def test_points_markers_and_the_recommended_star(shown_run):
    win = shown_run
    plot = win.pareto
    assert len(plot.points.data) == len(FRONT)
    rec = _row_of(win, LINEAR)
    assert win.candidates.recommended_row() == rec
    assert plot.recommended == rec
    x, y = plot.recommended_item.getData()
    assert list(x) == [9] and y[0] == pytest.approx(np.log10(0.05))
    # The star is in the legend, and the table marks the same row.
    assert "recommended" in [label.text for _, label in plot.legend.items]
    view = win.candidates.view
    marks = {view.model().index(r, 0).data() for r in range(len(FRONT))}
    assert "★" in marks
    star_row = next(r for r in range(len(FRONT)) if "★" in view.model().index(r, 0).data())
    assert view.model().index(star_row, 6).data() == LINEAR
    # The run's final model is ringed.
    x, _ = plot.chosen_item.getData()
    assert list(x) == [25]


def test_clicking_a_point_selects_its_row(shown_run, qtbot):
    win = shown_run
    qtbot.wait(50)
    target = _row_of(win, "192.8*epsilon")
    pos = win.pareto.point_widget_pos(target)
    qtbot.mouseClick(win.pareto.plot_widget.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    assert win.candidates.selected_expression() == "192.8*epsilon"
    assert win.pareto.selected == target
    # Clicking empty space far from every point changes nothing.
    corner = win.pareto.plot_widget.viewport().rect().topLeft() + pos.__class__(60, 30)
    qtbot.mouseClick(win.pareto.plot_widget.viewport(), Qt.MouseButton.LeftButton, pos=corner)
    assert win.candidates.selected_expression() == "192.8*epsilon"


def test_selecting_a_row_highlights_its_point(shown_run, qtbot):
    win = shown_run
    view = win.candidates.view
    row = next(r for r in range(view.model().rowCount()) if view.model().index(r, 6).data() == TRUTH)
    rect = view.visualRect(view.model().index(row, 1))
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    expected = _row_of(win, TRUTH)
    assert win.pareto.selected == expected
    x, y = win.pareto.selected_item.getData()
    assert list(x) == [25] and y[0] == pytest.approx(np.log10(0.04))
    # Sorting the table by a column keeps the link right.
    view.sortByColumn(2, Qt.SortOrder.DescendingOrder)
    row = next(r for r in range(view.model().rowCount()) if view.model().index(r, 6).data() == "epsilon")
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=view.visualRect(view.model().index(row, 1)).center())
    x, _ = win.pareto.selected_item.getData()
    assert list(x) == [1]


def test_hovering_a_point_shows_its_expression(shown_run, qtbot):
    win = shown_run
    qtbot.wait(50)
    pos = win.pareto.point_widget_pos(_row_of(win, LINEAR))
    viewport = win.pareto.plot_widget.viewport()
    # A plain move with no button held (QTest's mouseMove does not reach the scene offscreen).
    move = QMouseEvent(QEvent.Type.MouseMove, QPointF(pos), QPointF(viewport.mapToGlobal(pos)),
                       Qt.MouseButton.NoButton, Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(viewport, move)
    qtbot.waitUntil(lambda: LINEAR in win.pareto.hover_text, timeout=3000)
    assert "recommended" in win.pareto.hover_text


def test_test_metrics_and_symbolic_accuracy_fill_in(shown_run, qtbot):
    win = shown_run
    view = win.candidates.view
    truth_row = next(r for r in range(view.model().rowCount()) if view.model().index(r, 6).data() == TRUTH)
    qtbot.waitUntil(lambda: view.model().index(truth_row, 5).data() == "✓", timeout=60000)
    assert float(view.model().index(truth_row, 3).data()) < 1e-10  # ID NMSE of the truth
    lin_row = next(r for r in range(view.model().rowCount()) if view.model().index(r, 6).data() == LINEAR)
    qtbot.waitUntil(lambda: view.model().index(lin_row, 5).data() in ("✗", "?"), timeout=60000)
    assert float(view.model().index(lin_row, 3).data()) > 0


@pytest.mark.slow
def test_after_a_real_run_the_plot_matches_the_table(qtbot, isolated_home):
    from engine import pareto

    win = _open(qtbot)
    win.browser.select_task(MATSCI1)
    qtbot.waitUntil(lambda: win.run_panel.start_button.isEnabled(), timeout=5000)
    win.run_panel.set_value("seconds", 2)
    qtbot.mouseClick(win.run_panel.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not win.controller.is_running(), timeout=60000)
    # The front is scored after the run's thread has ended: wait until every SA cell is filled
    # (what the user waits for), not just until nothing is busy (the scorer may not have
    # started yet).
    qtbot.waitUntil(lambda: win.candidates.rows() and all(
        win.candidates.model.index(i, 5).data() in ("✓", "✗", "?")
        for i in range(len(win.candidates.rows()))), timeout=120000)
    qtbot.waitUntil(lambda: not win.scorer.busy() and not win.loader.busy(), timeout=120000)
    rows = win.candidates.rows()
    assert rows
    assert win.pareto.isVisible() and not win.pareto.visibleRegion().isEmpty()  # shown when the run ends
    finite = [r for r in rows if r["loss"] is not None]
    assert len(win.pareto.points.data) + len(win.pareto.others.data) == len(finite)
    rec = pareto.recommended_index(rows)
    assert win.pareto.recommended == rec == win.candidates.recommended_row()
    assert win.pareto.chosen == win.candidates.chosen_row()
    # The final model is ringed: on the front, or where its (simplified) form lies.
    record = win.store.get_run(win.displayed_run)
    x, _ = win.pareto.chosen_item.getData()
    assert list(x) == [record.complexity]
    # Every candidate has its test metrics and an SA verdict.
    model = win.candidates.model
    assert all(model.scores.get(r["expression"]) is not None for r in rows)
    assert all(model.index(i, 5).data() in ("✓", "✗", "?") for i in range(len(rows)))
    # Clicking the star selects the recommended row.
    qtbot.wait(50)
    qtbot.mouseClick(win.pareto.plot_widget.viewport(), Qt.MouseButton.LeftButton,
                     pos=win.pareto.point_widget_pos(rec))
    assert win.candidates.selected_row() == rec
    win.grab().save("/tmp/pareto.png")
    win.close()
