"""Settings of the LLM client (issue 4): endpoint, model, sampling, time-outs, retries.

The API key is *not* a setting. ``api_key_env`` names the environment variable that holds it;
the key is read from ``os.environ`` each time a request is made (and, only when the optional
``keyring`` package is importable and the variable is unset, from the OS keyring under service
:data:`KEYRING_SERVICE` with the variable's name as the user name). Nothing in this dataclass,
its ``repr``, ``to_dict()`` or anything derived from it contains the key.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, fields

KEYRING_SERVICE = "keplerlab"

#: Sent when no key is configured: OpenAI-compatible local servers (vLLM, Ollama, llama.cpp)
#: ignore the key, but the ``openai`` package refuses an empty one.
NO_KEY = "no-key"


@dataclass
class LLMSettings:
    base_url: str = "http://127.0.0.1:8000/v1"
    model: str = "gpt-4o-mini"
    temperature: float = 0.8
    top_p: float = 1.0
    max_tokens: int = 1024
    timeout: float = 60.0  # seconds per HTTP request
    max_retries: int = 5  # extra attempts after the first one
    concurrency: int = 4  # requests in flight at once, over all threads using one client
    api_key_env: str = "OPENAI_API_KEY"  # name of the environment variable, never the key
    retry_base_delay: float = 1.0  # first back-off, doubled each retry, with jitter
    retry_max_delay: float = 60.0  # cap on one back-off and on an honoured Retry-After

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        if self.max_retries < 0:
            raise ValueError("max_retries cannot be negative")
        if self.timeout <= 0:
            raise ValueError("timeout must be positive")

    def sampling(self) -> dict:
        """The default sampling parameters of a completion request."""
        return {"temperature": self.temperature, "top_p": self.top_p, "max_tokens": self.max_tokens}

    def to_dict(self) -> dict:
        """Every setting, JSON-ready. Holds the variable's *name* only, never a secret."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "LLMSettings":
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})

    # ------------------------------------------------------------------ the key, at call time

    def api_key(self) -> str | None:
        """The API key from the environment (or the OS keyring), or None when none is set."""
        if self.api_key_env:
            value = os.environ.get(self.api_key_env, "").strip()
            if value:
                return value
            return _keyring_lookup(self.api_key_env)
        return None

    def key_source(self) -> str:
        """Where the key comes from, for display ("environment variable X", "keyring", "none")."""
        if self.api_key_env and os.environ.get(self.api_key_env, "").strip():
            return f"environment variable {self.api_key_env}"
        if self.api_key_env and _keyring_lookup(self.api_key_env):
            return f"OS keyring ({KEYRING_SERVICE}/{self.api_key_env})"
        return "none"


def _keyring_lookup(name: str) -> str | None:
    try:
        import keyring  # optional; not a dependency
    except Exception:
        return None
    try:
        value = keyring.get_password(KEYRING_SERVICE, name)
    except Exception:  # no backend, locked keyring, D-Bus missing, ...
        return None
    return value.strip() if value and value.strip() else None
