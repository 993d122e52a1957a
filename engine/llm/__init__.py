"""The LLM client (issue 4): settings, budget, price table, response cache, retries.

Built on the official ``openai`` package against any OpenAI-compatible endpoint. No Qt here.
"""

from .budget import Budget
from .cache import ResponseCache
from .client import CallRecord, Completion, ConnectionReport, LLMClient, parse_retry_after
from .errors import BudgetExhausted, CacheMiss, LLMCallFailed, LLMError
from .prices import PRICES, cost, price_for
from .settings import LLMSettings

__all__ = [
    "PRICES", "Budget", "BudgetExhausted", "CacheMiss", "CallRecord", "Completion", "ConnectionReport",
    "LLMCallFailed", "LLMClient", "LLMError", "LLMSettings", "ResponseCache", "cost", "parse_retry_after",
    "price_for",
]
