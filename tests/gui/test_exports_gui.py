"""Copying and saving equations, and File ▸ Export run…, driven as a user would."""

from __future__ import annotations

import csv
import json
import re

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication, QFileDialog, QMenu

pytest.importorskip("pytestqt")

from app.application import create_app  # noqa: E402
from app.main_window import MainWindow  # noqa: E402
from engine import paths  # noqa: E402
from engine.expr import export as expr_export  # noqa: E402
from engine.store import RunStore  # noqa: E402
from stored_runs import FRONT, LINEAR, TRUTH, add_run  # noqa: E402


@pytest.fixture
def shown_run(qtbot, isolated_home):
    with RunStore(paths.default_db_path()) as store:
        run_id = add_run(store)
    create_app()
    win = MainWindow()
    qtbot.addWidget(win)
    win.show()
    qtbot.waitUntil(lambda: len(win.tasks) > 0, timeout=15000)
    win.history.table.selectRow(0)
    qtbot.waitUntil(lambda: win.candidates.row_count() == len(FRONT), timeout=10000)
    win.run_id = run_id
    yield win
    win.scorer.cancel()
    qtbot.waitUntil(lambda: not win.loader.busy() and not win.scorer.busy() and not win.exporter.busy(), timeout=30000)


def _click_row(qtbot, table, expression, button=Qt.MouseButton.LeftButton):
    view = table.view
    row = next(r for r in range(view.model().rowCount()) if view.model().index(r, 6).data() == expression)
    pos = view.visualRect(view.model().index(row, 6)).center()
    qtbot.mouseClick(view.viewport(), button, pos=pos)
    return pos


def test_copy_as_latex_puts_the_equation_on_the_clipboard(shown_run, qtbot):
    win = shown_run
    table = win.candidates
    assert not table.copy_button.isEnabled()  # nothing selected yet
    _click_row(qtbot, table, LINEAR)
    assert table.copy_button.isEnabled()
    QGuiApplication.clipboard().clear()
    table.copy_button.menu().actions()[0].trigger()  # "Copy as LaTeX"
    text = QGuiApplication.clipboard().text()
    assert text == expr_export.to_latex(LINEAR, ["epsilon", "T"], target="sigma")
    assert text.startswith(r"\sigma = ") and r"\epsilon" in text and "192.8" in text


def test_context_menu_copies_a_c_function(shown_run, qtbot, monkeypatch):
    win = shown_run
    opened = []
    monkeypatch.setattr(QMenu, "popup", lambda self, *a: opened.append(self))
    view = win.candidates.view
    pos = _click_row(qtbot, win.candidates, TRUTH)
    view.customContextMenuRequested.emit(pos)  # what a right-click sends
    assert opened
    action = next(a for a in opened[-1].actions() if a.text() == "Copy as C function")
    action.trigger()
    text = QGuiApplication.clipboard().text()
    assert "double f(double epsilon, double T)" in text and re.search(r"pow\(epsilon, 0\.496", text)


def test_export_equation_saves_a_python_function(shown_run, qtbot, tmp_path, monkeypatch):
    win = shown_run
    target = tmp_path / "law.py"
    monkeypatch.setattr(QFileDialog, "getSaveFileName",
                        staticmethod(lambda *a, **k: (str(target), "Python function (*.py)")))
    _click_row(qtbot, win.candidates, LINEAR)
    qtbot.mouseClick(win.candidates.export_button, Qt.MouseButton.LeftButton)
    source = target.read_text()
    assert "def f(epsilon, T):" in source
    namespace: dict = {}
    exec(compile(source, str(target), "exec"), namespace)
    assert namespace["f"](1.0, 297.2) == pytest.approx(192.8)


def test_export_run_writes_a_csv_that_parses(shown_run, qtbot, tmp_path, monkeypatch):
    win = shown_run
    view = win.candidates.view
    truth_row = next(r for r in range(view.model().rowCount()) if view.model().index(r, 6).data() == TRUTH)
    qtbot.waitUntil(lambda: view.model().index(truth_row, 5).data() == "✓", timeout=60000)
    target = tmp_path / "front"  # the filter adds the suffix
    monkeypatch.setattr(QFileDialog, "getSaveFileName",
                        staticmethod(lambda *a, **k: (str(target), "CSV: the final Pareto front (*.csv)")))
    file_menu = next(a.menu() for a in win.menuBar().actions() if a.text() == "&File")
    action = next(a for a in file_menu.actions() if a.text() == "&Export run…")
    action.trigger()
    written = tmp_path / "front.csv"
    qtbot.waitUntil(written.exists, timeout=10000)
    with written.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["expression"] for r in rows] == [c["expression"] for c in FRONT]
    assert all(r["run_id"] == win.run_id and r["task_id"].endswith("MatSci1") for r in rows)
    by_expr = {r["expression"]: r for r in rows}
    assert by_expr[TRUTH]["is_final"] == "1" and by_expr[LINEAR]["is_recommended"] == "1"
    assert by_expr[TRUTH]["sa"] == "1" and float(by_expr[TRUTH]["id_nmse"]) < 1e-10
    assert float(by_expr["epsilon"]["train_loss"]) == 0.9
    qtbot.waitUntil(lambda: "Exported" in win.status_label.text(), timeout=5000)


def test_export_run_as_json(shown_run, qtbot, tmp_path, monkeypatch):
    win = shown_run
    target = tmp_path / "run.json"
    monkeypatch.setattr(QFileDialog, "getSaveFileName",
                        staticmethod(lambda *a, **k: (str(target), "JSON: everything about the run (*.json)")))
    win.activateWindow()
    qtbot.keyClick(win, Qt.Key.Key_E, Qt.KeyboardModifier.ControlModifier)  # File ▸ Export run…
    qtbot.waitUntil(target.exists, timeout=10000)
    doc = json.loads(target.read_text())
    assert doc["run"]["run_id"] == win.run_id
    assert len(doc["events"]) == 5 and len(doc["final_front"]) == len(FRONT)
    assert doc["recommended"] == LINEAR
    QApplication.processEvents()
