"""PySR's "best" rule on a hand-computed front (engine.pareto)."""

from __future__ import annotations

import math

import pytest

from engine import pareto
from engine.methods.base import Candidate


def _c(expression, complexity, loss):
    return {"expression": expression, "complexity": complexity, "loss": loss}


# complexity: 1, 3, 5, 8 on the front; 4 is dominated by 3; "bad" has no finite loss.
FRONT = [
    _c("x*y*z + x - 1", 8, 0.04),
    _c("x", 1, 1.0),
    _c("x*y + 1", 5, 0.05),
    _c("bad", 2, None),
    _c("x + y*2", 4, 0.2),
    _c("2*x", 3, 0.1),
]


def test_front_drops_dominated_and_invalid_members_and_sorts_by_complexity():
    members = [FRONT[i]["complexity"] for i in pareto.front_indices(FRONT)]
    assert members == [1, 3, 5, 8]


def test_scores_match_the_hand_computation():
    s = {FRONT[i]["complexity"]: v for i, v in pareto.scores(FRONT).items()}
    assert s[1] == 0.0
    assert s[3] == pytest.approx(math.log(10) / 2)  # 1.0 -> 0.1 over 2 units
    assert s[5] == pytest.approx(math.log(2) / 2)  # 0.1 -> 0.05 over 2 units
    assert s[8] == pytest.approx(math.log(1.25) / 3)  # 0.05 -> 0.04 over 3 units
    assert set(s) == {1, 3, 5, 8}


def test_recommended_is_the_best_score_within_one_and_a_half_times_the_lowest_loss():
    # The highest score overall is complexity 3, but 0.1 > 1.5 * 0.04; of 5 and 8, 5 scores more.
    best = pareto.recommended(FRONT)
    assert best is FRONT[2]
    assert pareto.recommended_index(FRONT) == 2


def test_a_large_late_improvement_wins():
    rows = [_c("a", 1, 1.0), _c("b", 3, 0.5), _c("c", 4, 0.001), _c("d", 9, 0.0009)]
    assert pareto.recommended(rows)["expression"] == "c"


def test_losses_at_round_off_count_as_equal_so_the_simpler_exact_law_is_recommended():
    # x*y fits to round-off (5e-13); a 16-node rewrite reaches 5e-17: no real gain.
    rows = [_c("a", 1, 1.0), _c("x*y", 4, 5.3e-13), _c("b", 9, 5.1e-13), _c("c", 16, 5.3e-17)]
    assert pareto.scores(rows)[3] == 0.0
    assert pareto.recommended(rows)["expression"] == "x*y"
    # An exact zero is floored too.
    rows = [_c("a", 1, 1.0), _c("b", 3, 0.0), _c("c", 5, 0.0)]
    assert math.isfinite(pareto.scores(rows)[1])
    assert pareto.recommended(rows)["expression"] == "b"


def test_non_finite_losses_and_empty_input():
    assert pareto.recommended([]) is None
    assert pareto.recommended([_c("a", 1, None), _c("b", 2, math.inf), _c("c", 3, math.nan)]) is None
    assert pareto.recommended([_c("a", 1, None), _c("b", 2, 0.3)])["expression"] == "b"


def test_single_member_is_recommended():
    assert pareto.recommended([_c("a", 4, 0.2)])["expression"] == "a"


def test_accepts_method_candidates():
    rows = [Candidate(expression=r["expression"], complexity=r["complexity"], loss=r["loss"] if r["loss"] is not None else math.inf)
            for r in FRONT]
    assert pareto.recommended(rows).expression == "x*y + 1"
