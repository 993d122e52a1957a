"""A lagged causal graph, true against predicted (pyqtgraph), for SymbolBench's causal-graph tasks.

The variables sit on a circle (the first at the top, then clockwise), each a labelled disc.
Every edge is an arrow from source to target: green when it is in both graphs (true positive),
vermilion when only the prediction has it (false positive), grey and dashed when only the truth
has it (missed). Without a prediction the true graph is drawn in dark grey. A self-loop is a
small loop on the outside of its node; when x → y and y → x are both drawn they bend apart so
neither hides the other. An edge whose lag is not 1 carries its lag as a label. Matching is on
exact (source, target, lag) triples, SymbolBench's directed reading (§4.3); the count line adds
the structural Hamming distance (directed, lags ignored).

No graph library is needed: geometry is computed here in data coordinates, with the aspect
ratio locked so circles stay round.
"""

from __future__ import annotations

import math
from typing import Iterable, Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QBrush, QColor, QPen, QPolygonF
from PySide6.QtWidgets import QGraphicsEllipseItem, QGraphicsPolygonItem, QLabel, QVBoxLayout, QWidget

from engine.metrics.symbolbench import graph_shd

from . import style

#: category -> (label, colour, dashed). Okabe–Ito colours, as the other views. The light theme's
#: colours; :func:`_category_color` gives the current style's (true edges are light on dark).
CATEGORIES = {
    "tp": ("true positive", (0, 158, 115), False),
    "fp": ("false positive", (213, 94, 0), False),
    "missed": ("missed", (140, 140, 140), True),
    "truth": ("true edge", (60, 60, 60), False),
}
NODE_RADIUS = 0.17
LOOP_RADIUS = 0.13
HEAD_LENGTH = 0.075
HEAD_WIDTH = 0.032
BEND = 0.18  # sideways bend of an edge whose reverse is drawn too, as a fraction of its length


def _category_color(category: str) -> tuple:
    s = style.current()
    if category == "truth":
        return (200, 200, 200) if s.dark else ((0, 0, 0) if s.high_contrast else CATEGORIES["truth"][1])
    if category == "missed" and (s.dark or s.high_contrast):
        return s.faint
    return CATEGORIES[category][1]


def _edges(edges: Iterable) -> set[tuple[str, str, int]]:
    return {(str(s), str(t), int(lag)) for s, t, lag in edges}


def _bezier(p0: np.ndarray, c: np.ndarray, p1: np.ndarray, n: int = 48) -> np.ndarray:
    s = np.linspace(0.0, 1.0, n)[:, None]
    return (1 - s) ** 2 * p0 + 2 * (1 - s) * s * c + s ** 2 * p1


class CausalGraphView(QWidget):
    """The graph drawing, a legend and the counts line ("TP 4 · FP 1 · missed 2 · SHD 3")."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.plot_widget = pg.PlotWidget()
        self.plot = self.plot_widget.getPlotItem()
        self.plot.hideAxis("left")
        self.plot.hideAxis("bottom")
        self.plot.setMenuEnabled(False)
        self.plot.hideButtons()
        self.plot.getViewBox().setAspectLocked(True)
        self.plot.getViewBox().setMouseEnabled(x=False, y=False)
        self.legend = QLabel()
        self.legend.setTextFormat(Qt.TextFormat.RichText)
        self.legend.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.counts = QLabel()
        self.counts.setAlignment(Qt.AlignmentFlag.AlignCenter)
        font = self.counts.font()
        font.setBold(True)
        self.counts.setFont(font)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.plot_widget, 1)
        layout.addWidget(self.legend)
        layout.addWidget(self.counts)
        self._edge_items: list[dict] = []
        self._node_items: list = []
        self._message: pg.TextItem | None = None
        self.names: list[str] = []
        self.summary: dict[str, int] = {}
        self._last: tuple | None = None  # the arguments of the last set_graphs, to draw it again
        self._last_message = "No graph to show."
        self.clear("No graph to show.")
        style.on_change(self._restyle)

    def _restyle(self, s: style.Style) -> None:
        """Theme or presentation mode changed: draw the graph (or the message) again."""
        style.apply_view(self.plot_widget, s)
        if self._last is not None:
            args, kwargs = self._last
            self.set_graphs(*args, **kwargs)
        else:
            self.clear(self._last_message)

    # -- public API

    def clear(self, message: str = "") -> None:
        """Remove the graph and show ``message`` instead."""
        self._last, self._last_message = None, message
        self.plot.clear()
        self._edge_items, self._node_items = [], []
        self.names, self.summary = [], {}
        self.plot.setTitle("")
        self.legend.setText("")
        self.counts.setText("")
        self._message = pg.TextItem(message, color=style.current().muted, anchor=(0.5, 0.5))
        self.plot.addItem(self._message)
        self._message.setPos(0, 0)
        self.plot.setRange(xRange=(-1, 1), yRange=(-1, 1), padding=0)

    def set_graphs(self, names: Sequence[str], true_edges: Iterable, predicted_edges: Iterable | None = None,
                   title: str = "", descriptions: dict[str, str] | None = None) -> None:
        """Draw the graph over ``names``: the true edges, and when ``predicted_edges`` is given
        the comparison (true positives, false positives, missed). Edges are (source, target, lag)
        triples; a name in an edge but not in ``names`` is added as a node."""
        true_edges = list(true_edges)
        predicted_edges = None if predicted_edges is None else list(predicted_edges)
        self._last = ((names, true_edges, predicted_edges), dict(title=title, descriptions=descriptions))
        self.plot.clear()
        self._edge_items, self._node_items = [], []
        self._message = None
        truth = _edges(true_edges)
        predicted = None if predicted_edges is None else _edges(predicted_edges)
        nodes = list(dict.fromkeys([str(n) for n in names]
                                   + sorted({e[0] for e in truth | (predicted or set())}
                                            | {e[1] for e in truth | (predicted or set())})))
        self.names = nodes
        positions = self._layout(len(nodes))
        where = {name: positions[k] for k, name in enumerate(nodes)}

        if predicted is None:
            categories = {"truth": truth}
        else:
            categories = {"missed": truth - predicted, "fp": predicted - truth, "tp": truth & predicted}
        drawn_pairs = {(s, t) for group in categories.values() for s, t, _ in group}
        for category, group in categories.items():  # missed first: the solid lines stay on top
            by_pair: dict[tuple[str, str], list[int]] = {}
            for s, t, lag in group:
                by_pair.setdefault((s, t), []).append(lag)
            for (s, t), lags in sorted(by_pair.items()):
                self._draw_edge(s, t, sorted(lags), category, where, (t, s) in drawn_pairs and s != t)
        for name in nodes:
            self._draw_node(name, where[name], (descriptions or {}).get(name, ""))

        extent = (1.0 if len(nodes) > 1 else 0.45) + NODE_RADIUS + 2.2 * LOOP_RADIUS + 0.05
        self.plot.setRange(xRange=(-extent, extent), yRange=(-extent, extent), padding=0.02)
        self.plot.setTitle(title, size=style.title_size())
        shown = ["truth"] if predicted is None else ["tp", "fp", "missed"]
        self.legend.setText(" &nbsp; &nbsp; ".join(self._legend_entry(c) for c in shown))
        if predicted is None:
            self.summary = {"true": len(truth)}
            self.counts.setText(f"{len(truth)} true edge{'s' if len(truth) != 1 else ''} · no prediction")
        else:
            shd = graph_shd(truth, predicted)
            self.summary = {"tp": len(categories["tp"]), "fp": len(categories["fp"]),
                            "missed": len(categories["missed"]), "shd": shd}
            self.counts.setText(f"TP {self.summary['tp']} · FP {self.summary['fp']} · "
                                f"missed {self.summary['missed']} · SHD {shd}")

    def counts_text(self) -> str:
        return self.counts.text()

    def edge_count(self, category: str | None = None) -> int:
        """Number of drawn edges (one per source, target and category; lags share an arrow)."""
        return sum(1 for e in self._edge_items if category is None or e["category"] == category)

    def edge_items(self) -> list[dict]:
        """The drawn edges: dicts with ``source``, ``target``, ``lags``, ``category`` and the
        graphics ``curve`` and ``head``."""
        return list(self._edge_items)

    # -- drawing

    @staticmethod
    def _layout(n: int) -> list[np.ndarray]:
        if n == 1:
            return [np.array([0.0, -0.12])]
        angles = math.pi / 2 - 2 * math.pi * np.arange(n) / n  # top first, then clockwise
        return [np.array([math.cos(a), math.sin(a)]) for a in angles]

    @staticmethod
    def _legend_entry(category: str) -> str:
        label, _colour, dashed = CATEGORIES[category]
        r, g, b = _category_color(category)[:3]
        stroke = "╌╌╌" if dashed else "━━━"
        return f"<span style='color: rgb({r},{g},{b}); font-weight: bold'>{stroke}▶</span> {label}"

    def _pen(self, category: str) -> QPen:
        _, _colour, dashed = CATEGORIES[category]
        return style.pen(_category_color(category), 2.4 if category != "missed" else 2.0,
                         style=Qt.PenStyle.DashLine if dashed else Qt.PenStyle.SolidLine)

    def _draw_node(self, name: str, centre: np.ndarray, description: str) -> None:
        r = NODE_RADIUS
        disc = QGraphicsEllipseItem(float(centre[0] - r), float(centre[1] - r), 2 * r, 2 * r)
        s = style.current()
        disc.setPen(style.pen(s.node_edge, 2))
        disc.setBrush(QBrush(QColor(*s.node_fill[:3])))
        disc.setZValue(10)
        if description:
            disc.setToolTip(f"{name}: {description}")
        self.plot.addItem(disc)
        label = pg.TextItem(name, color=s.node_text, anchor=(0.5, 0.5))
        font = label.textItem.font()
        font.setPointSizeF(11 * (1.5 if s.presentation else 1))
        font.setBold(True)
        label.setFont(font)
        label.setPos(float(centre[0]), float(centre[1]))
        label.setZValue(11)
        self.plot.addItem(label)
        self._node_items.append((disc, label))

    def _draw_edge(self, source: str, target: str, lags: list[int], category: str,
                   where: dict[str, np.ndarray], bend: bool) -> None:
        if source == target:
            points = self._loop_points(where[source])
        else:
            p0, p1 = where[source], where[target]
            d = p1 - p0
            normal = np.array([d[1], -d[0]])  # to the right of the direction of travel
            control = (p0 + p1) / 2 + (BEND * normal if bend else 0.0)
            points = _bezier(p0, control, p1)
            gap = NODE_RADIUS + 0.02
            keep = (np.linalg.norm(points - p0, axis=1) > gap) & (np.linalg.norm(points - p1, axis=1) > gap)
            points = points[keep]
        if len(points) < 2:
            return
        pen = self._pen(category)
        # The line stops at the arrowhead's base so a dashed line does not poke through it.
        tip, before = points[-1], points[-2]
        direction = (tip - before) / max(np.linalg.norm(tip - before), 1e-12)
        line = np.vstack([points[:-1], tip - direction * HEAD_LENGTH * 0.8])
        curve = pg.PlotCurveItem(line[:, 0], line[:, 1], pen=pen)
        curve.setZValue({"missed": 1, "truth": 2, "fp": 3, "tp": 4}[category])
        self.plot.addItem(curve)
        head = self._arrowhead(tip, direction, _category_color(category))
        head.setZValue(curve.zValue())
        self.plot.addItem(head)
        item = {"source": source, "target": target, "lags": lags, "category": category,
                "curve": curve, "head": head, "label": None}
        if lags != [1]:
            mid = points[len(points) // 2]
            text = pg.TextItem("lag " + ",".join(str(x) for x in lags), color=_category_color(category),
                               anchor=(0.5, 0.5), fill=pg.mkBrush(*style.current().background[:3], 220))
            text.setPos(float(mid[0]), float(mid[1]))
            self.plot.addItem(text)
            item["label"] = text
        self._edge_items.append(item)

    @staticmethod
    def _loop_points(centre: np.ndarray) -> np.ndarray:
        norm = float(np.linalg.norm(centre))
        out = centre / norm if norm > 0.5 else np.array([0.0, 1.0])  # a lone node: loop on top
        loop_centre = centre + out * (NODE_RADIUS + LOOP_RADIUS * 0.55)
        start = math.atan2(-out[1], -out[0])  # the side facing the node
        angles = start + np.linspace(0.0, 2 * math.pi, 72)
        points = loop_centre + LOOP_RADIUS * np.column_stack([np.cos(angles), np.sin(angles)])
        outside = np.linalg.norm(points - centre, axis=1) > NODE_RADIUS + 0.01
        # the arc outside the node, in order: from where it leaves the node round to where it
        # comes back (clockwise seen from outside is not needed: one direction is enough)
        idx = np.flatnonzero(outside)
        return points[idx] if len(idx) else points

    @staticmethod
    def _arrowhead(tip: np.ndarray, direction: np.ndarray, colour) -> QGraphicsPolygonItem:
        normal = np.array([-direction[1], direction[0]])
        base = tip - direction * HEAD_LENGTH
        corners = [tip, base + normal * HEAD_WIDTH, base - normal * HEAD_WIDTH]
        polygon = QPolygonF([QPointF(float(p[0]), float(p[1])) for p in corners])
        head = QGraphicsPolygonItem(polygon)
        head.setBrush(QBrush(QColor(*colour)))
        head.setPen(QPen(Qt.PenStyle.NoPen))
        return head
