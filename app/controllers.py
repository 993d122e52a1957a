"""Controllers: the Qt side of runs, data loading and fit computation.

They adapt the engine's generators to signals via :mod:`app.worker`; no model is evaluated,
no data generated and no LLM called on the GUI thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PySide6.QtCore import QObject, Signal

from engine import methods as m
from engine.runner import RunFinished, RunStarted, execute
from engine.scoring import Evaluation, evaluate
from engine.symbolbench.scoring import states
from engine.store import RunStore
from engine.tasks.model import Task
from viewers.fit_viewer import FitData

from .worker import GeneratorJob, call_in_thread, start_job


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
        from engine.surfaces.view import build_pair

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
        from engine.tasks.symbolbench_scm import parse_edges, true_edges

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
    from viewers.trajectory_view import TrajectoryData

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


class RunController(QObject):
    """Starts and stops one run at a time and re-emits its events on the GUI thread."""

    started = Signal(object)  # RunStarted
    event = Signal(object)  # engine method events (Progress, ParetoFront, Log, Final)
    finished = Signal(object)  # RunFinished
    fit_ready = Signal(object)  # FitReady for the run's final model
    failed = Signal(str)
    idle = Signal()

    def __init__(self, db_path: Path, parent: QObject | None = None):
        super().__init__(parent)
        self.db_path = db_path
        self.job: GeneratorJob | None = None
        self.context: m.RunContext | None = None
        self.run_id: str | None = None
        self.task: Task | None = None

    def is_running(self) -> bool:
        return self.job is not None and self.job.is_running()

    def start(self, task: Task, method: str, config: dict, judge=None, resume: str | None = None) -> None:
        """Run ``method`` on ``task`` off the GUI thread; ``judge`` (LLMSettings) also asks the
        LLM judge about the final model. ``resume`` continues that interrupted run instead of
        starting a new one (engine.resume; ``config`` is then the stored one)."""
        if self.is_running():
            raise RuntimeError("a run is already going")
        self.task = task
        self.context = context = m.RunContext()
        db_path = self.db_path

        def produce():
            # The worker thread opens its own connection (SQLite connections are per thread).
            store = RunStore(db_path)
            try:
                result = None
                for item in execute(task, method, config, context, store, judge=judge, resume=resume):
                    if isinstance(item, RunFinished):
                        result = item
                    yield item
                if result is not None and result.expression:
                    try:
                        yield compute_fit(task, result.expression, result.run_id)
                    except Exception as exc:  # the run is stored; only the picture is missing
                        yield m.Log(f"could not draw the fit: {exc}", "warning")
            finally:
                store.close()

        self.job = start_job(produce, name=f"run-{method}")
        self.job.item.connect(self._on_item)
        self.job.failed.connect(self.failed)
        self.job.finished.connect(self._on_finished)

    def stop(self) -> None:
        if self.context is not None:
            self.context.cancel()

    def shutdown(self, msecs: int = 5000) -> None:
        """Cancel any run and wait for its thread (window closing)."""
        if self.is_running():
            self.stop()
            self.job.wait(msecs)

    def _on_item(self, item) -> None:
        if isinstance(item, RunStarted):
            self.run_id = item.run_id
            self.started.emit(item)
        elif isinstance(item, RunFinished):
            self.finished.emit(item)
        elif isinstance(item, FitReady):
            self.fit_ready.emit(item)
        else:
            self.event.emit(item)

    def _on_finished(self) -> None:
        self.job = None
        self.idle.emit()


class Loader(QObject):
    """Runs one-shot computations off the GUI thread and drops stale answers: only the most
    recent request of each channel is delivered (a user clicking through tasks quickly)."""

    ready = Signal(str, object)  # channel, result
    error = Signal(str, str)  # channel, message
    #: channel, True when a request starts; False when the channel's newest request has answered
    #: or was cancelled (the status bar's activity indicator follows it).
    activity = Signal(str, bool)

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._tokens: dict[str, int] = {}
        self._jobs: set[GeneratorJob] = set()

    def request(self, channel: str, func) -> None:
        token = self._tokens.get(channel, 0) + 1
        self._tokens[channel] = token
        job = call_in_thread(func, name=f"load-{channel}")
        self._jobs.add(job)

        def deliver(result, token=token):
            if self._tokens.get(channel) == token:
                self.ready.emit(channel, result)

        def fail(message, token=token):
            if self._tokens.get(channel) == token:
                self.error.emit(channel, message.split("\n", 1)[0])

        def settle(job=job, token=token):
            self._jobs.discard(job)
            if self._tokens.get(channel) == token:
                self.activity.emit(channel, False)

        job.item.connect(deliver)
        job.failed.connect(fail)
        job.finished.connect(settle)
        self.activity.emit(channel, True)

    def busy(self) -> bool:
        return any(j.is_running() for j in self._jobs)

    def cancel(self, channel: str) -> None:
        """Drop the answer of the channel's request in flight (newer news arrived another way)."""
        self._tokens[channel] = self._tokens.get(channel, 0) + 1
        self.activity.emit(channel, False)

    def wait_all(self, msecs: int = 5000) -> None:
        _wait_for(self.busy, self._jobs, msecs)


def _wait_for(busy, jobs, msecs: int) -> None:
    """Wait until ``busy()`` is false, letting queued signals through meanwhile. A job's thread
    is told to quit by a queued call (its QThread object lives on this thread), so a plain
    blocking ``QThread.wait`` here would always run to its time limit."""
    import time

    from PySide6.QtCore import QCoreApplication, QEventLoop

    deadline = time.monotonic() + msecs / 1000
    while busy() and time.monotonic() < deadline:
        QCoreApplication.processEvents(QEventLoop.ProcessEventsFlag.ExcludeUserInputEvents, 20)
        for job in list(jobs):
            job.wait(20)


def progress_fraction(event: m.Progress, seconds: float | None) -> float:
    """How far a run is, by time budget or by iterations, whichever is further."""
    parts = []
    if seconds:
        parts.append(event.elapsed / seconds)
    if event.total_iterations:
        parts.append(event.iteration / event.total_iterations)
    return float(np.clip(max(parts) if parts else 0.0, 0.0, 1.0))


class CandidateScorer(QObject):
    """Scores a Pareto front off the GUI thread (test metrics, then symbolic accuracy per
    candidate) and reports each result as it comes. A new request supersedes the previous one:
    the old job is asked to stop and its late answers are dropped."""

    scored = Signal(object, int, object)  # key, index into the expressions, CandidateScore
    done = Signal(object)  # key

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._token = 0
        self._job: GeneratorJob | None = None
        self._jobs: set[GeneratorJob] = set()

    def request(self, key, task: Task, expressions: list[str], sa_seconds: float | None = None) -> None:
        from engine.candidates import SA_SECONDS, iter_candidate_scores

        self.cancel()
        self._token += 1
        token = self._token
        seconds = SA_SECONDS if sa_seconds is None else sa_seconds
        expressions = list(expressions)
        job = start_job(lambda: iter_candidate_scores(task, expressions, seconds), name="score-candidates")
        self._job = job
        self._jobs.add(job)

        def deliver(item, token=token):
            if token == self._token:
                self.scored.emit(key, item[0], item[1])

        def finish(job=job, token=token):
            self._jobs.discard(job)
            if token == self._token:
                self._job = None
                self.done.emit(key)

        job.item.connect(deliver)
        job.finished.connect(finish)

    def cancel(self) -> None:
        self._token += 1
        if self._job is not None:
            self._job.request_stop()
            self._job = None

    def busy(self) -> bool:
        return any(j.is_running() for j in self._jobs)

    def wait_all(self, msecs: int = 10000) -> None:
        _wait_for(self.busy, self._jobs, msecs)
