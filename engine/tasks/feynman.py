"""The Feynman suite: the 100 equations of the AI Feynman database as function tasks.

Udrescu & Tegmark (AI Feynman, Science Advances 6, eaay2631, 2020) took 100 equations from the
Feynman Lectures on Physics and published, for each, the formula and a sampling range for every
variable (``FeynmanEquations.csv``). Physical constants (G, c, h, k_B, epsilon_0, g, ...) are
inputs there, with ranges like any other variable, and the ranges are numbers of order one
rather than physical magnitudes; we keep both conventions.

``scripts/build_feynman_catalog.py`` turned that table into ``assets/catalogs/feynman.json``:
the formulas and ranges are the CSV's, checked with the whitelist parser; titles, scientific
context, variable descriptions and units are written by us. This module only reads that
catalog, so :func:`load_tasks` is cheap (JSON and string work, no SymPy). A task's data are
generated on first use by :func:`build_task_data` and cached on disk.

Generation (documented in the catalog header and in every task's split note):

* train (4000) and test_id (500): every input uniform on its published range [low, high];
* test_ood (500): every input uniform on the interval just above it,
  (high, high + (high - low)/2] (extrapolation upwards; signs are kept, so square roots, logs
  and arcsines stay valid wherever possible). A task whose catalog entry names another OOD box
  (``ood.ranges``) uses that box instead; the builder records why;
* a sampled point whose target is not a finite real number is rejected and drawn again;
* the target is the catalog formula evaluated with :func:`engine.expr.compile_numpy`.
"""

from __future__ import annotations

import hashlib
import json
from functools import partial
from pathlib import Path

import numpy as np

from .. import paths
from .model import GroundTruth, Task, TaskData, Variable

SUITE = "feynman"
SUITE_LABEL = "Feynman equations"

#: Bumped whenever the generation code changes the arrays it produces. The cache key also
#: includes a digest of each catalog entry, so a rebuilt catalog never reuses stale data.
GENERATOR_VERSION = "feynman-gen/1"

CATALOG_PATH = paths.assets_dir() / "catalogs" / "feynman.json"

N_TRAIN = 4000
N_TEST_ID = 500
N_TEST_OOD = 500

#: Default out-of-domain rule: each input uniform on (high, high + OOD_WIDTH * (high - low)].
OOD_WIDTH = 0.5
OOD_RULE = (
    "every input uniform on (high, high + (high - low)/2], i.e. extrapolation above its "
    "published training range [low, high]"
)

#: Rejection sampling draws batches of this many times the rows still needed, and gives up
#: after MAX_DRAWS batches (the builder makes sure every catalog entry stays far from that).
BATCH_FACTOR = 2
MIN_BATCH = 1000
MAX_DRAWS = 200


class SamplingError(RuntimeError):
    """Too few sampled points gave a finite target (the box is almost entirely invalid)."""


# --------------------------------------------------------------------------- catalog


def read_catalog(path: Path | None = None) -> dict:
    """The parsed catalog JSON (header and entries)."""
    with open(path or CATALOG_PATH, encoding="utf-8") as fh:
        return json.load(fh)


def task_id(filename: str) -> str:
    return f"{SUITE}/{filename}"


def volume_group(volume: str) -> str:
    """The browser group of a task: ``volume I``, ``volume II`` or ``volume III``."""
    return f"volume {volume}"


def input_names(entry: dict) -> list[str]:
    return [v["name"] for v in entry["inputs"]]


def train_ranges(entry: dict) -> list[tuple[float, float]]:
    return [(float(v["low"]), float(v["high"])) for v in entry["inputs"]]


def default_ood_ranges(ranges: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """(high, high + (high - low)/2] for every input (see :data:`OOD_RULE`)."""
    return [(hi, hi + OOD_WIDTH * (hi - lo)) for lo, hi in ranges]


def ood_ranges(entry: dict) -> list[tuple[float, float]]:
    """The out-of-domain box of a task: the catalog's own when it names one, else the default."""
    custom = (entry.get("ood") or {}).get("ranges")
    if custom:
        return [(float(custom[n][0]), float(custom[n][1])) for n in input_names(entry)]
    return default_ood_ranges(train_ranges(entry))


def entry_version(entry: dict) -> str:
    """Cache version: generator version plus a digest of everything the data depend on."""
    payload = json.dumps(
        {
            "formula": entry["formula"],
            "inputs": [[v["name"], v["low"], v["high"]] for v in entry["inputs"]],
            "ood": ood_ranges(entry),
            "sizes": [N_TRAIN, N_TEST_ID, N_TEST_OOD],
        },
        sort_keys=True,
    )
    return f"{GENERATOR_VERSION}:{hashlib.sha256(payload.encode()).hexdigest()[:12]}"


def _fmt(x: float) -> str:
    return f"{x:g}"


def split_note(entry: dict) -> str:
    names = input_names(entry)
    train = ", ".join(f"{n} ∈ [{_fmt(lo)}, {_fmt(hi)}]" for n, (lo, hi) in zip(names, train_ranges(entry)))
    ood = ", ".join(f"{n} ∈ ({_fmt(lo)}, {_fmt(hi)}]" for n, (lo, hi) in zip(names, ood_ranges(entry)))
    custom = (entry.get("ood") or {}).get("ranges")
    rule = (
        f"this task's own out-of-domain box ({entry['ood'].get('reason', 'see the catalog')})"
        if custom
        else "the default rule: each input uniform on (high, high + (high − low)/2]"
    )
    return (
        f"{N_TRAIN} training and {N_TEST_ID} in-domain test points with every input uniform on its "
        f"published range ({train}); {N_TEST_OOD} out-of-domain test points from {rule} ({ood}). "
        "Points whose target is not a finite real number are rejected and redrawn. Samples are "
        "drawn with the task's seed."
    )


def _variable(spec: dict, role: str) -> Variable:
    return Variable(spec["name"], role, spec["description"], spec["unit"], spec.get("latex", ""))


def _task_from_entry(entry: dict) -> Task:
    filename = entry["filename"]
    truth = GroundTruth(
        expression=entry["formula"],
        source=f"AI Feynman database (FeynmanEquations.csv), row {filename}, equation {entry['number']}",
        repair=entry.get("repair", ""),
    )
    metadata = {
        "number": entry["number"],
        "volume": entry["volume"],
        "seed": int(entry["seed"]),
        "ranges": {v["name"]: [v["low"], v["high"]] for v in entry["inputs"]},
        "ood_ranges": {n: list(r) for n, r in zip(input_names(entry), ood_ranges(entry))},
        "notes": entry.get("notes", ""),
    }
    return Task(
        id=task_id(filename),
        suite=SUITE,
        kind="function",
        name=filename,
        group=volume_group(entry["volume"]),
        title=f"{filename} · {entry['title']}",
        variables=[_variable(entry["output"], "target"), *(_variable(v, "input") for v in entry["inputs"])],
        ground_truth=truth,
        context=entry["context"],
        split_note=split_note(entry),
        metadata=metadata,
        builder=partial(_build, entry),
    )


def load_tasks(path: Path | None = None) -> list[Task]:
    """Every Feynman task, in the CSV's row order (volume I, II, III)."""
    catalog = read_catalog(path)
    return [_task_from_entry(entry) for entry in catalog["entries"]]


def _build(entry: dict, task: Task) -> TaskData:
    from ..data.cache import cached_task_data

    return cached_task_data(task.id, entry_version(entry), int(entry["seed"]), lambda: build_task_data(entry))


# --------------------------------------------------------------------------- generation


def target_function(entry: dict):
    """The ground truth compiled for NumPy: ``f(X) -> y`` with X's columns in input order."""
    from ..expr import compile_numpy, parse

    names = input_names(entry)
    return compile_numpy(parse(entry["formula"], names), names)


def sample_valid(f, rng: np.random.Generator, box: list[tuple[float, float]], n: int,
                 open_low: bool = False) -> tuple[np.ndarray, np.ndarray, int]:
    """``n`` points uniform in ``box`` whose target is finite and real, by rejection.

    Returns ``X``, ``y`` and the number of points drawn. With ``open_low`` every coordinate
    lies in (low, high] instead of [low, high), so an out-of-domain point never sits on the
    training range's upper edge.
    """
    lows = np.array([b[0] for b in box], dtype=float)
    highs = np.array([b[1] for b in box], dtype=float)
    kept_X: list[np.ndarray] = []
    kept_y: list[np.ndarray] = []
    have = drawn = 0
    for _ in range(MAX_DRAWS):
        need = n - have
        if need <= 0:
            break
        size = max(BATCH_FACTOR * need, MIN_BATCH)
        u = rng.random((size, len(box)))
        if open_low:
            u = 1.0 - u  # (0, 1]
        X = lows + u * (highs - lows)
        y = np.asarray(f(X))
        if np.iscomplexobj(y):
            y = np.where(np.abs(y.imag) > 0, np.nan, y.real)
        y = np.broadcast_to(y.astype(float), (size,))
        ok = np.isfinite(y)
        drawn += size
        kept_X.append(X[ok])
        kept_y.append(y[ok])
        have += int(ok.sum())
    if have < n:
        raise SamplingError(f"only {have} of {drawn} sampled points gave a finite target")
    return np.vstack(kept_X)[:n], np.concatenate(kept_y)[:n], drawn


def build_task_data(entry: dict) -> TaskData:
    """Generate a task's three splits from its catalog entry (deterministic)."""
    from .model import Split

    f = target_function(entry)
    seed = int(entry["seed"])
    # Two independent streams, so the in-domain data do not depend on the OOD box.
    X_id, y_id, _ = sample_valid(f, np.random.default_rng([seed, 0]), train_ranges(entry), N_TRAIN + N_TEST_ID)
    X_ood, y_ood, _ = sample_valid(f, np.random.default_rng([seed, 1]), ood_ranges(entry), N_TEST_OOD, open_low=True)
    return TaskData(
        {
            "train": Split("train", X_id[:N_TRAIN], y_id[:N_TRAIN]),
            "test_id": Split("test_id", X_id[N_TRAIN:], y_id[N_TRAIN:]),
            "test_ood": Split("test_ood", X_ood, y_ood),
        }
    )
