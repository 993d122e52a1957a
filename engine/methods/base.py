"""The discovery-method protocol (architecture rules 2 and 3).

A method is one module with one class implementing :class:`Method`. Its ``run(task, config,
context)`` is a generator of typed events. It checks ``context.cancelled`` between yields and
honours the wall-clock budget in ``context``. The engine knows nothing about threads: the GUI
moves the generator onto a QThread, the CLI iterates it directly.
"""

from __future__ import annotations

import threading
import time
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar, Iterator, Protocol

from ..tasks.model import Task

# --------------------------------------------------------------------------- events


@dataclass
class Progress:
    """Reported at every iteration (a GP generation)."""

    iteration: int
    best_loss: float  # best training loss so far (NMSE on the training split)
    evaluations: int  # model evaluations so far
    elapsed: float  # seconds since the run started
    total_iterations: int | None = None
    kind: ClassVar[str] = "progress"


@dataclass
class Candidate:
    """One model on the Pareto front (complexity vs loss)."""

    expression: str  # re-parsable text (engine.expr syntax) over the task's input names
    complexity: int
    loss: float  # training NMSE
    kind: ClassVar[str] = "candidate"


@dataclass
class ParetoFront:
    """The current Pareto front, sent whenever it improves."""

    iteration: int
    candidates: list[Candidate]
    kind: ClassVar[str] = "pareto"


@dataclass
class Log:
    message: str
    level: str = "info"  # info, warning, error
    kind: ClassVar[str] = "log"


@dataclass
class Final:
    """The method's chosen model. The runner scores it on every split."""

    expression: str  # simplified, re-parsable text
    complexity: int
    loss: float  # training NMSE
    raw_expression: str = ""  # as the engine printed it, before simplification
    stop_reason: str = "completed"  # completed, budget, cancelled
    details: dict[str, Any] = field(default_factory=dict)
    kind: ClassVar[str] = "final"


@dataclass
class LLMCall:
    """One attempt at an LLM request (or one reply replayed from the cache), as recorded.

    ``status`` is ``ok``, ``cached`` or ``error``. ``budget`` is the run's budget snapshot right
    after this attempt (calls, tokens, cost, failures and the limits). Carries no API key.
    """

    seq: int  # 1, 2, ... in the order the attempts ended
    status: str
    model: str
    messages: list[dict]
    replies: list[str]
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency: float = 0.0
    attempts: int = 1
    error: str | None = None
    cost: float = 0.0
    purpose: str = ""  # what the method asked for: "propose", "mutate", "concepts", "judge", ...
    budget: dict[str, Any] = field(default_factory=dict)
    kind: ClassVar[str] = "llm_call"


@dataclass
class Hypothesis:
    """One program or expression an LLM proposed, after extraction and evaluation.

    ``ok`` with ``loss`` (training NMSE) when it could be evaluated; otherwise ``error`` says why
    (no code in the reply, syntax error, time-out, killed by the sandbox, NaN, ...).
    """

    index: int  # 1, 2, ... over the run
    program: str  # the extracted program or expression text ("" when nothing could be extracted)
    ok: bool
    loss: float | None = None  # training NMSE
    expression: str | None = None  # the program as a re-parsable expression with fitted constants
    complexity: int | None = None
    error: str | None = None
    params: list[float] = field(default_factory=list)
    call_seq: int | None = None  # the LLMCall whose reply this came from
    origin: str = ""  # e.g. "island 3", "LLM mutation", "initial prompt"
    seconds: float = 0.0  # evaluation time
    kind: ClassVar[str] = "hypothesis"


Event = Progress | ParetoFront | Log | Final | LLMCall | Hypothesis


def event_payload(event: Event) -> dict:
    return asdict(event)


# --------------------------------------------------------------------------- context


class RunContext:
    """What a running method may consult: cancellation and budgets.

    ``cancel()`` may be called from any thread; methods poll ``cancelled`` between steps and
    must end within one second of it.
    """

    def __init__(self, seconds: float | None = None, max_evaluations: int | None = None):
        self._cancel = threading.Event()
        self.seconds = seconds
        self.max_evaluations = max_evaluations
        self.started = time.monotonic()
        self.llm_budget = None  # an LLM method's engine.llm.Budget, reported by the runner
        self.resume = None  # an engine.resume.ResumeState when the run continues after a crash

    def cancel(self) -> None:
        self._cancel.set()

    def child(self, seconds: float | None = None, max_evaluations: int | None = None) -> "RunContext":
        """A context for one part of this run (a parametric surface's coordinate): budgets of
        its own, and this run's Stop."""
        part = RunContext(seconds=seconds, max_evaluations=max_evaluations)
        part._cancel = self._cancel
        return part

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    @property
    def time_left(self) -> float | None:
        return None if self.seconds is None else max(0.0, self.seconds - self.elapsed)

    def out_of_time(self) -> bool:
        return self.seconds is not None and self.elapsed >= self.seconds


# --------------------------------------------------------------------------- method


@dataclass
class Param:
    """One user-settable parameter of a method, for forms in the GUI and the CLI."""

    name: str
    label: str
    type: str  # int, float, bool, choice, multichoice
    default: Any
    help: str = ""
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()


class Method(Protocol):
    name: str  # stable identifier used in the CLI and the store, e.g. "gp"
    label: str  # shown in the GUI
    description: str
    kinds: tuple[str, ...]  # task kinds the method can run on

    def parameters(self) -> list[Param]: ...

    def default_config(self) -> dict[str, Any]: ...

    def run(self, task: Task, config: dict[str, Any], context: RunContext) -> Iterator[Event]: ...
