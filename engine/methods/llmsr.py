"""LLM-SR (Shojaee et al. 2024): equation skeletons written by an LLM, constants fitted by BFGS.

Hypotheses are Python functions ``def equation(<inputs>, params)`` using up to ``max_params``
constants ``params[i]``. Each program runs only in the sandbox (:mod:`engine.sandbox`), where
its constants are fitted by SciPy's BFGS from all ones on the training data; its score is −MSE.

The search follows the paper and its FunSearch-derived code (notes in
``shared/reference/000_llmsrbench.md`` §3.3), in our own implementation:

* **Islands.** ``islands`` (10) independent populations, all seeded with a linear skeleton.
  Each prompt is built from one island and its new programs go back to that island.
* **Clusters.** Inside an island, programs with the same score (rounded to 6 significant
  digits) form a cluster. Prompts draw ``examples_per_prompt`` (2) clusters by a softmax over
  cluster scores, with a temperature that falls from 0.1 to 0 over every ``temperature_period``
  programs and then starts again; inside a cluster shorter programs are preferred (softmax over
  negated, normalised length).
* **Prompt.** The examples are shown in ascending score as ``equation_v0``, ``equation_v1``,
  and the prompt ends with the header of ``equation_v2`` for the LLM to complete. Each prompt
  is sent ``samples_per_prompt`` (4) times, as separate requests.
* **Resets.** Every ``reset_period`` prompts the weaker half of the islands (by best score,
  ties broken randomly) is emptied and reseeded with the best program of a surviving island.
  The paper resets every 4 hours of wall-clock time; a desktop run is far shorter, so we count
  prompts instead.
* **Budget.** LLM calls (default 1000, one call = one successful completion); the run also
  stops at its time limit, on Stop, or when a program fits the data to round-off (NMSE ≤ 1e-12).

The final model is the best program that has a closed form (straight-line arithmetic, turned into
an expression by :mod:`engine.expr.program` without running it); the runner then scores it on
every split. A better program without a closed form (loops, branches) is reported in the log.
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass, field
from dataclasses import fields as dataclass_fields
from typing import Any, Iterator

import numpy as np

from ..tasks.model import Task
from .base import Candidate, Event, Final, Hypothesis, Log, Param, ParetoFront, Progress, RunContext
from .llm_support import (LLMSession, RunCancelled, describe_variables, extract_function, llm_defaults,
                          llm_parameters, sandbox_defaults, sandbox_parameters, task_sentence, to_hypothesis)

PERFECT_NMSE = 1e-12


@dataclass
class Program:
    source: str  # the whole module text: imports and `def equation(...)`
    score: float  # -MSE on the training data
    hypothesis: Hypothesis
    length: int = field(init=False)

    def __post_init__(self) -> None:
        self.length = len(self.source)


class Island:
    def __init__(self):
        self.clusters: dict[float, list[Program]] = {}

    def add(self, program: Program) -> None:
        key = float(f"{program.score:.6g}")
        self.clusters.setdefault(key, []).append(program)

    @property
    def size(self) -> int:
        return sum(len(v) for v in self.clusters.values())

    def best(self) -> Program | None:
        if not self.clusters:
            return None
        return max(self.clusters[max(self.clusters)], key=lambda p: -p.length)

    def best_score(self) -> float:
        return max(self.clusters) if self.clusters else -math.inf

    def sample(self, k: int, temperature: float, rng: random.Random) -> list[Program]:
        """Up to ``k`` programs from distinct clusters, ascending by score."""
        keys = list(self.clusters)
        k = min(k, len(keys))
        scores = np.array(keys, dtype=float)
        chosen = []
        available = list(range(len(keys)))
        for _ in range(k):
            sub = scores[available]
            probs = _softmax(sub, temperature)
            pick = available[int(_choice(probs, rng))]
            available.remove(pick)
            chosen.append(keys[pick])
        programs = []
        for key in chosen:
            members = self.clusters[key]
            lengths = np.array([p.length for p in members], dtype=float)
            spread = lengths.max() - lengths.min()
            normalised = (lengths - lengths.min()) / (spread + 1e-6)
            probs = _softmax(-normalised, 1.0)
            programs.append(members[int(_choice(probs, rng))])
        return sorted(programs, key=lambda p: p.score)


def _softmax(values: np.ndarray, temperature: float) -> np.ndarray:
    values = np.asarray(values, dtype=float)
    finite = np.where(np.isfinite(values), values, np.nanmin(values[np.isfinite(values)]) if np.isfinite(values).any()
                      else 0.0)
    if temperature <= 1e-9:
        probs = (finite == finite.max()).astype(float)
    else:
        # Scores are -MSE and can be huge or tiny: scale by their spread so the temperature
        # means the same on every task.
        spread = finite.max() - finite.min()
        z = (finite - finite.max()) / (spread if spread > 0 else 1.0) / temperature
        probs = np.exp(z)
    return probs / probs.sum()


def _choice(probs: np.ndarray, rng: random.Random) -> int:
    r = rng.random()
    return int(min(np.searchsorted(np.cumsum(probs), r, side="right"), len(probs) - 1))


class LLMSR:
    resumable = True  # a resumed run puts its evaluated programs back (engine.resume)
    name = "llmsr"
    label = "LLM-SR"
    description = ("An LLM writes equation skeletons as Python functions with free constants; the "
                   "constants are fitted by BFGS in a sandbox and the best skeletons are shown back to the "
                   "LLM, island by island (Shojaee et al. 2024).")
    kinds = ("function", "surface")

    def parameters(self) -> list[Param]:
        return [
            *llm_parameters(1000),
            Param("samples_per_prompt", "Samples per prompt", "int", 4,
                  "Completions requested for each prompt (LLM-SR: 4)", minimum=1, maximum=32),
            Param("islands", "Islands", "int", 10, "Independent populations (LLM-SR: 10)", minimum=1, maximum=100),
            Param("examples_per_prompt", "Examples per prompt", "int", 2,
                  "Earlier programs shown in each prompt (LLM-SR: 2)", minimum=1, maximum=5),
            Param("max_params", "Maximum constants", "int", 10,
                  "Length of the params vector the skeletons may use (LLM-SR: 10)", minimum=1, maximum=30),
            Param("reset_period", "Reset every (prompts)", "int", 50,
                  "Prompts between resets of the weaker half of the islands", minimum=5, maximum=100_000),
            Param("temperature_period", "Cluster temperature period", "int", 30_000,
                  "Programs over which the cluster-sampling temperature falls from 0.1 to 0 (LLM-SR: 30000)",
                  minimum=10, maximum=10_000_000),
            *sandbox_parameters(),
            Param("seconds", "Time limit (s)", "float", 0.0, "Wall-clock budget (0 = no limit)",
                  minimum=0.0, maximum=7 * 24 * 3600.0),
            Param("seed", "Random seed", "int", 0, "Seed of the island and cluster choices", minimum=0,
                  maximum=2**32 - 1),
        ]

    def default_config(self) -> dict[str, Any]:
        return {**llm_defaults(1000), **sandbox_defaults(), **{p.name: p.default for p in self.parameters()}}

    # ------------------------------------------------------------------ prompt

    @staticmethod
    def _signature(task: Task, name: str) -> str:
        args = ", ".join(f"{n}: np.ndarray" for n in task.input_names)
        return f"def {name}({args}, params: np.ndarray) -> np.ndarray:"

    def seed_program(self, task: Task) -> str:
        terms = [f"params[{i}] * {n}" for i, n in enumerate(task.input_names)]
        terms.append(f"params[{len(task.input_names)}]")
        args_doc = "\n".join(f"        {v.name}: observations of {v.description.rstrip('.')}"
                             for v in task.variables if v.role == "input")
        return (
            "import numpy as np\n\n"
            f"{self._signature(task, 'equation')}\n"
            f'    """{task.target.description.rstrip(".")} ({task.target.name}).\n\n'
            f"    Args:\n{args_doc}\n"
            "        params: constants fitted to the data\n"
            '    """\n'
            f"    return {' + '.join(terms)}\n"
        )

    def prompt(self, task: Task, examples: list[Program], max_params: int) -> list[dict]:
        intro = (
            "You are a scientist searching for the law behind a data set. Improve the Python function "
            "below that models it. Write the complete function `equation_v2` and nothing else: plain Python "
            "with NumPy (imported as np), no loops over data points, no file, network or system access.\n"
            f"The function may use up to {max_params} free constants params[0] ... params[{max_params - 1}]; "
            "they are fitted to the data by BFGS, so do not hard-code their values. Prefer simple, "
            "physically meaningful forms."
        )
        parts = [
            '"""',
            f"Find the mathematical function for {task_sentence(task)}.",
            "",
            "Variables:",
            describe_variables(task),
            "",
            "Background: " + task.context.strip(),
            '"""',
            "",
            "import numpy as np",
            "",
            "# How a candidate is scored: its params are fitted by scipy.optimize.minimize(method='BFGS'),",
            f"# starting from [1.0] * {max_params}, to minimise the mean squared error on the training data;",
            "# the score is minus that error.",
            "",
        ]
        for i, program in enumerate(examples):
            body = _function_text(program.source).replace("def equation(", f"def equation_v{i}(", 1)
            if i > 0:
                body = _with_docstring(body, f"Improved version of `equation_v{i - 1}`.")
            parts += [body.rstrip(), ""]
        n = len(examples)
        parts += [self._signature(task, f"equation_v{n}"),
                  f'    """Improved version of `equation_v{n - 1}`."""' if n else '    """The model."""']
        return [{"role": "user", "content": intro + "\n\n" + "\n".join(parts) + "\n"}]

    # ------------------------------------------------------------------ run

    def run(self, task: Task, config: dict[str, Any], context: RunContext) -> Iterator[Event]:
        resume = context.resume
        # A resumed run draws afresh rather than replaying the interrupted run's choices.
        rng = random.Random(int(config.get("seed") or 0) + (1000 * (resume.resumes + 1) if resume else 0))
        data = task.load_data()
        train = data.splits["train"]
        X, y = np.asarray(train.X, dtype=float), np.asarray(train.y, dtype=float)
        max_params = int(config["max_params"])
        k_samples = int(config["samples_per_prompt"])
        n_islands = int(config["islands"])
        started = time.monotonic()
        state = _State()

        with LLMSession(config, context) as session:
            yield from session.opening(X, y)
            try:
                islands = [Island() for _ in range(n_islands)]
                prompts = 0
                if resume is not None and resume.hypotheses:
                    prompts = self._restore(resume, state, islands, y)
                    yield Log(f"Resumed: {state.programs} evaluated programs of the interrupted run are back in "
                              f"the islands; prompting goes on from prompt {prompts + 1}.")
                else:
                    seed_src = self.seed_program(task)
                    result = session.evaluate([seed_src], "equation", max_params, seed=True)[0]
                    seed = self._accept(task, seed_src, result, state, origin="seed skeleton", call_seq=None)
                    yield seed.hypothesis if seed else Log(f"the seed skeleton failed: {result.error}", "warning")
                    if seed is not None:
                        for island in islands:
                            island.add(seed)
                stop = "completed"
                while True:
                    reason = session.should_stop()
                    if reason:
                        stop = reason
                        yield from session.stop_notes()
                        break
                    if state.best is not None and state.best.hypothesis.loss is not None \
                            and state.best.hypothesis.loss <= PERFECT_NMSE:
                        stop = "perfect fit"
                        break
                    island_index = prompts % n_islands
                    island = islands[island_index]
                    period = int(config["temperature_period"])
                    temperature = 0.1 * (1 - (state.programs % period) / period)
                    examples = island.sample(int(config["examples_per_prompt"]), temperature, rng) \
                        if island.size else []
                    messages = self.prompt(task, examples, max_params)
                    replies = session.ask(messages, k_samples, purpose=f"propose (island {island_index + 1})")
                    yield from session.drain()
                    prompts += 1
                    sources, seqs, origin = [], [], f"island {island_index + 1}"
                    for text, seq in replies:
                        source, reason = extract_function(
                            text, "equation", header=self._signature(task, "equation"),
                            forbidden=lambda name: name.startswith("equation_v"))
                        if source is None:
                            state.index += 1
                            yield Hypothesis(state.index, "", False, error=reason, call_seq=seq, origin=origin)
                            continue
                        sources.append(source)
                        seqs.append(seq)
                    results = session.evaluate(sources, "equation", max_params)
                    for source, result, seq in zip(sources, results, seqs):
                        program = self._accept(task, source, result, state, origin=origin, call_seq=seq)
                        if program is None:
                            yield state.last
                            continue
                        island.add(program)
                        yield program.hypothesis
                    yield Progress(prompts, state.best_loss(), state.programs,
                                   time.monotonic() - started + (resume.elapsed if resume else 0.0), None)
                    if state.front_changed:
                        state.front_changed = False
                        yield ParetoFront(prompts, state.front())
                    if prompts % int(config["reset_period"]) == 0 and n_islands > 1:
                        yield Log(self._reset(islands, rng))
            except RunCancelled as exc:
                stop = exc.reason
            yield from session.closing()
            yield from self._final(state, stop)

    # ------------------------------------------------------------------ bookkeeping

    def _accept(self, task: Task, source: str, result, state: "_State", *, origin: str,
                call_seq: int | None) -> Program | None:
        state.index += 1
        hypothesis = to_hypothesis(state.index, source, result, task, call_seq=call_seq, origin=origin)
        state.last = hypothesis
        if not hypothesis.ok or result.mse is None or not math.isfinite(result.mse):
            return None
        state.programs += 1
        program = Program(source, -float(result.mse), hypothesis)
        state.add(program)
        return program

    @staticmethod
    def _restore(resume, state: "_State", islands: list[Island], y: np.ndarray) -> int:
        """Put the interrupted run's programs back (engine.resume); returns its prompt count.
        A program's score is -MSE; the store keeps its NMSE, and MSE = NMSE x var(y)."""
        names = {f.name for f in dataclass_fields(Hypothesis)}
        variance = float(np.var(y)) or 1.0
        for payload in resume.hypotheses:
            hypothesis = Hypothesis(**{k: v for k, v in payload.items() if k in names})
            state.index = max(state.index, int(hypothesis.index))
            loss = hypothesis.loss
            if not hypothesis.ok or loss is None or not math.isfinite(float(loss)):
                continue
            state.programs += 1
            program = Program(hypothesis.program, -float(loss) * variance, hypothesis)
            state.add(program)
            origin = hypothesis.origin or ""
            number = origin.removeprefix("island ")
            if origin.startswith("island ") and number.isdigit() and 1 <= int(number) <= len(islands):
                islands[int(number) - 1].add(program)
            else:  # the seed skeleton (and anything else) went to every island
                for island in islands:
                    island.add(program)
        return int(resume.iterations)

    @staticmethod
    def _reset(islands: list[Island], rng: random.Random) -> str:
        order = sorted(range(len(islands)), key=lambda i: (islands[i].best_score(), rng.random()))
        weak, strong = order[: len(islands) // 2], order[len(islands) // 2:]
        donor = islands[rng.choice(strong)].best()
        for i in weak:
            islands[i] = Island()
            if donor is not None:
                islands[i].add(donor)
        return f"reset islands {', '.join(str(i + 1) for i in sorted(weak))} with the best program of a surviving island"

    @staticmethod
    def _final(state: "_State", stop: str) -> Iterator[Event]:
        if state.best_closed is None:
            if stop in ("cancelled", "time"):
                yield Log("stopped before any program was evaluated: no model", "warning")
                return
            raise RuntimeError("no program could be evaluated and turned into a formula "
                               "(the seed skeleton failed too); see the log")
        h = state.best_closed.hypothesis
        if state.best is not None and state.best is not state.best_closed:
            yield Log(f"the best program (train NMSE {state.best.hypothesis.loss:.3g}) has no closed form "
                      f"({state.best.hypothesis.error}); reporting the best one that has "
                      f"(NMSE {h.loss:.3g})", "warning")
        yield Final(h.expression, int(h.complexity or 0), float(h.loss), raw_expression=state.best_closed.source,
                    stop_reason=stop, details={"program": state.best_closed.source, "params": h.params,
                                               "programs": state.programs})


class _State:
    def __init__(self):
        self.index = 0
        self.programs = 0
        self.best: Program | None = None
        self.best_closed: Program | None = None
        self.last: Hypothesis | None = None
        self.closed: dict[int, Program] = {}  # complexity -> best program with a closed form
        self.front_changed = False

    def add(self, program: Program) -> None:
        h = program.hypothesis
        if self.best is None or program.score > self.best.score:
            self.best = program
        if h.expression is None:
            return
        if self.best_closed is None or program.score > self.best_closed.score:
            self.best_closed = program
        c = int(h.complexity or 0)
        if c not in self.closed or h.loss < self.closed[c].hypothesis.loss:
            self.closed[c] = program
            self.front_changed = True

    def best_loss(self) -> float:
        return float(self.best.hypothesis.loss) if self.best is not None else math.inf

    def front(self) -> list[Candidate]:
        from ..pareto import front_indices

        members = [Candidate(p.hypothesis.expression, int(p.hypothesis.complexity or 0), float(p.hypothesis.loss))
                   for _, p in sorted(self.closed.items())]
        return [members[i] for i in front_indices(members)]


def _function_text(source: str) -> str:
    """The ``def`` of a program without its import lines."""
    lines = source.splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.startswith("def ")), 0)
    return "\n".join(lines[start:])


def _with_docstring(function: str, doc: str) -> str:
    """Replace (or add) the docstring of a one-function text, without executing anything."""
    import ast

    tree = ast.parse(function)
    fn = tree.body[0]
    lines = function.splitlines()
    first = fn.body[0]
    has_doc = isinstance(first, ast.Expr) and isinstance(getattr(first, "value", None), ast.Constant) \
        and isinstance(first.value.value, str)
    body_start = (first.end_lineno if has_doc else first.lineno - 1)
    header_end = fn.body[0].lineno - 1
    return "\n".join(lines[:header_end] + [f'    """{doc}"""'] + lines[body_start:])
