"""Editable price table: model-name pattern -> (input $, output $) per million tokens.

Patterns are ``fnmatch`` globs matched against the model name (case-insensitive); the longest
matching pattern wins, so ``gpt-4o-mini*`` beats ``gpt-4o*``. The figures are list prices at the
time of writing and will go stale: edit :data:`PRICES` (or pass your own table to
:class:`engine.llm.Budget`). A model that matches no pattern costs 0, and
:func:`cost` says so (``known=False``), so a budget in dollars does not silently cover it.
"""

from __future__ import annotations

from fnmatch import fnmatchcase

PRICES: dict[str, tuple[float, float]] = {
    "gpt-4o-mini*": (0.15, 0.60),
    "gpt-4o*": (2.50, 10.00),
    "gpt-4.1-nano*": (0.10, 0.40),
    "gpt-4.1-mini*": (0.40, 1.60),
    "gpt-4.1*": (2.00, 8.00),
    "gpt-3.5-turbo*": (0.50, 1.50),
    "o3-mini*": (1.10, 4.40),
    "o4-mini*": (1.10, 4.40),
}


def price_for(model: str, prices: dict[str, tuple[float, float]] | None = None) -> tuple[float, float] | None:
    table = PRICES if prices is None else prices
    name = (model or "").lower()
    matches = [p for p in table if fnmatchcase(name, p.lower())]
    if not matches:
        return None
    return table[max(matches, key=len)]


def cost(
    model: str, prompt_tokens: int, completion_tokens: int, prices: dict[str, tuple[float, float]] | None = None
) -> tuple[float, bool]:
    """(dollars, known): the cost of one request; (0.0, False) for a model not in the table."""
    price = price_for(model, prices)
    if price is None:
        return 0.0, False
    return (prompt_tokens * price[0] + completion_tokens * price[1]) / 1_000_000, True
