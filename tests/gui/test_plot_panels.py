"""The task's data preview and the fit viewer: what they draw and what their legends list, as a
user changes the plotted input, opens another task and another run (the legends are emptied in one
step and the preview's points are not redrawn on every range change, for speed: nothing may go
missing or appear twice, and the plot menu's transforms still apply)."""

from __future__ import annotations

import numpy as np

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


def test_the_fit_legend_follows_the_fit_shown_and_empties_on_clear(qtbot):
    viewer = FitViewer()
    _VIEWERS.append(viewer)
    try:
        viewer.resize(600, 500)
        viewer.show()
        viewer.show_fit(_fit(("train", "test_id", "test_ood")))
        three = [split_label(s) for s in ("train", "test_id", "test_ood")]
        assert sorted(_legend(viewer.scatter_plot)) == sorted(three + ["identity"])

        viewer.clear("Computing the fit…")  # another run is opened
        assert _legend(viewer.scatter_plot) == []
        assert viewer.header.text() == "Computing the fit…"
        assert viewer.scatter_plot.listDataItems() == []

        viewer.show_fit(_fit(("train", "test_id")))  # its fit has two splits: two entries, no leftovers
        assert sorted(_legend(viewer.scatter_plot)) == sorted(three[:2] + ["identity"])
        viewer.show_fit(_fit(("train", "test_id", "test_ood"), offset=1.0))
        assert sorted(_legend(viewer.scatter_plot)) == sorted(three + ["identity"])
    finally:
        viewer.hide()  # kept for the session (above), out of sight
