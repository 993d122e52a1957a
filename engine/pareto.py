"""The accuracy / complexity trade-off: Pareto front, PySR's score and its "best" pick.

Definitions (following PySR's ``model_selection="best"``, Cranmer 2023, §"Model selection"):

* A candidate is anything with an expression, a ``complexity`` and a training ``loss``: a dict
  with those keys (the store's and the GUI's rows) or an object with those attributes
  (:class:`engine.methods.Candidate`).
* **Valid** candidates have a finite, non-negative loss. A missing loss (``None``, which is how
  the store keeps a non-finite one), ``inf``, ``NaN`` or a negative number makes a candidate
  invalid: it is never on the front and never recommended.
* The **front** is the valid candidates sorted by complexity (ties: lower loss first), keeping
  each one whose loss is strictly lower than that of every simpler member kept so far. So one
  complexity contributes at most one member, and losses fall strictly along the front.
* The **score** of front member *i* (sorted by complexity) is

      score_i = −(ln loss_i − ln loss_{i−1}) / (complexity_i − complexity_{i−1}),

  the fall in log-loss bought by each extra unit of complexity. The first (simplest) member
  scores 0.
* **Round-off floor**: a training NMSE at or below 1e-12 is numerical noise (float64 round-off
  on an exact law), so every loss is read as ``max(loss, 1e-12)`` for scores and for the 1.5×
  rule; otherwise ``x*y`` with NMSE 5e-13 would lose to a 16-node rewrite with 5e-17. GP's own
  choice of its final model uses the same floor.
* The **recommended** candidate: among front members whose loss is at most 1.5 × the lowest
  loss on the front (both floored), the one with the highest score; ties go to the simpler one.
  With no valid candidate there is no recommendation (``None``).

Worked example (tests/engine/test_pareto.py): complexities 1, 3, 5, 8 with losses 1.0, 0.1,
0.05, 0.04 score 0, ln 10 / 2 ≈ 1.151, ln 2 / 2 ≈ 0.347 and ln 1.25 / 3 ≈ 0.074. The lowest loss
is 0.04, so only losses ≤ 0.06 qualify (complexities 5 and 8) and complexity 5 is recommended,
although complexity 3 has the highest score overall.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

#: PySR's tolerance: a candidate within this factor of the lowest loss may be recommended.
LOSS_TOLERANCE = 1.5
#: Losses at or below this are round-off and count as equal (as in engine.methods.gp).
LOSS_FLOOR = 1e-12


def _get(candidate: Any, key: str):
    if isinstance(candidate, dict):
        return candidate.get(key)
    return getattr(candidate, key, None)


def _loss(candidate: Any) -> float | None:
    value = _get(candidate, "loss")
    if value is None:
        return None
    try:
        value = float(value)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) and value >= 0 else None


def front_indices(candidates: Sequence[Any]) -> list[int]:
    """Indices (into ``candidates``) of the front members, simplest first."""
    valid = [(float(_get(c, "complexity")), loss, i) for i, c in enumerate(candidates)
             if (loss := _loss(c)) is not None and _get(c, "complexity") is not None]
    valid.sort(key=lambda t: (t[0], t[1], t[2]))
    kept: list[int] = []
    best = math.inf
    for _, loss, i in valid:
        if loss < best:
            kept.append(i)
            best = loss
    return kept


def scores(candidates: Sequence[Any]) -> dict[int, float]:
    """PySR's score of every front member, keyed by its index in ``candidates``."""
    members = front_indices(candidates)
    out: dict[int, float] = {}
    prev = None
    for i in members:
        loss = max(_loss(candidates[i]), LOSS_FLOOR)
        comp = float(_get(candidates[i], "complexity"))
        if prev is None:
            out[i] = 0.0
        else:
            prev_loss, prev_comp = prev
            out[i] = -(math.log(loss) - math.log(prev_loss)) / (comp - prev_comp)
        prev = (loss, comp)
    return out


def recommended_index(candidates: Sequence[Any]) -> int | None:
    """Index in ``candidates`` of the recommended candidate (see the module docstring)."""
    score = scores(candidates)
    if not score:
        return None
    lowest = max(min(_loss(candidates[i]) for i in score), LOSS_FLOOR)
    eligible = [i for i in score if _loss(candidates[i]) <= LOSS_TOLERANCE * lowest]
    # Highest score; among equal scores the simpler (front order is by complexity).
    order = front_indices(candidates)
    return max(eligible, key=lambda i: (score[i], -order.index(i)))


def recommended(candidates: Sequence[Any]):
    """The recommended candidate itself (the same object), or ``None``."""
    i = recommended_index(candidates)
    return None if i is None else candidates[i]
