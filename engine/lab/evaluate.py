"""Scoring a submitted law on a lab task, as NewtonBench does (paper §3.3, A.4).

* **RMSLE** on 5000 points drawn from the module's evaluation distributions:
  sqrt(nanmean((log1p|ŷ| − log1p|y|)²)) over the points where neither value is NaN (absolute
  values, as the reference takes them). Any exception of the submitted law gives NaN. Unlike the
  reference, the points are seeded (``seed``), so a score can be reproduced.
* **Symbolic accuracy** offline with :func:`engine.expr.equiv.check_equivalence` (numbers that
  are not exponents are free constants; exponents are structure, as the paper's judge is told),
  and, when an LLM is configured, the papers' LLM judge (:mod:`engine.judge`).
* ``exact_accuracy`` 1.0 / 0.0 / None from the symbolic verdict, the label the paper averages.

A law is an expression over the law's inputs (``C*mass1*mass2/distance**1.5``), parsed by the
whitelist parser and evaluated here, or a Python function ``def discovered_law(<inputs>): ...``,
which runs only in the sandbox, one point at a time like the reference. A function that is
straight-line arithmetic is also turned into an expression (statically) for the symbolic check.
"""

from __future__ import annotations

import ast
import math
import re
from typing import Any

import numpy as np

from ..expr import ExpressionError, parse
from ..expr.equiv import check_equivalence
from ..expr.tools import compile_numpy
from . import LabTask

N_POINTS = 5000
FUNCTION_NAME = "discovered_law"


def rmsle(predicted: np.ndarray, truth: np.ndarray) -> float:
    """NewtonBench's RMSLE: absolute values, NaN pairs dropped; NaN when nothing is left."""
    p = np.asarray(predicted, dtype=float)
    t = np.asarray(truth, dtype=float)
    keep = ~(np.isnan(p) | np.isnan(t))
    if not keep.any():
        return float("nan")
    with np.errstate(all="ignore"):
        d = np.log1p(np.abs(p[keep])) - np.log1p(np.abs(t[keep]))
    value = float(np.sqrt(np.nanmean(d ** 2)))
    return value


def truth_values(task: LabTask, points: dict[str, np.ndarray]) -> np.ndarray:
    law = task.law
    names = task.module.law_inputs
    n = len(points[names[0]])
    out = np.empty(n)
    with np.errstate(all="ignore"):
        for i in range(n):
            try:
                out[i] = float(law(*(float(points[k][i]) for k in names)))
            except (ValueError, OverflowError, ZeroDivisionError):
                out[i] = float("nan")
    return out


def _is_function(text: str) -> bool:
    return re.search(r"^\s*def\s+\w+\s*\(", text, re.M) is not None


def _with_params_arg(source: str, function: str) -> str | None:
    """The function with a trailing ``params`` argument, so the static translator (which expects
    LLM-SR's signature) can read it. Parsing only."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == function:
            node.args.args.append(ast.arg(arg="__unused_params"))
            return ast.unparse(tree)
    return None


def check_signature(task: LabTask, source: str) -> str | None:
    """Why the function's signature is not ``discovered_law(<the law's inputs>)``, or None."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        return f"syntax error on line {exc.lineno}: {exc.msg}"
    except (ValueError, RecursionError, MemoryError) as exc:
        return f"the program cannot be parsed ({type(exc).__name__})"
    funcs = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == FUNCTION_NAME]
    expected = ", ".join(task.module.law_inputs)
    if not funcs:
        return f"no function `def {FUNCTION_NAME}({expected})`"
    args = [a.arg for a in funcs[-1].args.args]
    if args != list(task.module.law_inputs):
        return f"the signature must be `{FUNCTION_NAME}({expected})`, not `{FUNCTION_NAME}({', '.join(args)})`"
    return None


def evaluate_law(task: LabTask, law: str, *, seed: int = 0, n: int = N_POINTS, sa_seconds: float = 5.0,
                 judge: Any = None, program_seconds: float = 30.0) -> dict:
    """Score ``law`` (expression text or a ``discovered_law`` function) on ``task``.

    Returns ``{rmsle, symbolic: {equivalent, reason, method}, exact_accuracy, kind, expression,
    error, n}``; never raises for a bad law (the error says why)."""
    module = task.module
    names = list(module.law_inputs)
    rng = np.random.default_rng(seed)
    points = module.sample_inputs(n, rng)
    truth = truth_values(task, points)
    result: dict[str, Any] = {"task": task.id, "n": n, "kind": None, "expression": None, "rmsle": float("nan"),
                              "symbolic": {"equivalent": None, "reason": "", "method": None},
                              "exact_accuracy": None, "error": None}
    text = (law or "").strip()
    if not text:
        result["error"] = "the law is empty"
        return result
    expression = None
    if _is_function(text):
        result["kind"] = "function"
        problem = check_signature(task, text)
        if problem:
            result["error"] = problem
            result["exact_accuracy"] = 0.0
            result["symbolic"] = {"equivalent": False, "reason": problem, "method": "signature"}
            return result
        predicted, error = _run_function(text, names, points, program_seconds)
        if error:
            result["error"] = error
        else:
            result["rmsle"] = rmsle(predicted, truth)
        from ..expr.program import ProgramNotTranslatable, program_to_expression

        adapted = _with_params_arg(text, FUNCTION_NAME)
        if adapted is not None:
            try:
                expression = program_to_expression(adapted, FUNCTION_NAME, names, [])
            except (ProgramNotTranslatable, ValueError, RecursionError) as exc:
                result["symbolic"]["reason"] = f"no closed form for the symbolic check: {exc}"
    else:
        result["kind"] = "expression"
        try:
            parsed = parse(text, names, allow_free_symbols=True)
        except ExpressionError as exc:
            result["error"] = f"the expression cannot be read: {exc}"
            return result
        expression = text
        free = sorted(str(s) for s in parsed.free_symbols if str(s) not in names)
        if free:
            # The structure can still be checked; the fit to data needs numbers.
            result["error"] = (f"named constants ({', '.join(free)}) have no values, so there is no RMSLE; "
                               "give numbers (the lab panel's Fit finds them)")
        else:
            try:
                func = compile_numpy(parsed, names)
                with np.errstate(all="ignore"):
                    columns = np.column_stack([points[k] for k in names])
                    predicted = np.broadcast_to(np.asarray(func(columns), dtype=float), (n,))
                result["rmsle"] = rmsle(predicted, truth)
            except Exception as exc:  # noqa: BLE001 -- a law that cannot be evaluated scores NaN
                result["error"] = f"the expression cannot be evaluated: {type(exc).__name__}: {exc}"
    result["expression"] = expression
    if expression is not None:
        domain = {k: (float(points[k].min()), float(points[k].max())) for k in names}
        verdict = check_equivalence(task.truth, expression, names, domain=domain, seconds=sa_seconds)
        result["symbolic"] = {"equivalent": verdict.equivalent, "reason": verdict.reason, "method": verdict.method}
    verdict = result["symbolic"]["equivalent"]
    result["exact_accuracy"] = None if verdict is None else (1.0 if verdict else 0.0)
    if judge is not None and expression is not None:
        result["judge"] = _judge(task, expression, judge)
    if not math.isfinite(result["rmsle"]):
        result["rmsle"] = None  # JSON has no NaN
    return result


def apply_law(source: str, X: np.ndarray, seconds: float = 30.0) -> tuple[np.ndarray | None, str | None]:
    """``discovered_law(*row)`` for every row of ``X``, run in the sandbox point by point:
    ``(values, None)``, or ``(None, why it failed)``."""
    from ..sandbox import SandboxLimits, SandboxPool

    X = np.asarray(X, dtype=float)
    with SandboxPool(1, SandboxLimits(cpu_seconds=seconds), fitting=False) as pool:
        pool.load_data(X, np.zeros(len(X)))
        result = pool.apply(source, FUNCTION_NAME)
    if not result.ok or result.predictions is None:
        return None, f"the law failed: {result.error}"
    return result.predictions, None


def _run_function(source: str, names: list[str], points: dict[str, np.ndarray],
                  seconds: float) -> tuple[np.ndarray | None, str | None]:
    return apply_law(source, np.column_stack([points[k] for k in names]), seconds)


def _judge(task: LabTask, expression: str, settings) -> dict:
    from ..judge import llm_judge
    from ..llm import Budget, LLMClient

    class _TaskView:  # what the judge reads of a task
        def __init__(self, lab_task: LabTask):
            from types import SimpleNamespace

            module = lab_task.module
            self.id = lab_task.id
            self.title = lab_task.title
            self.input_names = list(module.law_inputs)
            self.target = SimpleNamespace(name=module.law_output, description=module.law_output, unit="")
            self.variables = [SimpleNamespace(name=k, role="input", description=module.descriptions.get(k, k),
                                              unit="") for k in module.law_inputs]
            self.inputs = self.variables
            self.ground_truth = SimpleNamespace(expression=lab_task.truth, template="", constants={})

    client = LLMClient(settings, Budget())
    try:
        return llm_judge(client, _TaskView(task), expression).to_dict()
    finally:
        client.close()
