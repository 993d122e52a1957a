"""Run panel: method, its parameters (built from the method's declared ``Param`` list), and
Start / Stop with a progress bar."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from .progress import ProgressBar

#: Parameters shown first, in this order; the rest follow in the method's order.
_FIRST = ("seconds", "seed")


class _MultiChoice(QWidget):
    def __init__(self, choices, selected, columns: int = 4):
        super().__init__()
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setHorizontalSpacing(8)
        self.boxes: dict[str, QCheckBox] = {}
        for i, choice in enumerate(choices):
            box = QCheckBox(choice)
            box.setChecked(choice in selected)
            grid.addWidget(box, i // columns, i % columns)
            self.boxes[choice] = box

    def value(self) -> list[str]:
        return [c for c, b in self.boxes.items() if b.isChecked()]

    def set_value(self, values) -> None:
        for c, b in self.boxes.items():
            b.setChecked(c in values)


class RunPanel(QWidget):
    start_requested = Signal(str, dict)  # method name, config
    stop_requested = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.method_box = QComboBox()
        self.method_box.setToolTip("Discovery method")
        self.description = QLabel("")
        self.description.setWordWrap(True)
        self.description.setStyleSheet("color: palette(placeholder-text);")
        self.form_host = QWidget()
        self.form = QFormLayout(self.form_host)
        self.form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.operators_box = QGroupBox("Operators")
        self.operators_layout = QVBoxLayout(self.operators_box)
        self.start_button = QPushButton("Start")
        self.start_button.setObjectName("startButton")
        self.start_button.setToolTip("Start the method on the selected task (Ctrl+R)")
        self.stop_button = QPushButton("Stop")
        self.stop_button.setObjectName("stopButton")
        self.stop_button.setToolTip("Stop the run; the best model so far is kept and scored")
        self.stop_button.setEnabled(False)
        self.progress = ProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setValue(0)
        self.progress.setFormat("idle")
        self.progress.setTextVisible(True)
        self.status = QLabel("Pick a task, then press Start.")
        self.status.setWordWrap(True)

        inner = QWidget()
        il = QVBoxLayout(inner)
        il.addWidget(QLabel("Method"))
        il.addWidget(self.method_box)
        il.addWidget(self.description)
        il.addWidget(self.form_host)
        il.addWidget(self.operators_box)
        il.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(inner)
        buttons = QHBoxLayout()
        buttons.addWidget(self.start_button)
        buttons.addWidget(self.stop_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(scroll, 1)
        layout.addLayout(buttons)
        layout.addWidget(self.progress)
        layout.addWidget(self.status)

        self._methods: dict[str, Any] = {}
        self.editors: dict[str, Any] = {}
        self.method_box.currentIndexChanged.connect(self._on_method)
        self.start_button.clicked.connect(self._on_start)
        self.stop_button.clicked.connect(self.stop_requested)
        self.set_task_ready(False)

    # ------------------------------------------------------------------ methods and forms

    def set_methods(self, methods) -> None:
        """The methods offered; the chosen one stays chosen when it is among them (its form is
        rebuilt only when the choice changes, so typed values survive a change of task)."""
        previous = self.method_box.currentData()
        names = [m.name for m in methods]
        if names == list(getattr(self, "_methods", {})):
            return
        self._methods = {m.name: m for m in methods}
        self.method_box.blockSignals(True)
        self.method_box.clear()
        for m in methods:
            self.method_box.addItem(m.label, m.name)
        if previous in self._methods:
            self.method_box.setCurrentIndex(names.index(previous))
        self.method_box.blockSignals(False)
        if self.method_box.currentData() != previous:
            self._on_method()

    def select_method(self, name: str) -> bool:
        """Choose a method by name, as picking it in the list does; False if it is not offered."""
        index = self.method_box.findData(name)
        if index < 0:
            return False
        self.method_box.setCurrentIndex(index)
        return True

    def current_method(self):
        return self._methods.get(self.method_box.currentData())

    def _on_method(self) -> None:
        method = self.current_method()
        while self.form.rowCount():
            self.form.removeRow(0)
        while self.operators_layout.count():
            item = self.operators_layout.takeAt(0)
            if item.widget():
                item.widget().deleteLater()
        self.editors.clear()
        if method is None:
            return
        self.description.setText(method.description)
        params = method.parameters()
        params.sort(key=lambda p: (_FIRST.index(p.name) if p.name in _FIRST else len(_FIRST)))
        self.operators_box.setVisible(False)
        for p in params:
            editor = self._editor(p)
            self.editors[p.name] = editor
            if p.type == "multichoice":
                self.operators_box.setTitle(p.label)
                self.operators_box.setToolTip(p.help)
                self.operators_layout.addWidget(editor)
                self.operators_box.setVisible(True)
            else:
                label = QLabel(p.label)
                label.setToolTip(p.help)
                editor.setToolTip(p.help)
                self.form.addRow(label, editor)

    def _editor(self, p):
        if p.type == "int":
            w = QSpinBox()
            # QSpinBox holds a C int; clamp so wide ranges (a 32-bit seed) still fit.
            top = min(int(p.maximum if p.maximum is not None else 10**9), 2**31 - 1)
            w.setRange(int(p.minimum if p.minimum is not None else 0), top)
            w.setValue(int(p.default))
            w.setAccelerated(True)
            if p.name == "seconds":
                w.setSuffix(" s")
        elif p.type == "float":
            w = QDoubleSpinBox()
            w.setDecimals(3)
            w.setRange(float(p.minimum if p.minimum is not None else 0.0), float(p.maximum if p.maximum is not None else 1e9))
            w.setValue(float(p.default))
            if p.name == "seconds":
                w.setSuffix(" s")
                w.setDecimals(1)
        elif p.type == "bool":
            w = QCheckBox()
            w.setChecked(bool(p.default))
        elif p.type == "choice":
            w = QComboBox()
            w.addItems(list(p.choices))
            if p.default in p.choices:
                w.setCurrentIndex(list(p.choices).index(p.default))
        elif p.type == "multichoice":
            w = _MultiChoice(p.choices, set(p.default or ()))
        else:
            w = QLineEdit(str(p.default))
        return w

    def config(self) -> dict[str, Any]:
        values: dict[str, Any] = {}
        for name, w in self.editors.items():
            if isinstance(w, (QSpinBox, QDoubleSpinBox)):
                values[name] = w.value()
            elif isinstance(w, QCheckBox):
                values[name] = w.isChecked()
            elif isinstance(w, QComboBox):
                values[name] = w.currentText()
            elif isinstance(w, _MultiChoice):
                values[name] = w.value()
            else:
                values[name] = w.text()
        return values

    def set_value(self, name: str, value) -> None:
        w = self.editors[name]
        if isinstance(w, (QSpinBox, QDoubleSpinBox)):
            w.setValue(value)
        elif isinstance(w, QCheckBox):
            w.setChecked(bool(value))
        elif isinstance(w, QComboBox):
            w.setCurrentText(str(value))
        elif isinstance(w, _MultiChoice):
            w.set_value(value)
        else:
            w.setText(str(value))

    # ------------------------------------------------------------------ state

    def _on_start(self) -> None:
        method = self.current_method()
        if method is None:
            return
        config = self.config()
        if "operators" in config and not config["operators"]:
            self.status.setText("Choose at least one operator.")
            return
        self.start_requested.emit(method.name, config)

    def set_task_ready(self, ready: bool) -> None:
        self._task_ready = ready
        self.start_button.setEnabled(ready)
        if not ready:
            self.status.setText("Pick a task, then press Start.")

    def set_running(self, running: bool) -> None:
        self.start_button.setEnabled(not running and self._task_ready)
        self.stop_button.setEnabled(running)
        self.method_box.setEnabled(not running)
        self.form_host.setEnabled(not running)
        self.operators_box.setEnabled(not running)
        if running:
            self.progress.setValue(0)
            self.progress.setFormat("starting…")

    def show_progress(self, fraction: float, text: str) -> None:
        self.progress.setValue(int(max(0.0, min(1.0, fraction)) * 1000))
        self.progress.setFormat(text)

    def show_status(self, text: str) -> None:
        self.status.setText(text)
        self.status.setTextFormat(Qt.TextFormat.PlainText)
