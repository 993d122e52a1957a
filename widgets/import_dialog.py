"""File ▸ Import data…: turn a CSV / TSV table (or LLM-SRBench's HDF5 file) into a task.

The dialog only gathers choices; :mod:`engine.tasks.user_data` reads, checks and stores. Both the
inspection of the chosen file and the import run off the GUI thread (the app's ``Loader``), so a
large file never freezes the window. An engine error is shown inline, word for word, and nothing
is imported.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QStackedWidget,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from engine.tasks import user_data

HDF5_SUFFIXES = (".h5", ".hdf5", ".he5")
FILE_FILTER = "Tables (*.csv *.tsv *.tab *.txt *.dat);;LLM-SRBench HDF5 (*.h5 *.hdf5);;All files (*)"

#: Out-of-domain choices, in the order of the combo box.
OOD_NONE, OOD_THRESHOLD, OOD_LAST, OOD_FILE = range(4)
OOD_LABELS = (
    "No out-of-domain test set",
    "Rows where a column is above / below a value",
    "The last rows of the file",
    "A separate file",
)

# Columns of the variables table.
COL_INPUT, COL_NAME, COL_UNIT, COL_DESCRIPTION = range(4)


def _inspect(path: str):
    """Runs on a worker thread: ("csv" | "hdf5", info) or ("error", the engine's message)."""
    try:
        if Path(path).suffix.lower() in HDF5_SUFFIXES:
            return "hdf5", user_data.inspect_hdf5(path)
        return "csv", user_data.inspect_csv(path)
    except user_data.DataImportError as exc:
        return "error", str(exc)


def _run_import(func):
    """Runs on a worker thread: ("ok", [task ids]) or ("error", the engine's message)."""
    try:
        results = func()
    except user_data.DataImportError as exc:
        return "error", str(exc)
    results = results if isinstance(results, list) else [results]
    return "ok", results


class _PathRow(QWidget):
    """A path field with a Browse… button."""

    def __init__(self, placeholder: str, parent: QWidget | None = None):
        super().__init__(parent)
        self.edit = QLineEdit()
        self.edit.setPlaceholderText(placeholder)
        self.edit.setClearButtonEnabled(True)
        self.button = QPushButton("Browse…")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.edit, 1)
        layout.addWidget(self.button)
        self.button.clicked.connect(self._browse)

    def _browse(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Choose a file", self.edit.text(), FILE_FILTER)
        if path:
            self.edit.setText(path)
            self.edit.editingFinished.emit()

    def path(self) -> str | None:
        text = self.edit.text().strip()
        return text or None


class ImportDialog(QDialog):
    """Pick a file, see its first rows, choose target / inputs / splits, name the task."""

    imported = Signal(list)  # ids of the new tasks

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        from app.controllers import Loader  # the app's off-thread helper

        self.setWindowTitle("Import data")
        self.resize(860, 760)
        self.info: user_data.TableInfo | None = None
        self.problems: list[user_data.Hdf5Problem] | None = None
        self.results: list[user_data.ImportResult] = []
        self.loader = Loader(self)
        self.loader.ready.connect(self._on_ready)
        self.loader.error.connect(self._on_failed)

        # File.
        self.file_row = _PathRow("A CSV, TSV or semicolon-separated table, or LLM-SRBench's HDF5 file")
        self.path_edit = self.file_row.edit
        self.file_label = QLabel("Choose a file to see its first rows.")
        self.file_label.setWordWrap(True)
        self.preview = QTableWidget(0, 0)
        self.preview.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.preview.setMinimumHeight(150)

        # Variables.
        self.target_combo = QComboBox()
        self.target_combo.setToolTip("The column the equation should predict")
        self.variables = QTableWidget(0, 4)
        self.variables.setHorizontalHeaderLabels(["Input", "Column", "Unit", "Description"])
        self.variables.verticalHeader().setVisible(False)
        header = self.variables.horizontalHeader()
        header.setSectionResizeMode(COL_DESCRIPTION, QHeaderView.ResizeMode.Stretch)
        for col in (COL_INPUT, COL_NAME, COL_UNIT):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        self.variables_box = QGroupBox("Variables")
        vl = QVBoxLayout(self.variables_box)
        row = QHBoxLayout()
        row.addWidget(QLabel("Target"))
        row.addWidget(self.target_combo, 1)
        vl.addLayout(row)
        vl.addWidget(self.variables)

        # Splits.
        self.ood_mode = QComboBox()
        self.ood_mode.addItems(OOD_LABELS)
        self.ood_column = QComboBox()
        self.ood_op = QComboBox()
        self.ood_op.addItems([">", "<"])
        self.ood_value = QLineEdit()
        self.ood_value.setPlaceholderText("value")
        self.ood_last = QSpinBox()
        self.ood_last.setRange(1, 10**9)
        self.ood_last.setValue(100)
        self.ood_last.setSuffix(" rows")
        self.ood_file_row = _PathRow("Out-of-domain test rows, same columns")
        self.ood_stack = QStackedWidget()
        self.ood_stack.addWidget(QWidget())
        threshold = QWidget()
        tl = QHBoxLayout(threshold)
        tl.setContentsMargins(0, 0, 0, 0)
        tl.addWidget(self.ood_column, 1)
        tl.addWidget(self.ood_op)
        tl.addWidget(self.ood_value, 1)
        self.ood_stack.addWidget(threshold)
        self.ood_stack.addWidget(self.ood_last)
        self.ood_stack.addWidget(self.ood_file_row)
        self.test_file_row = _PathRow("Optional: in-domain test rows from a separate file")
        self.test_fraction = QDoubleSpinBox()
        self.test_fraction.setRange(0.0, 0.9)
        self.test_fraction.setSingleStep(0.05)
        self.test_fraction.setValue(0.1)
        self.seed = QSpinBox()
        self.seed.setRange(0, 2**31 - 1)
        self.drop_invalid = QCheckBox("Drop rows with missing, NaN or infinite values (the count is reported)")
        self.splits_box = QGroupBox("Splits")
        sf = QFormLayout(self.splits_box)
        sf.addRow("Out-of-domain test", self.ood_mode)
        sf.addRow("", self.ood_stack)
        sf.addRow("In-domain test file", self.test_file_row)
        sf.addRow("In-domain test share", self.test_fraction)
        sf.addRow("Shuffle seed", self.seed)
        sf.addRow("", self.drop_invalid)

        # Task.
        self.name_edit = QLineEdit()
        self.name_edit.setPlaceholderText("e.g. pendulum or lab/pendulum")
        self.name_prefix = QLabel(f"{user_data.SUITE}/")
        name_row = QHBoxLayout()
        name_row.addWidget(self.name_prefix)
        name_row.addWidget(self.name_edit, 1)
        self.context_edit = QPlainTextEdit()
        self.context_edit.setPlaceholderText("What are these data? How were they measured? (shown with the task)")
        self.context_edit.setMaximumHeight(70)
        self.replace_box = QCheckBox("Replace an imported task of the same name")
        self.task_box = QGroupBox("Task")
        tf = QFormLayout(self.task_box)
        tf.addRow("Name", name_row)
        tf.addRow("Context", self.context_edit)
        tf.addRow("", self.replace_box)

        self.error_label = QLabel("")
        self.error_label.setObjectName("importError")
        self.error_label.setWordWrap(True)
        self.error_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error_label.setStyleSheet("color: #b00020;")
        self.error_label.setVisible(False)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.import_button = self.buttons.addButton("Import", QDialogButtonBox.ButtonRole.ActionRole)
        self.import_button.setDefault(True)
        self.import_button.setEnabled(False)
        self.buttons.rejected.connect(self.reject)

        layout = QVBoxLayout(self)
        layout.addWidget(self.file_row)
        layout.addWidget(self.file_label)
        layout.addWidget(self.preview, 2)
        layout.addWidget(self.variables_box, 2)
        layout.addWidget(self.splits_box)
        layout.addWidget(self.task_box)
        layout.addWidget(self.error_label)
        layout.addWidget(self.buttons)

        self.path_edit.editingFinished.connect(self._on_path_edited)
        self.target_combo.currentIndexChanged.connect(self._on_target_changed)
        self.ood_mode.currentIndexChanged.connect(self.ood_stack.setCurrentIndex)
        self.import_button.clicked.connect(self.start_import)
        self._set_table_mode(True)

    # ------------------------------------------------------------------ file

    def set_path(self, path: str | Path) -> None:
        """Inspect ``path`` off the GUI thread (also what Browse… and Enter do)."""
        self.path_edit.setText(str(path))
        self._inspect(str(path))

    def _on_path_edited(self) -> None:
        text = self.path_edit.text().strip()
        if text and text != getattr(self, "_inspected", None):
            self._inspect(text)

    def _inspect(self, path: str) -> None:
        self._inspected = path
        self.info, self.problems = None, None
        self._show_error("")
        self.import_button.setEnabled(False)
        self.file_label.setText(f"Reading {Path(path).name}…")
        self.loader.request("inspect", lambda path=path: _inspect(path))

    def busy(self) -> bool:
        return self.loader.busy()

    def _on_ready(self, channel: str, result) -> None:
        kind, payload = result
        if channel == "import":
            self._set_importing(False)
        if kind == "error":
            if channel == "inspect":
                self._clear_file()
            else:
                self.import_button.setEnabled(True)
            self._show_error(payload)
            return
        if channel == "inspect":
            if kind == "hdf5":
                self._show_hdf5(payload)
            else:
                self._show_table(payload)
            self.import_button.setEnabled(True)
        elif channel == "import":
            self.results = payload
            self.imported.emit([r.task_id for r in payload])
            self.accept()

    def _on_failed(self, channel: str, message: str) -> None:
        """An unexpected error (not a DataImportError) on the worker thread."""
        if channel == "import":
            self._set_importing(False)
        if channel == "inspect":
            self._clear_file()
        else:
            self.import_button.setEnabled(True)
        self._show_error(message)

    def _clear_file(self) -> None:
        self.file_label.setText("This file cannot be imported.")
        self.preview.clear()
        self.preview.setRowCount(0)
        self.preview.setColumnCount(0)
        self.variables.setRowCount(0)
        self.target_combo.clear()
        self.ood_column.clear()

    def _set_table_mode(self, table: bool) -> None:
        for widget in (self.variables_box, self.splits_box, self.context_edit):
            widget.setEnabled(table)
        self.name_prefix.setText(f"{user_data.SUITE}/" if table else f"{user_data.SUITE}/ … prefix:")

    def _show_table(self, info: user_data.TableInfo) -> None:
        self.info = info
        self._set_table_mode(True)
        header = "a header row" if info.has_header else "no header row (columns named c1, c2, …)"
        numeric = [c.name for c in info.columns if c.numeric]
        skipped = [f"{c.name} ({c.problem})" for c in info.columns if not c.numeric]
        text = (
            f"{Path(info.path).name}: {info.delimiter_name}-separated, {header}, {info.rows} data rows, "
            f"{len(info.columns)} columns."
        )
        missing = sum(c.missing for c in info.columns)
        if missing:
            text += f" {missing} cells are empty, NaN or infinite."
        if skipped:
            text += f" Not numeric: {'; '.join(skipped)}."
        self.file_label.setText(text)

        self.preview.clear()
        self.preview.setColumnCount(len(info.columns))
        self.preview.setRowCount(len(info.preview))
        self.preview.setHorizontalHeaderLabels(info.column_names)
        for r, row in enumerate(info.preview):
            for c, cell in enumerate(row):
                self.preview.setItem(r, c, QTableWidgetItem(cell))

        self.variables.setRowCount(len(info.columns))
        for r, column in enumerate(info.columns):
            check = QTableWidgetItem()
            check.setFlags(Qt.ItemFlag.ItemIsUserCheckable | Qt.ItemFlag.ItemIsEnabled)
            check.setCheckState(Qt.CheckState.Checked if column.numeric else Qt.CheckState.Unchecked)
            self.variables.setItem(r, COL_INPUT, check)
            name = QTableWidgetItem(column.name)
            name.setFlags(Qt.ItemFlag.ItemIsEnabled)
            tip = f"called {column.variable} in expressions" if column.variable != column.name else column.name
            if column.minimum is not None:
                tip += f"; from {column.minimum:g} to {column.maximum:g}"
            if column.problem:
                tip += f"; {column.problem}"
            name.setToolTip(tip)
            self.variables.setItem(r, COL_NAME, name)
            self.variables.setItem(r, COL_UNIT, QTableWidgetItem(""))
            self.variables.setItem(r, COL_DESCRIPTION, QTableWidgetItem(""))
        self.target_combo.blockSignals(True)
        self.target_combo.clear()
        self.target_combo.addItems(info.column_names)
        target = next((c.name for c in reversed(info.columns) if c.numeric), info.columns[-1].name)
        self.target_combo.setCurrentText(target)
        self.target_combo.blockSignals(False)
        self._on_target_changed()
        self.ood_column.clear()
        self.ood_column.addItems(numeric or info.column_names)
        if not self.name_edit.text().strip():
            self.name_edit.setText(_suggest_name(info.path))

    def _show_hdf5(self, problems: list[user_data.Hdf5Problem]) -> None:
        self.problems = problems
        self._set_table_mode(False)
        self.file_label.setText(
            f"{Path(self.path_edit.text()).name}: LLM-SRBench HDF5 file with {len(problems)} problem"
            f"{'s' if len(problems) != 1 else ''}; every one is imported as user/<prefix>/<group>. "
            "Column 0 of each array is the target."
        )
        self.preview.clear()
        self.preview.setColumnCount(2)
        self.preview.setRowCount(len(problems))
        self.preview.setHorizontalHeaderLabels(["Problem", "Splits (rows × columns)"])
        for r, p in enumerate(problems):
            self.preview.setItem(r, 0, QTableWidgetItem("/" + p.path))
            shapes = ", ".join(f"{k} {s[0]}×{s[1] if len(s) > 1 else '?'}" for k, s in p.splits.items())
            self.preview.setItem(r, 1, QTableWidgetItem(shapes))
        self.variables.setRowCount(0)
        self.target_combo.clear()
        self.name_edit.setText(user_data.HDF5_PREFIX)

    # ------------------------------------------------------------------ variables

    def _row_of(self, column: str) -> int:
        for r in range(self.variables.rowCount()):
            if self.variables.item(r, COL_NAME).text() == column:
                return r
        raise KeyError(column)

    def _on_target_changed(self, _index: int = 0) -> None:
        target = self.target_combo.currentText()
        for r in range(self.variables.rowCount()):
            check = self.variables.item(r, COL_INPUT)
            is_target = self.variables.item(r, COL_NAME).text() == target
            if is_target:
                check.setCheckState(Qt.CheckState.Unchecked)
                check.setFlags(Qt.ItemFlag.NoItemFlags)
                check.setToolTip("the target")
            else:
                if not check.flags() & Qt.ItemFlag.ItemIsUserCheckable:
                    numeric = self.info is not None and self.info.columns[r].numeric
                    check.setCheckState(Qt.CheckState.Checked if numeric else Qt.CheckState.Unchecked)
                check.setFlags(Qt.ItemFlag.ItemIsUserCheckable | Qt.ItemFlag.ItemIsEnabled)
                check.setToolTip("use as an input")

    def set_input(self, column: str, used: bool) -> None:
        self.variables.item(self._row_of(column), COL_INPUT).setCheckState(
            Qt.CheckState.Checked if used else Qt.CheckState.Unchecked
        )

    def set_unit(self, column: str, unit: str) -> None:
        self.variables.item(self._row_of(column), COL_UNIT).setText(unit)

    def set_description(self, column: str, text: str) -> None:
        self.variables.item(self._row_of(column), COL_DESCRIPTION).setText(text)

    def chosen_inputs(self) -> list[str]:
        return [
            self.variables.item(r, COL_NAME).text()
            for r in range(self.variables.rowCount())
            if self.variables.item(r, COL_INPUT).checkState() == Qt.CheckState.Checked
        ]

    # ------------------------------------------------------------------ import

    def _show_error(self, message: str) -> None:
        self.error_label.setText(message)
        self.error_label.setVisible(bool(message))

    def error_text(self) -> str:
        return self.error_label.text()

    def start_import(self) -> None:
        """Validate and import off the GUI thread; errors appear in the dialog."""
        path = self.path_edit.text().strip()
        if not path:
            self._show_error("choose a file first")
            return
        name = self.name_edit.text().strip()
        replace = self.replace_box.isChecked()
        if self.problems is not None:
            def work(path=path, name=name, replace=replace):
                return _run_import(lambda: user_data.import_llmsrbench_hdf5(path, prefix=name, replace=replace))
        elif self.info is not None:
            kwargs = self._table_options()
            if isinstance(kwargs, str):
                self._show_error(kwargs)
                return

            def work(path=path, name=name, kwargs=kwargs):
                return _run_import(lambda: user_data.import_table(path, name, **kwargs))
        else:
            self._show_error("the file has not been read yet")
            return
        self._show_error("")
        self.import_button.setEnabled(False)
        self.file_label.setText(f"Importing {Path(path).name}…")
        self._set_importing(True)
        self.loader.request("import", work)

    def _set_importing(self, importing: bool) -> None:
        """An import is short and all-or-nothing, so it is not cancelled half-way: Cancel (and
        Esc) wait until it has either stored the task or left nothing."""
        self._importing = importing
        self.buttons.button(QDialogButtonBox.StandardButton.Cancel).setEnabled(not importing)

    def reject(self) -> None:
        if getattr(self, "_importing", False):
            return
        super().reject()

    def _table_options(self) -> dict | str:
        units, descriptions = {}, {}
        target = self.target_combo.currentText()
        inputs = self.chosen_inputs()
        for r in range(self.variables.rowCount()):
            column = self.variables.item(r, COL_NAME).text()
            if column != target and column not in inputs:
                continue
            unit = self.variables.item(r, COL_UNIT).text().strip()
            text = self.variables.item(r, COL_DESCRIPTION).text().strip()
            if unit:
                units[column] = unit
            if text:
                descriptions[column] = text
        mode = self.ood_mode.currentIndex()
        ood, ood_file = None, None
        if mode == OOD_THRESHOLD:
            raw = self.ood_value.text().strip()
            try:
                value = float(raw)
            except ValueError:
                return f"the out-of-domain threshold must be a number, not '{raw}'"
            ood = {"column": self.ood_column.currentText(), "op": self.ood_op.currentText(), "value": value}
        elif mode == OOD_LAST:
            ood = {"last_rows": self.ood_last.value()}
        elif mode == OOD_FILE:
            ood_file = self.ood_file_row.path()
            if ood_file is None:
                return "choose the out-of-domain test file, or another out-of-domain option"
        return {
            "target": target,
            "inputs": inputs,
            "ood": ood,
            "ood_file": ood_file,
            "test_file": self.test_file_row.path(),
            "test_fraction": self.test_fraction.value(),
            "seed": self.seed.value(),
            "units": units,
            "descriptions": descriptions,
            "context": self.context_edit.toPlainText(),
            "drop_invalid": self.drop_invalid.isChecked(),
            "replace": self.replace_box.isChecked(),
        }


def _suggest_name(path: str) -> str:
    """A valid task name from the file name (``My data (2).csv`` → ``My_data_2``)."""
    import re

    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", Path(path).stem).strip("._-")
    return stem[:80] or "data"
