"""Data preview: the target against one chosen input, train / ID / OOD coloured."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from .fit_viewer import _thin
from . import style
from .scatter import DrawWhenShown, on_screen
from .style import split_brush, split_label, styled_plot


class DataPreview(QWidget):
    input_changed = Signal(str)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.input_box = QComboBox()
        self.input_box.setToolTip("Input variable on the horizontal axis")
        # Tasks with several targets (a parametric surface's x, y, z) choose which one to plot.
        self.target_box = QComboBox()
        self.target_box.setObjectName("previewTarget")
        self.target_box.setToolTip("Target on the vertical axis")
        self.target_box.setVisible(False)
        self.status = QLabel("")
        top = QHBoxLayout()
        self.plot_label = QLabel("Plot target against")
        top.addWidget(self.plot_label)
        top.addWidget(self.target_box)
        self.against_label = QLabel("against")
        self.against_label.setVisible(False)
        top.addWidget(self.against_label)
        top.addWidget(self.input_box)
        top.addStretch(1)
        top.addWidget(self.status)
        self.plot_widget = pg.PlotWidget()
        self.plot = styled_plot(self.plot_widget, "Data", "input", "target")
        style.apply_legend(self.plot.addLegend(offset=(5, 5)))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self.plot_widget)
        self._data = None
        # New data are drawn when the preview is on screen (see _redraw).
        self._when_shown = DrawWhenShown(self, self.plot_widget.viewport(), lambda: self._redraw(force=True))
        self._inputs: list[str] = []
        self._target = ""
        self._targets: list[str] = []
        self.input_box.currentIndexChanged.connect(self._redraw)
        self.target_box.currentIndexChanged.connect(self._redraw)
        style.on_change(self._restyle)

    def _restyle(self, s: style.Style) -> None:
        self._redraw(emit=False)
        style.apply_view(self.plot_widget, s)

    def _clear_plot(self) -> None:
        self.plot.legend.clear()  # at once: one relayout of the legend, not one per entry
        self.plot.clear()

    def set_loading(self, task_title: str) -> None:
        self._data = None
        self._when_shown.drop()
        self._clear_plot()
        self.status.setText(f"Generating data for {task_title}…")

    def set_error(self, message: str) -> None:
        self._when_shown.drop()
        self._clear_plot()
        self.status.setText(message)

    def set_data(self, data, inputs: list[str], target: str | list[str], preferred: str | None = None) -> None:
        """``data`` is an engine TaskData; ``target`` one name, or one per column of a 2-D ``y``."""
        targets = [target] if isinstance(target, str) else list(target)
        self._data, self._inputs, self._targets = data, inputs, targets
        self._target = targets[0] if targets else ""
        self.target_box.blockSignals(True)
        self.target_box.clear()
        self.target_box.addItems(targets)
        self.target_box.blockSignals(False)
        self.target_box.setVisible(len(targets) > 1)
        self.against_label.setVisible(len(targets) > 1)
        self.plot_label.setText("Plot" if len(targets) > 1 else "Plot target against")
        self.input_box.blockSignals(True)
        self.input_box.clear()
        self.input_box.addItems(inputs)
        if preferred in inputs:
            self.input_box.setCurrentIndex(inputs.index(preferred))
        self.input_box.blockSignals(False)
        sizes = ", ".join(f"{split_label(s.name)} {len(s)}" for s in data)
        self.status.setText(sizes)
        self._redraw()

    def point_count(self) -> int:
        """Points drawn (none while new data wait for the preview to come on screen)."""
        return sum(len(item.getData()[0]) for item in self.plot.listDataItems() if item.getData()[0] is not None)

    def on_screen(self) -> bool:
        """Shown and not behind another tab."""
        return on_screen(self)

    def draw_pending(self) -> None:
        """Draw data that arrived while the preview was off screen (its dock came forward)."""
        self._when_shown.flush()

    def _redraw(self, *_args, emit: bool = True, force: bool = False) -> None:
        self._clear_plot()
        if self._data is None or not self._inputs:
            self._when_shown.drop()
            return
        # Behind another tab (the run history, while a user clicks through runs), building the
        # items of 5000 points took the window's thread 15-25 ms per click (more on a busy
        # machine) for nothing to see: they are built when the preview comes forward.
        if not force and not self._when_shown.wanted():
            return
        self._when_shown.drop()
        column = max(0, self.input_box.currentIndex())
        name = self._inputs[column]
        which = max(0, self.target_box.currentIndex())
        if len(self._targets) > 1:
            self._target = self._targets[which]
        for split in self._data:
            idx = _thin(len(split))
            x, y = split.X[idx, column], split.y[idx]
            if y.ndim == 2:
                y = y[:, min(which, y.shape[1] - 1)]
            ok = np.isfinite(x) & np.isfinite(y)
            # dynamicRangeLimit=None: by default a PlotDataItem rebuilds its points whenever the
            # view's range changes, as it does after each split added here (twice the time for
            # 5000 points). A PlotDataItem still follows the plot menu's log / FFT transforms.
            self.plot.plot(x[ok], y[ok], pen=None, symbol="o", symbolSize=style.size(3), symbolPen=None,
                           symbolBrush=split_brush(split.name), name=split_label(split.name),
                           dynamicRangeLimit=None)
        self.plot.setLabel("bottom", name)
        self.plot.setLabel("left", self._target)
        self.plot.setTitle(f"{self._target} against {name}", size=style.title_size())
        if emit:
            self.input_changed.emit(name)
