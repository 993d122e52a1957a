"""LLM-SRBench's LSR-Transform suite: Feynman equations solved for one of their inputs.

Shojaee et al. (LLM-SRBench, ICML 2025, §2.1 and App. A.1) take the AI Feynman equations, pick
an input as the new target (the *pivot*), solve the equation for it with SymPy and keep the
analytically solvable, not too complex results. The old output becomes an input, and the data
are the original Feynman samples restricted to the new equation's valid domain.

``scripts/build_lsr_transform_catalog.py`` runs that pipeline on our Feynman catalog
(``assets/catalogs/feynman.json``) and writes ``assets/catalogs/lsr_transform.json``: the header
records the pipeline, the number of equations at every stage and the complexity rule; every
entry holds the solved formula, the variables and a compact copy of its original (formula,
ranges), so this module needs neither SymPy nor the Feynman catalog to list the tasks.

Data generation (also in every task's split note):

* the *original* inputs are drawn uniformly on the original's published ranges with
  :func:`engine.tasks.feynman.sample_valid` (rejection of invalid original targets included),
  from NumPy's PCG64 seeded with ``[seed, 0]``, in batches until enough points are kept;
* the original output is computed, and the roles are swapped: the old output takes the
  pivot's column among the inputs, and the pivot becomes the target;
* a point is kept only where the new formula is finite and real and reproduces the pivot
  value (relative tolerance :data:`RTOL`), i.e. in the valid domain of the solved branch;
* the first 4000 kept points are train, the next 500 test_id. There is no out-of-domain split:
  the paper defines none for LSR-Transform.
"""

from __future__ import annotations

import hashlib
import json
from functools import partial
from pathlib import Path

import numpy as np

from .. import paths
from . import feynman as fy
from .model import GroundTruth, Split, Task, TaskData

SUITE = "llmsrbench/lsr-transform"
SUITE_LABEL = "LSR-Transform"

#: Bumped whenever the generation code changes the arrays it produces. The cache key also
#: includes a digest of each catalog entry.
GENERATOR_VERSION = "lsr-transform-gen/1"

CATALOG_PATH = paths.assets_dir() / "catalogs" / "lsr_transform.json"

N_TRAIN = 4000
N_TEST_ID = 500

#: A point is in the new equation's valid domain when the solved formula reproduces the pivot
#: within RTOL * max(|pivot|, ATOL_FRACTION * max(|low|, |high|) of the pivot's range).
RTOL = 1e-6
ATOL_FRACTION = 1e-3

#: Original points are drawn in batches of this size; at most MAX_BATCHES are drawn.
BATCH = 4000
MAX_BATCHES = 200


# --------------------------------------------------------------------------- catalog


def read_catalog(path: Path | None = None) -> dict:
    """The parsed catalog JSON (header and entries)."""
    with open(path or CATALOG_PATH, encoding="utf-8") as fh:
        return json.load(fh)


def task_name(filename: str, pivot: str) -> str:
    """``<Feynman file name>_<new target>``, e.g. ``I.24.6_m``."""
    return f"{filename}_{pivot}"


def task_id(name: str) -> str:
    return f"{SUITE}/{name}"


def build_report(path: Path | None = None) -> dict:
    """The catalog header's pipeline record (stage counts, rules), for ``tasks build-report``."""
    header = read_catalog(path)["header"]
    return {
        "suite": SUITE,
        "stages": header["stages"],
        "complexity_rule": header["complexity_rule"],
        "branch_rule": header["branch_rule"],
        "tasks": header["counts"]["final"],
        "sympy": header.get("sympy", ""),
    }


def input_names(entry: dict) -> list[str]:
    return [v["name"] for v in entry["inputs"]]


def entry_version(entry: dict) -> str:
    """Cache version: generator version plus a digest of everything the data depend on."""
    payload = json.dumps(
        {
            "formula": entry["formula"],
            "inputs": input_names(entry),
            "target": entry["target"]["name"],
            "original": entry["original"],
            "sizes": [N_TRAIN, N_TEST_ID],
            "tolerance": [RTOL, ATOL_FRACTION],
            "feynman": fy.GENERATOR_VERSION,
        },
        sort_keys=True,
    )
    return f"{GENERATOR_VERSION}:{hashlib.sha256(payload.encode()).hexdigest()[:12]}"


def split_note(entry: dict) -> str:
    original = entry["original"]
    ranges = ", ".join(
        f"{v['name']} ∈ [{v['low']:g}, {v['high']:g}]" for v in original["inputs"]
    )
    return (
        f"The original Feynman inputs are drawn uniformly on their published ranges ({ranges}) and "
        f"the original output {original['output']} is computed; then {original['output']} becomes an "
        f"input and {entry['target']['name']} the target. Only points where the solved formula is "
        "finite, real and reproduces the target are kept (the new equation's valid domain): "
        f"{N_TRAIN} training and {N_TEST_ID} in-domain test points, drawn with the task's seed. "
        "No out-of-domain split: LLM-SRBench defines none for LSR-Transform."
    )


_variable = fy._variable  # the same catalog format for variables as the Feynman suite


def _task_from_entry(entry: dict) -> Task:
    original = entry["original"]
    truth = GroundTruth(
        expression=entry["formula"],
        source=(
            f"AI Feynman equation {original['filename']} ({original['output']} = {original['formula']}) "
            f"solved for {entry['target']['name']} with SymPy (LLM-SRBench LSR-Transform pipeline)"
        ),
    )
    metadata = {
        "original": f"{fy.SUITE}/{original['filename']}",
        "original_formula": f"{original['output']} = {original['formula']}",
        "volume": entry["volume"],
        "seed": int(entry["seed"]),
        "complexity": entry["complexity"],
        "original_complexity": entry["original_complexity"],
        "ranges": {v["name"]: [v["low"], v["high"]] for v in original["inputs"]},
        "notes": entry.get("notes", ""),
    }
    return Task(
        id=task_id(entry["name"]),
        suite=SUITE,
        kind="function",
        name=entry["name"],
        group=fy.volume_group(entry["volume"]),
        title=f"{entry['name']} · {entry['title']}",
        variables=[_variable(entry["target"], "target"), *(_variable(v, "input") for v in entry["inputs"])],
        ground_truth=truth,
        context=entry["context"],
        split_note=split_note(entry),
        metadata=metadata,
        builder=partial(_build, entry),
    )


def load_tasks(path: Path | None = None) -> list[Task]:
    """Every LSR-Transform task, in catalog order (Feynman row order, then input order)."""
    return [_task_from_entry(entry) for entry in read_catalog(path)["entries"]]


def _build(entry: dict, task: Task) -> TaskData:
    from ..data.cache import cached_task_data

    return cached_task_data(task.id, entry_version(entry), int(entry["seed"]), lambda: build_task_data(entry))


# --------------------------------------------------------------------------- generation


def swap_roles(original: dict, pivot: str, X0: np.ndarray, y0: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Original samples ``(X0, y0)`` as the new task's ``(X, y)``: the old output takes the
    pivot's column and the pivot becomes the target."""
    names = [v["name"] for v in original["inputs"]]
    col = names.index(pivot)
    X = np.array(X0, dtype=float, copy=True)
    target = X[:, col].copy()
    X[:, col] = y0
    return X, target


def in_domain(prediction: np.ndarray, target: np.ndarray, pivot_range: tuple[float, float]) -> np.ndarray:
    """Mask of the points where the solved formula reproduces the pivot (see :data:`RTOL`)."""
    scale = ATOL_FRACTION * max(abs(pivot_range[0]), abs(pivot_range[1]))
    with np.errstate(all="ignore"):
        close = np.abs(prediction - target) <= RTOL * np.maximum(np.abs(target), scale)
    return np.isfinite(prediction) & close


def new_function(entry: dict):
    """The solved formula compiled for NumPy, columns in the task's input order."""
    from ..expr import compile_numpy, parse

    names = input_names(entry)
    return compile_numpy(parse(entry["formula"], names), names)


def pivot_range(original: dict, pivot: str) -> tuple[float, float]:
    spec = next(v for v in original["inputs"] if v["name"] == pivot)
    return float(spec["low"]), float(spec["high"])


def sample_refined(entry: dict, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, int]:
    """``n`` points of the new task: original samples kept where the new formula is valid.

    Returns ``X``, ``y`` and the number of original points drawn.
    """
    original = entry["original"]
    pivot = entry["target"]["name"]
    f_old = fy.target_function(original)
    f_new = new_function(entry)
    box = fy.train_ranges(original)
    prange = pivot_range(original, pivot)
    kept_X: list[np.ndarray] = []
    kept_y: list[np.ndarray] = []
    have = drawn = 0
    for _ in range(MAX_BATCHES):
        if have >= n:
            break
        X0, y0, _ = fy.sample_valid(f_old, rng, box, BATCH)
        X, y = swap_roles(original, pivot, X0, y0)
        ok = in_domain(f_new(X), y, prange)
        drawn += BATCH
        kept_X.append(X[ok])
        kept_y.append(y[ok])
        have += int(ok.sum())
    if have < n:
        raise fy.SamplingError(f"only {have} of {drawn} original points lie in the new equation's domain")
    return np.vstack(kept_X)[:n], np.concatenate(kept_y)[:n], drawn


def build_task_data(entry: dict) -> TaskData:
    """Generate a task's train and test_id splits from its catalog entry (deterministic)."""
    X, y, _ = sample_refined(entry, N_TRAIN + N_TEST_ID, np.random.default_rng([int(entry["seed"]), 0]))
    return TaskData(
        {
            "train": Split("train", X[:N_TRAIN], y[:N_TRAIN]),
            "test_id": Split("test_id", X[N_TRAIN:], y[N_TRAIN:]),
        }
    )
