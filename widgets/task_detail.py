"""Task detail: context, variables, a data preview and the ground truth behind a Reveal button."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from viewers.data_preview import DataPreview

#: Noise levels (%) offered per task kind: SurfaceBench §5.2 and SymbolBench's noise study.
NOISE_LEVELS = {"surface": (1, 5, 10), "ode": (1, 5, 10, 20, 40)}

WELCOME = """
<h3>Welcome to Kepler Lab</h3>
<p>Every task here hides a scientific law behind a table of data. Try to find it:</p>
<ol>
<li><b>Pick a task</b> in the browser on the left, or search it by name or by what it describes
(&ldquo;oscillator&rdquo;, &ldquo;growth&rdquo;, &ldquo;stress&rdquo;). This panel then explains the
problem, lists its variables and plots its data.</li>
<li><b>Press Start</b> in the Run panel (Ctrl+R). The embedded genetic programming method runs on
this machine; it needs no network and no key.</li>
<li><b>Watch</b> the loss fall and the Pareto front of candidate equations grow. When the run ends,
the chosen equation is scored on in-domain and out-of-domain test data and its fit is drawn.</li>
<li><b>Compare</b> with the law itself: Reveal ground truth (Ctrl+G).</li>
</ol>
<p>Every run is kept: the Run history tab reopens it, also after a restart.</p>
"""


class TaskDetail(QWidget):
    reveal_toggled = Signal(bool)
    variant_requested = Signal(str)  # the id of a noise variant (or its base task) to switch to

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.title = QLabel("Pick a task in the browser.")
        self.title.setObjectName("taskTitle")
        font = self.title.font()
        font.setPointSizeF(font.pointSizeF() * 1.3)
        font.setBold(True)
        self.title.setFont(font)
        self.task_id_label = QLabel("")
        self.task_id_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.task_id_label.setStyleSheet("color: palette(placeholder-text);")
        self.context = QTextBrowser()
        self.context.setOpenExternalLinks(False)
        self.variables = QTableWidget(0, 4)
        self.variables.setHorizontalHeaderLabels(["Name", "Role", "Description", "Unit"])
        self.variables.verticalHeader().setVisible(False)
        self.variables.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.variables.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        header = self.variables.horizontalHeader()
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        for col in (0, 1, 3):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)

        self.reveal_button = QPushButton("Reveal ground truth")
        self.reveal_button.setCheckable(True)
        self.reveal_button.setEnabled(False)
        self.reveal_button.setToolTip("Show the law behind this task's data (hidden so you can try to find it first)")
        self.truth = QLabel("")
        self.truth.setWordWrap(True)
        self.truth.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.truth.setVisible(False)
        truth_box = QGroupBox("Ground truth")
        tl = QVBoxLayout(truth_box)
        row = QHBoxLayout()
        row.addWidget(self.reveal_button)
        row.addStretch(1)
        tl.addLayout(row)
        tl.addWidget(self.truth)
        self.truth_box = truth_box

        self.preview = DataPreview()

        # SurfaceBench's noise study (§5.2): the same surface with 1, 5 or 10 % noise.
        # SymbolBench's noise study (levels 1 % to 40 % of each variable's standard deviation).
        self.noise_box = QComboBox()
        self.noise_box.setObjectName("taskNoise")
        self.noise_box.setToolTip("Gaussian noise on the training data, as a fraction of each target's standard "
                                  "deviation (SurfaceBench's 1, 5 and 10 %; SymbolBench's 1 to 40 %); the test "
                                  "data stay clean")
        self.noise_row = QWidget()
        nl = QHBoxLayout(self.noise_row)
        nl.setContentsMargins(0, 0, 0, 0)
        nl.addWidget(QLabel("Noise on the training data:"))
        nl.addWidget(self.noise_box)
        nl.addStretch(1)
        self.noise_row.setVisible(False)
        self.noise_box.currentIndexChanged.connect(self._on_noise)

        upper = QWidget()
        ul = QVBoxLayout(upper)
        ul.setContentsMargins(0, 0, 0, 0)
        ul.addWidget(self.title)
        ul.addWidget(self.task_id_label)
        ul.addWidget(self.noise_row)
        ul.addWidget(self.context, 2)
        ul.addWidget(self.variables, 2)
        ul.addWidget(truth_box)
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(upper)
        splitter.addWidget(self.preview)
        splitter.setStretchFactor(0, 1)
        splitter.setStretchFactor(1, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(splitter)
        self.task = None
        self.reveal_button.toggled.connect(self._on_reveal)
        self.show_welcome()

    def show_welcome(self) -> None:
        """The first screen: what to do, instead of empty tables and an empty plot."""
        self.task = None
        self.title.setText("Pick a task in the browser.")
        self.task_id_label.setText("")
        self.context.setHtml(WELCOME)
        for part in (self.variables, self.truth_box, self.preview):
            part.setVisible(False)
        self.reveal_button.setEnabled(False)

    def show_task(self, task) -> None:
        self.task = task
        self.title.setText(task.title)
        self.task_id_label.setText(task.id)
        paragraphs = [f"<p>{html.escape(task.context)}</p>"]
        if task.split_note:
            paragraphs.append(f"<p><b>Data.</b> {html.escape(task.split_note)}</p>")
        self.context.setHtml("".join(paragraphs))
        self.variables.setRowCount(len(task.variables))
        for r, v in enumerate(task.variables):
            for c, text in enumerate((v.name, v.role, v.description, v.unit)):
                item = QTableWidgetItem(text)
                item.setToolTip(text)
                self.variables.setItem(r, c, item)
        for part in (self.variables, self.truth_box, self.preview):
            part.setVisible(True)
        levels = NOISE_LEVELS.get(task.kind)
        self.noise_row.setVisible(levels is not None)
        if levels is not None:
            suffix = task.id.rsplit("/", 1)[-1] if task.metadata.get("noise") is not None else ""
            self.noise_box.blockSignals(True)
            self.noise_box.clear()
            self.noise_box.addItem("none", "")
            for level in levels:
                self.noise_box.addItem(f"{level} %", f"noise-{level}")
            self.noise_box.setCurrentIndex(max(0, self.noise_box.findData(suffix)))
            self.noise_box.blockSignals(False)
        self.reveal_button.setChecked(False)
        self._on_reveal(False)
        # Imported data have no known law: no Reveal button, just say so.
        known = bool(task.ground_truth.expression)
        self.reveal_button.setEnabled(known)
        self.reveal_button.setVisible(known)
        if not known:
            self.truth.setText("Unknown: this is your own data, so there is no ground truth to reveal.")
            self.truth.setVisible(True)

    def _on_noise(self, _index: int) -> None:
        if self.task is None:
            return
        base = self.task.metadata.get("base_task", self.task.id)
        suffix = self.noise_box.currentData()
        self.variant_requested.emit(f"{base}/{suffix}" if suffix else base)

    def _on_reveal(self, shown: bool) -> None:
        if self.task is not None and not self.task.ground_truth.expression:
            return  # nothing to reveal (the Ctrl+G action toggles the hidden button)
        self.reveal_button.setText("Hide ground truth" if shown else "Reveal ground truth")
        self.truth.setVisible(shown)
        if shown and self.task is not None:
            gt = self.task.ground_truth
            parts = [
                f"<p><b>{html.escape(self.task.model_label)}</b> = "
                f"<code>{html.escape(gt.expression)}</code></p>"
            ]
            if gt.template:
                consts = ", ".join(f"{html.escape(k)} = {v:g}" for k, v in gt.constants.items())
                parts.append(f"<p>Form: <code>{html.escape(gt.template)}</code><br>with {consts}</p>")
            if gt.source:
                parts.append(f"<p style='color:#888'>{html.escape(gt.source)}</p>")
            notes = self.task.metadata.get("notes") if self.task.kind == "surface" else ""
            if notes:
                parts.append(f"<p>{html.escape(notes)}</p>")
            printed = self.task.metadata.get("paper")
            if printed and self.task.kind == "surface":
                parts.append(f"<p style='color:#888'>As printed in the paper: <code>{html.escape(printed)}</code></p>")
            if gt.repair:
                parts.append(f"<p style='color:#8a5a00'><b>Repaired entry:</b> {html.escape(gt.repair)}</p>")
            self.truth.setText("".join(parts))
        self.reveal_toggled.emit(shown)
