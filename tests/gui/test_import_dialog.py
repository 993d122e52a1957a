"""File ▸ Import data…, driven as a user drives it: choose a file, a target and a name, click
Import, and the task browser selects the new task. A bad file shows the engine's message in the
dialog and imports nothing."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import Qt

pytest.importorskip("pytestqt")

from app.application import create_app  # noqa: E402
from app.main_window import MainWindow  # noqa: E402
from engine.tasks import registry  # noqa: E402
from engine.tasks import user_data as ud  # noqa: E402
from widgets.import_dialog import COL_UNIT, OOD_LAST, OOD_THRESHOLD  # noqa: E402


def write_csv(path: Path, n: int = 60, delimiter: str = ",", bad: tuple[int, int, str] | None = None) -> Path:
    x = np.linspace(0.0, 1.0, n)
    v = np.sin(5 * x)
    rows = [[f"{a:.12g}", f"{b:.12g}", f"{2 * a + b * b:.12g}"] for a, b in zip(x, v)]
    if bad:
        rows[bad[0]][bad[1]] = bad[2]
    text = "\n".join([delimiter.join(["x", "v", "a"])] + [delimiter.join(r) for r in rows]) + "\n"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def window(qtbot, isolated_home):
    registry.invalidate()
    create_app()
    win = MainWindow(restore_layout=False)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitUntil(lambda: len(win.tasks) > 0, timeout=15000)
    yield win
    dialog = getattr(win, "import_dialog", None)
    if dialog is not None:
        dialog.loader.wait_all()
    win.controller.shutdown()
    win.loader.wait_all()
    registry.invalidate()


def open_dialog(window, qtbot, path: Path):
    dialog = window.open_import_dialog()
    assert dialog.isVisible()
    dialog.set_path(path)
    qtbot.waitUntil(lambda: not dialog.busy(), timeout=15000)
    qtbot.wait(50)  # let the queued result arrive
    return dialog


def test_import_a_table_and_the_browser_selects_it(window, qtbot, tmp_path):
    path = write_csv(tmp_path / "pendulum data.tsv", delimiter="\t")
    dialog = open_dialog(window, qtbot, path)
    assert dialog.error_text() == ""
    assert "tab-separated" in dialog.file_label.text() and "60 data rows" in dialog.file_label.text()
    assert dialog.preview.rowCount() == ud.PREVIEW_ROWS and dialog.preview.columnCount() == 3
    assert [dialog.preview.horizontalHeaderItem(c).text() for c in range(3)] == ["x", "v", "a"]
    assert dialog.name_edit.text() == "pendulum_data"  # suggested from the file name

    # The user picks the target, which stops being an input.
    dialog.target_combo.setCurrentText("a")
    assert dialog.chosen_inputs() == ["x", "v"]
    dialog.target_combo.setCurrentText("v")
    assert dialog.chosen_inputs() == ["x", "a"]
    dialog.target_combo.setCurrentText("a")
    assert dialog.chosen_inputs() == ["x", "v"]
    dialog.variables.item(0, COL_UNIT).setText("m")
    dialog.ood_mode.setCurrentIndex(OOD_LAST)
    dialog.ood_last.setValue(10)
    dialog.name_edit.clear()
    qtbot.keyClicks(dialog.name_edit, "pendulum")
    qtbot.mouseClick(dialog.import_button, Qt.MouseButton.LeftButton)

    qtbot.waitUntil(lambda: window.browser.current_task_id() == "user/pendulum", timeout=15000)
    assert not dialog.isVisible()
    task = window.tasks["user/pendulum"]
    assert task.target.name == "a" and task.input_names == ["x", "v"] and task.inputs[0].unit == "m"
    assert len(task.load_data()["test_ood"]) == 10
    assert window.detail.task_id_label.text() == "user/pendulum"
    # Nobody knows the law behind your own data: no Reveal button, just "unknown".
    assert not window.detail.reveal_button.isVisible()
    assert "Unknown" in window.detail.truth.text()
    assert window.browser.model.item(window.browser.model.rowCount() - 1).text().startswith("Your data")


def test_malformed_file_shows_the_engines_message_and_imports_nothing(window, qtbot, tmp_path):
    ragged = tmp_path / "ragged.csv"
    ragged.write_text("x,v,a\n" + "1,2,3\n" * 15 + "1,2\n" + "1,2,3\n" * 10, encoding="utf-8")
    dialog = open_dialog(window, qtbot, ragged)
    assert dialog.error_label.isVisible()
    assert dialog.error_text() == "ragged.csv, line 17: 2 fields, expected 3 (x, v, a); every row needs one value per column"
    assert not dialog.import_button.isEnabled()
    assert dialog.variables.rowCount() == 0

    # A file that reads but cannot be imported as chosen: the message appears on Import.
    nan = write_csv(tmp_path / "holes.csv", bad=(4, 1, "nan"))
    dialog.set_path(nan)
    qtbot.waitUntil(lambda: dialog.import_button.isEnabled(), timeout=15000)
    assert dialog.error_text() == "" and "1 cells are empty, NaN or infinite" in dialog.file_label.text()
    dialog.name_edit.setText("holes")
    qtbot.mouseClick(dialog.import_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dialog.error_text() != "", timeout=15000)
    with pytest.raises(ud.DataImportError) as expected:
        ud.import_table(nan, "holes", target="a", inputs=["x", "v"])
    assert dialog.error_text() == str(expected.value)
    assert "line 6, column 'v'" in dialog.error_text()
    assert dialog.isVisible() and dialog.import_button.isEnabled()
    assert not ud.tasks_dir().exists() or list(ud.tasks_dir().iterdir()) == []

    # The user opts in to dropping the bad row; now it imports.
    dialog.drop_invalid.setChecked(True)
    qtbot.mouseClick(dialog.import_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.browser.current_task_id() == "user/holes", timeout=15000)
    assert dialog.results[0].dropped_rows == 1


def test_threshold_and_name_collision_errors_stay_in_the_dialog(window, qtbot, tmp_path):
    path = write_csv(tmp_path / "d.csv")
    ud.import_table(path, "taken")
    dialog = open_dialog(window, qtbot, path)
    dialog.name_edit.setText("taken")
    dialog.ood_mode.setCurrentIndex(OOD_THRESHOLD)
    dialog.ood_column.setCurrentText("x")
    dialog.ood_value.setText("abc")
    qtbot.mouseClick(dialog.import_button, Qt.MouseButton.LeftButton)
    assert dialog.error_text() == "the out-of-domain threshold must be a number, not 'abc'"
    dialog.ood_value.setText("0.9")
    qtbot.mouseClick(dialog.import_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dialog.error_text() != "", timeout=15000)
    assert dialog.error_text() == "a task named 'user/taken' already exists; choose another name or replace it"
    dialog.name_edit.setText("fresh")
    qtbot.mouseClick(dialog.import_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.browser.current_task_id() == "user/fresh", timeout=15000)
    data = window.tasks["user/fresh"].load_data()
    assert (data["test_ood"].X[:, 0] > 0.9).all()


def test_file_menu_has_the_import_action(window):
    file_menu = window.menuBar().actions()[0].menu()
    assert window.import_action in file_menu.actions()
    assert window.import_action.text().replace("&", "") == "Import data…"


def test_import_an_llmsrbench_hdf5_file(window, qtbot, tmp_path):
    h5py = pytest.importorskip("h5py")
    path = tmp_path / "lsr_bench_data.hdf5"
    rng = np.random.default_rng(0)
    with h5py.File(path, "w") as fh:
        fh.create_dataset("lsr_synth/matsci/MatSci0/train", data=rng.uniform(size=(30, 3)))
        fh.create_dataset("lsr_synth/matsci/MatSci0/test", data=rng.uniform(size=(10, 3)))
        fh.create_dataset("lsr_synth/matsci/MatSci0/ood_test", data=rng.uniform(size=(10, 3)))
    dialog = open_dialog(window, qtbot, path)
    assert dialog.error_text() == "" and dialog.preview.rowCount() == 1
    assert dialog.preview.item(0, 0).text() == "/lsr_synth/matsci/MatSci0"
    assert not dialog.variables_box.isEnabled()
    qtbot.mouseClick(dialog.import_button, Qt.MouseButton.LeftButton)
    new_id = "user/llmsrbench/lsr_synth/matsci/MatSci0"
    qtbot.waitUntil(lambda: window.browser.current_task_id() == new_id, timeout=15000)
    assert {s.name for s in window.tasks[new_id].load_data()} == {"train", "test_id", "test_ood"}
    # Back on a benchmark task, the ground truth can be revealed again.
    assert window.browser.select_task("llmsrbench/lsr-synth/chemistry/CKR1")
    assert window.detail.reveal_button.isVisible() and window.detail.reveal_button.isEnabled()
    assert not window.detail.truth.isVisible()


def test_an_import_warning_reaches_the_status_bar(window, qtbot, tmp_path):
    """A column that holds one value in every row is imported with a warning; the window says so."""
    x = np.linspace(0.0, 1.0, 40)
    rows = [f"{a:.12g},3,{2 * a + 1:.12g}" for a in x]
    path = tmp_path / "flat.csv"
    path.write_text("\n".join(["x,c,y"] + rows) + "\n", encoding="utf-8")
    dialog = open_dialog(window, qtbot, path)
    dialog.target_combo.setCurrentText("y")
    qtbot.mouseClick(dialog.import_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.browser.current_task_id() == "user/flat", timeout=15000)
    warnings = [w for r in dialog.results for w in r.warnings]
    assert warnings and any("same value" in w for w in warnings), warnings
    assert "Imported user/flat" in window.status_label.text() and "same value" in window.status_label.text()
