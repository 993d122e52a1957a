"""LLM-SRBench's numeric metrics on worked examples computed by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine.metrics import acc_tau, nmse, r2, score

# Worked example: y = [1, 2, 3, 4], mean 2.5, Σ(y − ȳ)² = 2.25 + 0.25 + 0.25 + 2.25 = 5.
Y = [1.0, 2.0, 3.0, 4.0]
# Errors 0.05, −0.1, 0.2, 0 → Σ err² = 0.0025 + 0.01 + 0.04 + 0 = 0.0525.
Y_HAT = [1.05, 1.9, 3.2, 4.0]


def test_nmse_worked_example():
    assert nmse(Y, Y_HAT) == pytest.approx(0.0525 / 5)


def test_nmse_of_the_mean_predictor_is_one():
    assert nmse(Y, [2.5] * 4) == pytest.approx(1.0)


def test_nmse_perfect_fit_is_zero():
    assert nmse(Y, Y) == 0.0


def test_r2_worked_example():
    assert r2(Y, Y_HAT) == pytest.approx(1 - 0.0525 / 5)
    assert r2(Y, [2.5] * 4) == pytest.approx(0.0)
    # Worse than the mean: Σ err² = 4·(2)² = 16 → R² = 1 − 16/5.
    assert r2(Y, [3.0, 4.0, 5.0, 6.0]) == pytest.approx(1 - 16 / 5)


def test_acc_tau_worked_example():
    # Relative errors 0.05, 0.05, 0.0667, 0 → all ≤ 0.1.
    assert acc_tau(Y, Y_HAT) == 1.0
    # 3.5 vs 3 is 16.7 % off: one point is enough to fail.
    assert acc_tau(Y, [1.05, 1.9, 3.5, 4.0]) == 0.0
    # The same prediction passes with a looser tolerance.
    assert acc_tau(Y, [1.05, 1.9, 3.5, 4.0], tau=0.2) == 1.0


def test_acc_tau_uses_relative_error_so_scale_does_not_matter():
    y = np.array([1e-6, 2e-6, 1e6])
    assert acc_tau(y, y * 1.09) == 1.0
    assert acc_tau(y, y * 1.11) == 0.0


def test_acc_tau_leaves_out_zero_targets_where_the_relative_error_is_undefined():
    assert acc_tau([0.0, 1.0], [0.0, 1.05]) == 1.0
    assert acc_tau([0.0, 1.0], [1e-9, 1.05]) == 1.0  # the zero target is not scored
    assert acc_tau([0.0, 1.0], [5.0, 1.2]) == 0.0  # the other points still are
    assert acc_tau([0.0, 0.0], [0.0, 0.0]) == 1.0  # all zero: scored on exactness
    assert acc_tau([0.0, 0.0], [0.0, 1e-12]) == 0.0
    assert acc_tau([0.0, 1.0], [float("nan"), 1.0]) == 0.0  # a NaN anywhere fails


def test_nmse_and_r2_with_zero_targets_are_ordinary():
    # y = [0, 2], mean 1, Σ(y − ȳ)² = 2; ŷ = [0.5, 2] → Σ err² = 0.25.
    assert nmse([0.0, 2.0], [0.5, 2.0]) == pytest.approx(0.125)
    assert r2([0.0, 2.0], [0.5, 2.0]) == pytest.approx(0.875)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_predictions_fail_every_metric(bad):
    y_hat = [1.0, 2.0, bad, 4.0]
    assert nmse(Y, y_hat) == math.inf
    assert r2(Y, y_hat) == -math.inf
    assert acc_tau(Y, y_hat) == 0.0
    s = score(Y, y_hat)
    assert s["n_nonfinite"] == 1
    assert s["nmse"] == math.inf and s["r2"] == -math.inf and s["acc_0.1"] == 0.0


def test_constant_target():
    # Zero variance: an exact prediction scores 0 / 1, anything else inf / −inf.
    assert nmse([2.0, 2.0, 2.0], [2.0, 2.0, 2.0]) == 0.0
    assert r2([2.0, 2.0, 2.0], [2.0, 2.0, 2.0]) == 1.0
    assert nmse([2.0, 2.0, 2.0], [2.0, 2.0, 2.1]) == math.inf
    assert r2([2.0, 2.0, 2.0], [2.0, 2.0, 2.1]) == -math.inf
    # Acc_τ is relative to y, not to its variance: 2.1 is 5 % off.
    assert acc_tau([2.0, 2.0, 2.0], [2.0, 2.0, 2.1]) == 1.0


def test_shape_mismatch_is_an_error():
    with pytest.raises(ValueError, match="y has 2 points but y_hat has 3"):
        nmse([1.0, 2.0], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError):
        acc_tau([1.0, 2.0], [1.0])
    with pytest.raises(ValueError):
        score([1.0, 2.0], [1.0])


def test_empty_input_is_an_error():
    with pytest.raises(ValueError, match="no points"):
        nmse([], [])


def test_column_vectors_are_accepted():
    y = np.array(Y).reshape(-1, 1)
    assert nmse(y, np.array(Y_HAT)) == pytest.approx(0.0105)


def test_score_keys_and_values():
    s = score(Y, Y_HAT)
    assert set(s) == {"nmse", "acc_0.1", "r2", "n", "n_nonfinite"}
    assert s["nmse"] == pytest.approx(0.0105)
    assert s["r2"] == pytest.approx(0.9895)
    assert s["acc_0.1"] == 1.0
    assert s["n"] == 4 and s["n_nonfinite"] == 0
    assert "acc_0.05" in score(Y, Y_HAT, tau=0.05)
