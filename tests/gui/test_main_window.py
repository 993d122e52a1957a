"""The main window driven as a user would: browse, search, reveal, run, stop, reopen."""

from __future__ import annotations

import time

import pytest
from PySide6.QtCore import Qt

pytest.importorskip("pytestqt")

from app.application import create_app  # noqa: E402
from app.main_window import MainWindow  # noqa: E402

MATSCI1 = "llmsrbench/lsr-synth/material_science/MatSci1"
CKR1 = "llmsrbench/lsr-synth/chemistry/CKR1"


def _open(qtbot) -> MainWindow:
    """The window as the app opens it, once its task catalog has loaded."""
    create_app()
    win = MainWindow()
    qtbot.addWidget(win)
    win.show()
    qtbot.waitUntil(lambda: len(win.tasks) > 0, timeout=15000)
    return win


@pytest.fixture
def window(qtbot, isolated_home):
    win = _open(qtbot)
    yield win
    win.controller.shutdown()
    win.loader.wait_all()


def _wait_idle(qtbot, win, timeout=60000):
    qtbot.waitUntil(lambda: not win.controller.is_running(), timeout=timeout)
    qtbot.waitUntil(lambda: not win.loader.busy(), timeout=timeout)
    qtbot.wait(100)  # let queued signals arrive


def test_browser_lists_lsr_synth_by_domain_with_counts(window):
    assert len(window.browser.visible_task_ids()) >= 128
    assert "tasks" in window.browser.count_label.text()
    model = window.browser.model
    bench = model.item(0)
    assert bench.text().startswith("LLM-SRBench")
    suite = bench.child(0)
    assert suite.text().startswith("LSR-Synth")
    domains = sorted(suite.child(i).text().split("  (")[0] for i in range(suite.rowCount()))
    assert domains == ["biology", "chemistry", "material science", "physics"]


def test_search_filters_by_id_and_description(window, qtbot):
    qtbot.keyClicks(window.browser.search, "MatSci1")
    ids = window.browser.visible_task_ids()
    assert MATSCI1 in ids and all("MatSci1" in i for i in ids)
    assert "match" in window.browser.count_label.text()
    window.browser.search.clear()
    qtbot.keyClicks(window.browser.search, "oscillator")
    ids = window.browser.visible_task_ids()
    assert ids and all("/physics/" in i or i.startswith("symbolbench/") for i in ids)
    assert any("/physics/" in i for i in ids)
    window.browser.search.clear()
    assert len(window.browser.visible_task_ids()) >= 128


def test_selecting_a_task_shows_detail_preview_and_hidden_truth(window, qtbot):
    assert window.browser.select_task(CKR1)
    qtbot.waitUntil(lambda: window.detail.preview.point_count() > 0, timeout=30000)
    assert window.detail.title.text()
    assert window.detail.variables.rowCount() == 3
    names = {window.detail.variables.item(r, 0).text() for r in range(3)}
    assert names == {"dA_dt", "t", "A"}
    # The law is hidden until the user asks for it.
    assert not window.detail.truth.isVisible()
    qtbot.mouseClick(window.detail.reveal_button, Qt.MouseButton.LeftButton)
    assert window.detail.truth.isVisible()
    assert "A" in window.detail.truth.text()
    qtbot.mouseClick(window.detail.reveal_button, Qt.MouseButton.LeftButton)
    assert not window.detail.truth.isVisible()


@pytest.mark.slow
def test_a_run_that_finds_the_law_shows_symbolic_accuracy(qtbot, isolated_home):
    # F = mu * Nn (Feynman I.12.1): a few seconds of GP find it exactly.
    win = _open(qtbot)
    win.browser.select_task("feynman/I.12.1")
    qtbot.waitUntil(lambda: win.run_panel.start_button.isEnabled(), timeout=5000)
    seconds = win.run_panel.editors["seconds"]
    seconds.selectAll()
    qtbot.keyClicks(seconds, "3")
    qtbot.mouseClick(win.run_panel.start_button, Qt.MouseButton.LeftButton)
    _wait_idle(qtbot, win)
    qtbot.waitUntil(lambda: win.result.symbolic_verdict != "unchecked", timeout=30000)
    assert win.result.symbolic_verdict is True
    assert "ground-truth law" in win.result.symbolic.text()
    assert "Symbolic accuracy" in win.result.symbolic.toolTip()
    assert "recovered (up to shift or scale)" in win.result.structure.text()
    assert "Jaccard 1.00" in win.result.structure.text()
    # The run history carries SA next to the NMSE columns.
    headers = [win.history.table.horizontalHeaderItem(c).text() for c in range(win.history.table.columnCount())]
    qtbot.waitUntil(lambda: win.history.table.rowCount() == 1, timeout=5000)
    assert win.history.table.item(0, headers.index("SA")).text() == "✓"
    win.close()


@pytest.mark.slow
def test_run_finishes_and_reopens_after_restart(qtbot, isolated_home):
    win = _open(qtbot)
    win.browser.select_task(MATSCI1)
    qtbot.waitUntil(lambda: win.run_panel.start_button.isEnabled(), timeout=5000)

    # Type a short budget and a seed, as a user would.
    seconds = win.run_panel.editors["seconds"]
    seconds.selectAll()
    qtbot.keyClicks(seconds, "4")
    seed = win.run_panel.editors["seed"]
    seed.selectAll()
    qtbot.keyClicks(seed, "3")
    assert win.run_panel.config()["seconds"] == 4
    assert win.run_panel.config()["seed"] == 3

    qtbot.mouseClick(win.run_panel.start_button, Qt.MouseButton.LeftButton)
    assert win.controller.is_running()
    assert not win.run_panel.start_button.isEnabled() and win.run_panel.stop_button.isEnabled()
    _wait_idle(qtbot, win)
    qtbot.waitUntil(lambda: win.fit.plotted_point_count() > 0, timeout=30000)

    assert win.candidates.row_count() > 0
    assert win.loss.point_count() > 1
    assert win.result.value("id", "nmse") is not None
    assert win.result.value("ood", "nmse") is not None
    run_ids = win.history.run_ids()
    assert len(run_ids) == 1
    run_id = run_ids[0]
    assert win.run_panel.start_button.isEnabled()
    win.close()

    # A new window (the app reopened) finds the run and reopens it.
    win2 = _open(qtbot)
    assert win2.history.run_ids() == [run_id]
    win2.history.table.selectRow(0)
    qtbot.waitUntil(lambda: win2.fit.plotted_point_count() > 0, timeout=30000)
    assert win2.loss.point_count() > 1
    assert win2.candidates.row_count() > 0
    assert win2.result.value("id", "nmse") is not None
    assert win2.browser.current_task_id() == MATSCI1
    win2.close()


@pytest.mark.slow
def test_stop_ends_a_long_run_quickly_and_keeps_the_model(window, qtbot):
    window.browser.select_task(CKR1)
    window.run_panel.set_value("seconds", 120)
    qtbot.mouseClick(window.run_panel.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.loss.point_count() > 2, timeout=30000)
    # The window stays responsive while the run goes: the search box still filters.
    qtbot.keyClicks(window.browser.search, "BPG")
    assert all("BPG" in i for i in window.browser.visible_task_ids())
    started = time.monotonic()
    qtbot.mouseClick(window.run_panel.stop_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not window.controller.is_running(), timeout=30000)
    assert time.monotonic() - started < 20  # the run was set to 120 s
    _wait_idle(qtbot, window)
    record = window.store.get_run(window.history.run_ids()[0])
    assert record.status == "cancelled"
    assert record.expression
    assert "cancelled" in window.run_panel.progress.format()


@pytest.mark.slow
def test_double_clicking_a_candidate_shows_its_fit(window, qtbot):
    window.browser.select_task(MATSCI1)
    window.run_panel.set_value("seconds", 3)
    qtbot.mouseClick(window.run_panel.start_button, Qt.MouseButton.LeftButton)
    _wait_idle(qtbot, window)
    assert window.candidates.row_count() > 0
    view = window.candidates.view
    index = view.model().index(0, 2)
    rect = view.visualRect(index)
    # A real double-click is press, release, then a double-click event on the same row.
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.mouseDClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.waitUntil(lambda: window.fit.header.text().startswith("Candidate:"), timeout=20000)
    assert window.fit.plotted_point_count() > 0


def test_preview_plots_the_target_against_the_chosen_input(window, qtbot):
    window.browser.select_task(CKR1)
    preview = window.detail.preview
    qtbot.waitUntil(lambda: preview.point_count() > 0, timeout=30000)
    inputs = [preview.input_box.itemText(i) for i in range(preview.input_box.count())]
    assert sorted(inputs) == ["A", "t"]
    other = "t" if preview.input_box.currentText() == "A" else "A"
    shown = []
    preview.input_changed.connect(shown.append)
    preview.input_box.setFocus()
    qtbot.keyClick(preview.input_box, Qt.Key.Key_Down if inputs.index(other) > preview.input_box.currentIndex() else Qt.Key.Key_Up)
    assert shown == [other]
    assert preview.plot.getAxis("bottom").labelText == other
    assert preview.point_count() > 0


def test_unchecking_every_operator_refuses_to_start(window, qtbot):
    window.browser.select_task(MATSCI1)
    qtbot.waitUntil(lambda: window.run_panel.start_button.isEnabled(), timeout=5000)
    ops = window.run_panel.editors["operators"]
    for box in ops.boxes.values():
        if box.isChecked():
            qtbot.mouseClick(box, Qt.MouseButton.LeftButton)
    assert window.run_panel.config()["operators"] == []
    qtbot.mouseClick(window.run_panel.start_button, Qt.MouseButton.LeftButton)
    assert not window.controller.is_running()
    assert "at least one operator" in window.run_panel.status.text()
    assert window.history.run_ids() == []


def test_reveal_and_task_stepping_shortcuts(window, qtbot):
    window.activateWindow()
    window.browser.select_task(CKR1)
    qtbot.keyClick(window, Qt.Key.Key_G, Qt.KeyboardModifier.ControlModifier)
    assert window.detail.truth.isVisible()
    qtbot.keyClick(window, Qt.Key.Key_BracketRight, Qt.KeyboardModifier.ControlModifier)
    assert window.browser.current_task_id() not in (None, CKR1)
    qtbot.keyClick(window, Qt.Key.Key_BracketLeft, Qt.KeyboardModifier.ControlModifier)
    assert window.browser.current_task_id() == CKR1


@pytest.mark.slow
def test_chosen_operators_reach_the_run_and_history_filters_by_task(window, qtbot):
    window.browser.select_task(MATSCI1)
    qtbot.waitUntil(lambda: window.run_panel.start_button.isEnabled(), timeout=5000)
    ops = window.run_panel.editors["operators"]
    keep = {"add", "sub", "mul", "div"}
    for name, box in ops.boxes.items():
        if box.isChecked() != (name in keep):
            qtbot.mouseClick(box, Qt.MouseButton.LeftButton)
    window.run_panel.set_value("seconds", 2)
    # Start from the keyboard (Run ▸ Start, Ctrl+R).
    window.activateWindow()
    qtbot.keyClick(window, Qt.Key.Key_R, Qt.KeyboardModifier.ControlModifier)
    assert window.controller.is_running()
    _wait_idle(qtbot, window)
    record = window.store.get_run(window.history.run_ids()[0])
    assert sorted(record.config["operators"]) == sorted(keep)
    assert record.expression and not any(f in record.expression for f in ("sin", "cos", "exp", "log", "sqrt"))

    # Enter on a candidate row opens its fit, like a double-click.
    view = window.candidates.view
    view.setFocus()
    view.setCurrentIndex(view.model().index(0, 2))
    qtbot.keyClick(view, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: window.fit.header.text().startswith("Candidate:"), timeout=20000)

    # History: "only the selected task" hides runs of other tasks.
    window.browser.select_task(CKR1)
    qtbot.mouseClick(window.history.only_task, Qt.MouseButton.LeftButton)
    assert window.history.run_ids() == []
    qtbot.mouseClick(window.history.only_task, Qt.MouseButton.LeftButton)
    assert len(window.history.run_ids()) == 1


def test_first_screen_explains_what_to_do_and_the_last_task_comes_back(qtbot, isolated_home):
    win = _open(qtbot)
    assert "Welcome" in win.detail.context.toPlainText()
    assert not win.detail.variables.isVisible() and not win.detail.preview.isVisible()
    assert not win.run_panel.start_button.isEnabled()
    win.browser.select_task(CKR1)
    assert win.detail.variables.isVisible() and win.detail.preview.isVisible()
    assert "Welcome" not in win.detail.context.toPlainText()
    win.close()
    win.loader.wait_all()

    again = _open(qtbot)
    qtbot.waitUntil(lambda: again.current_task is not None, timeout=15000)
    assert again.browser.current_task_id() == CKR1
    assert again.run_panel.start_button.isEnabled()
    again.close()
    again.loader.wait_all()


def test_the_task_tab_is_in_front_in_a_window_without_a_saved_layout(qtbot, isolated_home):
    """The self-test and the screenshot script open windows that restore nothing."""
    create_app()
    win = MainWindow(restore_layout=False)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitUntil(lambda: len(win.tasks) > 0, timeout=15000)
    from PySide6.QtWidgets import QTabBar

    bars = [b for b in win.findChildren(QTabBar) if b.parent() is win and b.isVisible()]
    assert [b.tabText(b.currentIndex()) for b in bars] == ["Task"]  # not the Project tab added last
    win.close()
    win.loader.wait_all()
