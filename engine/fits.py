"""A model's fit, ready to draw: predicted against true per split, the trajectories of a system,
the 3-D surfaces, the Boolean state map or the causal graph.

Computed off the window's thread (in an engine host, :mod:`engine.host`), so everything here is
plain data: NumPy arrays and dataclasses, no Qt. The viewers in ``viewers/`` draw it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .scoring import Evaluation, evaluate
from .symbolbench.scoring import states
from .tasks.model import Task


@dataclass
class FitData:
    """Everything the viewer draws; built off the GUI thread."""

    target: str  # target variable name
    splits: dict[str, tuple[np.ndarray, np.ndarray]]  # split -> (y_true, y_pred)
    time: dict[str, np.ndarray] | None = None  # split -> time values (dynamical tasks)
    time_name: str = "t"
    title: str = ""



@dataclass
class TrajectoryData:
    """What the view draws; built off the GUI thread."""

    states: list[str]
    descriptions: dict[str, str]
    #: split -> (t (n,), observed (n, D), simulated (n, D) or None)
    splits: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray | None]]
    r2: dict[str, float | None] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    title: str = ""



@dataclass
class FitReady:
    """A model's fit, computed off the GUI thread."""

    run_id: str | None
    task_id: str
    expression: str
    evaluation: Evaluation
    fit: FitData
    surface: object = None  # engine.surfaces.mesh.SurfacePair of a surface task, for the 3-D view
    series: object = None  # viewers.trajectory_view.TrajectoryData of an ODE task
    kind: str = "fit"


def compute_fit(task: Task, expression: str, run_id: str | None = None, title: str = "") -> FitReady:
    data = task.load_data()
    if task.kind in ("boolean_network", "causal_graph"):
        # No predicted-against-true plot: their fit is the state map or the graph.
        evaluation = evaluate(task, expression, data)
        return FitReady(run_id, task.id, expression, evaluation, None, None,
                        structure_data(task, data, expression, evaluation.predictions, title))
    # The run already scored the model; the geometric metrics of surfaces are not redrawn here.
    evaluation = evaluate(task, expression, data, geometry=False)
    splits = {s.name: (s.y, evaluation.predictions[s.name]) for s in data}
    target = task.target.name
    surface = None
    if task.kind == "surface":
        from .surfaces.view import build_pair

        surface = build_pair(task, expression, title=title or f"{task.title}: predicted against true")
        if task.metadata.get("form") == "parametric":
            # The three coordinates pooled in one predicted-against-true plot.
            splits = {name: (y.ravel(), y_hat.ravel()) for name, (y, y_hat) in splits.items()}
            target = "x, y, z"
    series = None
    if task.kind == "ode":
        series = trajectory_data(task, data, evaluation.predictions, evaluation.metrics,
                                 title=title or f"{task.title}: {task.model_label} = {expression}")
        # The states pooled in one predicted-against-true plot (NaN where a simulation failed).
        splits = {name: (y.ravel(), y_hat.ravel()) for name, (y, y_hat) in splits.items()}
        target = ", ".join(task.metadata.get("states", []))
    time = None
    if task.time_variable and task.time_variable in task.input_names:
        col = task.input_names.index(task.time_variable)
        time = {s.name: s.X[:, col] for s in data}
    fit = FitData(
        target=target,
        splits=splits,
        time=time,
        time_name=task.time_variable or "t",
        title=title or f"{task.id}: {target} = {expression}",
    )
    return FitReady(run_id, task.id, expression, evaluation, fit, surface, series)


def structure_data(task: Task, data, expression: str | None = None, predictions: dict | None = None,
                   title: str = "") -> dict:
    """What the Boolean state map or the causal-graph view draws (truth only without a model)."""
    if task.kind == "causal_graph":
        from .tasks.symbolbench_scm import parse_edges, true_edges

        names = states(task)
        predicted = parse_edges(expression, names) if expression else None
        return {"kind": "causal_graph", "names": names, "true": true_edges(task), "predicted": predicted,
                "title": title or task.title}
    splits = {s.name: s.y for s in data if s.name in ("train", "test_ood")}
    preds = {k: v for k, v in (predictions or {}).items() if k in splits} or None
    return {"kind": "boolean_network", "genes": list(task.metadata["genes"]), "true": splits,
            "predicted": preds, "inputs": list(task.metadata.get("inputs") or []), "title": title or task.title}


def trajectory_data(task: Task, data, predictions: dict | None = None, metrics: dict | None = None, title: str = ""):
    """The trajectory view's data: observed series and, with a model, its simulations."""
    names = states(task)
    keys = {"train": "train", "test_ood": "ood"}
    splits, r2, errors = {}, {}, {}
    for split in data:
        if split.name not in keys:
            continue
        observed = split.y.reshape(len(split.y), -1)
        simulated = (predictions or {}).get(split.name)
        splits[split.name] = (split.X[:, 0], observed, simulated)
        found = (metrics or {}).get(keys[split.name]) or {}
        if "r2" in found:
            r2[split.name] = found["r2"]
        if found.get("error"):
            errors[split.name] = found["error"]
    descriptions = {v.name: v.description for v in task.variables}
    return TrajectoryData(names, descriptions, splits, r2, errors, title or task.title)


def task_data(task: Task) -> tuple[str, object]:
    """``(task id, its TaskData)``: the data preview's request."""
    return task.id, task.load_data()


def true_surface(task: Task) -> tuple[str, object]:
    """``(task id, the SurfacePair of its true surface)``: the 3-D view before any model."""
    from .surfaces.view import build_pair

    return task.id, build_pair(task)
