"""What every LLM method shares: the run's LLM session, program extraction, task descriptions.

:class:`LLMSession` owns, for one run, the LLM client (with the run's budget and response
cache) and the sandbox pool that evaluates LLM-written programs. Methods call it from their
generator and yield what it has buffered (:meth:`LLMSession.drain`): one ``LLMCall`` event per
request attempt. Waiting is done in helper threads polled every 100 ms, so a Stop ends a method
within a second even while a request or a sandboxed program is still running (the request is
abandoned, the sandbox workers are killed).

Configuration keys every LLM method has (besides its own):

``llm``            :class:`engine.llm.LLMSettings` as a dict (endpoint, model, sampling, API-key
                   variable *name*)
``max_llm_calls``  budget in successful completions
``max_llm_cost``   budget in dollars (None: no limit)
``llm_cache``      ``record`` (default: every run can be replayed), ``replay`` (offline), ``off``
``llm_prices``     None (the built-in table) or ``{pattern: [input $, output $] per M tokens}``
"""

from __future__ import annotations

import ast
import os
import re
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Any, Callable, Sequence

import numpy as np

from ..llm import Budget, BudgetExhausted, CacheMiss, LLMClient, LLMError, LLMSettings, ResponseCache
from ..sandbox import EvalResult, SandboxLimits, SandboxPool
from ..tasks.model import Task
from .base import Event, Hypothesis, LLMCall, Log, Param, RunContext

POLL = 0.1  # seconds between checks of the cancel flag while waiting
MAX_CONSECUTIVE_FAILURES = 10  # requests failing for good in a row before a run gives up
MAX_PROGRAM_CHARS = 50_000  # a code block longer than this is refused before parsing


def llm_defaults(max_calls: int) -> dict[str, Any]:
    """The configuration keys every LLM method has, with their defaults."""
    return {
        "llm": LLMSettings().to_dict(),
        "max_llm_calls": int(max_calls),
        "max_llm_cost": None,
        "llm_cache": "record",
        "llm_prices": None,
    }


def llm_parameters(max_calls: int) -> list[Param]:
    """Form parameters every LLM method shows (the endpoint comes from the LLM settings)."""
    return [
        Param("max_llm_calls", "LLM calls", "int", int(max_calls),
              "Budget: successful completions the run may use; it stops cleanly when they are spent",
              minimum=1, maximum=100_000),
    ]


def sandbox_parameters() -> list[Param]:
    return [
        Param("program_seconds", "Seconds per program", "float", 30.0,
              "CPU-time limit of one program in the sandbox (LLM-SR: 30 s)", minimum=1, maximum=600),
        Param("evaluators", "Parallel evaluators", "int", min(4, os.cpu_count() or 1),
              "Sandbox worker processes evaluating programs at once (LLM-SR: 4)", minimum=1, maximum=32),
    ]


def sandbox_defaults() -> dict[str, Any]:
    return {p.name: p.default for p in sandbox_parameters()}


# --------------------------------------------------------------------------- the session


class RunCancelled(Exception):
    """The run must end now: Stop was pressed (``reason = "cancelled"``) or its wall-clock
    budget ran out while the method was waiting (``reason = "time"``)."""

    def __init__(self, reason: str = "cancelled"):
        super().__init__(reason)
        self.reason = reason


def _in_thread(func: Callable, *args) -> Future:
    """Run ``func(*args)`` on a daemon thread. Requests abandoned on Stop may hang for their
    whole time-out; a daemon thread never keeps the app from exiting (a ThreadPoolExecutor's
    threads are joined at interpreter exit)."""
    future: Future = Future()

    def work():
        if not future.set_running_or_notify_cancel():
            return
        try:
            future.set_result(func(*args))
        except BaseException as exc:  # noqa: BLE001 -- handed to the waiting thread
            future.set_exception(exc)

    threading.Thread(target=work, daemon=True, name="llm-wait").start()
    return future


class LLMSession:
    """One run's LLM client, budget, cache and sandbox pool. Close it (or use ``with``)."""

    def __init__(self, config: dict[str, Any], context: RunContext, *, sandbox: bool = True,
                 memory_bytes: int = 2 << 30, fitting: bool = True):
        self.context = context
        raw = dict(config.get("llm") or {})
        self.settings = LLMSettings.from_dict(raw)
        prices = config.get("llm_prices")
        if prices:
            prices = {str(k): (float(v[0]), float(v[1])) for k, v in dict(prices).items()}
        self.budget = Budget(max_calls=_opt_int(config.get("max_llm_calls")),
                             max_cost=_opt_float(config.get("max_llm_cost")), prices=prices or None)
        mode = str(config.get("llm_cache") or "off")
        self.cache = ResponseCache(mode) if mode != "off" else None
        self.replay = mode == "replay"
        seconds = _opt_float(config.get("seconds")) or None
        self.deadline = context.started + seconds if seconds else None
        self._records: list[LLMCall] = []
        self._lock = threading.Lock()
        self._seq = 0
        if context.resume is not None:  # a run resumed after a crash: its totals go on (engine.resume)
            from ..resume import restore_budget

            restore_budget(self.budget, context.resume)
            self._seq = int(context.resume.llm.get("records", 0))
        self._seq_of: dict[int, int] = {}  # id(CallRecord) of a success -> its seq
        self._purpose = threading.local()
        self.client = LLMClient(self.settings, self.budget, self.cache, on_call=self._on_call)
        context.llm_budget = self.budget  # the runner reports it, even for a failed run
        self.pool: SandboxPool | None = None
        if sandbox:
            program_seconds = float(config.get("program_seconds") or 30.0)
            limits = SandboxLimits(cpu_seconds=program_seconds, memory_bytes=memory_bytes)
            self.pool = SandboxPool(size=int(config.get("evaluators") or 1), limits=limits, fitting=fitting)
        self.failed_requests = 0
        self.consecutive_failures = 0
        self.last_failure = ""  # the readable reason of the last request that failed for good
        self.refusals = 0  # requests refused with 401 / 403 / 404 (bad key, unknown model or URL)
        self.refused = False  # the run stopped because the endpoint refused it
        self.unreachable_requests = 0  # requests failed for good without ever reaching a server
        self.unreachable = False  # the run stopped because no server answers at the endpoint
        self.stop_reason: str | None = None  # "budget", "replay-end" or "llm-failures"

    # ------------------------------------------------------------------ lifecycle

    def __enter__(self) -> "LLMSession":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self.client.cancel()
        if self.pool is not None:
            self.pool.close()
        try:
            self.client.close()
        except Exception:  # noqa: BLE001 -- closing must not fail a finished run
            pass

    def describe(self) -> str:
        where = "replaying recorded replies" if self.replay else self.settings.base_url
        return f"LLM {self.settings.model} at {where}; budget {self.budget.max_calls} calls"

    def out_of_time(self) -> bool:
        """The run's wall-clock budget (the method's ``seconds`` or the context's) is spent."""
        return self.context.out_of_time() or (self.deadline is not None and time.monotonic() >= self.deadline)

    def check(self) -> None:
        """Raise :class:`RunCancelled` when the run must end now (Stop, or out of time)."""
        if self.context.cancelled:
            raise RunCancelled("cancelled")
        if self.out_of_time():
            raise RunCancelled("time")

    # ------------------------------------------------------------------ records -> events

    def _on_call(self, record) -> None:
        data = record.to_dict()
        snapshot = self.budget.snapshot()
        with self._lock:  # numbered and queued together: events leave in seq order
            self._seq += 1
            event = LLMCall(
                seq=self._seq, status=data["status"], model=data["model"],
                messages=data["messages"], replies=data["replies"],  # the client has masked the API key
                prompt_tokens=data["prompt_tokens"], completion_tokens=data["completion_tokens"],
                latency=data["latency"], attempts=data["attempts"], error=data["error"],
                cost=data["cost"], purpose=getattr(self._purpose, "value", ""), budget=snapshot,
            )
            self._records.append(event)
            if event.status in ("ok", "cached"):
                self._seq_of[id(record)] = event.seq

    def drain(self) -> list[LLMCall]:
        """The LLM-call events recorded since the last drain, in order."""
        with self._lock:
            out, self._records = self._records, []
        return out

    # ------------------------------------------------------------------ asking

    def _set_stop(self, reason: str) -> None:
        with self._lock:
            if self.stop_reason is None:
                self.stop_reason = reason

    def exhausted(self) -> bool:
        reason = self.budget.exhausted()
        if reason:
            self._set_stop("budget")
        return reason is not None

    def ask(self, messages: list[dict], k: int = 1, *, purpose: str = "", **sampling) -> list[tuple[str, int]]:
        """``k`` independent completions of ``messages`` (one request each, in parallel up to the
        client's concurrency). Returns ``(text, call seq)`` for each request that succeeded."""
        answers = self.ask_many([(messages, purpose, sampling)] * max(1, int(k)))
        return [a for a in answers if a is not None]

    def ask_many(self, requests: Sequence[tuple[list[dict], str, dict]]) -> list[tuple[str, int] | None]:
        """One completion for each ``(messages, purpose, sampling)``, all in flight at once (up
        to the client's concurrency); the answer ``(text, call seq)`` or None, in the given order.

        A request that failed for good is counted and skipped, never raised; after
        :data:`MAX_CONSECUTIVE_FAILURES` of them in a row ``stop_reason`` becomes
        ``"llm-failures"``, and so it does at once when the endpoint never answered this run and
        every request of the batch found no server there (each after its retries). A spent
        budget gives ``"budget"``, the end of a replay recording ``"replay-end"``. Raises
        :class:`RunCancelled` on Stop or when the run is out of time. Requests are prepared
        here, in order, so a replay answers them as recorded.
        """
        self.check()
        refusals, unreachable = self.refusals, self.unreachable_requests
        prepared = []
        for messages, purpose, sampling in requests:
            if self.exhausted() or self.stop_reason:
                prepared.append(None)
                continue
            prepared.append((self.client.prepare(messages, 1, **(sampling or {})), purpose))
        futures = [_in_thread(self._one, p[0], p[1]) if p is not None else None for p in prepared]
        answers: list[tuple[str, int] | None] = []
        failed = 0
        for future in futures:
            outcome = self._wait(future) if future is not None else "budget"
            with self._lock:
                if isinstance(outcome, tuple):
                    self.consecutive_failures = 0
                elif outcome not in ("budget", "replay-end"):
                    self.failed_requests += 1
                    self.consecutive_failures += 1
                    failed += 1
            answers.append(outcome if isinstance(outcome, tuple) else None)
        if not self.budget.calls and failed and self.unreachable_requests - unreachable == failed:
            # Nothing has ever answered at the endpoint (the budget counts every reply of the run,
            # a resumed run's earlier ones too), and every request just now found no
            # server there after its retries (connection refused, unknown host): a wrong address
            # or a server not started. Waiting for ten failed requests in a row would only delay
            # saying so by minutes (132 s against 37 s from the CLI with the default retries).
            self.unreachable = self.stop_reason is None
            self._set_stop("llm-failures")
        elif self.consecutive_failures >= max(MAX_CONSECUTIVE_FAILURES, 2 * len(requests)):
            # Every request has failed for a while (each after its retries): the endpoint is
            # down or refuses us. Stop instead of spinning without spending the budget.
            self._set_stop("llm-failures")
        elif self.refusals > refusals and not any(a is not None for a in answers):
            # 401 / 403 / 404 (bad key, unknown model or URL) in a batch with no success:
            # every further request would be refused the same way.
            self.refused = self.stop_reason is None
            self._set_stop("llm-failures")
        return answers

    def should_stop(self) -> str | None:
        """Why the run's loop must end now (checked between steps), or None:
        ``cancelled``, ``time``, ``budget``, ``llm-failures`` or ``replay-end``."""
        if self.context.cancelled:
            return "cancelled"
        if self.out_of_time():
            return "time"
        if self.exhausted() or self.stop_reason:
            return self.stop_reason or "budget"
        return None

    def stop_notes(self) -> list[Log]:
        note = self.stop_log()
        return [note] if note is not None else []

    def stop_log(self) -> Log | None:
        """Why asking stopped, for the run's log, when it is not simply the spent budget."""
        if self.stop_reason == "llm-failures" and self.refused:
            return Log(f"stopping: no usable reply can come from the LLM endpoint; {self.last_failure}", "error")
        if self.stop_reason == "llm-failures" and self.unreachable:
            return Log(f"stopping: no server answers at the LLM endpoint {self.settings.base_url} (is it running, "
                       "and is the address right? Check Run ▸ LLM settings). Last error: "
                       f"{self.last_failure}", "error")
        if self.stop_reason == "llm-failures":
            return Log(f"stopping: the last {self.consecutive_failures} LLM requests failed in a row (each after "
                       "its retries); is the endpoint reachable? Check Run ▸ LLM settings. Last error: "
                       f"{self.last_failure}", "error")
        if self.stop_reason == "replay-end":
            return Log("the recording ends here: replay asked for a reply that was never recorded", "warning")
        return None

    def _one(self, request, purpose: str):
        self._purpose.value = purpose
        try:
            completion = self.client.send(request)
        except BudgetExhausted:
            self._set_stop("budget")
            return "budget"
        except CacheMiss:
            self._set_stop("replay-end")
            return "replay-end"
        except LLMError as exc:  # LLMCallFailed and the rest: counted by the caller
            with self._lock:
                self.last_failure = str(exc)
                if getattr(exc, "status_code", None) in (401, 403, 404):
                    self.refusals += 1
                if getattr(exc, "unreachable", False):
                    self.unreachable_requests += 1
            return f"request failed: {exc}"
        with self._lock:
            seq = self._seq_of.pop(id(completion.record), 0)
        return completion.texts[0], seq

    def _wait(self, future: Future):
        while True:
            try:
                self.check()
            except RunCancelled:
                self.client.cancel()  # back-off sleeps end; the abandoned request dies with its thread
                raise
            done, _ = wait([future], timeout=POLL)
            if not done:
                continue
            try:
                return future.result()
            except Exception as exc:  # noqa: BLE001 -- a request thread must not kill the run
                return f"request failed: {type(exc).__name__}: {exc}"

    # ------------------------------------------------------------------ evaluating

    def load_data(self, X: np.ndarray, y: np.ndarray) -> None:
        assert self.pool is not None
        self.pool.load_data(X, y)

    def evaluate(self, sources: Sequence[str], function: str = "equation", n_params: int = 10, *,
                 call: str = "columns", seed: bool = False) -> list[EvalResult]:
        """Fit and score programs in the sandbox; waits cancellably. Never raises for bad programs.
        ``seed=True`` (the run's first, always-available model) ignores the time limit, only Stop."""
        return self.evaluate_from([(s, None) for s in sources], function, n_params, call=call, seed=seed)

    def evaluate_from(self, jobs: Sequence[tuple[str, Sequence[float] | None]], function: str = "equation",
                      n_params: int = 10, *, call: str = "columns", seed: bool = False) -> list[EvalResult]:
        """Like :meth:`evaluate`; a job's ``init`` (not None) is its own BFGS starting point and
        so fixes its number of parameters, for methods whose LLM proposes initial values."""
        pool = self.pool
        assert pool is not None
        if not jobs:
            return []

        def one(job):
            source, init = job
            if init is None:
                return pool.evaluate(source, function, n_params, call=call)
            return pool.evaluate(source, function, len(init), call=call, init=list(init))

        def work() -> list[EvalResult]:
            if pool.size == 1 or len(jobs) < 2:
                return [one(job) for job in jobs]
            with ThreadPoolExecutor(max_workers=pool.size, thread_name_prefix="sandbox-eval") as ex:
                return list(ex.map(one, jobs))

        future = _in_thread(work)
        while True:
            try:
                if seed and self.context.cancelled:
                    raise RunCancelled("cancelled")
                if not seed:
                    self.check()
            except RunCancelled:
                pool.close()  # kills the workers; the waiting thread gets failures back
                raise
            done, _ = wait([future], timeout=POLL)
            if done:
                return future.result()

    def opening(self, X: np.ndarray, y: np.ndarray) -> list[Log]:
        """Start of a run that evaluates programs: say which endpoint and sandbox protections are
        in use, and send the training data to the sandbox."""
        logs = [Log(self.describe())]
        note = self.protections_log()
        if note is not None:
            logs.append(note)
        self.load_data(X, y)
        return logs

    def closing(self) -> list[Event]:
        """End of a run: the last call events and a word on requests that failed for good."""
        events: list[Event] = list(self.drain())
        if self.failed_requests and self.stop_reason != "llm-failures":  # else the stop's own log says it
            events.append(Log(f"{self.failed_requests} LLM requests failed after their retries; the run went on",
                              "warning"))
        return events

    def protections_log(self) -> Log | None:
        """One log line saying which sandbox protections are in force (loud about fallbacks)."""
        if self.pool is None:
            return None
        from ..sandbox.pool import fallback_warnings

        try:
            prot = self.pool.protections()
        except Exception as exc:  # noqa: BLE001
            return Log(f"the sandbox could not start: {exc}", "error")
        warnings = fallback_warnings(prot)
        if warnings:
            return Log("Sandbox fallback: " + "; ".join(warnings), "warning")
        return Log("Sandbox: separate processes with CPU/memory/process limits, no network, "
                   "writes only to a private temporary directory (Landlock), scrubbed environment")


def _opt_int(value) -> int | None:
    return None if value in (None, "", 0) else int(value)


def _opt_float(value) -> float | None:
    return None if value in (None, "") else float(value)


# --------------------------------------------------------------------------- task descriptions


def python_names(task: Task) -> list[str]:
    """Argument names for generated programs: the task's input names (already identifiers)."""
    return list(task.input_names)


def describe_variables(task: Task) -> str:
    """One line per variable: name, role, description, unit."""
    lines = []
    target = task.target
    lines.append(f"- {target.name} (output): {target.description}" + (f" [{target.unit}]" if target.unit else ""))
    for v in task.variables:
        if v.role != "input":
            continue
        lines.append(f"- {v.name} (input): {v.description}" + (f" [{v.unit}]" if v.unit else ""))
    return "\n".join(lines)


def task_sentence(task: Task) -> str:
    """"Find ``out description`` from ``in1``, ``in2`` and ``in3``." in our own words."""
    target = task.target
    inputs = [f"{v.description.split('.')[0].strip()} ({v.name})" for v in task.variables if v.role == "input"]
    if len(inputs) > 1:
        listed = ", ".join(inputs[:-1]) + " and " + inputs[-1]
    else:
        listed = inputs[0] if inputs else "no inputs"
    return f"{target.description.split('.')[0].strip()} ({target.name}) as a function of {listed}"


def data_summary(task: Task, X: np.ndarray, y: np.ndarray) -> str:
    """Ranges of every variable on the training data, for prompts that may see the data."""
    rows = []
    for i, name in enumerate(task.input_names):
        col = X[:, i]
        rows.append(f"{name}: {np.nanmin(col):.4g} .. {np.nanmax(col):.4g}")
    rows.append(f"{task.target.name}: {np.nanmin(y):.4g} .. {np.nanmax(y):.4g}")
    return "; ".join(rows)


def data_sample(task: Task, X: np.ndarray, y: np.ndarray, rows: int = 12, seed: int = 0) -> str:
    """A few training rows as a small table, for prompts that may see the data."""
    rng = np.random.default_rng(seed)
    idx = rng.choice(len(y), size=min(rows, len(y)), replace=False)
    head = ", ".join([*task.input_names, task.target.name])
    lines = [head]
    for i in sorted(idx):
        lines.append(", ".join(f"{v:.5g}" for v in [*X[i], y[i]]))
    return "\n".join(lines)


# --------------------------------------------------------------------------- extracting programs

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.S)


def fenced_blocks(reply: str) -> list[tuple[str, str]]:
    """``(language, body)`` of every fenced block of a reply, in order (an unclosed last fence
    runs to the end)."""
    return [(lang.lower(), body) for lang, body in _FENCE.findall(reply or "")]


def code_blocks(reply: str) -> list[str]:
    """The fenced code blocks of a reply (python or unlabelled first), or the whole reply."""
    blocks = fenced_blocks(reply)
    preferred = [b for lang, b in blocks if lang in ("python", "py", "")]
    others = [b for lang, b in blocks if lang not in ("python", "py", "")]
    return preferred + others if blocks else [reply or ""]


def extract_function(reply: str, name: str, *, header: str | None = None,
                     forbidden: Callable[[str], bool] | None = None) -> tuple[str | None, str | None]:
    """``(source, None)``: a syntactically valid module defining function ``name`` (renamed from
    the first function in the reply if needed), with the imports the reply had; or
    ``(None, reason)``.

    Follows LLM-SR's parsing: start at the first ``def``, cut at the first line that makes the
    text invalid. A reply that is only a body (the model completed our header) gets ``header``
    prepended. ``forbidden(called_name)`` rejects calls of, e.g., earlier versions.
    Parsing only, with ``ast``: nothing is executed here.
    """
    last_reason = "the reply contains no Python function"
    for block in code_blocks(reply):
        if len(block) > MAX_PROGRAM_CHARS:
            last_reason = f"the code is too long ({len(block):,} characters; at most {MAX_PROGRAM_CHARS:,})"
            continue
        try:
            source, reason = _function_from_text(block, name, header)
        except (RecursionError, MemoryError, ValueError) as exc:  # degenerate text ast cannot take
            source, reason = None, f"the code cannot be parsed ({type(exc).__name__})"
        if source is None:
            last_reason = reason or last_reason
            continue
        if forbidden is not None:
            try:
                tree = ast.parse(source)
            except (SyntaxError, RecursionError, MemoryError, ValueError):
                return None, "the function in the reply is not valid Python"
            for node in ast.walk(tree):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and forbidden(node.func.id):
                    return None, f"the program calls {node.func.id}(), which is not allowed"
        return source, None
    return None, last_reason


def _function_from_text(text: str, name: str, header: str | None) -> tuple[str | None, str | None]:
    lines = text.replace("\t", "    ").splitlines()
    imports = [ln for ln in lines if re.match(r"^(import|from)\s+\w", ln)]
    start = next((i for i, ln in enumerate(lines) if re.match(r"^\s*def\s+\w+\s*\(", ln)), None)
    if start is None:
        if header is None:
            return None, "the reply contains no Python function"
        body = [ln for ln in lines if ln.strip()]
        if not body:
            return None, "the reply is empty"
        indent = min(len(ln) - len(ln.lstrip()) for ln in body)
        lines = [header] + ["    " + ln[indent:] if ln.strip() else "" for ln in lines]
        start = 0
        imports = []
    else:
        # Dedent the function to column 0 (replies sometimes indent everything).
        shift = len(lines[start]) - len(lines[start].lstrip())
        lines = [ln[shift:] if ln[:shift].strip() == "" else ln for ln in lines]
    chunk = lines[start:]
    source = _valid_prefix(chunk)
    if source is None:
        if header is not None and not any(re.match(r"^\s*def\s", ln) for ln in text.splitlines()):
            return None, "the reply contains no Python function (and is not a function body either)"
        return None, "the function in the reply is not valid Python"
    tree = ast.parse(source)
    funcs = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    if not funcs:
        return None, "the reply contains no Python function"
    first = funcs[0]
    if not first.body or all(isinstance(s, ast.Expr) and isinstance(getattr(s, "value", None), ast.Constant)
                             for s in first.body):
        return None, "the function has no body"
    if first.name != name:
        source = re.sub(rf"^def\s+{re.escape(first.name)}\s*\(", f"def {name}(", source, count=1, flags=re.M)
    # Every import of the reply is kept: the program runs only in the sandbox, which is what
    # contains it (filtering imports here would be no protection: __import__ is one call away).
    header_lines = ["import numpy as np", *[ln for ln in imports if ln.strip() != "import numpy as np"]]
    module = "\n".join([*header_lines, "", source.rstrip(), ""])
    try:
        ast.parse(module)
    except SyntaxError:  # an import line that only parsed inside its original block
        module = "\n".join(["import numpy as np", "", source.rstrip(), ""])
    return module, None


def _valid_prefix(lines: list[str]) -> str | None:
    """The longest prefix of ``lines`` that parses, cut at the end of the first function."""
    text = "\n".join(lines)
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        cut = (exc.lineno or 1) - 1
        while cut > 0:
            try:
                tree = ast.parse("\n".join(lines[:cut]))
                break
            except SyntaxError:
                cut -= 1
        else:
            return None
        text = "\n".join(lines[:cut])
    funcs = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    if not funcs:
        return None
    end = funcs[0].end_lineno or len(lines)
    return "\n".join(text.splitlines()[:end])


# --------------------------------------------------------------------------- programs -> hypotheses


def to_hypothesis(index: int, source: str, result: EvalResult, task: Task, *, function: str = "equation",
                  call: str = "columns", call_seq: int | None = None, origin: str = "") -> Hypothesis:
    """A Hypothesis event for an evaluated program, with its closed form when it has one."""
    from ..expr import ExpressionError, parse
    from ..expr.program import ProgramNotTranslatable, program_to_expression
    from ..expr.tools import complexity as expr_complexity

    if not result.ok:
        return Hypothesis(index, source, False, error=result.error or "failed", call_seq=call_seq, origin=origin,
                          seconds=result.seconds, params=list(result.params))
    loss = result.nmse if result.nmse is not None and np.isfinite(result.nmse) else None
    if loss is None:
        return Hypothesis(index, source, False, error="the fitted program's loss is not finite", call_seq=call_seq,
                          origin=origin, seconds=result.seconds, params=list(result.params))
    expression = complexity = None
    note = None
    try:
        expression = program_to_expression(source, function, task.input_names, result.params, call=call)
        complexity = expr_complexity(parse(expression, task.input_names))
    except (ProgramNotTranslatable, ExpressionError, ValueError, RecursionError) as exc:
        note = f"no closed form: {exc}"
    return Hypothesis(index, source, True, loss=float(loss), expression=expression, complexity=complexity,
                      error=note, params=list(result.params), call_seq=call_seq, origin=origin,
                      seconds=result.seconds)


def elapsed_since(start: float) -> float:
    return time.monotonic() - start
