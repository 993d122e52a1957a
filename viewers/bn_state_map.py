"""Boolean state map (pyqtgraph): genes × transitions, the true next states, a model's predicted
next states and where they differ, for SymbolBench's Boolean-network tasks.

Three heat maps share the transition axis (x: transitions in the order the data list them; y:
genes, the first at the top): the true next states (on = dark blue, off = light grey), the
predicted ones in the same colours, and the mismatches (red: predicted on but truly off; dark
red: predicted off but truly on). A selector switches between the splits given (fitting,
out-of-domain); a label counts the mismatched gene states. Free input genes (``inputs``) are
marked "(input)" on the axis, grey in the mismatch map and not counted, since a model does not
predict them.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from . import style
from .style import configure_pyqtgraph

#: split key -> label in the selector.
SPLIT_LABELS = {"train": "fitting transitions", "test_id": "in-domain (fitting) transitions",
                "test_ood": "out-of-domain transitions", "fitting": "fitting transitions"}

# Cell colours come from the current style (viewers/style.py), in the light theme: off = light
# grey, on = dark blue; mismatches: red = predicted on but truly off, dark red = predicted off but
# truly on; near-white where they agree, mid grey for free inputs (not scored).
#: Gene labels shown on the y axis at most; more genes get every k-th label.
MAX_LABELS = 45
#: Transition numbers shown on the x axis at most.
MAX_X_LABELS = 30



def _state_lut() -> np.ndarray:
    s = style.current()
    return np.array([s.cell_off[:3], s.cell_on[:3]], dtype=np.ubyte)


def _mismatch_lut() -> np.ndarray:
    s = style.current()
    return np.array([s.cell_agree[:3], s.cell_false_on[:3], s.cell_false_off[:3], s.cell_not_scored[:3]],
                    dtype=np.ubyte)


def _as_splits(values) -> dict[str, np.ndarray] | None:
    if values is None:
        return None
    if isinstance(values, Mapping):
        return {str(k): np.asarray(v, dtype=float) for k, v in values.items()}
    return {"fitting": np.asarray(values, dtype=float)}


def _square(color) -> str:
    return f"<span style='color: {style.css(color)}'>&#9632;</span>"


class BNStateMap(QWidget):
    """True vs predicted next states of a Boolean network, with mismatches marked."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        configure_pyqtgraph()
        self.header = QLabel()
        self.header.setWordWrap(True)
        self.split_box = QComboBox()
        self.split_box.currentIndexChanged.connect(self._split_changed)
        self.mismatch_label = QLabel()
        controls = QHBoxLayout()
        controls.addWidget(QLabel("Transitions:"))
        controls.addWidget(self.split_box)
        controls.addSpacing(12)
        controls.addWidget(self.mismatch_label, 1)
        self.layout_widget = pg.GraphicsLayoutWidget()
        self.plots, self.images = [], []
        titles = ("True next state", "Predicted next state", self._mismatch_title(False))
        for row, title in enumerate(titles):
            plot = self.layout_widget.addPlot(row=row, col=0)
            plot.setTitle(title, size=style.title_size())
            plot.invertY(True)
            plot.setMenuEnabled(False)
            plot.hideButtons()
            plot.getAxis("left").setStyle(tickLength=0)
            plot.getAxis("bottom").setStyle(tickLength=-4)
            image = pg.ImageItem(axisOrder="col-major")
            plot.addItem(image)
            if row:
                plot.setXLink(self.plots[0])
                plot.setYLink(self.plots[0])
            self.plots.append(plot)
            self.images.append(image)
        self.plots[-1].setLabel("bottom", "transition (in the order listed)")
        # Gene labels are thinned to what fits the plot's height, again after a resize or zoom.
        self.plots[0].vb.sigResized.connect(self._set_gene_ticks)
        self.plots[0].vb.sigYRangeChanged.connect(self._set_gene_ticks)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.header)
        layout.addLayout(controls)
        layout.addWidget(self.layout_widget, 1)
        self.genes: list[str] = []
        self.inputs: set[str] = set()
        self.true: dict[str, np.ndarray] = {}
        self.predicted: dict[str, np.ndarray] | None = None
        self.current_split: str | None = None
        self.clear()
        style.on_change(self._restyle)

    def _restyle(self, s: style.Style) -> None:
        """Theme or presentation mode changed: cell colours, titles, fonts and gene labels again."""
        style.apply_view(self.layout_widget, s)
        self.plots[2].setTitle(self._mismatch_title(bool(self.inputs)), size=style.title_size())
        if self.current_split is not None:
            self._draw()
        self._set_gene_ticks()

    # -- public API

    def clear(self, message: str = "Run a method on a Boolean-network task to see its state map.") -> None:
        self.genes, self.inputs, self.true, self.predicted, self.current_split = [], set(), {}, None, None
        self.split_box.blockSignals(True)
        self.split_box.clear()
        self.split_box.blockSignals(False)
        self.split_box.setEnabled(False)
        for image in self.images:
            image.clear()
        self.header.setText(message)
        self.mismatch_label.setText("")
        for plot in self.plots[1:]:
            plot.setVisible(True)

    def set_data(self, genes: list[str], true, predicted=None, title: str = "", *,
                 inputs: list[str] | None = None, split: str | None = None) -> None:
        """Show true next states and, when given, predicted ones.

        ``true`` and ``predicted`` are arrays (transitions, genes) of 0/1, or mappings from split
        name (``train``, ``test_ood``, …) to such arrays; ``predicted`` may be None (truth only).
        ``inputs`` names the free genes (not counted as mismatches). ``split`` picks the split
        shown first (default: the first one).
        """
        splits = _as_splits(true) or {}
        preds = _as_splits(predicted)
        for name, arr in splits.items():
            if arr.ndim != 2 or arr.shape[1] != len(genes):
                raise ValueError(f"{name}: expected an array of shape (transitions, {len(genes)}), got {arr.shape}")
            if preds is not None and name in preds and preds[name].shape != arr.shape:
                raise ValueError(f"{name}: predicted shape {preds[name].shape} differs from true {arr.shape}")
        self.genes = list(genes)
        self.inputs = set(inputs or [])
        self.true, self.predicted = splits, preds
        self.header.setText(title or "Boolean state map")
        self.split_box.blockSignals(True)
        self.split_box.clear()
        for name in splits:
            self.split_box.addItem(SPLIT_LABELS.get(name, name), name)
        self.split_box.blockSignals(False)
        self.split_box.setEnabled(len(splits) > 1)
        self._set_gene_ticks()
        first = split if split in splits else next(iter(splits), None)
        if first is None:
            self.clear("No transitions to show.")
            return
        self.set_split(first)

    def set_split(self, name: str) -> None:
        """Show one split (a key given to :meth:`set_data`)."""
        if name not in self.true:
            raise KeyError(name)
        index = self.split_box.findData(name)
        if index != self.split_box.currentIndex():
            self.split_box.blockSignals(True)
            self.split_box.setCurrentIndex(index)
            self.split_box.blockSignals(False)
        self.current_split = name
        self._draw()

    def mismatch_count(self) -> tuple[int, int]:
        """(mismatched gene states, compared gene states) of the shown split, inputs excluded."""
        if self.current_split is None or self.predicted is None or self.current_split not in self.predicted:
            return 0, 0
        truth = self.true[self.current_split] > 0.5
        pred = self.predicted[self.current_split] > 0.5
        cols = [j for j, g in enumerate(self.genes) if g not in self.inputs]
        return int(np.sum(truth[:, cols] != pred[:, cols])), int(truth[:, cols].size)

    # -- drawing

    @staticmethod
    def _mismatch_title(with_inputs: bool) -> str:
        s = style.current()
        grey = f"; {_square(s.cell_not_scored)} input, not scored" if with_inputs else ""
        return (f"Mismatches ({_square(s.cell_false_on)} predicted on, truly off; "
                f"{_square(s.cell_false_off)} predicted off, truly on{grey})")

    def _split_changed(self, index: int) -> None:
        name = self.split_box.itemData(index)
        if name is not None:
            self.set_split(name)

    def _set_gene_ticks(self, *_args) -> None:
        axis = self.plots[0].getAxis("left")
        metrics = QFontMetrics(axis.style.get("tickFont") or self.font())
        labels = [g + (" (input)" if g in self.inputs else "") for g in self.genes]
        # as many labels as fit the visible genes at one text line each (at most MAX_LABELS)
        lo, hi = self.plots[0].vb.viewRange()[1]
        visible = max(1.0, min(hi, len(self.genes)) - max(lo, 0.0))
        height = max(1.0, self.plots[0].vb.height())
        fit = max(1, min(MAX_LABELS, int(height // (metrics.height() + 1))))
        step = max(1, int(np.ceil(visible / fit)))
        ticks = [(j + 0.5, text) for j, text in enumerate(labels) if j % step == 0]
        width = max((metrics.horizontalAdvance(text) for text in labels), default=20) + 14
        for plot in self.plots:
            plot.getAxis("left").setTicks([ticks, []])
            plot.getAxis("left").setWidth(width)

    def _set_transition_ticks(self, n: int) -> None:
        """Transitions numbered 1..n under the middle of their column."""
        step = max(1, int(np.ceil(n / MAX_X_LABELS)))
        for nice in (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000):
            if nice >= step:
                step = nice
                break
        ticks = [(j + 0.5, str(j + 1)) for j in range(n) if (j + 1) % step == 0 or (step == 1)]
        if step > 1:
            ticks.insert(0, (0.5, "1"))
        for plot in self.plots:
            plot.getAxis("bottom").setTicks([ticks, []])

    def _draw(self) -> None:
        name = self.current_split
        truth = self.true[name] > 0.5
        n, g = truth.shape
        self.images[0].setImage(truth.astype(np.uint8), levels=(0, 1), lut=_state_lut())
        pred = None if self.predicted is None else self.predicted.get(name)
        has_pred = pred is not None
        for plot in self.plots[1:]:
            plot.setVisible(has_pred)
        if has_pred:
            pred = pred > 0.5
            self.images[1].setImage(pred.astype(np.uint8), levels=(0, 1), lut=_state_lut())
            code = np.zeros(truth.shape, dtype=np.uint8)
            code[pred & ~truth] = 1
            code[~pred & truth] = 2
            for j, gene in enumerate(self.genes):
                if gene in self.inputs:
                    code[:, j] = 3  # grey: a model does not predict inputs
            self.images[2].setImage(code, levels=(0, 3), lut=_mismatch_lut())
            self.plots[2].setTitle(self._mismatch_title(bool(self.inputs)), size=style.title_size())
            wrong, total = self.mismatch_count()
            cols = [j for j, gn in enumerate(self.genes) if gn not in self.inputs]
            bad_rows = int(np.sum(np.any(truth[:, cols] != pred[:, cols], axis=1))) if cols else 0
            share = f" ({100.0 * wrong / total:.1f} %)" if total else ""
            self.mismatch_label.setText(
                f"Mismatches: {wrong} of {total} gene states{share}; {bad_rows} of {n} transitions not exact"
                + (" (inputs not counted)" if self.inputs else ""))
        else:
            self.images[1].clear()
            self.images[2].clear()
            self.mismatch_label.setText("No prediction to compare.")
        self._set_transition_ticks(n)
        for plot in self.plots:
            plot.setLimits(xMin=0, xMax=max(n, 1), yMin=0, yMax=max(g, 1))
            plot.setRange(xRange=(0, max(n, 1)), yRange=(0, max(g, 1)), padding=0)
