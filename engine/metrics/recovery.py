"""ERBench's equation-recovery metrics (Kahlmeyer et al., ERBench, §4.1 Eq. (2), §5 / App. A.1).

Three pure functions compare a candidate expression with the ground truth, both given as text
and parsed with the whitelist parser (:func:`engine.expr.parse`; nothing is evaluated as Python):

* :func:`recovered` — the hard criterion: the numeric recovery check of App. A.1
  (candidate equals the truth up to an additive constant or a non-zero scale factor).
* :func:`jaccard_index` — the relaxed measure of Eq. (3): shared unique subexpressions.
* :func:`tree_edit_distance` — the relaxed measure of Eq. (4): Zhang–Shasha edit distance with
  unit costs between the canonical trees.

The published text lost the tolerance, the validation interval and the normalisation of Eq. (4);
the values we chose are the module constants below and are recorded in ``docs/architecture.md``.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Mapping, Sequence

import numpy as np
import sympy as sp

from ..expr import compile_numpy, parse

#: Relative tolerance of the numeric check (the paper's ε is lost; see :func:`recovered`).
RECOVERY_RTOL = 1e-4
#: Validation box used when the caller gives no domain (ERBench's fixed validation interval;
#: the value [-100, 100] per variable is from a secondary source, not the paper's text).
DEFAULT_DOMAIN = (-100.0, 100.0)
#: Share of the points where the truth is defined on which the candidate must be defined too.
MIN_SHARED_VALID = 0.99
#: Fewer points than this where the truth is defined: the check cannot be made.
MIN_VALID_POINTS = 10

#: Token that replaces every numeric constant in the canonical trees of JI and TED.
CONSTANT_TOKEN = "C"


# --------------------------------------------------------------------------- recovery


def _box(variables: Sequence[str], domain) -> list[tuple[float, float]]:
    if domain is None:
        return [DEFAULT_DOMAIN for _ in variables]
    if isinstance(domain, Mapping):
        return [(float(domain[v][0]), float(domain[v][1])) for v in variables]
    box = [(float(lo), float(hi)) for lo, hi in domain]
    if len(box) != len(variables):
        raise ValueError(f"domain has {len(box)} intervals for {len(variables)} variables")
    return box


def recovered(
    truth: str,
    candidate: str,
    variables: Sequence[str],
    domain=None,
    n_points: int = 1000,
    seed: int = 0,
    rtol: float = RECOVERY_RTOL,
) -> bool:
    """ERBench's numeric recovery check (ERBench §4.1 Eq. (2) and App. A.1).

    The candidate ``f̂`` recovers the truth ``f*`` when, on ``n_points`` (1000, as in A.1)
    points drawn uniformly from ``domain``, either

    * the differences are constant: ``std(f* − f̂) ≤ rtol · std(f*)`` (``f* − f̂ = a``), or
    * the ratios are constant and not zero: ``std(f*/f̂) ≤ rtol · |mean(f*/f̂)|`` with
      ``mean(f*/f̂) ≠ 0`` (``f*/f̂ = b``, ``b ≠ 0``).

    Choices where the paper's text lost the value:

    * ``rtol`` = 1e-4, relative (to the spread of the truth for differences, to the mean ratio
      for ratios), so the check does not depend on the units of the target and accepts
      constants fitted to float32 precision while rejecting a different structure, which
      varies by O(1) across the box. For a constant truth the scale is ``max(|mean f*|, 1)``.
    * ``domain``: an (low, high) interval per variable, as a sequence in ``variables`` order
      or a mapping by name; the task's own domain is meant. Without one, [−100, 100] per
      variable (ERBench's validation interval as reported by a secondary source).
    * Undefined values: points where the truth is not a finite real number are dropped. The
      candidate must be finite on at least 99 % of the remaining points (else: not recovered),
      and the comparison uses the points where both are finite. Ratio points where ``f̂ = 0``
      are dropped. Fewer than 10 points where the truth is defined raise ``ValueError``.
    * Population standard deviations (``ddof = 0``). The points come from ``seed``.

    ``truth`` and ``candidate`` are texts over ``variables`` parsed with the whitelist parser;
    an unparsable candidate is not recovered, an unparsable truth raises ``ExpressionError``.
    """
    variables = list(variables)
    box = _box(variables, domain)
    f_true = compile_numpy(parse(truth, variables), variables)
    try:
        f_cand = compile_numpy(parse(candidate, variables), variables)
    except (ValueError, TypeError):
        return False
    rng = np.random.default_rng(seed)
    lows = np.array([b[0] for b in box])
    highs = np.array([b[1] for b in box])
    X = lows + rng.random((int(n_points), len(box))) * (highs - lows)
    y = f_true(X)
    y_hat = f_cand(X)
    valid = np.isfinite(y)
    n_valid = int(valid.sum())
    if n_valid < MIN_VALID_POINTS:
        raise ValueError(f"the truth is defined on only {n_valid} of {n_points} validation points")
    both = valid & np.isfinite(y_hat)
    if both.sum() < MIN_SHARED_VALID * n_valid:
        return False
    y, y_hat = y[both], y_hat[both]
    with np.errstate(all="ignore"):
        spread = float(np.std(y))
        scale = spread if spread > 0 else max(abs(float(np.mean(y))), 1.0)
        if float(np.std(y - y_hat)) <= rtol * scale:
            return True
        nonzero = y_hat != 0
        if nonzero.sum() < MIN_VALID_POINTS:
            return False
        ratio = y[nonzero] / y_hat[nonzero]
        ratio = ratio[np.isfinite(ratio)]
        if ratio.size < MIN_VALID_POINTS:
            return False
        mean_ratio = float(np.mean(ratio))
        if mean_ratio == 0 or not math.isfinite(mean_ratio):
            return False
        return float(np.std(ratio)) <= rtol * abs(mean_ratio)


# --------------------------------------------------------------------------- canonical trees


def _exponent_label(value: sp.Expr) -> str | None:
    """The label of a numeric exponent kept as structure (``x**2``, ``sqrt``, ``1/x``), or None.

    Rational exponents with denominator ≤ 4 (also when written as floats such as ``1.5``)
    are structure; any other numeric exponent is a constant.
    """
    if not value.is_number or not value.is_real:
        return None
    try:
        frac = Fraction(float(value)).limit_denominator(4)
    except (TypeError, ValueError, OverflowError):
        return None
    if abs(float(frac) - float(value)) > 1e-9:
        return None
    return str(frac.numerator) if frac.denominator == 1 else f"{frac.numerator}/{frac.denominator}"


def canonical_tree(text: str, variables: Sequence[str] | None = None) -> tuple:
    """The canonical tree used by :func:`jaccard_index` and :func:`tree_edit_distance`.

    The text is parsed with the whitelist parser (names that are not in ``variables`` become
    symbols, so a truth and a candidate need not declare their variables) and left in SymPy's
    automatic canonical form (no further simplification). A tree is a nested tuple
    ``(label, child, ...)``:

    * an operator or function node is labelled by its SymPy class (``Add``, ``Mul``, ``Pow``,
      ``sin`` …); the children of the commutative ``Add`` and ``Mul`` are sorted, so argument
      order never matters;
    * a variable is labelled by its name;
    * every number (integers, rationals, floats, ``pi``, ``e``) becomes the token ``"C"``, except
      a rational exponent with denominator ≤ 4 (the ``2`` of ``x**2``, the ``-1`` of ``1/x``,
      the ``1/2`` of ``sqrt``), which is structure and keeps its value. SymPy writes ``-x`` as
      ``Mul(-1, x)``, so a sign becomes a constant factor, like any fitted coefficient.
    """
    expr = parse(text, list(variables or []), allow_free_symbols=True)
    return _tree(expr)


def _tree(expr: sp.Expr) -> tuple:
    if expr.is_Symbol:
        return (expr.name,)
    if (expr.is_number and not expr.args) or isinstance(expr, (sp.NumberSymbol, sp.Number)):
        return (CONSTANT_TOKEN,)
    if expr.is_number and not expr.free_symbols and not isinstance(expr, sp.Function):
        # A compound numeric node (e.g. sqrt(2) as Pow(2, 1/2)) is one constant.
        return (CONSTANT_TOKEN,)
    if isinstance(expr, sp.Pow):
        base, exponent = expr.args
        label = _exponent_label(exponent)
        exp_tree = (label,) if label is not None else _tree(exponent)
        return ("Pow", _tree(base), exp_tree)
    children = [_tree(a) for a in expr.args]
    if isinstance(expr, (sp.Add, sp.Mul)):
        children.sort(key=repr)
    return (type(expr).__name__, *children)


def subexpressions(tree: tuple) -> set[tuple]:
    """Every subtree of ``tree`` (one per node, the node's whole subtree), as a set."""
    out = {tree}
    for child in tree[1:]:
        out |= subexpressions(child)
    return out


def tree_size(tree: tuple) -> int:
    return 1 + sum(tree_size(c) for c in tree[1:])


# --------------------------------------------------------------------------- relaxed metrics


def jaccard_index(truth: str, candidate: str, variables: Sequence[str] | None = None) -> float:
    """Jaccard index of unique subexpressions (ERBench §5, Eq. (3)).

    ``JI = |N(T) ∩ N(T̂)| / |N(T) ∪ N(T̂)|`` where ``N(T)`` is the set of unique
    subexpressions of the canonical tree ``T`` (:func:`canonical_tree`): one subexpression per
    node, namely the whole subtree rooted at it, found by a preorder walk. Leaves count
    (variables, the constant token ``C``, structural exponents), and numbers are abstracted to
    ``C``, so ``2.99*x`` and ``3*x`` share every subexpression. 1 means the same set of
    subexpressions, 0 none in common.

    Example: ``x**2 + 3`` has N = {x**2 + C, x**2, x, 2, C}; ``x**2`` has {x**2, x, 2};
    JI = 3 / 5 = 0.6.
    """
    a = subexpressions(canonical_tree(truth, variables))
    b = subexpressions(canonical_tree(candidate, variables))
    return len(a & b) / len(a | b)


def _zss_tree(tree: tuple):
    import zss

    node = zss.Node(tree[0])
    for child in tree[1:]:
        node.addkid(_zss_tree(child))
    return node


def tree_edit_distance(truth: str, candidate: str, normalized: bool = True,
                       variables: Sequence[str] | None = None) -> float:
    """Tree edit distance between the canonical trees (ERBench §5, Eq. (4)).

    Zhang & Shasha (1989) ordered-tree edit distance with unit costs for inserting, deleting and
    relabelling a node (the ``zss`` package), on the trees of :func:`canonical_tree` (sorted
    commutative children, numbers abstracted to ``C``). With ``normalized`` (the default) the
    distance is divided by ``|T| + |T̂|``, the total number of nodes, giving a value in [0, 1]
    (0: identical trees; 1 is reached only by disjoint labels). The paper's normalisation was
    lost from its text; this is the reconstruction in our notes. ``normalized=False`` returns
    the raw number of edits.

    Example: ``x + y`` and ``x*y`` differ by one relabelling: raw 1, normalised 1 / (3 + 3).
    """
    import zss

    t = canonical_tree(truth, variables)
    c = canonical_tree(candidate, variables)
    raw = float(zss.simple_distance(_zss_tree(t), _zss_tree(c)))
    if not normalized:
        return raw
    return raw / (tree_size(t) + tree_size(c))
