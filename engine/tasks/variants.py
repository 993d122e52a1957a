"""Robustness variants of any function task, along ERBench's axes (Kahlmeyer et al., ERBench §4.2).

ERBench scales its problems along sample size, sampling distribution, domain, noise and
dimensionality (and complexity, which is a property of the formula). :func:`make_variant` turns
any ``function`` task of any suite into a new task whose training data differ from a fixed
default in exactly one of these axes:

================  =======================================  ===================================
axis              levels                                   training data
================  =======================================  ===================================
sample_size       any n ≥ 2 (offered: 10 … 10000)          n rows
distribution      ``uniform``, ``mixture``                 ERBench's clipped uniform / normal
                                                           mixture (App. A.3) or uniform
domain            ``base``, ``shifted``, ``narrowed``,     box moved up by half its width,
                  ``widened``                              its central half, or twice as wide
noise             relative level ≥ 0 (offered: 0, 0.01,    y + level·RMS(y)·N(0, 1) on the
                  0.05, 0.1)                               training target only
dimensionality    the number of inputs                     unchanged (a grouping, see below)
================  =======================================  ===================================

Default for every other axis: 1000 training rows, uniform on the base box, no noise.

* The **base box** is the base task's published ranges (``metadata['ranges']``: Feynman, SynEq);
  a task without ranges (LSR-Synth) uses the per-input min / max of its own training data.
* Widening keeps the sign of a one-signed range (a range with low ≥ 0 never goes below
  low / 2), so square roots and logarithms stay defined where the base task was careful.
* **Dimensionality** is not a transform: a task's number of inputs cannot change without changing
  its law. As an axis it groups base tasks by their number of inputs; the variant for level
  ``d`` is the default variant of a base task with ``d`` inputs (any other ``d`` is an error).
* Test data: ``test_id`` is 500 clean points uniform on the variant's training box, ``test_ood``
  500 clean points on the base task's out-of-domain box (``metadata['ood_ranges']``, else the
  Feynman rule: each input uniform on (high, high + width/2]); it is omitted when the law is
  undefined there. Points whose target is not finite are redrawn.
* The recovery domain (``metadata['recovery_domain']``) is the base task's (its valid box for
  SynEq, else the base box), the same for every level, so recovery compares like with like.

Variants have stable path ids ``erbench/variants/<axis>/<level>/<base task id>``; they are not
listed in the catalog, and :func:`resolve` (registered in ``registry.RESOLVERS``) makes them when
an id is looked up. Data are deterministic in the id and cached like every suite's.
"""

from __future__ import annotations

import hashlib
import json
import threading
from functools import partial

import numpy as np

from .model import Split, Task, TaskData

PREFIX = "erbench/variants"
VERSION = "erbench-variants/1"

AXES = ("sample_size", "distribution", "domain", "noise", "dimensionality")
AXIS_LABELS = {
    "sample_size": "Sample size",
    "distribution": "Sampling distribution",
    "domain": "Domain",
    "noise": "Noise",
    "dimensionality": "Dimensionality",
}
#: The levels offered for each axis (any valid level can be asked for by id).
LEVELS: dict[str, tuple[str, ...]] = {
    "sample_size": ("10", "30", "100", "300", "1000", "3000", "10000"),
    "distribution": ("uniform", "mixture"),
    "domain": ("base", "shifted", "narrowed", "widened"),
    "noise": ("0", "0.01", "0.05", "0.1"),
    "dimensionality": ("1", "2", "3", "4", "5"),
}

DEFAULT_N_TRAIN = 1000
N_TEST_ID = 500
N_TEST_OOD = 500
MAX_SAMPLE_SIZE = 1_000_000

_made: dict[str, Task] = {}
_made_lock = threading.Lock()


# --------------------------------------------------------------------------- ids and levels


def normalize_level(axis: str, level) -> str:
    """The canonical text of ``level`` on ``axis`` (used in ids); ValueError if invalid."""
    if axis not in AXES:
        raise ValueError(f"unknown axis '{axis}' (axes: {', '.join(AXES)})")
    text = str(level).strip()
    if axis in ("sample_size", "dimensionality"):
        try:
            value = int(float(text))
        except ValueError:
            raise ValueError(f"{axis} level must be a whole number, not '{text}'") from None
        low = 2 if axis == "sample_size" else 1
        if value < low or (axis == "sample_size" and value > MAX_SAMPLE_SIZE) or value != float(text):
            raise ValueError(f"{axis} level {text} is out of range")
        return str(value)
    if axis == "noise":
        try:
            value = float(text)
        except ValueError:
            raise ValueError(f"noise level must be a number, not '{text}'") from None
        if not 0 <= value <= 10:
            raise ValueError(f"noise level {text} is out of range [0, 10]")
        return f"{value:g}"
    if text not in LEVELS[axis]:
        raise ValueError(f"{axis} level must be one of {', '.join(LEVELS[axis])}, not '{text}'")
    return text


def variant_id(base_id: str, axis: str, level) -> str:
    return f"{PREFIX}/{axis}/{normalize_level(axis, level)}/{base_id}"


def parse_variant_id(task_id: str) -> tuple[str, str, str]:
    """``(axis, level, base id)`` of a variant id; ValueError for anything else."""
    if not task_id.startswith(PREFIX + "/"):
        raise ValueError(f"'{task_id}' is not a variant id")
    parts = task_id[len(PREFIX) + 1:].split("/", 2)
    if len(parts) != 3 or not parts[2]:
        raise ValueError(f"'{task_id}' is not of the form {PREFIX}/<axis>/<level>/<base task id>")
    return parts[0], parts[1], parts[2]


# --------------------------------------------------------------------------- boxes


Box = list[tuple[float, float]]


def base_box(task: Task) -> Box:
    """The base task's input box: its published ranges, else its training data's min / max."""
    ranges = task.metadata.get("ranges")
    if ranges and all(n in ranges for n in task.input_names):
        return [(float(ranges[n][0]), float(ranges[n][1])) for n in task.input_names]
    X = task.load_data()["train"].X
    return [(float(X[:, j].min()), float(X[:, j].max())) for j in range(X.shape[1])]


def domain_box(box: Box, level: str) -> Box:
    """The training box of a domain variant (see the module docstring)."""
    out = []
    for lo, hi in box:
        w = hi - lo
        if level == "base":
            out.append((lo, hi))
        elif level == "narrowed":
            out.append((lo + w / 4, hi - w / 4))
        elif level == "shifted":
            out.append((lo + w / 2, hi + w / 2))
        elif level == "widened":
            new_lo, new_hi = lo - w / 2, hi + w / 2
            if lo >= 0:
                new_lo = max(new_lo, lo / 2)
            if hi <= 0:
                new_hi = min(new_hi, hi / 2)
            out.append((new_lo, new_hi))
        else:
            raise ValueError(f"unknown domain level '{level}'")
    return out


def ood_box(task: Task, box: Box) -> Box:
    ood = task.metadata.get("ood_ranges")
    if ood and all(n in ood for n in task.input_names):
        return [(float(ood[n][0]), float(ood[n][1])) for n in task.input_names]
    return [(hi, hi + (hi - lo) / 2) for lo, hi in box]


def recovery_domain(task: Task, box: Box) -> dict[str, list[float]]:
    dom = task.metadata.get("recovery_domain")
    if dom and all(n in dom for n in task.input_names):
        return {n: [float(dom[n][0]), float(dom[n][1])] for n in task.input_names}
    return {n: [lo, hi] for n, (lo, hi) in zip(task.input_names, box)}


# --------------------------------------------------------------------------- variants


def make_variant(base_task: Task, axis: str, level) -> Task:
    """A copy of ``base_task`` whose training data vary along ``axis`` at ``level``.

    ``base_task`` must be a ``function`` task with a ground-truth expression over its inputs.
    Raises ValueError for an unknown axis, an invalid level, a base task that is itself a
    variant, or a dimensionality level other than the base task's number of inputs.
    """
    if base_task.kind != "function":
        raise ValueError(f"task {base_task.id} is a '{base_task.kind}' task; variants need a function task")
    if base_task.id.startswith(PREFIX + "/"):
        raise ValueError("a variant cannot be the base of another variant")
    level = normalize_level(axis, level)
    if axis == "dimensionality" and int(level) != len(base_task.inputs):
        raise ValueError(f"task {base_task.id} has {len(base_task.inputs)} inputs, not {level}")
    from ..expr import parse

    names = base_task.input_names
    parse(base_task.ground_truth.expression, names)  # the law must be usable (ExpressionError)

    box = base_box(base_task)
    settings = {
        "n_train": int(level) if axis == "sample_size" else DEFAULT_N_TRAIN,
        "distribution": level if axis == "distribution" else "uniform",
        "train_box": domain_box(box, level) if axis == "domain" else box,
        "noise": float(level) if axis == "noise" else 0.0,
        "ood_box": ood_box(base_task, box),
    }
    vid = f"{PREFIX}/{axis}/{level}/{base_task.id}"
    seed = int(hashlib.sha256(vid.encode()).hexdigest()[:8], 16)
    version_payload = json.dumps({
        "expression": base_task.ground_truth.expression, "inputs": names,
        "sizes": [N_TEST_ID, N_TEST_OOD], **settings,
    }, sort_keys=True)
    version = f"{VERSION}:{hashlib.sha256(version_payload.encode()).hexdigest()[:12]}"
    fmt = ", ".join(f"{n} ∈ [{lo:.4g}, {hi:.4g}]" for n, (lo, hi) in zip(names, settings["train_box"]))
    noise = f", relative Gaussian noise {settings['noise']:g}·RMS(y) on the training target" if settings["noise"] else ""
    note = (
        f"ERBench robustness variant of {base_task.id} ({AXIS_LABELS[axis].lower()} = {level}): "
        f"{settings['n_train']} training points, {settings['distribution']} on {fmt}{noise}; "
        f"{N_TEST_ID} clean in-domain test points uniform on the same box and {N_TEST_OOD} clean "
        "out-of-domain points on the base task's out-of-domain box. Drawn with the variant's seed."
    )
    metadata = {
        "base_task": base_task.id,
        "axis": axis,
        "level": level,
        "seed": seed,
        "n_train": settings["n_train"],
        "distribution": settings["distribution"],
        "noise": settings["noise"],
        "ranges": {n: [lo, hi] for n, (lo, hi) in zip(names, settings["train_box"])},
        "ood_ranges": {n: [lo, hi] for n, (lo, hi) in zip(names, settings["ood_box"])},
        "recovery_domain": recovery_domain(base_task, box),
        "dimension": len(names),
    }
    return Task(
        id=vid,
        suite=PREFIX,
        kind="function",
        name=f"{base_task.name} [{axis} {level}]",
        group=f"{axis}/{level}",
        title=f"{base_task.title} · {AXIS_LABELS[axis].lower()} {level}",
        variables=list(base_task.variables),
        ground_truth=base_task.ground_truth,
        context=base_task.context,
        split_note=note,
        metadata=metadata,
        builder=partial(_build, base_task.ground_truth.expression, names, settings, seed, version),
    )


def resolve(task_id: str) -> Task:
    """The variant named by ``task_id`` (the registry's on-demand hook); KeyError if it cannot
    be made (unknown base task, bad axis or level)."""
    with _made_lock:
        if task_id in _made:
            return _made[task_id]
    from . import registry

    try:
        axis, level, base_id = parse_variant_id(task_id)
        base = registry.get_task(base_id)
        if task_id != variant_id(base_id, axis, level):
            raise ValueError("not the canonical spelling of the level")
        task = make_variant(base, axis, level)
    except (ValueError, registry.UnknownTaskError) as exc:
        raise KeyError(f"{task_id}: {exc}") from None
    with _made_lock:
        return _made.setdefault(task_id, task)


def variants(base_tasks, axis: str, levels=None) -> list[Task]:
    """Variants of every base task at every level (dimensionality: each task at its own level)."""
    if axis == "dimensionality":
        return [make_variant(t, axis, len(t.inputs)) for t in base_tasks]
    return [make_variant(t, axis, lv) for t in base_tasks for lv in (levels or LEVELS[axis])]


def group_by_dimension(tasks) -> dict[int, list[Task]]:
    """Tasks grouped by their number of inputs (the dimensionality axis), smallest first."""
    groups: dict[int, list[Task]] = {}
    for t in tasks:
        groups.setdefault(len(t.inputs), []).append(t)
    return dict(sorted(groups.items()))


# --------------------------------------------------------------------------- data


def _build(expression: str, names: list[str], settings: dict, seed: int, version: str, task: Task) -> TaskData:
    from ..data.cache import cached_task_data

    return cached_task_data(task.id, version, seed, lambda: build_variant_data(expression, names, settings, seed))


def build_variant_data(expression: str, names: list[str], settings: dict, seed: int) -> TaskData:
    """Generate a variant's splits (deterministic in ``seed``)."""
    from ..expr import compile_numpy, parse
    from .erbench import SamplingError, sample_valid

    f = compile_numpy(parse(expression, names), names)
    box = settings["train_box"]
    X_tr, y_clean = sample_valid(f, np.random.default_rng([seed, 0]), box, settings["n_train"],
                                 settings["distribution"])
    y_tr = y_clean
    if settings["noise"] > 0:
        rms = float(np.sqrt(np.mean(y_clean**2)))
        y_tr = y_clean + settings["noise"] * rms * np.random.default_rng([seed, 3]).standard_normal(len(y_clean))
    X_id, y_id = sample_valid(f, np.random.default_rng([seed, 1]), box, N_TEST_ID)
    splits = {"train": Split("train", X_tr, y_tr), "test_id": Split("test_id", X_id, y_id)}
    try:
        X_ood, y_ood = sample_valid(f, np.random.default_rng([seed, 2]), settings["ood_box"], N_TEST_OOD)
        splits["test_ood"] = Split("test_ood", X_ood, y_ood)
    except SamplingError:
        pass  # the law is (almost) undefined there: no out-of-domain split
    return TaskData(splits)
