"""SymbolBench in the window: the run panel offers the methods of each task kind, and a run on a
system of ODEs, a Boolean network and a causal graph fills the Time series panel with the
trajectories (and phase portrait), the state map and the coloured graph."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

pytest.importorskip("pytestqt")

from app.application import create_app  # noqa: E402
from app.main_window import MainWindow  # noqa: E402

ODE = "symbolbench/cde/odebench-27"  # two-dimensional: a phase portrait too
BN = "symbolbench/bn/faure_cellcycle"
SCM = "symbolbench/scm/odebench-27"


@pytest.fixture
def window(qtbot, isolated_home):
    create_app()
    win = MainWindow()
    qtbot.addWidget(win)
    win.show()
    qtbot.waitUntil(lambda: len(win.tasks) > 0, timeout=15000)
    yield win
    win.controller.shutdown()
    win.loader.wait_all()


def _offered(window) -> list[str]:
    box = window.run_panel.method_box
    return [box.itemData(i) for i in range(box.count())]


def _run(window, qtbot, task_id: str, method: str) -> None:
    assert window.browser.select_task(task_id)
    assert window.run_panel.select_method(method)
    qtbot.waitUntil(lambda: window.run_panel.start_button.isEnabled(), timeout=5000)
    qtbot.mouseClick(window.run_panel.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not window.controller.is_running(), timeout=90000)
    qtbot.waitUntil(lambda: not window.loader.busy(), timeout=60000)
    qtbot.wait(100)


def test_the_run_panel_offers_the_methods_of_each_kind(window):
    assert window.browser.select_task(ODE)
    offered = _offered(window)
    assert {"sindy", "gp", "symbolbench"} <= set(offered) and "bn-search" not in offered and "pcmci" not in offered
    assert window.browser.select_task(BN)
    assert _offered(window) == ["bn-search", "symbolbench"]
    assert window.browser.select_task(SCM)
    assert _offered(window) == ["pcmci", "symbolbench"]
    assert window.browser.select_task("feynman/I.6.2a")
    assert "sindy" not in _offered(window) and "gp" in _offered(window)


def test_sindy_on_an_ode_system_draws_trajectories_and_a_phase_portrait(window, qtbot):
    _run(window, qtbot, ODE, "sindy")
    view = window.trajectory_view
    qtbot.waitUntil(lambda: view.curve_count() > 0, timeout=30000)
    assert window.series_stack.currentWidget() is view
    assert set(view.plots) == {("x_0", "train"), ("x_1", "train"), ("x_0", "test_ood"), ("x_1", "test_ood")}
    assert view.phase is not None
    assert "R²" in view.plots[("x_0", "train")].titleLabel.text
    table = window.result.table
    assert table.horizontalHeaderItem(0).text() == "Trajectory R²" and table.item(2, 0).text() not in ("", "—")
    window.trajectory_view.grab().save("/tmp/symbolbench_trajectories.png")


def test_bn_search_fills_the_state_map_with_its_mismatches(window, qtbot):
    _run(window, qtbot, BN, "bn-search")
    view = window.bn_view
    assert window.series_stack.currentWidget() is view
    qtbot.waitUntil(lambda: view.mismatch_count()[1] > 0, timeout=30000)
    wrong, compared = view.mismatch_count()
    assert 0 <= wrong < compared  # bn-search fits the training transitions almost exactly
    window.bn_view.grab().save("/tmp/symbolbench_state_map.png")


def test_pcmci_colours_the_graph(window, qtbot):
    _run(window, qtbot, SCM, "pcmci")
    view = window.graph_view
    assert window.series_stack.currentWidget() is view
    qtbot.waitUntil(lambda: "TP" in view.counts_text(), timeout=30000)
    assert view.edge_count("tp") == 4 and view.edge_count("fp") == 0 and view.edge_count("missed") == 0
    table = window.result.table
    assert [table.horizontalHeaderItem(c).text() for c in range(table.columnCount())] == \
        ["Precision", "Recall", "F1", "SHD"]
    assert table.item(1, 2).text() == "1" and table.item(1, 3).text() == "0"
    window.graph_view.grab().save("/tmp/symbolbench_graph.png")


def test_an_ode_task_offers_symbolbench_noise_levels(window, qtbot):
    assert window.browser.select_task(ODE)
    detail = window.detail
    qtbot.waitUntil(lambda: window.trajectory_view.plots != {}, timeout=30000)
    assert [detail.noise_box.itemText(i) for i in range(detail.noise_box.count())] == \
        ["none", "1 %", "5 %", "10 %", "20 %", "40 %"]
    detail.noise_box.setCurrentIndex(detail.noise_box.findText("20 %"))
    assert window.current_task.id == ODE + "/noise-20"
    assert window.browser.select_task("symbolbench/cde/lsr-PO1")
    assert detail.noise_row.isVisibleTo(detail) and detail.noise_box.count() == 6
    assert window.browser.select_task("surfacebench/explicit/TFS/TFS8")
    assert detail.noise_box.count() == 4


def test_a_causal_graph_shows_its_edges_only_once_revealed(window, qtbot):
    assert window.browser.select_task(SCM)
    qtbot.waitUntil(lambda: window.series_stack.currentWidget() is window.graph_view, timeout=30000)
    assert window.graph_view.edge_count() == 0
    qtbot.mouseClick(window.detail.reveal_button, Qt.MouseButton.LeftButton)
    assert window.graph_view.edge_count() == 4  # x_0 → x_1, x_1 → x_0 and the two self-loops


def test_typed_values_survive_a_change_of_task_and_methods_follow_the_task_after_a_run(window, qtbot):
    assert window.browser.select_task("feynman/I.6.2a")
    assert window.run_panel.select_method("gp")
    window.run_panel.set_value("seconds", 7)
    assert window.browser.select_task(ODE)
    assert window.run_panel.current_method().name == "gp" and window.run_panel.config()["seconds"] == 7


def test_a_data_preview_arriving_after_the_models_fit_keeps_the_trajectories(window, qtbot):
    """The preview is built in an engine process; a fast run's fit can reach the window first
    (a host still warming up). The late preview must not replace the model's trajectories."""
    _run(window, qtbot, ODE, "sindy")
    view = window.trajectory_view
    qtbot.waitUntil(lambda: view.curve_count() > 0, timeout=30000)
    curves = view.curve_count()
    task = window.current_task
    window.loader.ready.emit("preview", (task.id, task.load_data()))  # as a late answer arrives
    qtbot.wait(100)
    assert view.curve_count() == curves
    # The data preview itself has the data; behind the model's tab, it draws them when its own
    # tab comes forward.
    window.docks["detail"].raise_()
    qtbot.waitUntil(lambda: window.detail.preview.point_count() > 0, timeout=5000)
    assert view.curve_count() == curves
