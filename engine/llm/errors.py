"""Exceptions of the LLM client. Callers catch :class:`LLMError` for all of them."""

from __future__ import annotations


class LLMError(RuntimeError):
    """Base class of every error the LLM client raises on purpose."""


class LLMCallFailed(LLMError):
    """A completion request failed for good: every attempt failed, or the server refused it
    with a 4xx status other than 429 (not retried). ``attempts`` and ``status_code`` say more;
    ``unreachable`` is True when no attempt reached a server at all (nothing listens at the
    address, or its host name is unknown)."""

    def __init__(self, message: str, *, attempts: int = 0, status_code: int | None = None,
                 unreachable: bool = False):
        super().__init__(message)
        self.attempts = attempts
        self.status_code = status_code
        self.unreachable = unreachable


class BudgetExhausted(LLMError):
    """The run's LLM budget (calls, tokens or cost) is spent; no request was sent."""

    def __init__(self, message: str, *, limit: str = ""):
        super().__init__(message)
        self.limit = limit


class CacheMiss(LLMError):
    """Replay mode was asked for a request that the cache has no recording of."""
