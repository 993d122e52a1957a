"""How every plot looks: colours, pens, marker sizes and fonts, for the light and dark themes and
for presentation mode.

The module holds one current :class:`Style` (``current()``). Viewers read it when they draw
(``pen()``, ``size()``, ``split_brush()``, ``title_size()``…) and register a callback with
``on_change()`` to draw again when it changes; ``apply_view()`` restyles what every pyqtgraph
view shares (background, axes, tick and label fonts, grid, titles, legends), so plots made by
code that knows nothing of themes follow too. ``set_style()`` is called by the application's
appearance controller (``app/appearance.py``); this module imports nothing from ``app``.

The module constants (``SPLIT_STYLE``, ``PREDICTION_COLOR`` …) are the light theme's colours;
other parts (the 3-D surface view) use them as they are.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field, replace
from typing import Callable

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont, QPen

#: split name -> (label, colour). Colour-blind-safe (Okabe-Ito).
SPLIT_STYLE = {
    "train": ("train", (150, 150, 150)),
    "test_id": ("test in-domain", (0, 114, 178)),
    "test_ood": ("test out-of-domain", (230, 159, 0)),
}
PREDICTION_COLOR = (213, 94, 0)
TRUTH_COLOR = (40, 40, 40)
IDENTITY_COLOR = (0, 158, 115)

#: Okabe-Ito's sky blue: the blue of the dark themes, where the deep blue is too dark to read.
SKY_BLUE = (86, 180, 233)
DEEP_BLUE = (0, 114, 178)

Color = tuple  # (r, g, b) or (r, g, b, a)


@dataclass(frozen=True)
class Style:
    """Everything a plot needs to know about the look of the moment."""

    theme: str = "light"  # "light" or "dark"
    presentation: bool = False
    high_contrast: bool = False
    background: Color = (255, 255, 255)
    foreground: Color = (0, 0, 0)
    muted: Color = (85, 85, 85)  # hints and messages in plots
    grid_alpha: float = 0.25
    line_scale: float = 1.0  # multiplies every pen width
    marker_scale: float = 1.0  # multiplies every marker size
    tick_pt: float | None = None  # axis tick labels; None: the widget's font
    label_pt: float | None = None  # axis titles; None: pyqtgraph's default
    title_pt: float = 10.0  # plot titles
    legend_pt: float | None = None  # legend entries; None: what the plot chose
    brush_alpha: int = 150  # alpha of filled markers
    # Curve colours: Okabe-Ito throughout; the dark themes use its sky blue for blue.
    prediction: Color = PREDICTION_COLOR
    truth: Color = TRUTH_COLOR  # near-black lines (true target); light on dark
    identity: Color = IDENTITY_COLOR
    blue: Color = DEEP_BLUE  # Pareto front, measured lab points
    orange: Color = (230, 159, 0)  # recommended candidate, OOD range
    faint: Color = (160, 160, 160)  # dominated candidates, other experiments
    legend_fill: Color = (255, 255, 255, 210)
    legend_border: Color = (200, 200, 200)
    splits: dict = field(default_factory=lambda: {k: v[1] for k, v in SPLIT_STYLE.items()})
    series: tuple = (DEEP_BLUE, (213, 94, 0), (0, 158, 115), (204, 121, 167), (230, 159, 0), SKY_BLUE)
    # The causal graph's nodes and the Boolean state map's cells.
    node_fill: Color = (235, 242, 250)
    node_edge: Color = (60, 90, 130)
    node_text: Color = (20, 30, 50)
    cell_off: Color = (236, 236, 236)
    cell_on: Color = (0, 84, 147)
    cell_agree: Color = (250, 250, 250)
    cell_false_on: Color = (230, 40, 40)
    cell_false_off: Color = (120, 0, 0)
    cell_not_scored: Color = (215, 215, 215)

    @property
    def dark(self) -> bool:
        return self.theme == "dark"


def make_style(theme: str = "light", presentation: bool = False, base_pt: float = 9.0) -> Style:
    """The style of a theme ("light" / "dark"), in presentation mode or not. ``base_pt`` is the
    application's normal font size; presentation mode sizes plot text from it."""
    dark = theme == "dark"
    s = Style(theme="dark" if dark else "light", presentation=presentation)
    if dark:
        s = replace(
            s, background=(30, 31, 34), foreground=(222, 222, 222), muted=(170, 170, 170), grid_alpha=0.3,
            truth=(235, 235, 235), blue=SKY_BLUE, faint=(125, 125, 125),
            legend_fill=(30, 31, 34, 215), legend_border=(90, 90, 90),
            splits={"train": (165, 165, 165), "test_id": SKY_BLUE, "test_ood": (230, 159, 0)},
            series=(SKY_BLUE, (213, 94, 0), (0, 158, 115), (204, 121, 167), (230, 159, 0), (240, 228, 66)),
            node_fill=(40, 56, 78), node_edge=(140, 175, 215), node_text=(240, 244, 250),
            cell_off=(58, 58, 62), cell_on=SKY_BLUE, cell_agree=(42, 42, 46), cell_false_on=(255, 85, 85),
            cell_false_off=(190, 40, 40), cell_not_scored=(95, 95, 100),
        )
    if presentation:
        # For projectors: pure black / white, thick lines, big markers and text, a firmer grid,
        # opaque markers and no light greys that wash out on a screen in a lit room.
        big = max(base_pt, 6.0) * 1.6
        s = replace(
            s, high_contrast=True, line_scale=3.0, marker_scale=1.8, tick_pt=round(big, 1),
            label_pt=round(big * 1.05, 1), title_pt=round(big * 1.2, 1), legend_pt=round(big * 0.85, 1),
            grid_alpha=0.35, brush_alpha=230,
        )
        if dark:
            s = replace(s, background=(0, 0, 0), foreground=(255, 255, 255), muted=(215, 215, 215),
                        truth=(255, 255, 255), faint=(150, 150, 150), legend_fill=(0, 0, 0, 225),
                        splits={**s.splits, "train": (200, 200, 200)})
        else:
            s = replace(s, background=(255, 255, 255), foreground=(0, 0, 0), muted=(30, 30, 30),
                        truth=(0, 0, 0), faint=(110, 110, 110), legend_border=(60, 60, 60),
                        splits={**s.splits, "train": (95, 95, 95)}, cell_off=(215, 215, 215))
    return s


DEFAULT = make_style()
_current: Style = DEFAULT
_callbacks: list = []  # weak references to callables


def current() -> Style:
    return _current


def on_change(callback: Callable[[Style], None]) -> None:
    """Call ``callback(style)`` whenever the style changes. Held weakly: a bound method goes away
    with its object (and is dropped once its Qt object is deleted), so viewers need not
    unregister. Module-level functions stay registered; lambdas would vanish at once."""
    ref = weakref.WeakMethod(callback) if hasattr(callback, "__self__") else weakref.ref(callback)
    _callbacks.append(ref)


def set_style(style: Style) -> Style:
    """Make ``style`` current: pyqtgraph's defaults for plots made from now on, then every
    registered callback (viewers draw again)."""
    global _current
    _current = style
    configure_pyqtgraph()
    dead = []
    for ref in list(_callbacks):
        callback = ref()
        if callback is None:
            dead.append(ref)
            continue
        try:
            callback(style)
        except RuntimeError as exc:  # the viewer's Qt object was deleted under it
            if "deleted" not in str(exc):
                raise
            dead.append(ref)
    _callbacks[:] = [r for r in _callbacks if r not in dead]  # callbacks added meanwhile stay
    return style


def reset() -> None:
    """Back to the light, normal style (tests use this to leave no trace)."""
    set_style(DEFAULT)


def configure_pyqtgraph() -> None:
    """pyqtgraph's defaults for new plots: the current background and foreground, antialiased
    lines (readable on screens and projectors)."""
    pg.setConfigOptions(background=_current.background, foreground=_current.foreground, antialias=True)


# ---------------------------------------------------------------------- drawing helpers


def pen(color, width: float = 1.0, style=None, alpha: int | None = None):
    """A pen of the current line thickness (``width`` is the normal-mode width)."""
    c = tuple(color)
    if alpha is not None:
        c = c[:3] + (alpha,)
    kwargs = {"width": width * _current.line_scale}
    if style is not None:
        kwargs["style"] = style
    return pg.mkPen(c, **kwargs)


def size(pixels: float) -> float:
    """A marker size in the current scale (``pixels`` is the normal-mode size)."""
    return pixels * _current.marker_scale


def split_color(split: str):
    return _current.splits.get(split, (100, 100, 100))


def split_brush(split: str, alpha: int | None = None):
    r, g, b = split_color(split)[:3]
    if alpha is None or _current.high_contrast:
        alpha = max(alpha or 0, _current.brush_alpha)
    return pg.mkBrush(r, g, b, alpha)


def split_label(split: str) -> str:
    return SPLIT_STYLE.get(split, (split, None))[0]


def title_size() -> str:
    return f"{_current.title_pt:g}pt"


def css(color) -> str:
    """``color`` as a CSS colour for rich text (HTML labels)."""
    r, g, b = tuple(color)[:3]
    return f"rgb({r},{g},{b})"


def font(points: float) -> QFont:
    font = QFont()
    font.setPointSizeF(points)
    return font


# ---------------------------------------------------------------------- plots


def styled_plot(widget: pg.PlotWidget | pg.PlotItem, title: str, x: str, y: str):
    plot = widget.getPlotItem() if isinstance(widget, pg.PlotWidget) else widget
    plot.setTitle(title, size=title_size())
    plot.setLabel("bottom", x)
    plot.setLabel("left", y)
    plot.showGrid(x=True, y=True, alpha=_current.grid_alpha)
    apply_plot(plot)
    return plot


def apply_plot(plot: pg.PlotItem, style: Style | None = None) -> None:
    """Axes (lines, tick text, label text and size, grid), title and legend of one plot."""
    s = style or _current
    fg = pg.mkColor(s.foreground)
    for name in ("left", "bottom", "right", "top"):
        axis = plot.getAxis(name)
        axis.setPen(pg.mkPen(fg, width=1.5 if s.presentation else 1))
        if s.label_pt is not None:
            axis.labelStyle["font-size"] = f"{s.label_pt:g}pt"
        else:
            axis.labelStyle.pop("font-size", None)
        axis.setTextPen(fg)  # also re-renders the axis title with the label style above
        axis.setStyle(tickFont=font(s.tick_pt) if s.tick_pt is not None else None)
        _opaque_grid(axis, s.background)
        if axis.grid is not False:
            axis.setGrid(int(s.grid_alpha * 255))  # also drops the axis's cached drawing
    title = plot.titleLabel
    if title.text:
        title.setText(title.text, color=s.foreground, size=f"{s.title_pt:g}pt")
    else:
        title.opts["color"] = s.foreground
    legend = plot.legend
    if legend is not None:
        apply_legend(legend, s)


#: Axes (and so their grid lines) go below the plot's ViewBox, which pyqtgraph puts at z -100.
AXIS_Z = -200.0


def _mixed(pen, background: QColor):
    """``pen`` with its colour made opaque: mixed with ``background`` by the colour's alpha."""
    color = pen.color()
    a = color.alphaF()
    if a >= 1.0:
        return pen
    mixed = QPen(pen)
    mixed.setColor(QColor.fromRgbF(color.redF() * a + background.redF() * (1 - a),
                                   color.greenF() * a + background.greenF() * (1 - a),
                                   color.blueF() * a + background.blueF() * (1 - a)))
    return mixed


def _opaque_grid(axis: pg.AxisItem, background: Color) -> None:
    """Draw ``axis``'s grid lines and ticks in opaque colours, behind the data.

    pyqtgraph draws a grid as translucent lines over the data. Qt's raster engine blends
    translucent cosmetic lines pixel by pixel, about 0.2 ms per line, so every repaint of a plot
    with a grid cost 7–15 ms, two to three times what the rest of the plot cost, paid by every
    plot a click redraws. Opaque lines of the colour the
    translucent one would have had over the background draw 30 times faster; under the data
    (the axes moved below the ViewBox) they look as before where there is no data and no longer
    tint the points they cross. pyqtgraph's tick placement and fading are kept: only the pens of
    its draw specs change (``generateDrawSpecs`` is wrapped per axis, so the custom axis
    classes of the Pareto plot, the run comparison and the lab get it too)."""
    axis._keplerlab_grid_background = pg.mkColor(background)
    if getattr(axis, "_keplerlab_opaque_grid", False):
        return
    axis._keplerlab_opaque_grid = True
    generate = type(axis).generateDrawSpecs
    ref = weakref.ref(axis)  # the axis holds this function: no reference cycle back to it

    def opaque_specs(painter):
        this = ref()
        specs = generate(this, painter) if this is not None else None
        if specs is None:
            return None
        axis_spec, tick_specs, text_specs = specs
        bg = this._keplerlab_grid_background
        mixed: dict[int, QPen] = {}  # pyqtgraph shares one pen per tick level: mix each once
        opaque = []
        for pen, p1, p2 in tick_specs:
            if id(pen) not in mixed:
                mixed[id(pen)] = _mixed(pen, bg)
            opaque.append((mixed[id(pen)], p1, p2))
        return axis_spec, opaque, text_specs

    axis.generateDrawSpecs = opaque_specs
    axis.setZValue(AXIS_Z)


def apply_legend(legend: pg.LegendItem, style: Style | None = None) -> None:
    s = style or _current
    if not hasattr(legend, "_keplerlab_size"):  # what its plot chose, restored after presentation
        legend._keplerlab_size = legend.opts.get("labelTextSize", "9pt")
        legend._keplerlab_spacing = legend.layout.verticalSpacing()
        legend._keplerlab_filled = legend.opts["brush"].style() != Qt.BrushStyle.NoBrush
        legend._keplerlab_framed = legend.opts["pen"].style() != Qt.PenStyle.NoPen
    size_text = f"{s.legend_pt:g}pt" if s.legend_pt is not None else legend._keplerlab_size
    # setLabelTextColor / setLabelTextSize only store the option for entries added later (the
    # labels already there keep their look until their text is set again), so both are set and
    # every existing label is re-rendered.
    legend.setLabelTextColor(s.foreground)
    legend.setLabelTextSize(size_text)
    for _sample, label in legend.items:
        label.setText(label.text, color=s.foreground, size=size_text)
    # Larger markers in presentation mode need room between the entries' samples.
    legend.layout.setVerticalSpacing(max(legend._keplerlab_spacing, 4) if s.presentation
                                     else legend._keplerlab_spacing)
    # On a projector a legend gets a backing so the curves behind it do not cut through its text.
    legend.setBrush(pg.mkBrush(s.legend_fill) if legend._keplerlab_filled or s.presentation else pg.mkBrush(None))
    if legend._keplerlab_framed:
        legend.setPen(pg.mkPen(s.legend_border))
    legend.updateSize()


def apply_view(view: pg.GraphicsView, style: Style | None = None) -> None:
    """Background of a PlotWidget / GraphicsLayoutWidget and the shared parts of every plot in it."""
    s = style or _current
    view.setBackground(s.background)
    scene = view.scene()
    if scene is None:
        return
    for item in scene.items():
        if isinstance(item, pg.PlotItem):
            apply_plot(item, s)
        elif isinstance(item, pg.LegendItem) and not isinstance(item.parentItem(), pg.PlotItem):
            apply_legend(item, s)
