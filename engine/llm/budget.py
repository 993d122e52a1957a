"""A run's LLM budget: successful calls, prompt tokens, completion tokens and dollars.

A *call* is one successful completion request (a reply with at least one non-empty choice);
failed attempts are counted separately as ``failures``. Tokens and cost are charged for every
response that reports ``usage``, successful or not, because the provider bills them.

Exactness under threads: a request first *reserves* a call slot. While reserved slots could
take the call count past ``max_calls``, further requests wait for them to finish (a failed
request gives its slot back), so ``calls`` never exceeds ``max_calls`` and the run is refused
only once the calls are really spent. Token and cost limits are checked before each request; a
request in flight can overshoot them by at most its own usage (no one can know a reply's length
in advance).
"""

from __future__ import annotations

import threading

from . import prices as _prices
from .errors import BudgetExhausted


class Budget:
    def __init__(
        self,
        max_calls: int | None = None,
        max_prompt_tokens: int | None = None,
        max_completion_tokens: int | None = None,
        max_cost: float | None = None,
        prices: dict[str, tuple[float, float]] | None = None,
    ):
        self.max_calls = max_calls
        self.max_prompt_tokens = max_prompt_tokens
        self.max_completion_tokens = max_completion_tokens
        self.max_cost = max_cost
        self.prices = prices  # None: the module's editable PRICES table
        self._cond = threading.Condition()
        self.calls = 0
        self.cached = 0  # calls among `calls` that were answered from the cache
        self.failures = 0  # failed attempts (errors, malformed or empty replies)
        self.malformed = 0  # failed attempts whose reply was malformed or empty
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.cost = 0.0
        self.unpriced_models: set[str] = set()
        self._reserved = 0

    # ------------------------------------------------------------------ limits

    def _exhausted(self) -> str | None:
        if self.max_calls is not None and self.calls >= self.max_calls:
            return f"max_calls={self.max_calls} reached ({self.calls} calls)"
        if self.max_prompt_tokens is not None and self.prompt_tokens >= self.max_prompt_tokens:
            return f"max_prompt_tokens={self.max_prompt_tokens} reached ({self.prompt_tokens} tokens)"
        if self.max_completion_tokens is not None and self.completion_tokens >= self.max_completion_tokens:
            return f"max_completion_tokens={self.max_completion_tokens} reached ({self.completion_tokens} tokens)"
        if self.max_cost is not None and self.cost >= self.max_cost:
            return f"max_cost={self.max_cost} reached (${self.cost:.6f})"
        return None

    def exhausted(self) -> str | None:
        """Why the budget is spent, or None while requests may still be made."""
        with self._cond:
            return self._exhausted()

    def reserve(self) -> None:
        """Take a call slot before a request, or raise BudgetExhausted."""
        with self._cond:
            while True:
                reason = self._exhausted()
                if reason:
                    raise BudgetExhausted(f"LLM budget exhausted: {reason}", limit=reason.split("=")[0])
                if self.max_calls is None or self.calls + self._reserved < self.max_calls:
                    self._reserved += 1
                    return
                self._cond.wait()  # every remaining call is in flight: wait for one to end

    def release(self, *, succeeded: bool, cached: bool = False) -> None:
        """Give back a reserved slot; a success turns it into a counted call."""
        with self._cond:
            self._reserved -= 1
            if succeeded:
                self.calls += 1
                if cached:
                    self.cached += 1
            self._cond.notify_all()

    # ------------------------------------------------------------------ charging

    def charge(self, model: str, prompt_tokens: int, completion_tokens: int) -> tuple[float, bool]:
        """Add one response's usage; returns (cost, price known)."""
        dollars, known = _prices.cost(model, prompt_tokens, completion_tokens, self.prices)
        with self._cond:
            self.prompt_tokens += int(prompt_tokens)
            self.completion_tokens += int(completion_tokens)
            self.cost += dollars
            if not known:
                self.unpriced_models.add(model)
            self._cond.notify_all()
        return dollars, known

    def count_failure(self, *, malformed: bool = False) -> None:
        with self._cond:
            self.failures += 1
            if malformed:
                self.malformed += 1

    def snapshot(self) -> dict:
        """Counters and limits, JSON-ready (the CLI's ``llm`` block)."""
        with self._cond:
            return {
                "calls": self.calls,
                "cached": self.cached,
                "failures": self.failures,
                "malformed": self.malformed,
                "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens,
                "cost": self.cost,
                "unpriced_models": sorted(self.unpriced_models),
                "limits": {
                    "max_calls": self.max_calls,
                    "max_prompt_tokens": self.max_prompt_tokens,
                    "max_completion_tokens": self.max_completion_tokens,
                    "max_cost": self.max_cost,
                },
            }
