"""Numeric fit metrics of LLM-SRBench (paper §2.3 and App. B.1), each a pure function.

Every function takes the true targets ``y`` and predictions ``y_hat`` of one test split.
Non-finite predictions are treated as failures, never silently dropped: a prediction of NaN or
inf makes NMSE and R² infinite / -inf and Acc_τ zero. (The reference code drops NaN
predictions before computing NMSE; we report the count of non-finite points separately
instead, so a model that fails on part of the domain cannot look perfect.)
"""

from __future__ import annotations

import math

import numpy as np


def _prepare(y, y_hat):
    y = np.asarray(y, dtype=float).ravel()
    y_hat = np.asarray(y_hat, dtype=float).ravel()
    if y.shape != y_hat.shape:
        raise ValueError(f"y has {y.size} points but y_hat has {y_hat.size}")
    if y.size == 0:
        raise ValueError("no points to score")
    return y, y_hat


def nmse(y, y_hat) -> float:
    """Normalised mean squared error, LLM-SRBench §2.3 / App. B.1:

        NMSE = Σ (ŷ_i − y_i)² / Σ (y_i − ȳ)²

    0 is a perfect fit, 1 is as good as predicting the mean. A constant target (zero variance)
    gives 0 for an exact prediction and inf otherwise. Any non-finite prediction gives inf.
    """
    y, y_hat = _prepare(y, y_hat)
    if not np.all(np.isfinite(y_hat)):
        return math.inf
    num = float(np.sum((y_hat - y) ** 2))
    den = float(np.sum((y - y.mean()) ** 2))
    if den == 0.0:
        return 0.0 if num == 0.0 else math.inf
    return num / den


#: A target at most this fraction of the split's largest |y| counts as zero in Acc_τ.
ZERO_TARGET = 1e-12


def acc_tau(y, y_hat, tau: float = 0.1) -> float:
    """Accuracy to tolerance, LLM-SRBench §2.3 / App. B.1 (after Kamienny et al. 2022):

        Acc_τ = 1( max_i |(ŷ_i − y_i) / y_i| ≤ τ )

    evaluated as ``|ŷ_i − y_i| ≤ τ·|y_i|`` for every point, which is the same condition without
    a division. **Case y_i = 0** (the paper leaves it open, and its formula is undefined there):
    points whose target is zero (``|y_i| ≤ 1e-12·max|y|``) are left out, as the relative error
    has no value at them. Otherwise any such point would decide the score alone: LSR-Synth's
    material-science data hold σ = 0 at ε = 0 in 16 of 25 laws, and a model 1e-9 off there would
    score 0 however well it fits. A split whose targets are all zero is scored on exactness. A NaN
    or infinite prediction anywhere fails. Returns 1.0 or 0.0 so results average into
    percentages.
    """
    y, y_hat = _prepare(y, y_hat)
    if not np.all(np.isfinite(y_hat)):
        return 0.0
    scale = float(np.max(np.abs(y)))
    nonzero = np.abs(y) > ZERO_TARGET * scale
    if not np.any(nonzero):
        return 1.0 if bool(np.all(y_hat == y)) else 0.0
    ok = np.abs(y_hat[nonzero] - y[nonzero]) <= tau * np.abs(y[nonzero])
    return 1.0 if bool(np.all(ok)) else 0.0


def r2(y, y_hat) -> float:
    """Coefficient of determination R² = 1 − Σ(ŷ−y)² / Σ(y−ȳ)² = 1 − NMSE (as in the reference
    code, which uses scikit-learn's ``r2_score``; App. B.1 lists NMSE and Acc_τ, R² is reported
    alongside). Non-finite predictions give −inf."""
    value = nmse(y, y_hat)
    return -math.inf if math.isinf(value) else 1.0 - value


def score(y, y_hat, tau: float = 0.1) -> dict[str, float]:
    """All numeric metrics of one split, keyed as in the CLI's JSON output."""
    y, y_hat = _prepare(y, y_hat)
    return {
        "nmse": nmse(y, y_hat),
        f"acc_{tau:g}": acc_tau(y, y_hat, tau),
        "r2": r2(y, y_hat),
        "n": int(y.size),
        "n_nonfinite": int(np.sum(~np.isfinite(y_hat))),
    }
