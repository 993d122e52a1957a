"""The status bar says what the window is busy with, and every metric header explains itself."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTableView, QTableWidget

pytest.importorskip("pytestqt")

from app.application import create_app  # noqa: E402
from app.main_window import MainWindow  # noqa: E402
from engine.metrics.glossary import metric_key  # noqa: E402
from widgets.activity import ActivityBar  # noqa: E402

CKR2 = "llmsrbench/lsr-synth/chemistry/CKR2"


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
    win.scorer.wait_all()


def test_the_activity_bar_shows_the_newest_activity_and_hides_when_idle(qtbot):
    bar = ActivityBar()
    qtbot.addWidget(bar)
    bar.begin("a", "Loading the task catalog…")
    assert not bar.isHidden() and bar.bar.maximum() == 0  # busy indicator: length unknown
    bar.begin("b", "Scoring the candidates…", 4)
    assert bar.label.text().startswith("Scoring the candidates…") and "+1 more" in bar.label.text()
    bar.update("b", 3)
    assert (bar.bar.value(), bar.bar.maximum(), bar.bar.text()) == (3, 4, "3 / 4")
    assert "Loading the task catalog" in bar.toolTip() and "Scoring" in bar.toolTip()
    bar.end("b")
    assert bar.label.text() == "Loading the task catalog…"
    bar.end("a")
    bar.end("never begun")  # harmless
    assert bar.isHidden() and bar.active() == []


@pytest.mark.slow
def test_a_run_and_its_scoring_show_progress_in_the_status_bar(qtbot, window):
    window.browser.select_task(CKR2)
    qtbot.waitUntil(lambda: window.detail.preview.point_count() > 0, timeout=30000)
    qtbot.waitUntil(lambda: "load:preview" not in window.activity.active(), timeout=10000)
    window.run_panel.select_method("gp")
    window.run_panel.set_value("seconds", 2)
    seen: list[tuple] = []
    window.activity.changed.connect(lambda: seen.append((tuple(window.activity.active()),
                                                         window.activity.bar.value(), window.activity.bar.maximum(),
                                                         window.activity.label.text())))
    formats: list[tuple] = []  # what the bar says ("3 / 4") as it changes
    window.activity.changed.connect(lambda: formats.append((tuple(window.activity.active()),
                                                            window.activity.bar.format())))
    qtbot.mouseClick(window.run_panel.start_button, Qt.MouseButton.LeftButton)
    assert "run" in window.activity.active() and window.activity.isVisible()
    assert window.activity.text_of("run").startswith("Running gp on")
    qtbot.waitUntil(lambda: window.run_panel.start_button.isEnabled(), timeout=60000)
    qtbot.waitUntil(lambda: not window.scorer.busy() and not window.loader.busy(), timeout=60000)
    qtbot.waitUntil(lambda: window.activity.active() == [], timeout=10000)
    assert window.activity.isHidden()
    run_values = [value for active, value, top, _ in seen if active and active[-1] == "run" and top == 1000]
    assert run_values and max(run_values) > 0  # the run's bar moved
    assert any(text.startswith("Computing the final model's fit") for *_, text in seen)
    assert any(active and active[-1] == "score" for active, *_ in seen)  # then the candidates were scored
    # Each candidate counts once, though it is reported twice (metrics, then its symbolic check).
    shown = [fmt for active, fmt in formats if active and active[-1] == "score" and "/" in fmt]
    assert shown and all(int(fmt.split("/")[0]) <= int(fmt.split("/")[1]) for fmt in shown), shown
    assert window.fit.plotted_point_count() > 0


def _metric_headers(view):
    """(text, tooltip) of every header of a table that names a metric."""
    out = []
    if isinstance(view, QTableWidget):
        for orientation, count, item in ((Qt.Orientation.Horizontal, view.columnCount(), view.horizontalHeaderItem),
                                         (Qt.Orientation.Vertical, view.rowCount(), view.verticalHeaderItem)):
            for i in range(count):
                it = item(i)
                if it is not None and metric_key(it.text().replace("\n", " "))[0]:
                    out.append((it.text(), it.toolTip()))
    else:
        model = view.model()
        for i in range(model.columnCount() if model else 0):
            text = str(model.headerData(i, Qt.Orientation.Horizontal) or "")
            if metric_key(text.replace("\n", " "))[0]:
                out.append((text, model.headerData(i, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)))
    return out


def test_every_metric_header_in_the_window_has_a_tooltip(qtbot, window):
    window.open_robustness()
    window.open_sweep()
    found = []
    for top in (window, window.robustness_view, window.sweep_dialog):
        for view in top.findChildren(QTableView):
            found += [(view.objectName() or type(view).__name__, text, tip) for text, tip in _metric_headers(view)]
    names = {text for _view, text, _tip in found}
    assert {"NMSE ID", "NMSE OOD", "SA", "Test NMSE", "Rate"} <= names  # history, sweep, robustness
    assert [f for f in found if not f[2]] == []
    window.robustness_view.close()
    window.sweep_dialog.close()
