"""ERBench's SynEq suite: synthetic formulas generated as in Kahlmeyer et al., ERBench, App. A.3.

ERBench (Kahlmeyer, Voigt, Habeck, Giesen) ships 5,303 synthetic formulas ("SynEq") in its public
development set. Their generator is described in App. A.3 (our notes: reference/001_erbench.md
§2.4–§2.6); this module re-implements it in our own way:

* **Formulas** (:func:`random_template`): random expression trees over at most three variables
  ``x_0, x_1, x_2`` with at most one constant ``c``, which may be used several times (ERBench's
  DAG generator lets one constant node feed several parents). Operators: ``+ - * /`` and
  ``sin cos exp log sqrt`` and the powers 2 and 3. Every chosen variable must occur.
* **Complexity** is :func:`engine.expr.complexity` (nodes of SymPy's tree, with ``c`` counting as
  one leaf). ERBench counts operations with ``sympy.count_ops``; we keep the range 4–15 but on
  our project-wide measure.
* **Constant** ``c``: the paper's interval was lost; we draw ``c`` uniformly from [0.5, 5] with a
  random sign, rounded to two decimals.
* **Valid box** (:func:`find_valid_box`, App. A.3 / Fig. 8): a valid point is searched in a large
  box; the zero-width box at it is grown side by side, each growth step checked on samples of the
  added slab and halved on failure down to a minimum step, until nothing grows or the expansion
  budget is spent. "Valid" means a finite real value of magnitude at most 1e6.
* **Duplicates** are removed by comparing values at 100 fixed points (per dimension).
* **Trivial formulas** that a linear regression explains with R² > 0.999 on the valid box are
  dropped.
* **Diverse sampling**: accepted formulas are stratified over complexity × dimension cells (a
  quota per cell, as ERBench's 200 per cell), and training inputs are drawn with the clipped
  uniform / normal mixture sampler of App. A.3 (:func:`sample_mixture`).

The generator lives here; ``scripts/build_erbench_catalog.py`` runs it with a fixed seed and
writes the released sample to ``assets/catalogs/erbench_syneq.json``, whose header records every
parameter. :func:`load_tasks` only reads that catalog. Ids ``erbench/syneq/<d1|d2|d3>/<name>``
are frozen once shipped.

Splits of a SynEq task (our choice; the paper does not fix them): the training box is the central
half-width sub-box of the valid box; ``train`` (500 points) is drawn there with the mixture
sampler, ``test_id`` (500) uniformly there, and ``test_ood`` (500) uniformly in the rest of the
valid box (extrapolation that stays where the formula is defined).
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np

from .. import paths
from .model import GroundTruth, Split, Task, TaskData, Variable

SUITE = "erbench/syneq"
SUITE_LABEL = "SynEq (synthetic)"
GENERATOR_VERSION = "erbench-syneq-gen/1"
DATA_VERSION = "erbench-syneq-data/1"
CATALOG_PATH = paths.assets_dir() / "catalogs" / "erbench_syneq.json"

VARIABLES = ("x_0", "x_1", "x_2")
CONSTANT = "c"

#: Parameters of the generator (recorded in the catalog header). The ones marked "ours" were lost
#: from the paper's text or never stated there.
PARAMS = {
    "max_variables": 3,
    "max_constants": 1,
    "complexity_range": [4, 15],
    "complexity_measure": "engine.expr.complexity (SymPy tree nodes; the paper uses sympy.count_ops)",
    "binary_operators": ["+", "-", "*", "/"],
    "unary_operators": ["sin", "cos", "exp", "log", "sqrt", "**2", "**3"],  # ours
    "max_operators_drawn": 8,  # ours: operators per random tree before SymPy's simplification
    "unary_probability": 0.4,  # ours
    "constant_leaf_probability": 0.25,  # ours
    "constant_interval": "sign * U[0.5, 5], rounded to 2 decimals",  # ours (lost)
    "dedup_points": 100,
    "dedup_box": [-10.0, 10.0],  # ours
    "dedup_rtol": 1e-9,  # ours
    "linear_r2_threshold": 0.999,
    "linear_fit_points": 500,  # ours
    "search_box": [-10.0, 10.0],  # ours (lost)
    "valid_max_abs": 1e6,  # ours
    "initial_step": 1.0,  # ours (lost)
    "min_step": 1.0 / 64,  # ours (lost)
    "max_expansions": 40,  # ours (lost)
    "samples_per_check": 32,  # ours (lost)
    "final_check_points": 2000,  # ours
    "min_box_width": 0.5,  # ours
    "mixture_max_components": 3,  # ours (lost; a secondary source suggests 3)
    "mixture_sigma": "U[0.05, 0.25] * (high - low)",  # ours (lost)
}

N_TRAIN = 500
N_TEST_ID = 500
N_TEST_OOD = 500


# --------------------------------------------------------------------------- sampling


def valid_values(y: np.ndarray, max_abs: float = PARAMS["valid_max_abs"]) -> np.ndarray:
    """Mask of valid function values: finite, real and at most ``max_abs`` in magnitude."""
    y = np.asarray(y, dtype=float)
    with np.errstate(invalid="ignore"):
        return np.isfinite(y) & (np.abs(y) <= max_abs)


def sample_uniform(rng: np.random.Generator, box: Sequence[tuple[float, float]], n: int) -> np.ndarray:
    lows = np.array([b[0] for b in box], dtype=float)
    highs = np.array([b[1] for b in box], dtype=float)
    return lows + rng.random((int(n), len(box))) * (highs - lows)


def sample_mixture(rng: np.random.Generator, box: Sequence[tuple[float, float]], n: int,
                   max_components: int = PARAMS["mixture_max_components"]) -> np.ndarray:
    """ERBench's "diverse" sampler (App. A.3, after Kamienny et al. 2022), per input dimension.

    For each dimension with interval [a, b]: draw the number of parts k uniformly from
    1…``max_components``; weights U(0, 1), normalised; for each part pick uniform or normal with
    equal probability — uniform on a random sub-interval of [a, b], or normal with a mean uniform
    in [a, b] and σ = U(0.05, 0.25)·(b − a) — draw round(w·n) points and clip them to [a, b]. The
    points lost to rounding come from the first part. Columns are shuffled independently.
    """
    n = int(n)
    columns = []
    for lo, hi in box:
        k = int(rng.integers(1, max_components + 1))
        weights = rng.random(k)
        weights = weights / weights.sum()
        parts: list[Callable[[int], np.ndarray]] = []
        for _ in range(k):
            if rng.random() < 0.5:
                a, b = np.sort(rng.uniform(lo, hi, 2))
                parts.append(lambda m, a=a, b=b: rng.uniform(a, b, m))
            else:
                mu = rng.uniform(lo, hi)
                sigma = rng.uniform(0.05, 0.25) * (hi - lo)
                parts.append(lambda m, mu=mu, sigma=sigma: rng.normal(mu, sigma, m))
        counts = [int(round(w * n)) for w in weights]
        while sum(counts) > n:  # rounding up overshot: take the excess from the largest part
            counts[int(np.argmax(counts))] -= 1
        counts[0] += n - sum(counts)
        column = np.concatenate([np.clip(part(c), lo, hi) for part, c in zip(parts, counts)])
        rng.shuffle(column)
        columns.append(column)
    return np.column_stack(columns) if columns else np.empty((n, 0))


class SamplingError(RuntimeError):
    """Too few sampled points gave a valid target."""


def sample_valid(f, rng: np.random.Generator, box, n: int, distribution: str = "uniform",
                 exclude_box=None, max_draws: int = 200) -> tuple[np.ndarray, np.ndarray]:
    """``n`` points from ``distribution`` ("uniform" or "mixture") on ``box`` with a valid
    target (rejection sampling); points inside ``exclude_box`` are rejected too."""
    kept_X, kept_y, have = [], [], 0
    for _ in range(max_draws):
        need = n - have
        if need <= 0:
            break
        size = max(2 * need, 256)
        X = sample_uniform(rng, box, size) if distribution == "uniform" else sample_mixture(rng, box, size)
        y = np.asarray(f(X), dtype=float)
        ok = valid_values(y)
        if exclude_box is not None:
            inside = np.all([(X[:, j] >= lo) & (X[:, j] <= hi) for j, (lo, hi) in enumerate(exclude_box)], axis=0)
            ok &= ~inside
        kept_X.append(X[ok])
        kept_y.append(y[ok])
        have += int(ok.sum())
    if have < n:
        raise SamplingError(f"only {have} of the requested {n} points gave a valid target")
    X = np.vstack(kept_X)[:n]
    y = np.concatenate(kept_y)[:n]
    return X, y


# --------------------------------------------------------------------------- formulas

_BINARY = ("+", "-", "*", "/")
_UNARY = ("sin", "cos", "exp", "log", "sqrt", "square", "cube")


def random_template(rng: np.random.Generator, n_variables: int, n_operators: int,
                    allow_constant: bool = True) -> str:
    """Text of a random expression tree with ``n_operators`` operators over ``x_0…`` and ``c``."""
    names = list(VARIABLES[:n_variables])

    def leaf() -> str:
        if allow_constant and rng.random() < PARAMS["constant_leaf_probability"]:
            return CONSTANT
        return names[int(rng.integers(len(names)))]

    def grow(ops: int) -> str:
        if ops == 0:
            return leaf()
        if rng.random() < PARAMS["unary_probability"]:
            op = _UNARY[int(rng.integers(len(_UNARY)))]
            inner = grow(ops - 1)
            if op == "square":
                return f"({inner})**2"
            if op == "cube":
                return f"({inner})**3"
            return f"{op}({inner})"
        left = int(rng.integers(ops))
        op = _BINARY[int(rng.integers(len(_BINARY)))]
        return f"({grow(left)} {op} {grow(ops - 1 - left)})"

    return grow(n_operators)


def draw_constant(rng: np.random.Generator) -> float:
    value = round(float(rng.uniform(0.5, 5.0)), 2)
    return value if rng.random() < 0.5 else -value


def fixed_points(n_variables: int) -> np.ndarray:
    """The 100 fixed points (per dimension) at which formulas are compared for duplicates."""
    rng = np.random.default_rng([20260608, n_variables])
    lo, hi = PARAMS["dedup_box"]
    return sample_uniform(rng, [(lo, hi)] * n_variables, PARAMS["dedup_points"])


def _compile(text: str, names: Sequence[str]):
    from ..expr import compile_numpy, parse

    return compile_numpy(parse(text, list(names)), list(names))


def find_valid_box(f, n_variables: int, rng: np.random.Generator) -> list[tuple[float, float]] | None:
    """A box on which ``f`` is valid everywhere (ERBench App. A.3, Fig. 8), or None.

    1. Sample the search box until a valid point is found; start from the zero-width box there.
    2. Try to push each side of each dimension out by its step; the added slab (that coordinate
       in the new strip, the others uniform in the current box) must be valid on
       ``samples_per_check`` points. On failure halve that side's step, down to ``min_step``.
    3. Repeat while some side grew and at most ``max_expansions`` rounds.
    Finally the box is checked on ``final_check_points`` uniform points, rounded inwards to two
    decimals and refused if any side is narrower than ``min_box_width``.
    """
    p = PARAMS
    s_lo, s_hi = p["search_box"]
    search = [(s_lo, s_hi)] * n_variables
    start = None
    for _ in range(4):
        X = sample_uniform(rng, search, 500)
        ok = valid_values(f(X))
        if ok.any():
            start = X[int(np.argmax(ok))]
            break
    if start is None:
        return None
    lo, hi = start.copy(), start.copy()
    steps = np.full((n_variables, 2), float(p["initial_step"]))
    for _ in range(p["max_expansions"]):
        grew = False
        for j in range(n_variables):
            for side in (0, 1):
                step = steps[j, side]
                while step >= p["min_step"]:
                    if side == 0:
                        new = max(lo[j] - step, s_lo)
                        strip = (new, lo[j])
                    else:
                        new = min(hi[j] + step, s_hi)
                        strip = (hi[j], new)
                    if strip[1] - strip[0] <= 0:
                        step = 0.0  # at the search box's edge
                        break
                    box = [(lo[i], hi[i]) for i in range(n_variables)]
                    box[j] = strip
                    if valid_values(f(sample_uniform(rng, box, p["samples_per_check"]))).all():
                        if side == 0:
                            lo[j] = new
                        else:
                            hi[j] = new
                        grew = True
                        break
                    step /= 2
                steps[j, side] = step
        if not grew:
            break
    box = [(math.ceil(a * 100) / 100, math.floor(b * 100) / 100) for a, b in zip(lo, hi)]
    if any(b - a < p["min_box_width"] for a, b in box):
        return None
    if not valid_values(f(sample_uniform(rng, box, p["final_check_points"]))).all():
        return None
    return box


def linear_r2(f, box, rng: np.random.Generator) -> float:
    """R² of an ordinary least-squares fit ``y ≈ a + b·x`` on uniform points of ``box``."""
    X = sample_uniform(rng, box, PARAMS["linear_fit_points"])
    y = f(X)
    ok = valid_values(y)  # a pole the box check missed: fit on the valid points
    X, y = X[ok], y[ok]
    A = np.column_stack([np.ones(len(X)), X])
    coef, *_ = np.linalg.lstsq(A, y, rcond=None)
    resid = y - A @ coef
    total = float(np.sum((y - y.mean()) ** 2))
    if total <= 1e-24 * max(1.0, float(np.sum(y**2))):
        return 1.0  # a constant function is trivially linear
    return 1.0 - float(np.sum(resid**2)) / total


@dataclass
class SynEqFormula:
    template: str  # canonical text with the constant ``c`` (if any)
    expression: str  # the same with ``c`` replaced by its value
    constants: dict[str, float]
    dimension: int
    complexity: int
    box: list[tuple[float, float]]
    values: np.ndarray = field(repr=False, default_factory=lambda: np.empty(0))


def make_formula(template_text: str, n_variables: int, rng: np.random.Generator) -> tuple[SynEqFormula | None, str]:
    """Check one random template against every constraint; ``(formula, "")`` or ``(None, why)``.

    The duplicate check against already accepted formulas is left to the caller.
    """
    import sympy as sp

    from ..expr import ExpressionError, complexity, parse, to_text

    names = list(VARIABLES[:n_variables])
    try:
        expr = parse(template_text, names + [CONSTANT])
    except ExpressionError as exc:
        return None, f"parse: {exc}"
    if expr.has(sp.zoo, sp.oo, -sp.oo, sp.nan, sp.I):
        return None, "undefined"
    used = {s.name for s in expr.free_symbols}
    if not set(names) <= used:
        return None, "missing variable"
    if expr.atoms(sp.Float):
        return None, "float literal"
    cplx = complexity(expr)
    lo, hi = PARAMS["complexity_range"]
    if not lo <= cplx <= hi:
        return None, "complexity"
    constants: dict[str, float] = {}
    value_expr = expr
    if CONSTANT in used:
        value = draw_constant(rng)
        constants[CONSTANT] = value
        c = next(s for s in expr.free_symbols if s.name == CONSTANT)
        value_expr = expr.xreplace({c: sp.Float(value)})
    template = sp.sstr(expr)
    expression = to_text(value_expr, 12)
    try:
        f = _compile(expression, names)
    except (ExpressionError, ValueError, TypeError):
        return None, "compile"
    values = f(fixed_points(n_variables))
    if valid_values(values).sum() < 10:
        return None, "undefined at the fixed points"
    box = find_valid_box(f, n_variables, rng)
    if box is None:
        return None, "no valid box"
    if linear_r2(f, box, rng) > PARAMS["linear_r2_threshold"]:
        return None, "linear"
    return SynEqFormula(template, expression, constants, n_variables, cplx, box, values), ""


def same_values(a: np.ndarray, b: np.ndarray, rtol: float = PARAMS["dedup_rtol"]) -> bool:
    """Equal at the fixed points: same validity pattern and equal valid values."""
    va, vb = valid_values(a), valid_values(b)
    if not np.array_equal(va, vb):
        return False
    return bool(np.allclose(a[va], b[vb], rtol=rtol, atol=1e-12))


def generate(seed: int, per_cell: int = 3, dimensions: Iterable[int] = (1, 2, 3),
             complexities: Iterable[int] | None = None, max_attempts: int = 200_000,
             patience: int = 6000,
             progress: Callable[[int, int], None] | None = None) -> list[SynEqFormula]:
    """Generate SynEq formulas: ``per_cell`` accepted formulas per (complexity, dimension) cell.

    Deterministic in ``seed``. Attempts go round-robin over the dimensions whose cells are not
    full; a formula whose cell is full is discarded. Stops when every cell is full or after
    ``max_attempts``; a dimension is given up after ``patience`` of its own attempts without an
    accepted formula (some cells cannot be filled: with three variables, complexity 4 admits
    only ``x_0*x_1*x_2``). Returns the formulas in cell order (dimension, complexity).
    """
    rng = np.random.default_rng(seed)
    dims = list(dimensions)
    cplx = list(complexities) if complexities is not None else list(
        range(PARAMS["complexity_range"][0], PARAMS["complexity_range"][1] + 1))
    cells: dict[tuple[int, int], list[SynEqFormula]] = {(d, c): [] for d in dims for c in cplx}
    accepted: dict[int, list[SynEqFormula]] = {d: [] for d in dims}
    idle = {d: 0 for d in dims}  # attempts of each dimension since its last accepted formula
    for attempt in range(max_attempts):
        open_dims = [d for d in dims
                     if idle[d] < patience and any(len(cells[(d, c)]) < per_cell for c in cplx)]
        if not open_dims:
            break
        d = open_dims[attempt % len(open_dims)]
        idle[d] += 1
        n_ops = int(rng.integers(1, PARAMS["max_operators_drawn"] + 1))
        text = random_template(rng, d, n_ops)
        formula, _why = make_formula(text, d, rng)
        if formula is None:
            continue
        cell = cells.get((d, formula.complexity))
        if cell is None or len(cell) >= per_cell:
            continue
        if any(same_values(formula.values, other.values) for other in accepted[d]):
            continue
        cell.append(formula)
        accepted[d].append(formula)
        idle[d] = 0
        if progress:
            progress(sum(len(v) for v in cells.values()), attempt + 1)
    return [f for d in dims for c in cplx for f in cells[(d, c)]]


# --------------------------------------------------------------------------- catalog and tasks


def train_box(valid_box: Sequence[Sequence[float]]) -> list[tuple[float, float]]:
    """The central half-width sub-box of the valid box (where training data are drawn)."""
    out = []
    for lo, hi in valid_box:
        quarter = (hi - lo) / 4
        out.append((round(lo + quarter, 6), round(hi - quarter, 6)))
    return out


def read_catalog(path: Path | None = None) -> dict:
    with open(path or CATALOG_PATH, encoding="utf-8") as fh:
        return json.load(fh)


def entry_version(entry: dict) -> str:
    payload = json.dumps({"expression": entry["expression"], "box": entry["valid_box"],
                          "sizes": [N_TRAIN, N_TEST_ID, N_TEST_OOD]}, sort_keys=True)
    return f"{DATA_VERSION}:{hashlib.sha256(payload.encode()).hexdigest()[:12]}"


def _box_of(entry: dict, key: str) -> list[tuple[float, float]]:
    return [tuple(map(float, entry[key][n])) for n in entry["variables"]]


def _fmt_box(names, box) -> str:
    return ", ".join(f"{n} ∈ [{lo:g}, {hi:g}]" for n, (lo, hi) in zip(names, box))


def _task_from_entry(entry: dict) -> Task:
    names = entry["variables"]
    valid = _box_of(entry, "valid_box")
    train = train_box(valid)
    const = entry.get("constants", {})
    truth = GroundTruth(
        expression=entry["expression"],
        template=entry["template"] if const else "",
        constants=dict(const),
        source=f"SynEq-style formula generated by Kepler Lab ({GENERATOR_VERSION}, ERBench App. A.3)",
    )
    context = (
        f"A synthetic formula in {len(names)} variable{'s' if len(names) > 1 else ''} of complexity "
        f"{entry['complexity']}, drawn by ERBench's SynEq recipe: random expression with at most one "
        "constant, no duplicates, not explained by a linear fit. It has no physical meaning; it "
        "tests whether a method recovers the exact formula."
    )
    note = (
        f"{N_TRAIN} training points from the diverse mixture sampler and {N_TEST_ID} in-domain test "
        f"points uniform, both in the central half of the valid box ({_fmt_box(names, train)}); "
        f"{N_TEST_OOD} out-of-domain points uniform in the rest of the valid box "
        f"({_fmt_box(names, valid)}). Drawn with the task's seed."
    )
    return Task(
        id=entry["id"],
        suite=SUITE,
        kind="function",
        name=entry["name"],
        group=entry["group"],
        title=f"{entry['name']} · {len(names)}-d, complexity {entry['complexity']}",
        variables=[Variable("y", "target", "synthetic target"),
                   *(Variable(n, "input", f"input {i}") for i, n in enumerate(names))],
        ground_truth=truth,
        context=context,
        split_note=note,
        metadata={
            "seed": int(entry["seed"]),
            "complexity": int(entry["complexity"]),
            "dimension": len(names),
            "valid_box": {n: list(b) for n, b in zip(names, valid)},
            "ranges": {n: list(b) for n, b in zip(names, train)},
            "recovery_domain": {n: list(b) for n, b in zip(names, valid)},
        },
        builder=partial(_build, entry),
    )


def load_tasks(path: Path | None = None) -> list[Task]:
    """Every SynEq task of the shipped catalog (JSON only, no SymPy)."""
    return [_task_from_entry(e) for e in read_catalog(path)["entries"]]


def _build(entry: dict, task: Task) -> TaskData:
    from ..data.cache import cached_task_data

    return cached_task_data(task.id, entry_version(entry), int(entry["seed"]), lambda: build_task_data(entry))


def build_task_data(entry: dict) -> TaskData:
    names = entry["variables"]
    f = _compile(entry["expression"], names)
    valid = _box_of(entry, "valid_box")
    train = train_box(valid)
    seed = int(entry["seed"])
    X_tr, y_tr = sample_valid(f, np.random.default_rng([seed, 0]), train, N_TRAIN, "mixture")
    X_id, y_id = sample_valid(f, np.random.default_rng([seed, 1]), train, N_TEST_ID)
    X_ood, y_ood = sample_valid(f, np.random.default_rng([seed, 2]), valid, N_TEST_OOD, exclude_box=train)
    return TaskData({
        "train": Split("train", X_tr, y_tr),
        "test_id": Split("test_id", X_id, y_id),
        "test_ood": Split("test_ood", X_ood, y_ood),
    })


def catalog_entries(formulas: Sequence[SynEqFormula], seed: int) -> list[dict]:
    """Catalog entries (ids, names, seeds) for generated formulas, numbered per dimension."""
    entries = []
    counters: dict[int, int] = {}
    for f in formulas:
        counters[f.dimension] = counters.get(f.dimension, 0) + 1
        name = f"syneq-d{f.dimension}-{counters[f.dimension]:03d}"
        group = f"d{f.dimension}"
        names = list(VARIABLES[:f.dimension])
        task_id = f"{SUITE}/{group}/{name}"
        entries.append({
            "id": task_id,
            "group": group,
            "name": name,
            "variables": names,
            "dimension": f.dimension,
            "complexity": f.complexity,
            "template": f.template,
            "constants": f.constants,
            "expression": f.expression,
            "valid_box": {n: list(b) for n, b in zip(names, f.box)},
            "seed": int(hashlib.sha256(f"{seed}|{task_id}".encode()).hexdigest()[:8], 16),
        })
    return entries
