"""Plot grids are drawn opaque and behind the data (viewers/style.py, issue 10's load part)."""

from __future__ import annotations

import os

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QColor, QPainter, QPicture

from app.application import NO_GUI_THREADPOOL, create_app
from viewers import style
from viewers.loss_plot import LossPlot
from viewers.pareto_plot import ParetoPlot


def _grid_pens(axis: pg.AxisItem) -> list:
    picture = QPicture()
    painter = QPainter(picture)
    try:
        specs = axis.generateDrawSpecs(painter)
    finally:
        painter.end()
    assert specs is not None
    return [pen for pen, _p1, _p2 in specs[1]]


def test_grid_lines_are_opaque_mixes_of_foreground_and_background(qtbot):
    create_app()
    plot = LossPlot()
    qtbot.addWidget(plot)
    plot.resize(600, 400)
    plot.show()
    plot.set_series(range(30), np.logspace(0, -5, 30))
    qtbot.wait(50)
    bg = QColor(*style.current().background)
    fg = QColor(*style.current().foreground)
    for name in ("left", "bottom"):
        axis = plot.plot.getAxis(name)
        pens = _grid_pens(axis)
        assert pens, name
        for pen in pens:
            c = pen.color()
            assert c.alpha() == 255
            # between foreground and background, channel by channel
            for ch in ("red", "green", "blue"):
                lo, hi = sorted((getattr(fg, ch)(), getattr(bg, ch)()))
                assert lo <= getattr(c, ch)() <= hi
        # at least one grid line is lighter than the foreground: the grid's alpha was kept
        assert any(p.color() != fg for p in pens)
        assert axis.zValue() < plot.plot.getViewBox().zValue()


def test_data_is_drawn_over_the_grid(qtbot):
    """A thick curve crossing grid lines keeps its colour where it crosses them."""
    create_app()
    widget = pg.PlotWidget()
    qtbot.addWidget(widget)
    plot = style.styled_plot(widget, "t", "x", "y")
    widget.resize(400, 300)
    widget.show()
    plot.setRange(xRange=(0, 10), yRange=(0, 10), padding=0)
    plot.disableAutoRange()
    red = (230, 0, 0)
    plot.plot([0, 10], [5, 5], pen=pg.mkPen(red, width=9))
    qtbot.wait(100)
    image = widget.grab().toImage()
    vb = plot.getViewBox()
    # every pixel of the curve's middle row inside the view is the curve's colour
    y = int(vb.mapViewToScene(pg.Point(0, 5)).y())
    x0 = int(vb.mapViewToScene(pg.Point(0.5, 5)).x())
    x1 = int(vb.mapViewToScene(pg.Point(9.5, 5)).x())
    colours = {image.pixelColor(x, y).getRgb()[:3] for x in range(x0, x1)}
    assert colours == {red}


def test_the_theme_changes_the_mixed_grid_colour(qtbot):
    create_app()
    plot = ParetoPlot()
    qtbot.addWidget(plot)
    light = {p.color().getRgb() for p in _grid_pens(plot.plot.getAxis("bottom"))}
    try:
        style.set_style(style.Style(theme="dark", background=(30, 31, 34), foreground=(222, 222, 222)))
        dark = {p.color().getRgb() for p in _grid_pens(plot.plot.getAxis("bottom"))}
    finally:
        style.reset()
    assert light and dark and not light & dark
    assert all(max(c[:3]) < 200 for c in dark)  # dark lines on the dark background


def test_the_app_switches_off_qts_gui_thread_pool():
    create_app()
    assert os.environ.get(NO_GUI_THREADPOOL) == "1"
