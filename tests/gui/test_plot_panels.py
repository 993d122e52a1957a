"""The task's data preview and the fit viewer: what they draw and what their legends list, as a
user changes the plotted input, opens another task and another run (the legends are emptied in one
step and the preview's points are not redrawn on every range change, for speed: nothing may go
missing or appear twice, and the plot menu's transforms still apply)."""

from __future__ import annotations

import numpy as np
import pytest

from engine.fits import FitData
from engine.tasks.model import Split, TaskData
from viewers.data_preview import DataPreview
from viewers.fit_viewer import FitViewer
from viewers.style import split_label


def _legend(plot) -> list[str]:
    return [label.text for _sample, label in plot.legend.items]


def _task_data(seed: int = 0) -> TaskData:
    rng = np.random.default_rng(seed)
    splits = {}
    for name, n in (("train", 4000), ("test_id", 500), ("test_ood", 500)):
        X = rng.uniform(0, 1, (n, 2))
        y = 3 * X[:, 0] + X[:, 1] ** 2
        splits[name] = Split(name, X, y)
    splits["train"].y[:10] = np.nan  # rows a user's data may hold: not drawn, nothing else lost
    return TaskData(splits)


def test_the_preview_draws_each_split_once_as_the_user_changes_input_and_task(qtbot):
    preview = DataPreview()
    qtbot.addWidget(preview)
    preview.resize(600, 400)
    preview.show()
    data = _task_data()
    preview.set_data(data, ["x0", "x1"], "y", preferred="x1")
    labels = [split_label(s) for s in ("train", "test_id", "test_ood")]
    assert _legend(preview.plot) == labels
    assert preview.point_count() == 3990 + 500 + 500  # the ten NaN rows are left out
    items = preview.plot.listDataItems()
    np.testing.assert_allclose(np.sort(items[1].getData()[0]), np.sort(data["test_id"].X[:, 1]))

    preview.input_box.setCurrentIndex(0)  # the user plots against x0 instead
    assert preview.plot.getAxis("bottom").labelText == "x0"
    assert _legend(preview.plot) == labels  # redrawn, not added to
    items = preview.plot.listDataItems()
    assert len(items) == 3
    np.testing.assert_allclose(np.sort(items[2].getData()[0]), np.sort(data["test_ood"].X[:, 0]))

    preview.plot.setLogMode(x=True, y=False)  # the plot menu's Transforms ▸ Log X
    shown = np.sort(preview.plot.listDataItems()[2].getData()[0])
    np.testing.assert_allclose(shown, np.log10(np.sort(data["test_ood"].X[:, 0])))
    preview.plot.setLogMode(x=False, y=False)

    preview.set_loading("another task")  # another task is picked: the old data go at once
    assert _legend(preview.plot) == [] and preview.point_count() == 0
    assert "another task" in preview.status.text()
    preview.set_data(_task_data(1), ["x0", "x1"], "y")
    assert _legend(preview.plot) == labels and preview.point_count() == 4990
    preview.set_error("Could not build the data: boom")
    assert _legend(preview.plot) == [] and preview.point_count() == 0


def _fit(splits: tuple[str, ...], offset: float = 0.0) -> FitData:
    rng = np.random.default_rng(len(splits))
    pairs = {}
    for name in splits:
        y = rng.normal(size=300)
        pairs[name] = (y, y + offset + 0.01 * rng.normal(size=300))
    return FitData(target="y", splits=pairs, title="y = f(x)")


#: One viewer for the session, as the app keeps one for the window's life: deleting a lone
#: FitViewer makes pyqtgraph re-anchor its legends against view boxes already deleted (a
#: RuntimeError in a slot; it was so before the legends were emptied in one step too).
_VIEWERS: list[FitViewer] = []


def test_the_fit_legend_follows_the_fit_shown_and_hides_on_clear(qtbot, tmp_path):
    viewer = FitViewer()
    _VIEWERS.append(viewer)
    try:
        viewer.resize(600, 500)
        viewer.show()
        viewer.show_fit(_fit(("train", "test_id", "test_ood")))
        three = [split_label(s) for s in ("train", "test_id", "test_ood")]
        assert sorted(_legend(viewer.scatter_plot)) == sorted(three + ["identity"])

        viewer.clear("Computing the fit…")  # another run is opened: nothing of the last fit shows
        assert not viewer.scatter_plot.legend.isVisible() and viewer.plotted_point_count() == 0
        # ... nor is exported: the plot menu's CSV export writes the plot's items, hidden or not.
        from pyqtgraph.exporters import CSVExporter

        path = tmp_path / "fit.csv"
        CSVExporter(viewer.scatter_plot).export(str(path))
        assert not path.exists() or not any(ch.isdigit() for ch in path.read_text())
        assert viewer.header.text() == "Computing the fit…"
        assert not any(item.isVisible() for item in viewer.scatter_plot.listDataItems())
        assert not any(item.isVisible() for item in viewer.residual_plot.items)

        viewer.show_fit(_fit(("train", "test_id")))  # its fit has two splits: two entries, no leftovers
        assert sorted(_legend(viewer.scatter_plot)) == sorted(three[:2] + ["identity"])
        assert viewer.scatter_plot.legend.isVisible() and viewer.plotted_point_count() == 600
        viewer.show_fit(_fit(("train", "test_id", "test_ood"), offset=1.0))
        assert sorted(_legend(viewer.scatter_plot)) == sorted(three + ["identity"])
        viewer.clear("Computing the fit…")
        refill = _fit(("train", "test_id", "test_ood"), offset=2.0)  # the same splits: refilled in place
        viewer.show_fit(refill)
        assert sorted(_legend(viewer.scatter_plot)) == sorted(three + ["identity"])
        assert viewer.scatter_plot.legend.isVisible() and viewer.plotted_point_count() == 900
        assert all(item.isVisible() for item in viewer.scatter_plot.listDataItems())
        y_true, y_pred = refill.splits["test_id"]
        shown = next(i for i in viewer.scatter_plot.listDataItems() if i.name() == split_label("test_id"))
        assert np.allclose(shown.getData()[1], y_pred)
    finally:
        viewer.hide()  # kept for the session (above), out of sight


def test_the_fit_scatter_draws_what_pyqtgraphs_own_scatter_draws(qtbot):
    """The fit viewer's scatter looks each point's picture up once for all points: the picture
    on screen is pyqtgraph's own, point for point, also after a refill; points with styles of
    their own still get theirs."""
    import pyqtgraph as pg

    from viewers.scatter import UniformScatter

    rng = np.random.default_rng(3)
    views, items = [], []
    for cls in (pg.ScatterPlotItem, UniformScatter):
        view = pg.PlotWidget()
        qtbot.addWidget(view)
        view.resize(400, 300)
        view.setRange(xRange=(0, 1), yRange=(0, 1), padding=0)
        view.show()
        item = cls(size=6, pen=None, brush=pg.mkBrush(200, 40, 40), symbol="o", hoverable=False)
        view.addItem(item)
        views.append(view)
        items.append(item)
    for _refill in range(2):
        x, y = rng.uniform(0, 1, 800), rng.uniform(0, 1, 800)
        for item in items:
            item.setData(x=x, y=y)
        own, ours = (item.data["sourceRect"] for item in items)
        assert (own["w"] > 0).all() and np.array_equal(own, ours)
        assert views[0].grab().toImage() == views[1].grab().toImage()

    # A brush per point: each point keeps its own colour (pyqtgraph's path).
    blue, green = pg.mkBrush(0, 0, 255), pg.mkBrush(0, 160, 0)
    brushes = [blue if i % 2 else green for i in range(4)]
    items[1].setData(x=[0.1, 0.2, 0.3, 0.4], y=[0.5] * 4, brush=brushes)
    rects = items[1].data["sourceRect"]
    assert (rects["w"] > 0).all() and len({tuple(r) for r in rects}) == 2


def _behind_history(qtbot, width: int, height: int):
    """A fit viewer in the second tab of a shown tab widget, behind "the run history"."""
    from PySide6.QtWidgets import QLabel, QTabWidget

    tabs = QTabWidget()
    viewer = FitViewer()
    _VIEWERS.append(tabs)  # kept for the session, as above
    tabs.addTab(QLabel("the run history"), "History")
    tabs.addTab(viewer, "Fit")
    tabs.resize(width, height)
    tabs.show()
    qtbot.waitExposed(tabs)
    return tabs, viewer


def test_a_fit_behind_another_tab_is_drawn_when_its_tab_comes_forward(qtbot):
    """A fit that comes while its panel is behind another tab (the run history a user clicks
    through) is not drawn until the user brings the panel forward; then it is, at once."""
    from PySide6.QtCore import Qt

    tabs, viewer = _behind_history(qtbot, 700, 500)
    try:
        fit = _fit(("train", "test_id", "test_ood"))
        viewer.show_fit(fit)
        assert viewer.current is fit and viewer.header.text() == "y = f(x)"
        assert viewer.drawing_owed() and viewer.plotted_point_count() == 0

        bar = tabs.tabBar()
        qtbot.mouseClick(bar, Qt.MouseButton.LeftButton, pos=bar.tabRect(1).center())
        qtbot.waitUntil(lambda: viewer.plotted_point_count() == 900, timeout=5000)
        assert not viewer.drawing_owed()
        assert sorted(_legend(viewer.scatter_plot)) == sorted(
            [split_label(s) for s in ("train", "test_id", "test_ood")] + ["identity"])

        viewer.show_fit(_fit(("train", "test_id")))  # on screen: drawn at once
        assert viewer.plotted_point_count() == 600 and not viewer.drawing_owed()

        qtbot.mouseClick(bar, Qt.MouseButton.LeftButton, pos=bar.tabRect(0).center())
        viewer.show_fit(fit)
        viewer.clear("Computing the fit…")  # what was owed is dropped with the fit
        assert not viewer.drawing_owed() and viewer.current is None
    finally:
        tabs.hide()


def _dynamical_fit(scale: float) -> FitData:
    """A fit of a dynamical task: 4000 + 500 + 500 samples of a trajectory over t in [0, 60],
    the last 500 (t > 54) out of domain, as the LLM-SRBench ODE tasks have them."""
    t = np.linspace(0, 60, 5000)
    y = 0.01 + 0.002 * np.sin(t / 5)
    order = {"train": slice(0, 4000), "test_id": slice(4000, 4500), "test_ood": slice(4500, 5000)}
    ids = np.arange(5000)
    ids[:4500] = np.random.default_rng(0).permutation(4500)  # in-domain test points among the training ones
    pairs = {name: (y[ids[part]], scale * y[ids[part]]) for name, part in order.items()}
    times = {name: t[ids[part]] for name, part in order.items()}
    return FitData(target="dA_dt", splits=pairs, time=times, title=f"dA_dt = {scale}*A")


class _Paints:
    """Counts the paints a widget gets."""

    def __init__(self, widget):
        from PySide6.QtCore import QEvent, QObject

        counter = self

        class Filter(QObject):
            def eventFilter(self, obj, event):  # noqa: N802 -- Qt's name
                if event.type() == QEvent.Type.Paint:
                    counter.count += 1
                return False

        self.count = 0
        self._filter = Filter()
        widget.installEventFilter(self._filter)


def test_a_new_fit_is_painted_once_with_its_trajectory_and_ood_range(qtbot):
    """pyqtgraph settles ranges, axis widths and a label's transform inside the paint, and asks
    for another paint after each: a dynamical task's fit was painted three times (two of them in
    one turn of over 80 ms). The viewer settles all of that before its one paint."""
    viewer = FitViewer()
    _VIEWERS.append(viewer)
    try:
        viewer.resize(740, 520)
        viewer.show()
        qtbot.waitExposed(viewer)
        viewport = viewer.layout_widget.viewport()
        paints = _Paints(viewport)
        for scale in (1.0, 1.3, 0.7):
            fit = _dynamical_fit(scale)
            viewer.show_fit(fit)
            assert viewer.plotted_point_count() == 5000  # the points at once...
            assert not viewport.updatesEnabled()  # ... painted once the rest is settled
            paints.count = 0
            qtbot.waitUntil(lambda: viewport.updatesEnabled() and paints.count > 0, timeout=5000)
            qtbot.wait(300)
            assert paints.count == 1, scale

            # The trajectory and the model over time, the OOD range shaded and labelled.
            assert viewer.time_plot.isVisible()
            t_all, y_all = viewer._model.xData, viewer._model.yData  # what it holds (it draws peaks)
            assert t_all[0] == 0 and t_all[-1] == 60 and len(t_all) == 5000
            assert np.isclose(np.nanmax(viewer._model.getData()[1]), np.max(y_all))  # no peak lost
            assert viewer._ood_region.isVisible()
            assert viewer._ood_region.getRegion() == pytest.approx((fit.time["test_ood"].min(), 60))
            assert [label.text for _s, label in viewer.time_plot.legend.items] == ["true dA_dt", "model"]
            (x0, x1), (y0, y1) = viewer.time_plot.getViewBox().viewRange()
            label = viewer._ood_label.pos()
            assert x0 <= label.x() <= x1 and y0 <= label.y() <= y1  # hung inside the plot
            # The ranges the paint found are the ones settled before it: nothing moved since.
            assert all(not plot.getViewBox()._autoRangeNeedsUpdate
                       for plot in (viewer.scatter_plot, viewer.residual_plot, viewer.time_plot))

        viewer.show_fit(_fit(("train", "test_id", "test_ood")))  # a task without time: no time plot
        qtbot.waitUntil(viewport.updatesEnabled, timeout=5000)
        assert not viewer.time_plot.isVisible() and viewer.plotted_point_count() == 900
        assert viewer._model.xData is None or len(viewer._model.xData) == 0
    finally:
        viewer.hide()


def test_a_panel_brought_forward_is_drawn_after_it_came_forward_and_painted_once(qtbot):
    """As a run ends the window brings the Fit panel forward over the run history: the panel
    comes forward on the next turn, and its fit is drawn and settled on the turns after, then
    painted once."""
    tabs, viewer = _behind_history(qtbot, 760, 560)
    try:
        viewport = viewer.layout_widget.viewport()
        paints = _Paints(viewport)
        for scale in (1.0, 0.8):
            tabs.setCurrentIndex(0)
            qtbot.wait(50)
            viewer.show_fit(_dynamical_fit(scale))
            assert viewer.drawing_owed()
            viewer.draw_then(lambda: tabs.setCurrentIndex(1))
            assert tabs.currentIndex() == 0  # on the next turn
            paints.count = 0
            qtbot.waitUntil(lambda: tabs.currentIndex() == 1, timeout=5000)
            qtbot.waitUntil(lambda: viewport.updatesEnabled() and paints.count > 0, timeout=5000)
            qtbot.wait(300)
            assert paints.count == 1 and viewer.plotted_point_count() == 5000
            assert not viewer.drawing_owed()

        called = []
        viewer.draw_then(lambda: called.append(True))  # nothing owed: at once
        assert called == [True]
    finally:
        tabs.hide()


def _loss_and_pareto_tabs():
    """The Loss and Pareto plots as tabs of one widget, shown, as in the window's progress dock."""
    from PySide6.QtWidgets import QTabWidget

    from viewers.loss_plot import LossPlot
    from viewers.pareto_plot import ParetoPlot

    tabs = QTabWidget()
    loss, front = LossPlot(), ParetoPlot()
    _VIEWERS.append(tabs)
    tabs.addTab(loss, "Loss")
    tabs.addTab(front, "Pareto")
    tabs.resize(500, 400)
    tabs.show()
    return tabs, loss, front


def test_the_loss_and_pareto_plots_are_painted_once_per_change_after_the_turn_that_made_it(qtbot):
    """A new loss curve or Pareto front is laid out and ranged over the next turns with the plot
    held, then painted once (pyqtgraph painted each twice, in the turn of the click or the
    run's end); a plot behind another tab is settled when it is shown. (A tab coming forward
    is painted two or three times by Qt whatever it shows: not counted.)"""
    tabs, loss, front = _loss_and_pareto_tabs()
    try:
        qtbot.waitExposed(tabs)
        tabs.setCurrentIndex(1)  # each tab shown once (laid out at its size), as in the window
        qtbot.wait(100)
        tabs.setCurrentIndex(0)
        qtbot.wait(100)
        loss_paints, front_paints = _Paints(loss.plot_widget.viewport()), _Paints(front.plot_widget.viewport())
        for k in range(3):
            losses = 10.0 ** -np.arange(1, 9 + 3 * k)  # above the plot's floor of 1e-16
            loss.set_series(range(len(losses)), losses)
            assert not loss.plot_widget.viewport().updatesEnabled()  # held this turn
            loss_paints.count = 0
            qtbot.waitUntil(lambda: loss.plot_widget.viewport().updatesEnabled() and loss_paints.count > 0,
                            timeout=5000)
            qtbot.wait(200)
            assert loss_paints.count == 1
            (_x0, x1), (y0, _y1) = loss.plot.getViewBox().viewRange()
            assert x1 >= len(losses) - 1 and y0 <= -(8 + 3 * k)  # the whole curve, log decades

        rows = [{"complexity": c, "loss": 10.0 ** -c, "expression": f"x**{c}"} for c in range(1, 9)]
        front.set_front(rows)  # behind the loss tab: nothing is held, nothing painted
        assert front.plot_widget.viewport().updatesEnabled()
        tabs.setCurrentIndex(1)  # comes forward: settled inside its first paint
        qtbot.waitUntil(lambda: front_paints.count > 0, timeout=5000)
        (_x0, x1), (y0, _y1) = front.plot.getViewBox().viewRange()
        assert x1 >= 8 and y0 <= -8 and not front.plot.getViewBox()._autoRangeNeedsUpdate
        front.set_front(rows[:5], recommended=2)  # on screen: held, then painted once
        assert not front.plot_widget.viewport().updatesEnabled()
        front_paints.count = 0
        qtbot.waitUntil(lambda: front.plot_widget.viewport().updatesEnabled() and front_paints.count > 0,
                        timeout=5000)
        qtbot.wait(200)
        assert front_paints.count == 1
        assert front.point_widget_pos(2) is not None
    finally:
        tabs.hide()


def test_a_step_that_fails_does_not_leave_the_plot_frozen(qtbot):
    """The viewport's updates are off while a change is settled in steps: a step that raises
    (a pyqtgraph error, say) is reported, and the plot paints again."""
    import pyqtgraph as pg

    from viewers.settle import PaintOnce

    view = pg.PlotWidget()
    qtbot.addWidget(view)
    view.resize(300, 200)
    view.show()
    qtbot.waitExposed(view)
    paint = PaintOnce(view, (view.getPlotItem(),))

    def steps():
        yield
        raise RuntimeError("a step failed")

    with qtbot.capture_exceptions() as caught:
        paint.hold()
        assert not view.viewport().updatesEnabled()
        paint.in_turns(steps())
        qtbot.waitUntil(lambda: view.viewport().updatesEnabled(), timeout=5000)
    assert [str(e[1]) for e in caught] == ["a step failed"]


def test_a_plot_changed_faster_than_it_settles_still_paints(qtbot):
    """A live loss curve is redrawn up to 20 times a second; under load settling may take
    longer than that. Each change must not start a sequence of its own that keeps the plot
    held: the plot paints while the changes keep coming."""
    from PySide6.QtCore import QTimer

    from viewers.loss_plot import LossPlot

    loss = LossPlot()
    _VIEWERS.append(loss)
    loss.resize(400, 300)
    loss.show()
    try:
        qtbot.waitExposed(loss)
        paints = _Paints(loss.plot_widget.viewport())
        points = []

        def grow() -> None:
            points.append(10.0 ** -(len(points) % 12))
            loss.set_series(range(len(points)), points)

        timer = QTimer()
        timer.setInterval(2)  # faster than a sequence of settling steps ends
        timer.timeout.connect(grow)
        timer.start()
        try:
            qtbot.waitUntil(lambda: paints.count >= 3, timeout=5000)
        finally:
            timer.stop()
        qtbot.waitUntil(loss.plot_widget.viewport().updatesEnabled, timeout=5000)
    finally:
        loss.hide()


def test_a_pareto_front_brought_forward_is_settled_before_its_one_paint(qtbot):
    """As a run ends, its Pareto tab comes forward (the front was set behind the Loss tab):
    shown with the plot held, settled over the next turns, then painted once, with nothing
    left for the paint to range or size."""
    from PySide6.QtCore import QEvent, QObject

    tabs, loss, front = _loss_and_pareto_tabs()
    try:
        qtbot.waitExposed(tabs)
        rows = [{"complexity": c, "loss": 10.0 ** -c, "expression": f"x**{c}"} for c in range(1, 9)]
        front.set_front(rows, recommended=3)  # behind the Loss tab
        paints = _Paints(front.plot_widget.viewport())
        unsettled_at_paint = []  # (this filter runs before PaintOnce's, which settles what is left)

        class Watch(QObject):
            def eventFilter(self, obj, event):  # noqa: N802 -- Qt's name
                if event.type() == QEvent.Type.Paint:
                    unsettled_at_paint.append(front._paint.unsettled)
                return False

        watch = Watch()
        front.plot_widget.viewport().installEventFilter(watch)
        front.bring_forward(lambda: tabs.setCurrentWidget(front))
        assert tabs.currentWidget() is loss  # on a later turn
        qtbot.waitUntil(lambda: tabs.currentWidget() is front, timeout=5000)
        assert not front.plot_widget.viewport().updatesEnabled()  # held while it settles
        qtbot.waitUntil(lambda: front.plot_widget.viewport().updatesEnabled() and paints.count > 0, timeout=5000)
        qtbot.wait(200)
        assert paints.count == 1 and unsettled_at_paint == [False]  # nothing left for the paint to do
        (_x0, x1), (y0, _y1) = front.plot.getViewBox().viewRange()
        assert x1 >= 8 and y0 <= -8 and not front.plot.getViewBox()._autoRangeNeedsUpdate
        assert front.point_widget_pos(3) is not None
    finally:
        tabs.hide()
