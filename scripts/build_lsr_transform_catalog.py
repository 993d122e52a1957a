#!/usr/bin/env python
"""Build Kepler Lab's LSR-Transform catalog (``assets/catalogs/lsr_transform.json``).

LLM-SRBench (Shojaee et al., ICML 2025, §2.1, App. A.1, Fig. 3a) rewrites the AI Feynman
equations by solving each for one of its inputs. This script runs that pipeline on our Feynman
catalog (``assets/catalogs/feynman.json``):

1. **Candidates.** Every (equation, input) pair: the input is the *pivot*, the new target, and
   the old output becomes an input (it takes the pivot's column).
2. **Symbolic transformation.** ``sympy.solve(original_formula = y, pivot)`` in a child
   process killed after :data:`SOLVE_SECONDS`. Symbols carry the sign the Feynman ranges give
   them: an input whose range is above zero is ``positive``, the old output is ``positive``
   (``negative``) when every Feynman data point is, everything else is ``real``.
3. **Solvability.** A candidate is solvable when SymPy returns at least one solution that is
   real, closed-form and in the whitelist of :mod:`engine.expr` (no ``LambertW``, ``RootOf``,
   ``Piecewise``, imaginary unit, ...). Each solution is also rewritten (``sympy.simplify``,
   ``together``, ``factor`` and, for square roots, the root of the simplified square; child
   processes, :data:`SIMPLIFY_SECONDS` each), and the form with the fewest nodes that reproduces
   the pivot on at least as many data points is kept.
   *Several solutions* (branches, e.g. ``±sqrt`` for a real pivot or ``asin`` and
   ``pi - asin``): the paper keeps single solutions. We keep one branch, the one that reproduces
   the pivot on the most points of the original Feynman data (ties: fewer nodes, then text),
   i.e. the branch consistent with the Feynman ranges; the header counts how often this
   happened, and each such entry says so in its notes.
4. **Dataset refinement.** The Feynman task's own in-domain points (same seed, same draws) are
   restricted to the new equation's valid domain: the solved formula must be finite, real and
   reproduce the pivot (:func:`engine.tasks.lsr_transform.in_domain`). A candidate whose
   branch keeps less than :data:`MIN_KEPT_FRACTION` of the points is dropped here (the paper
   drops none at this step).
5. **Complexity filter.** Complexity is the SymPy node count of :func:`engine.expr.complexity`
   (SRBench convention). The paper removes transforms "significantly" more complex than the
   Feynman distribution without a number; our rule is :data:`COMPLEXITY_RULE`.
6. The memorisation filter (an LLM solving the task without data) needs an LLM and is not
   applied; the paper's counts leave no room for it either (418 − 307 = 111).

Every kept task's data are then generated once with the app's own builder
(:func:`engine.tasks.lsr_transform.build_task_data`) to make sure they can be.

Rebuilding is deterministic for a given SymPy release (recorded in the header):
``python scripts/build_lsr_transform_catalog.py``.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import sympy as sp
from sympy.printing.str import StrPrinter

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from engine.expr import ExpressionError, complexity, compile_numpy, parse  # noqa: E402
from engine.tasks import feynman as fy  # noqa: E402
from engine.tasks import lsr_transform as lt  # noqa: E402

CATALOG_FORMAT = 1
OUTPUT = lt.CATALOG_PATH

SOLVE_SECONDS = 20.0
SIMPLIFY_SECONDS = 10.0

#: A solved branch must reproduce the pivot on at least this fraction of the Feynman points.
MIN_KEPT_FRACTION = 0.05

#: The complexity filter: keep a transform when its node count is at most the original
#: equation's plus COMPLEXITY_SLACK *and* at most the largest complexity in the Feynman set
#: (the second bound only matters for a positive slack).
COMPLEXITY_SLACK = 0
COMPLEXITY_RULE = (
    "keep a transformed equation when complexity(new) <= complexity(original)"
    + (f" + {COMPLEXITY_SLACK}" if COMPLEXITY_SLACK else "")
    + " and complexity(new) <= the largest complexity of the 100 Feynman equations ({cap}); complexity "
    "is the SymPy expression-tree node count of engine.expr.complexity (SRBench convention), taken on "
    "the smallest equivalent form found. A per-equation bound means no task is harder to write down "
    "than the law it comes from, so the transformed set's complexity distribution stays within the "
    "Feynman one (the paper removes transforms 'significantly' above it but gives no threshold)."
)

PAPER_COUNTS = {"feynman": 100, "candidates": 471, "solvable": 418, "refined": 418, "final": 111}


# --------------------------------------------------------------------------- time limits


def _child(conn, func, args):
    try:
        conn.send(("ok", func(*args)))
    except BaseException as exc:  # noqa: BLE001 - reported to the parent
        conn.send(("error", f"{type(exc).__name__}: {exc}"))
    finally:
        conn.close()


def run_limited(func, args: tuple, seconds: float):
    """Run ``func(*args)`` in a forked child for at most ``seconds``.

    Returns ``("ok", value)``, ``("error", message)`` or ``("timeout", None)``. A child that runs
    out of time is killed, so a SymPy call can never hang the build.
    """
    ctx = mp.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(send, func, args), daemon=True)
    proc.start()
    send.close()
    try:
        if recv.poll(seconds):
            try:
                return recv.recv()
            except EOFError:
                return ("error", "the solver process died")
        return ("timeout", None)
    finally:
        recv.close()
        if proc.is_alive():
            proc.kill()
        proc.join()


def _solve(equation, pivot):
    return sp.solve(equation, pivot)


def _simplify(expr):
    return sp.simplify(expr)


def _rewrites(expr):
    """Cheap equivalent forms of a solution: collected over one denominator, factored, and for
    a solution with square roots the square root of its simplified square (both signs; the
    data decide which one is right).

    The forms are built twice: with the sign-carrying symbols of the solve and with plain real
    ones (the parser's), because SymPy splits ``sqrt(a*b)`` into ``sqrt(a)*sqrt(b)`` for positive
    symbols but takes ``sqrt(a**2)`` to ``Abs(a)`` for real ones; either may give fewer nodes.
    """
    plain = {s: sp.Symbol(s.name, real=True) for s in expr.free_symbols}
    forms = []
    for e in (expr, expr.xreplace(plain)):
        forms += [sp.together(e), sp.factor(e)]
    if any(p.exp.is_Rational and p.exp.q == 2 for p in expr.atoms(sp.Pow)):
        square = sp.simplify(expr**2)
        for sq in (square, square.xreplace(plain)):
            for g in (sp.factor(sq), sp.expand(sq), sp.together(sp.expand(sq))):
                forms += [sp.sqrt(g), -sp.sqrt(g)]
            for g in (sp.factor(1 / sq), sp.expand(1 / sq)):
                forms += [1 / sp.sqrt(g), -1 / sp.sqrt(g)]
    return forms


# --------------------------------------------------------------------------- printing


class _Printer(StrPrinter):
    """SymPy's text printer, with Euler's number written ``exp(1)`` (``E`` could be a variable)."""

    def _print_Exp1(self, expr):  # noqa: N802 - SymPy's naming
        return "exp(1)"


def as_text(expr: sp.Expr) -> str:
    return _Printer().doprint(expr)


def closed_form_problem(expr: sp.Expr) -> str:
    """Why ``expr`` cannot be a task's formula, or "" when it can."""
    if expr.has(sp.I) or expr.has(sp.zoo) or expr.has(sp.oo) or expr.has(sp.nan):
        return "complex or infinite"
    if expr.has(sp.Piecewise):
        return "piecewise"
    if expr.atoms(sp.RootOf, sp.CRootOf) or expr.has(sp.LambertW):
        return "not in closed form (RootOf / LambertW)"
    return ""


# --------------------------------------------------------------------------- the pipeline


@dataclass
class Branch:
    text: str
    complexity: int
    kept_fraction: float


@dataclass
class Outcome:
    """What the pipeline made of one (equation, pivot) candidate."""

    filename: str
    pivot: str
    status: str  # solved | timeout | no_solution | not_closed_form | error | no_valid_branch
    n_solutions: int = 0  # solutions SymPy returned
    branches: list[Branch] = field(default_factory=list)  # usable ones, with their coverage
    chosen: Branch | None = None
    detail: str = ""

    @property
    def name(self) -> str:
        return lt.task_name(self.filename, self.pivot)


def new_input_names(entry: dict, pivot: str) -> list[str]:
    """The transformed task's inputs: the original's, with the old output in the pivot's place."""
    out = entry["output"]["name"]
    return [out if n == pivot else n for n in fy.input_names(entry)]


def symbols_for_entry(entry: dict, y0: np.ndarray) -> dict[str, sp.Symbol]:
    """SymPy symbols carrying the signs implied by the Feynman ranges and data."""
    syms = {}
    for spec in entry["inputs"]:
        if float(spec["low"]) > 0:
            syms[spec["name"]] = sp.Symbol(spec["name"], positive=True)
        else:
            syms[spec["name"]] = sp.Symbol(spec["name"], real=True)
    out = entry["output"]["name"]
    if np.all(y0 > 0):
        syms[out] = sp.Symbol(out, positive=True)
    elif np.all(y0 < 0):
        syms[out] = sp.Symbol(out, negative=True)
    else:
        syms[out] = sp.Symbol(out, real=True)
    return syms


def feynman_points(entry: dict) -> tuple[np.ndarray, np.ndarray]:
    """The Feynman task's in-domain points (train then test_id), drawn exactly as it draws them."""
    f = fy.target_function(entry)
    X0, y0, _ = fy.sample_valid(
        f, np.random.default_rng([int(entry["seed"]), 0]), fy.train_ranges(entry), fy.N_TRAIN + fy.N_TEST_ID
    )
    return X0, y0


def _usable_branch(sol: sp.Expr, entry: dict, pivot: str, names: list[str], X: np.ndarray,
                   target: np.ndarray, simplify_seconds: float) -> tuple[Branch | None, str]:
    problem = closed_form_problem(sol)
    if problem:
        return None, problem
    forms = [sol]
    for rewrite in (_simplify, _rewrites):
        status, value = run_limited(rewrite, (sol,), simplify_seconds)
        if status == "ok":
            values = value if isinstance(value, list) else [value]
            forms += [v for v in values if isinstance(v, sp.Expr) and not closed_form_problem(v)]
    prange = lt.pivot_range(entry, pivot)
    best: Branch | None = None
    why = ""
    for form in forms:
        text = as_text(form)
        try:
            parsed = parse(text, names)
        except ExpressionError as exc:
            why = f"outside the expression whitelist: {exc}"
            continue
        kept = lt.in_domain(compile_numpy(parsed, names)(X), target, prange)
        branch = Branch(text, complexity(parsed), float(kept.mean()))
        # A rewritten form replaces SymPy's own only when it is smaller and reproduces the
        # pivot on as many points (so a wrong sign of a square root can never win).
        if best is None or (branch.complexity < best.complexity and branch.kept_fraction >= best.kept_fraction):
            best = branch
    return best, why


def transform(entry: dict, pivot: str, points: tuple[np.ndarray, np.ndarray] | None = None,
              solve_seconds: float = SOLVE_SECONDS, simplify_seconds: float = SIMPLIFY_SECONDS) -> Outcome:
    """Solve one Feynman catalog entry for ``pivot`` and check the result on its data."""
    X0, y0 = points if points is not None else feynman_points(entry)
    names = fy.input_names(entry)
    out = entry["output"]["name"]
    syms = symbols_for_entry(entry, y0)
    formula = parse(entry["formula"], names)
    formula = formula.xreplace({s: syms[s.name] for s in formula.free_symbols})
    outcome = Outcome(entry["filename"], pivot, "error")
    status, solutions = run_limited(_solve, (sp.Eq(formula, syms[out]), syms[pivot]), solve_seconds)
    if status == "timeout":
        outcome.status, outcome.detail = "timeout", f"sympy.solve ran over {solve_seconds:g} s"
        return outcome
    if status == "error":
        outcome.status = "no_solution" if "NotImplementedError" in solutions else "error"
        outcome.detail = str(solutions)
        return outcome
    solutions = [s for s in solutions if isinstance(s, sp.Expr)]
    outcome.n_solutions = len(solutions)
    if not solutions:
        outcome.status, outcome.detail = "no_solution", "sympy.solve returned no solution"
        return outcome
    new_names = new_input_names(entry, pivot)
    X, target = lt.swap_roles(entry, pivot, X0, y0)
    reasons = []
    for sol in solutions:
        branch, why = _usable_branch(sol, entry, pivot, new_names, X, target, simplify_seconds)
        if branch is None:
            reasons.append(why)
        else:
            outcome.branches.append(branch)
    if not outcome.branches:
        outcome.status, outcome.detail = "not_closed_form", "; ".join(sorted(set(reasons)))
        return outcome
    chosen = sorted(outcome.branches, key=lambda b: (-b.kept_fraction, b.complexity, b.text))[0]
    outcome.chosen = chosen
    if chosen.kept_fraction < MIN_KEPT_FRACTION:
        outcome.status = "no_valid_branch"
        outcome.detail = f"the best branch reproduces the pivot on {chosen.kept_fraction:.1%} of the Feynman points"
        return outcome
    outcome.status = "solved"
    return outcome


def complexity_cap(entries: list[dict]) -> int:
    return max(complexity(parse(e["formula"], fy.input_names(e))) for e in entries)


def passes_complexity(new: int, original: int, cap: int) -> bool:
    return new <= original + COMPLEXITY_SLACK and new <= cap


# --------------------------------------------------------------------------- catalog text


def _spec(spec: dict) -> dict:
    return {k: spec[k] for k in ("name", "description", "unit", "latex") if k in spec}


def catalog_entry(entry: dict, outcome: Outcome, original_complexity: int) -> dict:
    pivot = outcome.pivot
    pivot_spec = next(v for v in entry["inputs"] if v["name"] == pivot)
    out = entry["output"]
    inputs = [_spec(out) if v["name"] == pivot else _spec(v) for v in entry["inputs"]]
    notes = []
    if len(outcome.branches) > 1 or outcome.n_solutions > 1:
        others = [b.text for b in outcome.branches if b is not outcome.chosen]
        notes.append(
            f"SymPy returned {outcome.n_solutions} solutions; kept the branch that reproduces "
            f"{pivot} on the Feynman data ({outcome.chosen.kept_fraction:.1%} of its points)"
            + (f"; other real branches: {', '.join(others)}" if others else "")
            + "."
        )
    sentence = (
        f" Here the roles are swapped: the {pivot_spec['description'][0].lower()}{pivot_spec['description'][1:]} "
        f"({pivot}) is the quantity to find, and the {out['description'][0].lower()}{out['description'][1:]} "
        f"({out['name']}) is given as an input."
    )
    return {
        "name": outcome.name,
        "id": lt.task_id(outcome.name),
        "original_id": f"{fy.SUITE}/{entry['filename']}",
        "volume": entry["volume"],
        "title": f"{entry['title']}, solved for {pivot}",
        "context": entry["context"].rstrip() + sentence,
        "formula": outcome.chosen.text,
        "target": _spec(pivot_spec),
        "inputs": inputs,
        "complexity": outcome.chosen.complexity,
        "original_complexity": original_complexity,
        "seed": int(entry["seed"]),
        "notes": " ".join(notes),
        "original": {
            "filename": entry["filename"],
            "formula": entry["formula"],
            "output": out["name"],
            "inputs": [{"name": v["name"], "low": v["low"], "high": v["high"]} for v in entry["inputs"]],
            "seed": int(entry["seed"]),
        },
        "quality": {
            "kept_fraction": round(outcome.chosen.kept_fraction, 4),
            "sympy_solutions": outcome.n_solutions,
        },
    }


def header(counts: dict, reasons: dict, cap: int, branch_count: int, seconds: float) -> dict:
    stages = [
        {"stage": "feynman", "label": "Feynman equations", "count": counts["feynman"],
         "paper": PAPER_COUNTS["feynman"]},
        {"stage": "candidates", "label": "candidates (one per equation and input chosen as pivot)",
         "count": counts["candidates"], "paper": PAPER_COUNTS["candidates"]},
        {"stage": "solvable", "label": "analytically solvable (one closed-form real branch kept)",
         "count": counts["solvable"], "paper": PAPER_COUNTS["solvable"],
         "removed": {k: v for k, v in reasons.items() if k != "no_valid_branch"},
         "branch_chosen": branch_count},
        {"stage": "refined", "label": "after dataset refinement (points restricted to the valid domain)",
         "count": counts["refined"], "paper": PAPER_COUNTS["refined"],
         "removed": {"no_valid_branch": reasons.get("no_valid_branch", 0)}},
        {"stage": "final", "label": "after the complexity filter", "count": counts["final"],
         "paper": PAPER_COUNTS["final"], "removed": {"too_complex": counts["refined"] - counts["final"]}},
    ]
    return {
        "format": CATALOG_FORMAT,
        "suite": lt.SUITE,
        "title": "LLM-SRBench LSR-Transform: Feynman equations solved for one of their inputs",
        "source": (
            "P. Shojaee et al. LLM-SRBench: A New Benchmark for Scientific Equation Discovery with Large "
            "Language Models. ICML 2025, §2.1 and App. A.1 (pipeline; the paper's own 111 tasks are not "
            "published as formulas). Originals: Kepler Lab's Feynman catalog (AI Feynman, Udrescu & Tegmark 2020)."
        ),
        "written_by": "scripts/build_lsr_transform_catalog.py (Kepler Lab); descriptions and units are the Feynman catalog's.",
        "sympy": sp.__version__,
        "pipeline": [
            "Candidates: every (Feynman equation, input) pair; the input (pivot) becomes the target and the old output takes its column among the inputs.",
            f"Symbolic transformation: sympy.solve(original = output, pivot), killed after {SOLVE_SECONDS:g} s; inputs with a positive range are positive symbols, the old output is positive or negative when all its Feynman values are.",
            f"Solvability: a real, closed-form solution inside the engine.expr whitelist (no LambertW, RootOf, Piecewise, imaginary unit); each solution is also rewritten (sympy.simplify, together, factor, and for square roots the root of the simplified square; killed after {SIMPLIFY_SECONDS:g} s) and the form with the fewest nodes that reproduces the pivot on at least as many data points is kept.",
            "Dataset refinement: the Feynman task's own in-domain points are kept where the solved formula is finite, real and reproduces the pivot (relative tolerance 1e-6).",
            "Complexity filter: see complexity_rule.",
            "Memorisation filter (an LLM solving the task without data): not applied (needs an LLM); the paper's counts leave no room for it either.",
        ],
        "branch_rule": (
            "The paper keeps single solutions. When SymPy returns several (e.g. ±sqrt, or asin and pi - asin), "
            "we keep one branch: the one that reproduces the pivot on the most Feynman data points (ties: fewer "
            "nodes, then text), which is the branch consistent with the positive Feynman ranges; such entries say "
            f"so in their notes. A kept branch must cover at least {MIN_KEPT_FRACTION:.0%} of the Feynman points."
        ),
        "complexity_rule": COMPLEXITY_RULE.format(cap=cap),
        "complexity_slack": COMPLEXITY_SLACK,
        "complexity_cap": cap,
        "counts": counts,
        "paper_counts": PAPER_COUNTS,
        "stages": stages,
        "sampling_protocol": [
            "Each task's seed is its original Feynman task's seed. The original inputs are drawn with engine.tasks.feynman.sample_valid from NumPy's PCG64 seeded with [seed, 0]: first the Feynman task's own 4500 in-domain points, then further batches of 4000 from the same stream while needed.",
            "The old output takes the pivot's column and the pivot becomes the target; points outside the new equation's valid domain are dropped (quality.kept_fraction is the kept share of the Feynman points).",
            "The first 4000 kept points are train, the next 500 test_id. No test_ood: LLM-SRBench defines no out-of-domain set for LSR-Transform.",
        ],
        "build_seconds": round(seconds, 1),
    }


# --------------------------------------------------------------------------- main


def build(feynman_catalog: Path | None = None, only: list[str] | None = None, verify: bool = True) -> dict:
    started = time.monotonic()
    entries = fy.read_catalog(feynman_catalog)["entries"]
    cap = complexity_cap(entries)
    if only:
        entries = [e for e in entries if e["filename"] in only]
    reasons: dict[str, int] = {}
    kept: list[dict] = []
    counts = {"feynman": len(entries), "candidates": 0, "solvable": 0, "refined": 0, "final": 0}
    branch_count = 0
    for entry in entries:
        points = feynman_points(entry)
        original_complexity = complexity(parse(entry["formula"], fy.input_names(entry)))
        for pivot in fy.input_names(entry):
            counts["candidates"] += 1
            outcome = transform(entry, pivot, points)
            mark = outcome.status
            if outcome.status in ("solved", "no_valid_branch"):
                counts["solvable"] += 1
                if outcome.n_solutions > 1:
                    branch_count += 1
            if outcome.status != "solved":
                reasons[outcome.status] = reasons.get(outcome.status, 0) + 1
            else:
                counts["refined"] += 1
                if passes_complexity(outcome.chosen.complexity, original_complexity, cap):
                    counts["final"] += 1
                    kept.append(catalog_entry(entry, outcome, original_complexity))
                else:
                    mark = "too complex"
            shown = outcome.chosen.text if outcome.chosen else outcome.detail
            cx = f"{outcome.chosen.complexity}/{original_complexity}" if outcome.chosen else ""
            print(f"{outcome.name:<22} {mark:<16} {cx:<7} {shown}", file=sys.stderr, flush=True)
    if verify:
        for item in kept:
            data = lt.build_task_data(item)
            f = lt.new_function(item)
            for split in data:
                pred = f(split.X)
                if not np.allclose(pred, split.y, rtol=1e-5, atol=0):
                    raise SystemExit(f"{item['name']}: generated data do not satisfy the formula")
    return {"header": header(counts, reasons, cap, branch_count, time.monotonic() - started), "entries": kept}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--feynman", type=Path, help="Feynman catalog (default: assets/catalogs/feynman.json)")
    ap.add_argument("--out", type=Path, default=OUTPUT)
    ap.add_argument("--only", nargs="*", help="only these Feynman file names (for trying things out)")
    ap.add_argument("--no-verify", action="store_true", help="skip generating every task's data")
    args = ap.parse_args(argv)
    if args.only and args.out == OUTPUT:
        ap.error("--only builds a partial catalog: give --out so the shipped one is not overwritten")
    try:
        catalog = build(args.feynman, args.only, verify=not args.no_verify)
    except Exception:
        traceback.print_exc()
        return 1
    names = [e["name"] for e in catalog["entries"]]
    if len(set(names)) != len(names):
        raise SystemExit("duplicate task names")
    args.out.write_text(json.dumps(catalog, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    c = catalog["header"]["counts"]
    print(
        f"wrote {args.out}: {c['feynman']} equations -> {c['candidates']} candidates -> {c['solvable']} solvable "
        f"-> {c['refined']} refined -> {c['final']} tasks",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
