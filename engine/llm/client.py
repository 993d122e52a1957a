"""The LLM client every LLM method uses, built on the official ``openai`` package.

``openai.OpenAI`` is created with ``max_retries=0``: retrying is done here so that every
attempt is visible (recorded, counted) and the policy is ours:

- 429, 408, 409 and 5xx: retried, waiting what the server's ``Retry-After`` (seconds or an
  HTTP date) or ``retry-after-ms`` header asks, capped at ``settings.retry_max_delay``; without a
  header, exponential back-off.
- connection errors (refused, reset, a reply cut off before its end), time-outs, malformed or
  empty replies: retried with exponential back-off ``retry_base_delay * 2**k`` (capped) times a
  random factor in [0.5, 1). When every attempt found no server (refused, unknown host), the
  :class:`LLMCallFailed` says so (``unreachable``); a run whose endpoint never answered then
  stops after that batch of requests (``engine.methods.llm_support``).
- other 4xx (bad request, bad key, unknown model): not retried.

Error texts say what happened in plain words, then the server's own message (OpenAI's
``error.message``), clipped to :data:`MAX_ERROR_CHARS`; never a traceback.

Only when every attempt has failed does :meth:`LLMClient.complete` raise
:class:`LLMCallFailed`. Each attempt produces a :class:`CallRecord` handed to ``on_call`` (status
``error`` for a failed attempt, ``ok`` for the success, ``cached`` for a reply from the cache).
No record, error text or setting carries the API key; an error text that happens to contain it
(an echoing server) has it masked.

At most ``settings.concurrency`` requests are in flight at once over all threads sharing a
client. The engine knows nothing of threads otherwise: methods call ``complete`` from wherever
they run.
"""

from __future__ import annotations

import email.utils
import hashlib
import random
import socket
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

import openai

from .budget import Budget
from .cache import ResponseCache
from .errors import CacheMiss, LLMCallFailed, LLMError
from .settings import NO_KEY, LLMSettings

__all__ = ["CallRecord", "Completion", "ConnectionReport", "LLMClient", "Request", "parse_retry_after"]


@dataclass
class CallRecord:
    """One attempt at a completion request (or one reply from the cache)."""

    model: str
    messages: list[dict]
    replies: list[str] = field(default_factory=list)
    status: str = "ok"  # ok | error | cached
    error: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency: float = 0.0  # seconds the request took (0 for a cached reply)
    attempts: int = 1  # which attempt of the request this was (1 = first)
    cost: float = 0.0
    cost_known: bool = True
    n: int = 1
    t: float = field(default_factory=time.time)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class Completion:
    """The replies of a successful request (list-like over the texts) and its record."""

    texts: list[str]
    record: CallRecord

    def __iter__(self):
        return iter(self.texts)

    def __len__(self) -> int:
        return len(self.texts)

    def __getitem__(self, i):
        return self.texts[i]


@dataclass
class Request:
    """A request fixed by :meth:`LLMClient.prepare`: messages, ``n``, sampling and cache key."""

    messages: list[dict]
    n: int
    params: dict
    key: str | None = None
    index: int | None = None


@dataclass
class ConnectionReport:
    ok: bool
    latency: float
    models: list[str] = field(default_factory=list)
    error: str | None = None


class _Retryable(Exception):
    def __init__(self, message: str, *, delay: float | None = None, malformed: bool = False,
                 status_code: int | None = None, usage: tuple[int, int] = (0, 0), unreachable: bool = False):
        super().__init__(message)
        self.delay = delay  # what the server asked for (Retry-After), if anything
        self.malformed = malformed
        self.status_code = status_code
        self.usage = usage
        self.unreachable = unreachable  # no server answered the connection (refused, unknown host)


class _Fatal(Exception):
    def __init__(self, message: str, status_code: int | None = None):
        super().__init__(message)
        self.status_code = status_code


def parse_retry_after(headers: Any, now: float | None = None) -> float | None:
    """Seconds to wait from ``retry-after-ms``, or ``Retry-After`` as seconds or an HTTP date."""
    if headers is None:
        return None
    try:
        ms = headers.get("retry-after-ms")
        if ms is not None:
            return max(0.0, float(ms) / 1000.0)
    except (TypeError, ValueError):
        pass
    value = headers.get("retry-after")
    if value is None:
        return None
    value = str(value).strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


class LLMClient:
    def __init__(
        self,
        settings: LLMSettings,
        budget: Budget | None = None,
        cache: ResponseCache | None = None,
        on_call: Callable[[CallRecord], None] | None = None,
    ):
        self.settings = settings
        self.budget = budget if budget is not None else Budget()
        self.cache = cache
        self.on_call = on_call
        self._slots = threading.BoundedSemaphore(settings.concurrency)
        self._stop = threading.Event()
        self._client_lock = threading.Lock()
        self._openai: openai.OpenAI | None = None
        self._key_digest: str | None = None

    def __repr__(self) -> str:
        return f"LLMClient({self.settings!r})"

    # ------------------------------------------------------------------ lifecycle

    def cancel(self) -> None:
        """Stop waiting: back-off sleeps end at once and no new attempt starts."""
        self._stop.set()

    def close(self) -> None:
        self.cancel()
        with self._client_lock:
            if self._openai is not None:
                self._openai.close()
                self._openai = None

    def _client(self) -> tuple[openai.OpenAI, str | None]:
        """The ``openai`` client for the key as it is *now* (read from the environment on
        every call; the client is rebuilt when the key changes)."""
        key = self.settings.api_key()
        digest = hashlib.sha256((key or "").encode()).hexdigest()
        with self._client_lock:
            if self._openai is None or digest != self._key_digest:
                # The old client is dropped, not closed: another thread may still be using it.
                self._openai = openai.OpenAI(
                    base_url=self.settings.base_url,
                    api_key=key or NO_KEY,
                    max_retries=0,
                    timeout=self.settings.timeout,
                )
                self._key_digest = digest
            return self._openai, key

    # ------------------------------------------------------------------ completions

    def complete(self, messages: list[dict], n: int = 1, **sampling: Any) -> Completion:
        """Ask for ``n`` completions of ``messages``. ``sampling`` overrides the settings'
        temperature / top_p / max_tokens and may add other request fields (stop, seed, ...).

        Raises BudgetExhausted before sending anything when the budget is spent,
        LLMCallFailed when every attempt failed, CacheMiss in replay mode for an unknown request.
        """
        return self.send(self.prepare(messages, n, **sampling))

    def prepare(self, messages: list[dict], n: int = 1, **sampling: Any) -> "Request":
        """Fix a request and, with a cache, its replay index. Requests sent from several threads
        must be prepared on one thread in a fixed order: the replay index (the how-manyth time
        this run asks the same thing) is what makes a replay return the recorded replies in the
        recorded order, whatever order the threads run in."""
        params = {**self.settings.sampling(), **sampling}
        messages = [dict(m) for m in messages]
        key = index = None
        if self.cache is not None and self.cache.enabled:
            request = {"base_url": self.settings.base_url, "model": self.settings.model,
                       "messages": messages, "sampling": params, "n": n}
            key, index = self.cache.key(request)
        return Request(messages, n, params, key, index)

    def send(self, request: "Request") -> Completion:
        """Send a prepared request (see :meth:`complete`)."""
        messages, n, params, key = request.messages, request.n, request.params, request.key
        self.budget.reserve()
        succeeded = cached = False
        result: Completion | None = None
        try:
            if key is not None and self.cache.mode == "replay":
                result = self._replay(key, request.index or 0, messages, n)
                succeeded = cached = True
                return result
            try:
                result = self._request(messages, n, params)
            except LLMCallFailed as exc:
                # A request abandoned on Stop is not an outcome to replay.
                if key is not None and not self._stop.is_set():
                    self.cache.put(key, {"error": str(exc), "status_code": exc.status_code,
                                         "attempts": exc.attempts, "unreachable": exc.unreachable,
                                         "model": self.settings.model})
                raise
            succeeded = True
            if key is not None:
                self.cache.put(key, {"model": self.settings.model, "messages": messages, "sampling": params, "n": n,
                                     "replies": result.record.replies,  # masked like the record
                                     "prompt_tokens": result.record.prompt_tokens,
                                     "completion_tokens": result.record.completion_tokens})
            return result
        finally:
            self.budget.release(succeeded=succeeded, cached=cached)
            if result is not None:
                # Announced after the call is counted, so an observer's budget snapshot includes it.
                self._notify(result.record)

    def _replay(self, key: str, index: int, messages: list[dict], n: int) -> Completion:
        entry = self.cache.get(key)
        if entry is None:
            raise CacheMiss(
                f"replay: no recorded reply for this request (occurrence {index + 1} of it in this run, "
                f"model {self.settings.model}, cache {self.cache.directory}); replay never contacts the server"
            )
        if "error" in entry:
            record = CallRecord(model=self.settings.model, messages=messages, status="error", n=n,
                                error=f"replayed failure: {entry['error']}", attempts=int(entry.get("attempts") or 1))
            self.budget.count_failure()
            self._emit(record)
            raise LLMCallFailed(entry["error"], attempts=record.attempts, status_code=entry.get("status_code"),
                                unreachable=bool(entry.get("unreachable")))
        pt, ct = int(entry.get("prompt_tokens") or 0), int(entry.get("completion_tokens") or 0)
        cost, known = self.budget.charge(self.settings.model, pt, ct)
        record = CallRecord(model=self.settings.model, messages=messages, replies=list(entry["replies"]),
                            status="cached", prompt_tokens=pt, completion_tokens=ct, cost=cost,
                            cost_known=known, n=n)
        self._mask_record(record)
        return Completion(list(record.replies), record)

    def _request(self, messages: list[dict], n: int, params: dict) -> Completion:
        attempts = 1 + self.settings.max_retries
        last_error = "no attempt was made"
        last_status = None
        unreachable = True  # every attempt so far found no server to connect to
        for attempt in range(1, attempts + 1):
            if self._stop.is_set():
                raise LLMCallFailed(f"cancelled after {attempt - 1} attempts: {last_error}",
                                    attempts=attempt - 1, status_code=last_status)
            record = CallRecord(model=self.settings.model, messages=messages, attempts=attempt, n=n)
            key = None
            started = time.monotonic()
            try:
                with self._slots:
                    client, key = self._client()
                    started = time.monotonic()
                    try:
                        response = client.chat.completions.create(
                            model=self.settings.model, messages=messages, n=n, **params
                        )
                    finally:
                        record.latency = time.monotonic() - started
                texts, usage, note = self._extract(response)
                record.prompt_tokens, record.completion_tokens = usage
                record.cost, record.cost_known = self.budget.charge(self.settings.model, *usage)
                record.replies = texts
                record.error = note
                self._mask_record(record)
                return Completion(list(record.replies), record)  # with the API key masked
            except (_Retryable, _Fatal) as exc:
                error, status_code = exc, exc.status_code
            except Exception as exc:  # noqa: BLE001 -- classified below
                error, status_code = self._classify(exc), getattr(exc, "status_code", None)
            if isinstance(error, _Retryable) and any(error.usage):
                record.prompt_tokens, record.completion_tokens = error.usage
                record.cost, record.cost_known = self.budget.charge(self.settings.model, *error.usage)
            last_error, last_status = _mask(str(error), key), status_code
            unreachable = unreachable and getattr(error, "unreachable", False)
            record.status, record.error = "error", last_error
            self.budget.count_failure(malformed=isinstance(error, _Retryable) and error.malformed)
            self._emit(record)
            if isinstance(error, _Fatal):
                raise LLMCallFailed(f"the server refused the request: {last_error}",
                                    attempts=attempt, status_code=status_code)
            if attempt < attempts:
                self._stop.wait(self._delay(attempt, error.delay))
        raise LLMCallFailed(f"all {attempts} attempts failed; last error: {last_error}",
                            attempts=attempts, status_code=last_status, unreachable=unreachable)

    def _delay(self, attempt: int, asked: float | None) -> float:
        cap = self.settings.retry_max_delay
        if asked is not None:
            return min(asked, cap)
        backoff = min(cap, self.settings.retry_base_delay * 2 ** (attempt - 1))
        return backoff * random.uniform(0.5, 1.0)

    def _classify(self, exc: Exception) -> Exception:
        """A failed attempt as retryable or fatal, with a message a user can act on: what
        happened in plain words, then the server's own words (never a traceback)."""
        if isinstance(exc, openai.APITimeoutError):
            return _Retryable(f"timed out: no reply within {self.settings.timeout:g} s")
        if isinstance(exc, openai.APIConnectionError):
            # openai says only "Connection error."; the transport's reason is in the cause.
            cause = _cause_text(exc)
            if "complete message body" in cause:
                return _Retryable(f"connection error: the reply was cut off before its end ({cause})")
            return _Retryable(f"connection error: {self.settings.base_url}: {cause or exc}",
                              unreachable=_no_server(exc))
        if isinstance(exc, openai.APIStatusError):
            code = exc.status_code
            text = f"HTTP {code} {_REASONS.get(code, '')}".rstrip() + f": {_server_message(exc)}"
            # The statuses openai's own retry logic retries; Retry-After is honoured on each of
            # them, not only on 429 (RFC 9110 defines it for 503 too).
            if code in (408, 409, 429) or code >= 500:
                return _Retryable(text, delay=parse_retry_after(exc.response.headers), status_code=code)
            hint = _HINTS.get(code)
            if code == 401:
                hint = (f"check the API key in the environment variable {self.settings.api_key_env}"
                        if self.settings.api_key_env else "no API key is configured")
            return _Fatal(f"{text} ({hint})" if hint else text, status_code=code)
        # Anything else raised while sending or decoding (invalid JSON, unexpected shapes)
        # is a malformed reply: recorded, counted, retried.
        if isinstance(exc, ValueError) and type(exc).__name__ == "JSONDecodeError":
            return _Retryable(_clip(f"malformed reply: the body is not valid JSON ({exc})"), malformed=True)
        return _Retryable(_clip(f"malformed reply: {type(exc).__name__}: {exc}"), malformed=True)

    @staticmethod
    def _extract(response: Any) -> tuple[list[str], tuple[int, int], str | None]:
        """(non-empty texts, (prompt, completion) tokens, note on dropped choices)."""
        usage = (0, 0)
        try:
            u = getattr(response, "usage", None)
            if u is not None:
                usage = (int(getattr(u, "prompt_tokens", 0) or 0), int(getattr(u, "completion_tokens", 0) or 0))
        except (TypeError, ValueError):
            usage = (0, 0)
        try:
            choices = list(getattr(response, "choices", None) or [])
        except TypeError:
            choices = []
        if not choices:
            raise _Retryable("malformed reply: no choices", malformed=True, usage=usage)
        texts = []
        for choice in choices:
            message = getattr(choice, "message", None)
            content = getattr(message, "content", None) if message is not None else None
            if isinstance(content, str) and content.strip():
                texts.append(content)
        if not texts:
            raise _Retryable(f"empty reply: none of {len(choices)} choices has text", malformed=True, usage=usage)
        note = None
        if len(texts) < len(choices):
            note = f"{len(choices) - len(texts)} of {len(choices)} choices were empty and dropped"
        return texts, usage, note

    def _mask_record(self, record: CallRecord) -> None:
        # An echoing or hostile server may put the key into a reply: it never leaves the client.
        key = self.settings.api_key()
        if key and len(key) >= 4:
            record.replies = [_mask(t, key) for t in record.replies]
            record.messages = [{k: _mask(v, key) if isinstance(v, str) else v for k, v in m.items()}
                               for m in record.messages]
            record.error = _mask(record.error, key) if record.error else record.error

    def _notify(self, record: CallRecord) -> None:
        if self.on_call is not None:
            try:
                self.on_call(record)
            except Exception:  # a broken observer must not break the run
                pass

    def _emit(self, record: CallRecord) -> None:
        """Mask and announce a failed attempt (successes are announced by :meth:`send`)."""
        self._mask_record(record)
        self._notify(record)

    # ------------------------------------------------------------------ the endpoint

    def list_models(self) -> list[str]:
        """Model ids the endpoint offers (one attempt, no retries)."""
        client, key = self._client()
        try:
            return sorted(m.id for m in client.models.list())
        except openai.OpenAIError as exc:
            reason = str(self._classify(exc) if isinstance(exc, openai.APIError) else exc)  # the readable words
            reason = reason.replace(f"{self.settings.base_url}: ", "", 1)  # named once, below
            raise LLMError(_mask(f"cannot list the models of {self.settings.base_url}: {reason}", key)) from exc

    def test_connection(self) -> ConnectionReport:
        """For a "Test connection" button: the endpoint's models and the round-trip time."""
        started = time.monotonic()
        try:
            models = self.list_models()
        except LLMError as exc:
            return ConnectionReport(ok=False, latency=time.monotonic() - started, error=str(exc))
        latency = time.monotonic() - started
        note = None
        if models and self.settings.model not in models:
            note = f"model {self.settings.model!r} is not among the endpoint's models"
        return ConnectionReport(ok=True, latency=latency, models=models, error=note)


#: Plain names of the statuses an OpenAI-compatible endpoint sends, for messages.
_REASONS = {400: "bad request", 401: "unauthorized", 403: "forbidden", 404: "not found", 408: "request timeout",
            409: "conflict", 413: "request too large", 422: "unprocessable request", 429: "rate limited",
            500: "server error", 502: "bad gateway", 503: "service unavailable", 504: "gateway timeout"}

#: What to check when the server refuses a request for good (401 names the key's variable).
_HINTS = {403: "the API key may not use this model or endpoint",
          404: "check the model name and the base URL: Run ▸ LLM settings, or --llm-model / --llm-base-url"}

MAX_ERROR_CHARS = 500  # an error text kept in records and messages (a proxy may answer a whole HTML page)


def _clip(text: str, limit: int = MAX_ERROR_CHARS) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _server_message(exc: "openai.APIStatusError") -> str:
    """The server's own message: OpenAI's ``error.message`` (and ``code``), else the body."""
    body = exc.body
    if isinstance(body, dict) and isinstance(body.get("message"), str) and body["message"].strip():
        code = body.get("code")
        return _clip(body["message"] + (f" [{code}]" if isinstance(code, str) and code else ""))
    text = str(exc)
    prefix = f"Error code: {exc.status_code} - "
    return _clip(text[len(prefix):] if text.startswith(prefix) else text) or "no message"


def _no_server(exc: BaseException) -> bool:
    """Whether a connection error found no server at all: the connection was refused (nothing
    listens at that address and port) or the host name is unknown (not EAI_AGAIN, a name server
    that could not answer for now). Read from the exception chain's builtin errors, so it does
    not depend on the transport openai uses."""
    for cause in _causes(exc):
        if isinstance(cause, ConnectionRefusedError):
            return True
        if isinstance(cause, socket.gaierror):  # an unknown name, not a resolver that failed for now
            return cause.errno != socket.EAI_AGAIN
    return False


def _causes(exc: BaseException):
    """The exceptions behind ``exc`` (its cause, else its context, and so on), ten at most."""
    cause = exc.__cause__ or exc.__context__
    for _ in range(10):
        if cause is None:
            return
        yield cause
        cause = cause.__cause__ or cause.__context__


def _cause_text(exc: BaseException) -> str:
    """The transport's reason behind an openai connection error ("Connection reset by peer"),
    without the errno prefix: the first cause in the chain that says anything."""
    reason = next((text for text in (str(cause).strip() for cause in _causes(exc)) if text), "")
    if reason.startswith("[Errno") and "] " in reason:
        reason = reason.split("] ", 1)[1]
    return _clip(reason)


def _mask(text: str, key: str | None) -> str:
    if key and len(key) >= 4:
        text = text.replace(key, "***")
    return text
