"""ERBench's recovery metrics on worked examples computed by hand (engine.metrics.recovery)."""

from __future__ import annotations

import pytest

from engine.metrics.recovery import (
    canonical_tree,
    jaccard_index,
    recovered,
    subexpressions,
    tree_edit_distance,
    tree_size,
)

X = ["x"]


# --------------------------------------------------------------------------- recovery


def test_additive_constant_is_recovered():
    assert recovered("x**2 + 3", "x**2", X)
    assert recovered("x**2", "x**2 - 17.25", X, domain=[(-5, 5)])


def test_nonzero_scale_is_recovered():
    assert recovered("2*sin(x)", "sin(x)", X)
    assert recovered("sin(x)", "-0.5*sin(x)", X)


def test_different_structure_is_not_recovered():
    assert not recovered("x", "x**2", X)
    assert not recovered("sin(x)", "sin(1.01*x)", X)
    # Scale and shift at once is neither f* - f = a nor f*/f = b.
    assert not recovered("x**2 + 3", "2*x**2 + 5", X)


def test_fitted_constants_within_tolerance_and_outside():
    assert recovered("exp(-x**2/2)", "0.3989*exp(-0.5000000001*x**2)", X, domain=[(1, 3)])
    assert not recovered("exp(-x**2/2)", "exp(-0.51*x**2)", X, domain=[(1, 3)])


def test_domain_by_name_and_several_variables():
    dom = {"a": (1, 2), "b": (0.5, 4)}
    assert recovered("a*log(b)", "3*a*log(b)", ["a", "b"], domain=dom)
    assert not recovered("a*log(b)", "a + log(b)", ["a", "b"], domain=dom)


def test_undefined_values():
    # The truth is undefined for x < 0: those points are dropped, and the candidate agrees
    # (up to a shift) wherever the truth is defined.
    assert recovered("log(x)", "log(x) + 1", X, domain=[(-10, 10)])
    # A candidate undefined where the truth is defined is not recovered: this one equals x
    # for x > 5 and is undefined below.
    half = "x*sqrt(x - 5)/sqrt(abs(x - 5))"
    assert recovered("x", half, X, domain=[(5.5, 10)])
    assert not recovered("x", half, X, domain=[(0, 10)])
    with pytest.raises(ValueError):
        recovered("log(-x**2 - 1)", "x", X)


def test_unparsable_candidate_is_not_recovered():
    assert not recovered("x", "__import__('os')", X)
    assert not recovered("x", "y + 1", X)


# --------------------------------------------------------------------------- trees


def test_canonical_tree_abstracts_numbers_but_keeps_exponents():
    assert canonical_tree("x**2 + 3") == ("Add", ("C",), ("Pow", ("x",), ("2",)))
    assert canonical_tree("2.99*x") == canonical_tree("3*x") == ("Mul", ("C",), ("x",))
    assert canonical_tree("sqrt(x)") == ("Pow", ("x",), ("1/2",))
    assert canonical_tree("x**1.5") == ("Pow", ("x",), ("3/2",))
    assert canonical_tree("y + x") == canonical_tree("x + y")


def test_jaccard_worked_examples():
    # x**2 + 3 -> {x**2 + C, x**2, x, 2, C}; x**2 -> {x**2, x, 2}: 3 shared of 5.
    assert len(subexpressions(canonical_tree("x**2 + 3"))) == 5
    assert jaccard_index("x**2 + 3", "x**2") == pytest.approx(3 / 5)
    # x + sin(x) -> {x + sin(x), sin(x), x}: only x is shared, union 5 + 3 - 1 = 7.
    assert jaccard_index("x**2 + 3", "sin(x) + x") == pytest.approx(1 / 7)
    # x*y vs x + y: {x*y, x, y} and {x + y, x, y}: 2 shared, union 4.
    assert jaccard_index("x*y", "x + y") == pytest.approx(2 / 4)
    assert jaccard_index("2.5*sin(x)", "sin(x)*7") == 1.0
    assert jaccard_index("x", "y") == 0.0


def test_tree_edit_distance_worked_examples():
    # One relabelling (Add -> Mul) on two 3-node trees.
    assert tree_edit_distance("x + y", "x*y", normalized=False) == 1
    assert tree_edit_distance("x + y", "x*y") == pytest.approx(1 / 6)
    # sin(x) + 1 = Add(C, sin(x)) (4 nodes) -> sin(x) (2 nodes): delete Add and C.
    assert tree_edit_distance("sin(x) + 1", "sin(x)", normalized=False) == 2
    assert tree_edit_distance("sin(x) + 1", "sin(x)") == pytest.approx(2 / 6)
    # sin(x) -> cos(x**2): relabel sin, then insert Pow and its exponent 2.
    assert tree_edit_distance("sin(x)", "cos(x**2)", normalized=False) == 3
    assert tree_edit_distance("x*sin(y)", "sin(y)*x") == 0.0
    assert tree_size(canonical_tree("x*sin(y)")) == 4
