"""Settle a pyqtgraph view before it is painted, so that one paint shows a new drawing.

pyqtgraph works out several things inside ``GraphicsView.paintEvent``: each view's auto-range
(``ViewBox.prepareForPaint``), the width its axes need for their tick labels
(``AxisItem.generateDrawSpecs``), the transform of a ``TextItem`` pinned to data coordinates,
and the bounds of lines that span the view. Each change it makes there asks for another
paint, and a relayout after an axis grows changes the ranges again. For a new fit the Fit
panel was painted three times, 40 + 40 + 20 ms for a dynamical task, on the window's thread.
Doing the same work before the paint, in the order the paint would, until nothing moves,
leaves the paint nothing to change.

Only pyqtgraph's public calls are used: the layouts' ``activate``, the scene's
``prepareForPaint`` (what ``paintEvent`` calls first), ``TextItem.updateTransform``, the items'
``boundingRect``, and each axis's own ``paint`` into a one-pixel image, which builds and keeps
the picture the real paint then replays."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QImage, QPainter

from .scatter import on_screen
from .turns import turns

#: Passes at most: an axis that grows relays the plots out, which may change the ranges and so
#: the labels again. Two passes settle every fit seen; a third covers a label that grows twice.
MAX_PASSES = 3
#: Axes built per step of :func:`settle_steps`: each is 2-4 ms of pyqtgraph's Python on an idle
#: machine, and a log axis' up to 10 ms beside a sweep (the Loss plot's two made 11-23-ms steps).
AXES_PER_STEP = 1


def _axes(plots: Iterable[pg.PlotItem]) -> list[pg.AxisItem]:
    return [axis for plot in plots if plot.isVisible()
            for axis in (plot.getAxis(name) for name in ("left", "bottom", "right", "top")) if axis.isVisible()]


def _bounds(item) -> None:
    """Ask every visible item under ``item`` for its bounds. Lines and regions that span the
    view (``InfiniteLine``, ``LinearRegionItem``) work theirs out from the view's range when
    asked, during the paint, and announce the change, which queues another paint."""
    for child in item.childItems():
        if child.isVisible():
            child.boundingRect()
            _bounds(child)


def settle_steps(view: pg.GraphicsView, plots: Iterable[pg.PlotItem], texts: Iterable[pg.TextItem] = (),
                 axes_per_step: int = AXES_PER_STEP) -> Iterator[None]:
    """Lay out ``view``'s plots, update their ranges and build their axes' pictures, yielding
    after each step (the layout; each view's range; then every ``axes_per_step`` axes) so that
    a caller can spread the work over turns of the event loop. Costs what the first paint would
    have spent on the same work."""
    plots, texts = list(plots), list(texts)
    layout, scene = view.centralWidget.layout, view.scene()  # a PlotWidget's or a GraphicsLayoutWidget's
    image = QImage(1, 1, QImage.Format.Format_ARGB32_Premultiplied)
    for _ in range(MAX_PASSES):
        # Final geometry (the auto-range pads by pixels). A plot's own layout first: an axis
        # that grew there changes the plot's size hints, which the outer layout reads.
        for plot in plots:
            if plot.legend is not None:  # a legend whose entries changed lays itself out later
                plot.legend.layout.activate()
            plot.layout.activate()
        layout.activate()
        yield
        for plot in plots:  # each view's auto-range, as the paint's prepareForPaint would do it
            view_box = plot.getViewBox()
            for _ in range(MAX_PASSES):  # again if a range change changed what the view holds (a
                before = view_box.viewRange()  # curve downsampled to the view's width: its ends move)
                view_box.prepareForPaint()
                if view_box.viewRange() == before:
                    break
            yield
        scene.prepareForPaint()  # anything else that waits for it (a TextItem already painted)
        for text in texts:
            if text.scene() is not None:
                text.updateTransform()
        for plot in plots:
            _bounds(plot.getViewBox().childGroup)
        yield
        moved = False
        built = 0
        for axis in _axes(plots):
            if axis.picture is not None:  # range, size and label unchanged since its last paint
                continue
            size = (axis.minimumWidth(), axis.minimumHeight())
            painter = QPainter(image)
            try:
                axis.paint(painter, None, None)  # sizes the axis to its labels; keeps the picture
            finally:
                painter.end()
            moved |= size != (axis.minimumWidth(), axis.minimumHeight())
            built += 1
            if built % axes_per_step == 0:
                yield
        if built % axes_per_step:
            yield
        if not moved:
            return


class PaintOnce(QObject):
    """Paints a pyqtgraph view once per change of what it shows, and not in the turn that made
    the change: the view's viewport holds the picture it has (its updates off) while
    :func:`settle_steps` runs one step per turn of the event loop, then paints once.

    The owner calls :meth:`soon` after it changed the plots' data (or :meth:`hold` first and
    :meth:`in_turns` with its own steps followed by :meth:`steps`). A paint that comes anyway,
    from a resize, an expose or a change nobody announced, settles first (at once), so that it
    is the only one."""

    def __init__(self, view: pg.GraphicsView, plots: Iterable[pg.PlotItem], texts: Iterable[pg.TextItem] = ()):
        super().__init__(view)
        self._view, self._plots, self._texts = view, tuple(plots), tuple(texts)
        self.unsettled = False
        self._settled_size = None  # the viewport's size when last settled
        self._holds = 0  # sequences of steps in progress, each keeping the viewport's updates off
        view.viewport().installEventFilter(self)

    def soon(self) -> None:
        """The plots changed: settle them over the next turns, then paint once. Off screen (its
        dock behind another tab, a window not shown) nothing is painted: settled when it is."""
        self.unsettled = True
        if not on_screen(self._view.viewport()) or self._holds:
            # Off screen: settled when it is painted. A sequence under way: its end lets the
            # plot paint, and that paint settles what is new (a live loss curve redrawn 20 times
            # a second must not start sequences faster than they end, or it would never paint).
            return
        self.hold()
        self.in_turns(self.steps())

    def hold(self) -> None:
        """The viewport's updates off until the next :meth:`in_turns` sequence ends."""
        self._holds += 1
        self._view.viewport().setUpdatesEnabled(False)

    def in_turns(self, steps: Iterator[None]) -> None:
        """Take one step of ``steps`` per turn of the event loop (in the window's one queue of
        steps, viewers/turns.py), then end a hold: once none is left, the viewport paints
        (once). Ended also when a step raises: the plot must not stay frozen."""
        turns().run(steps, self, self._release)

    def _release(self) -> None:
        self._holds -= 1
        if self._holds == 0:
            self._view.viewport().setUpdatesEnabled(True)  # one full paint

    def show_then_settle(self, show: Callable[[], None],
                         then: Callable[[], Iterator[None]] | None = None) -> None:
        """Call ``show`` (its tab or panel coming forward) on a turn of the queue with this
        view's updates off, then take the steps of ``then()`` if given (what the owner draws
        once the view has its size), settle the view over the turns after, and paint it once.
        A plot changed behind another tab cannot be settled there (Qt resizes it only when it
        is shown): settled inside its first paint, as a run ended and its Pareto tab came
        forward, that was one 25-35-ms turn beside a sweep, and Qt painted the tab twice more."""
        self.hold()

        def steps() -> Iterator[None]:
            show()
            yield  # Qt delivers the resize it kept for the hidden view
            if then is not None:
                yield from then()
            if on_screen(self._view.viewport()):  # else settled when it is painted
                yield from self.steps()

        self.in_turns(steps())

    def steps(self) -> Iterator[None]:
        """:func:`settle_steps` for this view, if it changed since it was last settled."""
        if self.unsettled:
            self.unsettled = False
            self._settled_size = self._view.viewport().size()
            yield from settle_steps(self._view, self._plots, self._texts)

    def settle_now(self) -> None:
        for _ in self.steps():
            pass

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 -- Qt's name
        if event.type() == QEvent.Type.Paint:
            if self._settled_size is not None and self._settled_size != obj.size():
                self.unsettled = True  # resized since: pyqtgraph would range and size it in the paint
            self.settle_now()
        return False


