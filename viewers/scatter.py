"""Large scatter plots on the window's thread: one style for all points, and drawing only what is
on screen."""

from __future__ import annotations

from typing import Callable

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QWidget

#: What pyqtgraph's spot records hold when a point has no style of its own (the item's applies).
_NO_OWN_STYLE = {"symbol": None, "pen": None, "brush": None}


class UniformScatter(pg.ScatterPlotItem):
    """A ScatterPlotItem whose points all take the item's one symbol, size, pen and brush (set
    points with ``setData(x=..., y=...)``; per-point styles fall back to pyqtgraph's own path).

    pyqtgraph finds each new point's picture in its symbol atlas one point at a time, in Python:
    for a fit of 4000 + 500 + 500 points drawn in two plots, about 17 of the 29 ms its six
    ``setData`` calls took on the window's thread (``benchmarks/bench_scatter.py``), for every
    run opened. When every point has the same style the picture is looked up once and its place
    in the atlas given to all of them, which is what pyqtgraph would have computed point by
    point."""

    def updateSpots(self, dataSet=None):  # noqa: N802, N803 -- pyqtgraph's names
        data = self.data if dataSet is None else dataSet
        if not (self.opts["pxMode"] and self.opts["useCache"]) or self.opts["hoverable"] or not len(data):
            return super().updateSpots(dataSet)
        todo = data["sourceRect"]["w"] == 0
        if not todo.any():
            return super().updateSpots(dataSet)
        if np.any(data["size"][todo] != -1) or any(
                not np.equal(data[field][todo], none).all() for field, none in _NO_OWN_STYLE.items()):
            return super().updateSpots(dataSet)  # some point has a style of its own
        style = (self.opts["symbol"], self.opts["size"], self.opts["pen"], self.opts["brush"])
        data["sourceRect"][todo] = self.fragmentAtlas[[style]][0]
        self._maybeRebuildAtlas()
        self._updateMaxSpotSizes(data=data)
        self.invalidate()


def on_screen(widget: QWidget) -> bool:
    """Shown and not behind another tab: Qt keeps a dock tabbed behind another "visible", moved
    out of the window, so visibility alone does not tell."""
    return widget.isVisible() and not widget.visibleRegion().isEmpty()


class DrawWhenShown(QObject):
    """Defers a view's drawing while the view is off screen (its dock behind another tab: the run
    history, as a user clicks through runs) and draws the newest data when it comes forward.

    :meth:`wanted` says whether the view should draw now; if not, it remembers that a drawing is
    owed and calls ``draw`` just before ``paint_target`` (the view's plot area) is next painted:
    a dock brought forward, by a click on its tab or by the window, is painted first."""

    def __init__(self, view: QWidget, paint_target: QWidget, draw: Callable[[], None]):
        super().__init__(view)
        self._view, self._target, self._draw = view, paint_target, draw
        self.pending = False

    def wanted(self) -> bool:
        """True if the view is on screen, or its window is not shown at all (a view made for an
        export or a test): draw now. Else the drawing is owed until the view comes forward."""
        if on_screen(self._view) or not self._view.window().isVisible():
            self.drop()
            return True
        if not self.pending:
            self.pending = True
            self._target.installEventFilter(self)
        return False

    def drop(self) -> None:
        """Nothing is owed any more (drawn, or the data went)."""
        if self.pending:
            self.pending = False
            self._target.removeEventFilter(self)

    def flush(self) -> None:
        """Draw what is owed now (the view came forward)."""
        if self.pending:
            self.drop()
            self._draw()

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 -- Qt's name
        if event.type() == QEvent.Type.Paint and self.pending:
            self.flush()
        return False
