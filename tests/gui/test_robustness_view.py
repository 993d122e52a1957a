"""The Robustness view driven as a user would: open it from the menu, choose, Start, Stop."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

pytest.importorskip("pytestqt")

from app.application import create_app  # noqa: E402
from app.main_window import MainWindow  # noqa: E402
from engine.store import RunStore  # noqa: E402

FEYNMAN = "feynman/I.6.2a"


@pytest.fixture
def window(qtbot, isolated_home):
    create_app()
    win = MainWindow()
    qtbot.addWidget(win)
    win.show()
    qtbot.waitUntil(lambda: len(win.tasks) > 0, timeout=15000)
    yield win
    view = getattr(win, "robustness_view", None)
    if view is not None:
        view.shutdown()
    win.controller.shutdown()
    win.loader.wait_all()


def _open_view(win, qtbot):
    win.robustness_action.trigger()
    view = win.robustness_view
    assert view.isVisible()
    assert view.task_list.count() >= 100  # the catalog's function tasks are offered
    view.select_tasks([FEYNMAN])
    view.set_axis("noise")
    view.set_levels(["0", "0.1"])
    view.seconds.setValue(2.0)
    return view


@pytest.mark.slow
def test_noise_sweep_fills_the_plot_and_the_table(window, qtbot):
    view = _open_view(window, qtbot)
    assert view.selected_task_ids() == [FEYNMAN]
    assert view.selected_levels() == ["0", "0.1"]
    qtbot.mouseClick(view.start_button, Qt.MouseButton.LeftButton)
    assert view.is_running() and not view.start_button.isEnabled()
    with qtbot.waitSignal(view.sweep_finished, timeout=90000) as blocker:
        pass
    qtbot.waitUntil(lambda: not view.is_running(), timeout=10000)
    result = blocker.args[0]
    assert not result.cancelled
    qtbot.wait(150)  # the plot redraws on its timer
    assert view.plot.point_count() == 2
    assert [lv for lv, _ in view.plot.points()] == ["0", "0.1"]
    xs, ys = view.plot.curve.getData()
    assert len(xs) == 2 and all(0 <= y <= 1 for y in ys)
    assert view.table.rowCount() == 2
    for row in range(2):
        assert view.table.item(row, 1).text() == "1"  # one run per level
        assert view.table.item(row, 3).text().endswith("%")
    assert "Finished" in view.status.text()
    assert view.start_button.isEnabled()
    # Both runs are in the store under their variant ids.
    with RunStore(window.db_path) as store:
        ids = {r.task_id for r in store.list_runs()}
    assert f"erbench/variants/noise/0/{FEYNMAN}" in ids and f"erbench/variants/noise/0.1/{FEYNMAN}" in ids


@pytest.mark.slow
def test_stop_ends_the_sweep_early(window, qtbot):
    view = _open_view(window, qtbot)
    view.seconds.setValue(30.0)
    qtbot.mouseClick(view.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "Run 1 of 2" in view.status.text(), timeout=30000)
    qtbot.wait(500)
    with qtbot.waitSignal(view.sweep_finished, timeout=20000) as blocker:
        qtbot.mouseClick(view.stop_button, Qt.MouseButton.LeftButton)
    assert blocker.args[0].cancelled
    qtbot.waitUntil(lambda: not view.is_running(), timeout=10000)
    assert view.plot.point_count() == 0  # the stopped run is not counted
    assert "Stopped" in view.status.text()
