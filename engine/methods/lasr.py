"""LaSR (Grayeli et al. 2024): symbolic regression guided by a natural-language concept library.

LaSR is PySR's regularised evolution (SymbolicRegression.jl) in which, with a small probability,
a genetic operator is replaced by an LLM call, and the LLM keeps a library of *concepts*
(natural-language hypotheses about the hidden law) that conditions those calls. Notes on the
paper, its repository and LLM-SRBench's settings: ``shared/reference/000_llmsrbench.md``
§3.1 / §3.2. Prompts are written in our own words.

Why the loop is written here
----------------------------
pyoperon (:mod:`engine.methods.gp`) runs its whole evolution in C++ and cannot call back into
Python for a mutation or a crossover, so LaSR's evolutionary loop is implemented in this module,
in Python and NumPy, after SymbolicRegression.jl:

* **Individuals** are small expression trees of our own (nested tuples: constant, variable,
  unary and binary operator nodes), evaluated column-wise with NumPy. Nothing is compiled or
  executed: the interpreter below only dispatches on the node tags to fixed NumPy functions.
  LLM-proposed expressions are text; they go through the whitelist parser
  (:func:`engine.expr.parse`) into SymPy and from there into a tree, so LLM text is never
  evaluated as code. Reported models go the other way (tree → SymPy →
  :func:`engine.expr.to_text`) and their losses are recomputed from the printed text with
  :func:`engine.expr.compile_numpy` (cached by text), so a reported loss is what anybody
  re-evaluating that text gets.
* **Loss** is the training NMSE on a fitting subsample of at most ``max_samples`` (2000, as
  LaSR's repository) random rows. PySR's score adds ``parsimony`` × size (PySR normalises its
  loss by the baseline variance, which makes its score NMSE + 0.0032 × size); tournaments
  multiply it by exp(20 × frequency of the member's size) (PySR's adaptive parsimony), and a
  mutation towards a more frequent size is rejected with probability 1 − f_old / f_new.
* **Populations** ``populations`` (10) × ``population_size`` (33), maximum size ``max_size``
  (30 nodes of our tree), operators ``+ − × ÷ ^ exp log sqrt sin cos tan cosh`` (Table 2).
  Each *cycle* makes ceil(33 / 12) = 3 offspring per population by tournament selection
  (12 members, p = 0.86) and regularised evolution: every offspring replaces the population's
  oldest member (a rejected mutation replaces it with a copy of its parent). An offspring is a
  subtree crossover with probability 0.066, else a mutation drawn with PySR's weights (constant
  perturbation, operator change, operand swap, node append/prepend/insert/delete, constant
  folding, a new random tree with LaSR's weight 0.1, nothing). LaSR's nesting constraints hold
  (no trigonometric function inside another, no exp/log/cosh inside exp/log/cosh, no sqrt inside
  sqrt; arguments of sin/cos/tan at most 10 nodes, of exp/log/sqrt and exponents at most 20).
  After every iteration (``cycles`` cycles) each member is constant-folded, its constants are
  fitted with probability 0.14 (PySR's ``optimizer_probability``), and members migrate: each is
  replaced with probability 0.00036 by one of the best 12 of any population and with
  probability 0.035 by a member of the hall-of-fame front.
* **Constants** are fitted by :func:`scipy.optimize.least_squares` (Levenberg–Marquardt,
  ``fit_iterations`` iterations, 8 like PySR's BFGS default) on the subsample. LLM proposals are
  always fitted (four times the iterations), starting from the numbers the LLM wrote.
* **LLM operators.** Each offspring is, with probability ``llm_rate`` (0.005, Table 2) each, made
  by *LLM init* (new expressions), *LLM mutation* (of a tournament winner) or *LLM crossover*
  (of two winners) instead of the symbolic operators; the initial populations are also drawn by
  LLM init with that probability per member. Each call shows 3 concepts sampled from the newest
  ``top_k`` (20) of the library and asks for 5 expressions in our syntax as a JSON list; every
  one is parsed, fitted and reported as a Hypothesis, and as in LaSR one of them, chosen at
  random among the valid ones (two for crossover), enters the population. Text that does not
  parse, uses an operator outside the set, is constant, undefined on the data or over 100 nodes
  is a failed Hypothesis with the reason. A failed request falls back to the symbolic operator,
  as in LaSR.
* **Concept library.** Every ``concept_every`` iterations: *concept abstraction* shows up to 5
  random members of the current Pareto front ("good") and up to 5 of the worst members of the
  iteration ("bad") and asks for 5 hypotheses, 2 of which (at random) enter the library; then two
  *concept evolution* calls each show 5 concepts and ask for conclusions that follow from them,
  one of which enters the library. New concepts go first; prompts sample from the newest
  ``top_k``. Every library update is logged.

Budget and stopping: ``iterations`` (25); the run also stops at ``seconds``, on Stop, when the
LLM budget (``max_llm_calls``, 1000) is spent ("budget"), when a replayed recording ends, and at
``context.max_evaluations``. LLM operator requests are planned as the cycles run (with their
parents and concepts fixed then) and sent together once the client's ``concurrency`` (4) of them
are pending or the iteration ends; their offspring join the populations in planning order. LaSR
runs its populations in parallel processes, so its LLM offspring arrive late too; here the delay
is a few cycles and depends only on the random stream, so a run with a given seed is repeatable
(and replayable from the response cache) when it does not end by time.

The final model is PySR's recommended member (:func:`engine.pareto.recommended`) of the Pareto
front of the hall of fame (the best expression of every size seen, LLM proposals included),
scored by SymPy node count and full training NMSE. A linear least-squares model is in the hall
of fame from the start, so a run always has a model.

Differences from the paper and its repository (and why):

* ``cycles`` defaults to 50 instead of 550. Without the LLM one iteration of 50 cycles (1,500
  offspring and the constant fits) takes about 1 to 1.5 s here on 4000-row tasks, so the GP part of
  a default run (25 iterations, ~40,000 models) takes 20 to 40 s; 550 cycles would take 4 to 8
  minutes. LLM calls come on top: at rate 0.005 per operator an iteration of 50 cycles plans
  about 22 operator calls (sent 4 at a time) and 3 concept calls, so an LLM answering in well
  under a second fits a default run into the 120 s limit, while a slower one reaches the limit
  first (with one-second replies about 8 iterations; the run then ends "time" with everything
  found so far).
* The LLM operators are chosen per offspring (each with ``llm_rate``), the reading the brief and
  the paper give; the repository draws LLM mutation per mutation and LLM crossover per crossover.
  The repository's configuration for LLM-SRBench uses 0.001, the paper 0.005 (our default).
* Constants are written as numbers (our syntax), not LaSR's placeholder ``C``; a ``C`` the LLM
  writes anyway (when no variable is called C) is read as the number 1 and then fitted.
* All proposals of a reply are evaluated and enter the hall of fame; LaSR keeps only the one it
  picks. LLM proposals have their constants fitted at once (LaSR leaves that to the periodic
  optimisation), so a proposed form is judged by its best fit.
* Concept evolution in the repository only recombines concepts that have dropped out of the
  newest ``top_k`` (so it starts late in a run); here it draws from those when there are any and
  otherwise from the whole library (at least 2 concepts), so short runs evolve concepts too. A
  concept that is already in the library moves to the front instead of being added twice.
* The loss is NMSE rather than the repository's scaled MSE; constant fitting is a few
  Levenberg–Marquardt steps instead of BFGS with restarts; no annealing (PySR's default).
* The LLM sees the task's variable descriptions (LLM-SRBench passes this context to every method).
"""

from __future__ import annotations

import json
import math
import random
import re
import time
from dataclasses import dataclass, field
from typing import Any, Iterator

import numpy as np
import sympy as sp

from ..expr import ExpressionError, compile_numpy, parse, symbols_for, to_text
from ..expr.tools import complexity as expr_complexity
from ..tasks.model import Task
from .base import Candidate, Event, Final, Hypothesis, Log, Param, ParetoFront, Progress, RunContext
from .llm_support import LLMSession, RunCancelled, describe_variables, fenced_blocks, llm_defaults, llm_parameters, task_sentence

# --------------------------------------------------------------------------- constants

BINARY = ("+", "-", "*", "/", "^")
UNARY = ("exp", "log", "sqrt", "sin", "cos", "tan", "cosh", "sinh", "tanh", "abs")
#: Table 2 of LLM-SRBench: + * - / ^ exp log sqrt sin cos tan cosh.
DEFAULT_OPERATORS = ("+", "-", "*", "/", "^", "exp", "log", "sqrt", "sin", "cos", "tan", "cosh")

N_PROPOSALS = 5  # expressions / concepts asked for per call (LaSR: N = 5)
CONCEPTS_PER_PROMPT = 3  # concepts shown in an operator prompt (LaSR: num_pareto_context = 3)
CONTEXT_EXPRESSIONS = 5  # good and bad expressions shown to concept abstraction (LaSR: 5)
ABSTRACTED_KEPT = 2  # hypotheses of one abstraction reply that enter the library (LaSR: 2)
EVOLUTION_CALLS = 2  # concept-evolution calls per library update (LaSR: 2)
MAX_CONCEPT_CHARS = 600
MAX_PROPOSAL_SIZE = 100  # nodes; larger LLM expressions are refused (fitting them would be slow)

# PySR / SymbolicRegression.jl defaults.
TOURNAMENT_N = 12
TOURNAMENT_P = 0.86
CROSSOVER_PROBABILITY = 0.066
PERTURBATION_FACTOR = 0.076
PROBABILITY_NEGATE_CONSTANT = 0.01
ADAPTIVE_PARSIMONY_SCALING = 20.0
FRACTION_REPLACED = 0.00036
FRACTION_REPLACED_HOF = 0.035
TOPN = 12
FREQUENCY_WINDOW = 100_000
MAX_ATTEMPTS = 10
MUTATION_WEIGHTS = {  # PySR's defaults; "randomize" is LaSR's configuration (0.1)
    "mutate_constant": 0.048,
    "mutate_operator": 0.47,
    "swap_operands": 0.1,
    "add_node": 0.79,
    "insert_node": 5.1,
    "delete_node": 1.7,
    "simplify": 0.002,
    "randomize": 0.1,
    "do_nothing": 0.21,
}
# LaSR's constraints (repository configuration), for our operator names.
NESTED_FORBIDDEN = {
    "sin": {"sin", "cos", "tan"}, "cos": {"sin", "cos", "tan"}, "tan": {"sin", "cos", "tan"},
    "exp": {"exp", "log", "cosh"}, "log": {"exp", "log", "cosh"}, "cosh": {"exp", "log", "cosh"},
    "sqrt": {"sqrt"},
}
ARGUMENT_LIMIT = {"sin": 10, "cos": 10, "tan": 10, "exp": 20, "log": 20, "sqrt": 20}
EXPONENT_LIMIT = 20

LOSS_FLOOR = 1e-12

# --------------------------------------------------------------------------- expression trees
#
# A node is a tuple: (0, value) constant, (1, column) variable, (2, name, child) unary operator,
# (3, name, left, right) binary operator. Tuples are immutable and hashable: mutations rebuild
# the path to the changed node and share the rest, and trees key the render cache.

_NP_UNARY = {
    "exp": np.exp, "log": np.log, "sqrt": np.sqrt, "sin": np.sin, "cos": np.cos, "tan": np.tan,
    "cosh": np.cosh, "sinh": np.sinh, "tanh": np.tanh, "abs": np.abs,
}
_NP_BINARY = {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.divide, "^": np.power}
_SP_UNARY = {
    "exp": sp.exp, "log": sp.log, "sqrt": sp.sqrt, "sin": sp.sin, "cos": sp.cos, "tan": sp.tan,
    "cosh": sp.cosh, "sinh": sp.sinh, "tanh": sp.tanh, "abs": sp.Abs,
}
_FROM_SP = {sp.exp: "exp", sp.log: "log", sp.sin: "sin", sp.cos: "cos", sp.tan: "tan", sp.cosh: "cosh",
            sp.sinh: "sinh", sp.tanh: "tanh", sp.Abs: "abs"}


def _eval(node, cols):
    tag = node[0]
    if tag == 1:
        return cols[node[1]]
    if tag == 0:
        return node[1]
    if tag == 2:
        return _NP_UNARY[node[1]](_eval(node[2], cols))
    return _NP_BINARY[node[1]](_eval(node[2], cols), _eval(node[3], cols))


def evaluate_tree(node, cols: list[np.ndarray], n: int) -> np.ndarray:
    """The tree's values on the columns (non-finite where undefined)."""
    with np.errstate(all="ignore"):
        out = _eval(node, cols)
    out = np.asarray(out, dtype=float)
    return np.broadcast_to(out, (n,)) if out.shape != (n,) else out


def tree_size(node) -> int:
    tag = node[0]
    if tag < 2:
        return 1
    if tag == 2:
        return 1 + tree_size(node[2])
    return 1 + tree_size(node[2]) + tree_size(node[3])


def _paths(node) -> list[tuple[tuple[int, ...], tuple]]:
    """(path, node) of every node, preorder; a path lists child positions from the root."""
    out = []
    stack = [((), node)]
    while stack:
        path, n = stack.pop()
        out.append((path, n))
        if n[0] == 3:
            stack.append((path + (1,), n[3]))
            stack.append((path + (0,), n[2]))
        elif n[0] == 2:
            stack.append((path + (0,), n[2]))
    return out


def _replace(node, path, new):
    if not path:
        return new
    if node[0] == 2:
        return (2, node[1], _replace(node[2], path[1:], new))
    if path[0] == 0:
        return (3, node[1], _replace(node[2], path[1:], new), node[3])
    return (3, node[1], node[2], _replace(node[3], path[1:], new))


def constants_of(node, out: list | None = None) -> list[float]:
    out = [] if out is None else out
    tag = node[0]
    if tag == 0:
        out.append(node[1])
    elif tag == 2:
        constants_of(node[2], out)
    elif tag == 3:
        constants_of(node[2], out)
        constants_of(node[3], out)
    return out


def with_constants(node, values):
    """The tree with its constants (preorder) replaced by ``values``."""
    it = iter(values)

    def walk(n):
        tag = n[0]
        if tag == 0:
            return (0, float(next(it)))
        if tag == 1:
            return n
        if tag == 2:
            return (2, n[1], walk(n[2]))
        return (3, n[1], walk(n[2]), walk(n[3]))

    return walk(node)


def has_variable(node) -> bool:
    tag = node[0]
    if tag == 1:
        return True
    if tag == 0:
        return False
    if tag == 2:
        return has_variable(node[2])
    return has_variable(node[2]) or has_variable(node[3])


def operators_of(node, out: set | None = None) -> set[str]:
    out = set() if out is None else out
    if node[0] == 2:
        out.add(node[1])
        operators_of(node[2], out)
    elif node[0] == 3:
        out.add(node[1])
        operators_of(node[2], out)
        operators_of(node[3], out)
    return out


def _fold_value(name: str, values: list[float]) -> float | None:
    with np.errstate(all="ignore"):
        try:
            if len(values) == 1:
                v = float(_NP_UNARY[name](np.float64(values[0])))
            else:
                v = float(_NP_BINARY[name](np.float64(values[0]), np.float64(values[1])))
        except (OverflowError, ValueError, ZeroDivisionError):
            return None
    return v if math.isfinite(v) else None


def simplify_tree(node):
    """Constant folding and merging of constants through + and * (SymbolicRegression.jl's
    ``simplify_tree!`` and ``combine_operators``). Values are unchanged."""
    tag = node[0]
    if tag < 2:
        return node
    if tag == 2:
        child = simplify_tree(node[2])
        if child[0] == 0:
            v = _fold_value(node[1], [child[1]])
            if v is not None:
                return (0, v)
        return (2, node[1], child)
    op = node[1]
    a, b = simplify_tree(node[2]), simplify_tree(node[3])
    if a[0] == 0 and b[0] == 0:
        v = _fold_value(op, [a[1], b[1]])
        if v is not None:
            return (0, v)
    if op in ("+", "*"):
        if b[0] == 0 and a[0] != 0:
            a, b = b, a
        # c1 op (c2 op x) -> (c1 op c2) op x
        if a[0] == 0 and b[0] == 3 and b[1] == op and (b[2][0] == 0 or b[3][0] == 0):
            c2, rest = (b[2], b[3]) if b[2][0] == 0 else (b[3], b[2])
            v = _fold_value(op, [a[1], c2[1]])
            if v is not None:
                return (3, op, (0, v), rest)
    return (3, op, a, b)


def check_constraints(node, max_size: int) -> bool:
    """Size limit and LaSR's nesting / argument-size constraints."""
    if tree_size(node) > max_size:
        return False
    return _check(node, frozenset())


def _check(node, forbidden: frozenset) -> bool:
    tag = node[0]
    if tag < 2:
        return True
    name = node[1]
    if name in forbidden:
        return False
    if tag == 2:
        limit = ARGUMENT_LIMIT.get(name)
        if limit is not None and tree_size(node[2]) > limit:
            return False
        inner = forbidden | NESTED_FORBIDDEN.get(name, frozenset())
        return _check(node[2], frozenset(inner))
    if name == "^" and tree_size(node[3]) > EXPONENT_LIMIT:
        return False
    return _check(node[2], forbidden) and _check(node[3], forbidden)


# --------------------------------------------------------------------------- trees <-> SymPy / text


class Unsupported(ValueError):
    """An expression that cannot be a LaSR individual (operator outside the set, complex, ...)."""


def _sp_const(value: float):
    if value == int(value) and abs(value) <= 10:
        return sp.Integer(int(value))
    return sp.Float(value)


def to_sympy(node, syms: list[sp.Symbol]) -> sp.Expr:
    tag = node[0]
    if tag == 0:
        return _sp_const(node[1])
    if tag == 1:
        return syms[node[1]]
    if tag == 2:
        return _SP_UNARY[node[1]](to_sympy(node[2], syms))
    a, b = to_sympy(node[2], syms), to_sympy(node[3], syms)
    op = node[1]
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op == "/":
        return a / b
    return sp.Pow(a, b)


def from_sympy(expr: sp.Expr, index: dict[str, int], allowed: set[str]):
    """A tree for a parsed expression; raises :class:`Unsupported`."""
    tree = _from_sp(expr, index, allowed)
    used = operators_of(tree)
    missing = sorted(used - allowed)
    if missing:
        raise Unsupported(f"it uses {', '.join(missing)}, which {'is' if len(missing) == 1 else 'are'} not "
                          f"among the operators ({' '.join(sorted(allowed))})")
    return tree


def _number(expr) -> float:
    try:
        value = complex(sp.N(expr))
    except (TypeError, ValueError, OverflowError) as exc:
        raise Unsupported(f"the number {expr} cannot be evaluated") from exc
    if abs(value.imag) > 1e-12 * (1 + abs(value.real)) or not math.isfinite(value.real):
        raise Unsupported(f"the constant {expr} is not a finite real number")
    return float(value.real)


def _product(nodes):
    tree = None
    for n in nodes:
        tree = n if tree is None else (3, "*", tree, n)
    return tree


def _from_sp(e, index, allowed):
    if e.is_Symbol:
        if e.name not in index:
            raise Unsupported(f"unknown variable {e.name}")
        return (1, index[e.name])
    if e.is_number:
        return (0, _number(e))
    if e.is_Add:
        pos, neg = [], []
        for term in e.args:
            coeff, _ = term.as_coeff_Mul()
            (neg if coeff.is_negative else pos).append(term)
        tree = None
        for term in pos:
            sub = _from_sp(term, index, allowed)
            tree = sub if tree is None else (3, "+", tree, sub)
        for term in neg:
            sub = _from_sp(-term, index, allowed)
            tree = (3, "*", (0, -1.0), sub) if tree is None else (3, "-", tree, sub)
        return tree
    if e.is_Mul:
        coeff, factors = e.as_coeff_mul()
        num, den = [], []
        for f in factors:
            if f.is_Pow and f.exp.is_Number and f.exp.is_negative:
                den.append(_from_sp(sp.Pow(f.base, -f.exp), index, allowed))
            else:
                num.append(_from_sp(f, index, allowed))
        if coeff != 1 or not num:
            num.insert(0, (0, _number(coeff)))
        tree = _product(num)
        return (3, "/", tree, _product(den)) if den else tree
    if e.is_Pow:
        base, exponent = e.base, e.exp
        if exponent.is_Number and exponent.is_negative:
            return (3, "/", (0, 1.0), _from_sp(sp.Pow(base, -exponent), index, allowed))
        if exponent == sp.Rational(1, 2) and ("sqrt" in allowed or "^" not in allowed):
            return (2, "sqrt", _from_sp(base, index, allowed))
        return (3, "^", _from_sp(base, index, allowed), _from_sp(exponent, index, allowed))
    func = getattr(e, "func", None)
    if func in _FROM_SP and len(e.args) == 1:
        return (2, _FROM_SP[func], _from_sp(e.args[0], index, allowed))
    name = getattr(func, "__name__", type(e).__name__)
    raise Unsupported(f"it uses {name}, which is not among the operators ({' '.join(sorted(allowed))})")


_PREC = {"+": 1, "-": 1, "*": 2, "/": 2, "^": 3}


def show_tree(node, names: list[str], digits: int = 4) -> str:
    """Readable text of a tree in our expression syntax (re-parsable), numbers rounded."""
    tag = node[0]
    if tag == 0:
        text = f"{node[1]:.{digits}g}"
        return f"({text})" if node[1] < 0 else text
    if tag == 1:
        return names[node[1]]
    if tag == 2:
        return f"{node[1]}({show_tree(node[2], names, digits)})"
    op = node[1]
    a, b = node[2], node[3]
    left, right = show_tree(a, names, digits), show_tree(b, names, digits)
    if a[0] == 3 and (_PREC[a[1]] < _PREC[op] or op == "^"):
        left = f"({left})"
    if b[0] == 3 and (_PREC[b[1]] < _PREC[op] or (_PREC[b[1]] == _PREC[op] and op in ("-", "/", "^"))):
        right = f"({right})"
    symbol = "**" if op == "^" else op
    return f"{left} {symbol} {right}" if op in ("+", "-") else f"{left}{symbol}{right}"


# --------------------------------------------------------------------------- LLM replies

_LIST = re.compile(r"\[[^\[\]]*\]", re.S)
_QUOTED = re.compile(r'"((?:[^"\\\n]|\\.)+)"')


def reply_items(text: str, limit: int = N_PROPOSALS) -> list[str]:
    """The strings of the JSON list that ends a reply (LaSR's format): the last fenced block,
    else the last bracketed list, parsed as JSON (a trailing comma is forgiven), else the quoted
    strings in it. At most ``limit`` items. Parsing only: nothing is evaluated."""
    text = text or ""
    candidates = [body for _, body in reversed(fenced_blocks(text))]
    candidates += [m.group(0) for m in reversed(list(_LIST.finditer(text)))]
    for raw in candidates:
        block = raw.strip()
        match = _LIST.search(block)
        if match is None:
            continue
        items = _json_items(match.group(0))
        if items is None:
            items = [bytes(s, "utf-8").decode("unicode_escape", "ignore") if "\\" in s else s
                     for s in _QUOTED.findall(match.group(0))]
        items = [s.strip() for s in items if s and s.strip()]
        if items:
            return items[:limit]
    return []


def _json_items(block: str) -> list[str] | None:
    for attempt in (block, re.sub(r",\s*\]", "]", block)):
        try:
            data = json.loads(attempt)
        except ValueError:
            continue
        if isinstance(data, list):
            return [str(x) for x in data if isinstance(x, (str, int, float)) and not isinstance(x, bool)]
    return None


def _expression_text(item: str) -> str:
    """An LLM item as expression text: ``y = ...`` keeps the right side."""
    text = item.strip().strip("`").strip()
    if "=" in text and "==" not in text:
        text = text.rsplit("=", 1)[1].strip()
    return text


# --------------------------------------------------------------------------- search state


@dataclass
class Member:
    tree: tuple
    size: int
    loss: float  # NMSE on the fitting subsample
    score: float  # loss + parsimony * size
    birth: int


@dataclass
class Rendered:
    text: str
    complexity: int
    loss: float  # NMSE of the text on the full training split


@dataclass
class _Request:
    population: int
    kind: str  # init, mutation, crossover
    messages: list[dict]
    parents: list[Member] = field(default_factory=list)


ORIGIN = {"init": "LLM init", "mutation": "LLM mutation", "crossover": "LLM crossover"}


class LaSR:
    name = "lasr"
    label = "LaSR"
    description = ("Symbolic regression by regularised evolution (PySR's algorithm) in which, with a small "
                   "probability, initialisation, mutation and crossover are done by an LLM guided by a library "
                   "of natural-language concepts that the LLM abstracts from good and bad expressions and "
                   "evolves every iteration (Grayeli et al. 2024).")
    kinds = ("function", "surface")

    def parameters(self) -> list[Param]:
        return [
            *llm_parameters(1000),
            Param("iterations", "Iterations", "int", 25,
                  "Outer iterations; the concept library is updated after each (LaSR: 25)", minimum=1,
                  maximum=100_000),
            Param("cycles", "Cycles per iteration", "int", 50,
                  "Evolution cycles per population per iteration, 3 offspring each (LaSR: 550; smaller "
                  "here so that a default run fits in about two minutes)", minimum=1, maximum=100_000),
            Param("populations", "Populations", "int", 10, "Independent populations (LaSR: 10)",
                  minimum=1, maximum=200),
            Param("population_size", "Population size", "int", 33, "Members of each population (LaSR: 33)",
                  minimum=4, maximum=10_000),
            Param("max_size", "Maximum size", "int", 30, "Largest expression, in tree nodes (LaSR: 30)",
                  minimum=3, maximum=200),
            Param("operators", "Operators", "multichoice", list(DEFAULT_OPERATORS),
                  "Building blocks of the expressions besides variables and constants "
                  "(LaSR in LLM-SRBench: + - * / ^ exp log sqrt sin cos tan cosh)",
                  choices=BINARY + UNARY),
            Param("llm_rate", "LLM operator rate", "float", 0.005,
                  "Probability, for each offspring and each of LLM init, LLM mutation and LLM crossover, "
                  "that the LLM operator is used (LaSR paper: 0.005; its LLM-SRBench config: 0.001)",
                  minimum=0.0, maximum=0.33),
            Param("concept_every", "Concept update every (iterations)", "int", 1,
                  "Iterations between concept abstraction + evolution calls (1 = every iteration as in "
                  "LaSR; 0 = never)", minimum=0, maximum=10_000),
            Param("top_k", "Top-K concepts", "int", 20,
                  "Operator prompts sample their concepts from the newest K of the library (LaSR: 20)",
                  minimum=1, maximum=1000),
            Param("max_samples", "Fitting rows", "int", 2000,
                  "Training rows (a random subset) used for losses and constant fitting during the search "
                  "(LaSR's repository: 2000)", minimum=10, maximum=10_000_000),
            Param("fit_iterations", "Constant-fitting iterations", "int", 8,
                  "Levenberg-Marquardt iterations per constant fit (PySR: 8 BFGS iterations)", minimum=1,
                  maximum=1000),
            Param("optimize_probability", "Constant-fitting probability", "float", 0.14,
                  "Chance that a member's constants are fitted after each iteration (PySR: 0.14)",
                  minimum=0.0, maximum=1.0),
            Param("parsimony", "Parsimony", "float", 0.0032,
                  "Added to the NMSE per node in selection (PySR: 0.0032)", minimum=0.0, maximum=1.0),
            Param("seconds", "Time limit (s)", "float", 120.0, "Wall-clock budget (0 = no limit)",
                  minimum=0.0, maximum=7 * 24 * 3600.0),
            Param("seed", "Random seed", "int", 0,
                  "Same seed, data and replies give the same run when it does not end by time",
                  minimum=0, maximum=2**32 - 1),
        ]

    def default_config(self) -> dict[str, Any]:
        return {**llm_defaults(1000), **{p.name: p.default for p in self.parameters()}}

    def run(self, task: Task, config: dict[str, Any], context: RunContext) -> Iterator[Event]:
        yield from _Search(task, config, context).run()


# --------------------------------------------------------------------------- the search


class _Search:
    def __init__(self, task: Task, config: dict[str, Any], context: RunContext):
        self.task = task
        self.config = config
        self.context = context
        self.names = list(task.input_names)
        self.syms = [symbols_for(self.names)[n] for n in self.names]
        self.index = {n: i for i, n in enumerate(self.names)}
        seed = int(config.get("seed") or 0)
        self.rng = random.Random(seed)
        train = task.load_data().splits["train"]
        X = np.asarray(train.X, dtype=float)
        y = np.asarray(train.y, dtype=float)
        if X.ndim == 1:
            X = X[:, None]
        if not (np.isfinite(X).all() and np.isfinite(y).all()):
            raise ValueError("the training data contain NaN or infinite values")
        self.X_full, self.y_full = X, y
        self.full_var = float(np.sum((y - y.mean()) ** 2))
        if len(y) < 2 or self.full_var <= 0:
            raise ValueError("the training target is constant (or has fewer than two rows): nothing to regress")
        m = min(len(y), max(10, int(config.get("max_samples") or 2000)))
        rows = np.sort(np.random.default_rng(seed).choice(len(y), size=m, replace=False)) if m < len(y) \
            else np.arange(len(y))
        self.cols = [np.ascontiguousarray(X[rows, i]) for i in range(X.shape[1])]
        self.y = np.ascontiguousarray(y[rows])
        self.n = len(self.y)
        self.var = float(np.sum((self.y - self.y.mean()) ** 2))
        self.big = 1e6 * (float(np.std(self.y)) + 1.0)

        ops = [str(o) for o in (config.get("operators") or DEFAULT_OPERATORS)]
        unknown = [o for o in ops if o not in BINARY + UNARY]
        if unknown:
            raise ValueError(f"unknown operators: {', '.join(unknown)} (known: {' '.join(BINARY + UNARY)})")
        self.binary = [o for o in BINARY if o in ops]
        self.unary = [o for o in UNARY if o in ops]
        if not self.binary:
            raise ValueError("LaSR needs at least one binary operator")
        self.allowed = set(self.binary) | set(self.unary)

        self.iterations = int(config.get("iterations") or 25)
        self.cycles = int(config.get("cycles") or 50)
        self.n_pops = int(config.get("populations") or 10)
        self.pop_size = int(config.get("population_size") or 33)
        self.max_size = int(config.get("max_size") or 30)
        self.llm_rate = float(config.get("llm_rate") or 0.0)
        self.concept_every = int(config.get("concept_every") or 0)
        self.top_k = int(config.get("top_k") or 20)
        self.fit_iterations = int(config.get("fit_iterations") or 8)
        self.optimize_probability = float(config.get("optimize_probability") or 0.0)
        self.parsimony = float(config.get("parsimony") or 0.0)
        self.seconds = float(config.get("seconds") or 0) or None
        self.n_evol = max(1, math.ceil(self.pop_size / TOURNAMENT_N))
        self.use_llm = self.llm_rate > 0 or self.concept_every > 0

        self.birth = 0
        self.evaluations = 0
        self.pops: list[list[Member]] = []
        self.hof: dict[int, Member] = {}
        self.frequencies = np.ones(self.max_size + 2)
        self.library: list[str] = []  # newest first
        self.worst: list[Member] = []
        self.hypotheses = 0
        self.proposals_ok = 0
        self.rendered: dict[tuple, Rendered | None] = {}
        self.compiled: dict[str, float] = {}  # text -> full training NMSE
        self.last_front: tuple = ()
        self.front: list[Candidate] = []
        self.session: LLMSession | None = None
        self.concurrency = 1
        self.pending: list[_Request] = []  # planned LLM operator requests not sent yet
        self.started = time.monotonic()
        self.iteration = 0

    # ------------------------------------------------------------------ numbers

    def _nmse(self, pred: np.ndarray, y: np.ndarray, var: float) -> float:
        with np.errstate(all="ignore"):
            r = pred - y
            s = float(np.dot(r, r))
        if not math.isfinite(s):
            return math.inf
        if var <= 0:
            return 0.0 if s == 0 else math.inf
        return s / var

    def loss(self, tree) -> float:
        self.evaluations += 1
        return self._nmse(evaluate_tree(tree, self.cols, self.n), self.y, self.var)

    def member(self, tree, loss: float | None = None) -> Member:
        loss = self.loss(tree) if loss is None else loss
        size = tree_size(tree)
        self.birth += 1
        m = Member(tree, size, loss, loss + self.parsimony * size, self.birth)
        self._hall_of_fame(m)
        return m

    def copy(self, m: Member) -> Member:
        self.birth += 1
        return Member(m.tree, m.size, m.loss, m.score, self.birth)

    def fit(self, tree, iterations: int) -> tuple[tuple, float]:
        """Least-squares fit of the tree's constants on the subsample; never worse than before."""
        from scipy.optimize import least_squares

        before = self.loss(tree)
        x0 = np.asarray(constants_of(tree), dtype=float)
        if x0.size == 0:
            return tree, before
        y, cols, n, big = self.y, self.cols, self.n, self.big

        def residuals(theta):
            r = evaluate_tree(with_constants(tree, theta), cols, n) - y
            bad = ~np.isfinite(r)
            return np.where(bad, big, r) if bad.any() else r

        method = "lm" if n >= x0.size else "trf"
        budget = iterations * (x0.size + 1) + 1
        try:
            with np.errstate(all="ignore"):
                result = least_squares(residuals, x0, method=method, max_nfev=budget)
        except (ValueError, FloatingPointError, np.linalg.LinAlgError, OverflowError):
            return tree, before
        self.evaluations += int(getattr(result, "nfev", 0) or 0)
        if not np.all(np.isfinite(result.x)):
            return tree, before
        fitted = with_constants(tree, result.x)
        after = self.loss(fitted)
        return (fitted, after) if after < before or not math.isfinite(before) else (tree, before)

    # ------------------------------------------------------------------ hall of fame / front

    def _hall_of_fame(self, m: Member) -> None:
        if not math.isfinite(m.loss):
            return
        best = self.hof.get(m.size)
        if best is None or m.loss < best.loss:
            self.hof[m.size] = m

    def hof_front(self) -> list[Member]:
        out, best = [], math.inf
        for size in sorted(self.hof):
            m = self.hof[size]
            if m.loss < best:
                out.append(m)
                best = m.loss
        return out

    def render(self, tree) -> Rendered | None:
        """Re-parsable text of a tree, its SymPy complexity and full-training NMSE (cached)."""
        if tree in self.rendered:
            return self.rendered[tree]
        out = None
        try:
            folded = simplify_tree(tree)
            exact = self._full_loss(folded)
            # Fitted constants that are integers to round-off (exponents, offsets) are shown as such.
            values = constants_of(folded)
            snapped = [float(round(v)) if abs(v - round(v)) <= 1e-7 * max(1.0, abs(v)) and abs(round(v)) <= 10
                       else v for v in values]
            if snapped != values:
                candidate = simplify_tree(with_constants(folded, snapped))
                loss = self._full_loss(candidate)
                if loss <= max(exact, LOSS_FLOOR) * 1.001:
                    folded, exact = candidate, loss
            expr = to_sympy(folded, self.syms)
            for digits in (6, 9, 12, None):
                text = to_text(expr, digits)
                loss = self._text_loss(text)
                if loss is None:
                    break
                ok = digits is None or loss <= max(exact, LOSS_FLOOR) * 1.001 or not math.isfinite(exact)
                if ok:
                    if math.isfinite(loss):
                        out = Rendered(text, expr_complexity(parse(text, self.names)), loss)
                    break
        except Exception:  # noqa: BLE001 -- a tree SymPy cannot print is simply not reported
            out = None
        self.rendered[tree] = out
        return out

    def _full_loss(self, tree) -> float:
        cols = [self.X_full[:, i] for i in range(len(self.names))]
        return self._nmse(evaluate_tree(tree, cols, len(self.y_full)), self.y_full, self.full_var)

    def _text_loss(self, text: str) -> float | None:
        if text in self.compiled:
            return self.compiled[text]
        try:
            f = compile_numpy(parse(text, self.names), self.names)
            loss = self._nmse(f(self.X_full), self.y_full, self.full_var)
        except Exception:  # noqa: BLE001 -- text that cannot be compiled is not a candidate
            loss = None
        self.compiled[text] = loss
        return loss

    def update_front(self) -> bool:
        """Recompute the reported front from the hall of fame; True when it changed."""
        from ..pareto import front_indices

        cands = []
        hurry = self.context.cancelled and bool(self.front)  # after Stop: only what is printed already
        for size in sorted(self.hof):
            tree = self.hof[size].tree
            if hurry and tree not in self.rendered:
                continue
            r = self.render(tree)
            if r is not None:
                cands.append(Candidate(r.text, r.complexity, r.loss))
        front = [cands[i] for i in front_indices(cands)]
        key = tuple((c.expression, c.complexity, c.loss) for c in front)
        if key == self.last_front:
            return False
        self.last_front = key
        self.front = front
        return True

    def best_loss(self) -> float:
        return min((c.loss for c in self.front), default=math.inf)

    # ------------------------------------------------------------------ random trees and mutations

    def random_leaf(self):
        if self.rng.random() < 0.5:
            return (0, self.rng.gauss(0.0, 1.0))
        return (1, self.rng.randrange(len(self.names)))

    def _random_op_node(self, child=None):
        """A new operator node; ``child`` (or a random leaf) is its (left or only) argument."""
        nb, nu = len(self.binary), len(self.unary)
        if self.rng.random() < nb / (nb + nu):
            op = self.rng.choice(self.binary)
            a = child if child is not None else self.random_leaf()
            b = self.random_leaf()
            if child is not None and self.rng.random() < 0.5:
                a, b = b, a
            return (3, op, a, b)
        return (2, self.rng.choice(self.unary), child if child is not None else self.random_leaf())

    def append_random_op(self, tree):
        leaves = [(p, n) for p, n in _paths(tree) if n[0] < 2]
        path, _ = self.rng.choice(leaves)
        return _replace(tree, path, self._random_op_node())

    def random_tree(self, size: int):
        tree = self.random_leaf()
        while tree_size(tree) < size:
            if tree_size(tree) == size - 1 and not self.unary:
                break
            if tree_size(tree) == size - 1:
                leaves = [(p, n) for p, n in _paths(tree) if n[0] < 2]
                path, leaf = self.rng.choice(leaves)
                tree = _replace(tree, path, (2, self.rng.choice(self.unary), leaf))
            else:
                tree = self.append_random_op(tree)
        return tree

    def initial_tree(self):
        tree = self.random_leaf()
        for _ in range(3):  # SymbolicRegression.jl: nlength = 3 appended operators
            tree = self.append_random_op(tree)
        return tree

    def _weights(self, m: Member) -> dict[str, float]:
        w = dict(MUTATION_WEIGHTS)
        tree = m.tree
        if tree[0] < 2:
            w["mutate_operator"] = w["swap_operands"] = w["delete_node"] = w["simplify"] = 0.0
            if tree[0] == 1:
                w["mutate_constant"] = 0.0
            return w
        paths = _paths(tree)
        if not any(n[0] == 3 for _, n in paths):
            w["swap_operands"] = 0.0
        w["mutate_constant"] *= min(8, sum(1 for _, n in paths if n[0] == 0)) / 8.0
        if m.size >= self.max_size:
            w["add_node"] = w["insert_node"] = 0.0
        return w

    def _mutated(self, tree, choice: str):
        rng = self.rng
        paths = _paths(tree)
        if choice == "mutate_constant":
            consts = [(p, n) for p, n in paths if n[0] == 0]
            if not consts:
                return tree
            path, node = rng.choice(consts)
            factor = (PERTURBATION_FACTOR + 1 + 1e-12) ** rng.random()
            value = node[1] * factor if rng.random() > 0.5 else node[1] / factor
            if rng.random() < PROBABILITY_NEGATE_CONSTANT:
                value = -value
            return _replace(tree, path, (0, value))
        if choice == "mutate_operator":
            ops = [(p, n) for p, n in paths if n[0] >= 2]
            if not ops:
                return tree
            path, node = rng.choice(ops)
            if node[0] == 2:
                return _replace(tree, path, (2, rng.choice(self.unary), node[2])) if self.unary else tree
            return _replace(tree, path, (3, rng.choice(self.binary), node[2], node[3]))
        if choice == "swap_operands":
            ops = [(p, n) for p, n in paths if n[0] == 3]
            if not ops:
                return tree
            path, node = rng.choice(ops)
            return _replace(tree, path, (3, node[1], node[3], node[2]))
        if choice == "add_node":
            if rng.random() < 0.5:
                return self.append_random_op(tree)
            return self._random_op_node(child=tree)
        if choice == "insert_node":
            path, node = rng.choice(paths)
            return _replace(tree, path, self._random_op_node(child=node))
        if choice == "delete_node":
            path, node = rng.choice(paths)
            if node[0] < 2:
                return _replace(tree, path, self.random_leaf())
            if node[0] == 2:
                return _replace(tree, path, node[2])
            return _replace(tree, path, node[2] if rng.random() < 0.5 else node[3])
        if choice == "simplify":
            return simplify_tree(tree)
        if choice == "randomize":
            return self.random_tree(rng.randint(1, self.max_size))
        return tree

    def _sample_mutation(self, weights: dict[str, float]) -> str:
        total = sum(weights.values())
        r = self.rng.random() * total
        for name, w in weights.items():
            r -= w
            if r < 0:
                return name
        return "do_nothing"

    def _frequency(self, size: int) -> float:
        if 0 < size <= self.max_size:
            return float(self.frequencies[size] / self.frequencies.sum())
        return 1e-6

    def tournament(self, pop: list[Member]) -> Member:
        k = min(TOURNAMENT_N, len(pop))
        contenders = self.rng.sample(pop, k)
        total = self.frequencies.sum()

        def adjusted(m: Member) -> float:
            freq = self.frequencies[m.size] / total if 0 < m.size <= self.max_size else 0.0
            return m.score * math.exp(ADAPTIVE_PARSIMONY_SCALING * freq)

        contenders.sort(key=adjusted)
        for m in contenders[:-1]:
            if self.rng.random() < TOURNAMENT_P:
                return m
        return contenders[-1]

    def _replace_oldest(self, pop: list[Member], new: Member) -> None:
        oldest = min(range(len(pop)), key=lambda i: pop[i].birth)
        pop[oldest] = new

    def _accept(self, parent: Member, child_tree, child_loss: float) -> bool:
        if not math.isfinite(child_loss):
            return False
        old, new = self._frequency(parent.size), self._frequency(tree_size(child_tree))
        return not (old / new < self.rng.random())

    def mutate(self, pop: list[Member], parent: Member | None = None) -> None:
        parent = parent or self.tournament(pop)
        choice = self._sample_mutation(self._weights(parent))
        if choice == "do_nothing":
            self._replace_oldest(pop, self.copy(parent))
            return
        child = None
        for _ in range(MAX_ATTEMPTS):
            candidate = self._mutated(parent.tree, choice)
            if check_constraints(candidate, self.max_size):
                child = candidate
                break
        if child is None:
            self._replace_oldest(pop, self.copy(parent))
            return
        loss = self.loss(child)
        if choice == "simplify" or self._accept(parent, child, loss):
            self._replace_oldest(pop, self.member(child, loss))
        else:
            self._replace_oldest(pop, self.copy(parent))

    def crossover(self, pop: list[Member], parents: list[Member] | None = None) -> None:
        p1, p2 = parents or (self.tournament(pop), self.tournament(pop))
        children = None
        for _ in range(MAX_ATTEMPTS):
            path1, node1 = self.rng.choice(_paths(p1.tree))
            path2, node2 = self.rng.choice(_paths(p2.tree))
            c1, c2 = _replace(p1.tree, path1, node2), _replace(p2.tree, path2, node1)
            if check_constraints(c1, self.max_size) and check_constraints(c2, self.max_size):
                children = (c1, c2)
                break
        for i, parent in enumerate((p1, p2)):
            if children is None:
                self._replace_oldest(pop, self.copy(parent))
                continue
            loss = self.loss(children[i])
            self._replace_oldest(pop, self.member(children[i], loss) if math.isfinite(loss) else self.copy(parent))

    # ------------------------------------------------------------------ LLM prompts

    def _system(self, role: str) -> str:
        bins = " ".join(self.binary)
        unas = ", ".join(self.unary) if self.unary else "none"
        return (
            f"{role} The data describe {task_sentence(self.task)}.\n"
            f"Variables:\n{describe_variables(self.task)}\n\n"
            f"Expressions are plain math text in Python syntax over the input variables "
            f"({', '.join(self.names)}) and numbers, using only the binary operators {bins} (write powers as "
            f"** or ^) and the functions {unas}. Numbers are only starting values: every constant is "
            f"fitted to the data afterwards, so rough values are fine."
        )

    def _concepts(self) -> list[str]:
        top = self.library[: self.top_k]
        if len(top) <= CONCEPTS_PER_PROMPT:
            return list(top)
        return self.rng.sample(top, CONCEPTS_PER_PROMPT)

    @staticmethod
    def _ideas_block(concepts: list[str]) -> str:
        if not concepts:
            return ("No ideas about the law have been collected yet; rely on what you know about the domain "
                    "and on the variables' meaning.")
        return "Ideas about the hidden law to follow:\n" + "\n".join(f"- {c}" for c in concepts)

    @staticmethod
    def _answer_format(what: str) -> str:
        return (f"Comment on each choice in a sentence, then end your answer with the {what} as a JSON list "
                f"of strings, for example:\n```json\n[\"first\", \"second\"]\n```")

    def _show(self, m: Member) -> str:
        return show_tree(simplify_tree(m.tree), self.names)

    def operator_messages(self, kind: str, parents: list[Member]) -> list[dict]:
        ideas = self._ideas_block(self._concepts())
        if kind == "init":
            system = self._system("You propose candidate formulas for a symbolic-regression search.")
            ask = (f"Propose {N_PROPOSALS} different expressions for {self.task.target.name} that agree with "
                   f"these ideas.")
        elif kind == "mutation":
            system = self._system("You modify candidate formulas for a symbolic-regression search.")
            ask = (f"Expression to modify: {self._show(parents[0])}\n\nPropose {N_PROPOSALS} variations of "
                   f"this expression that the ideas suggest could describe the data better.")
        else:
            system = self._system("You recombine candidate formulas for a symbolic-regression search.")
            ask = (f"Expression A: {self._show(parents[0])}\nExpression B: {self._show(parents[1])}\n\n"
                   f"Propose {N_PROPOSALS} expressions that join parts of A and B in ways the ideas support.")
        user = f"{ideas}\n\n{ask} {self._answer_format('expressions')}"
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]

    def abstraction_messages(self, good: list[Member], bad: list[Member]) -> list[dict]:
        system = self._system("You study candidate formulas found by a symbolic-regression search and state "
                              "what they reveal about the unknown law.")
        lines = ["Expressions that fit the data well (NMSE is the normalised squared error; 0 is perfect):"]
        lines += [f"{i}. {self._show(m)}   (NMSE {m.loss:.3g})" for i, m in enumerate(good, 1)]
        lines += ["", "Expressions that fit the data poorly:"]
        lines += [f"{i}. {self._show(m)}   (NMSE {m.loss:.3g})" for i, m in enumerate(bad, 1)] or ["(none yet)"]
        lines += ["", f"State {N_PROPOSALS} hypotheses about the hidden law that explain why the good expressions "
                      "succeed and the poor ones fail: their mathematical structure, how each variable enters, "
                      "symmetries, limiting behaviour and the science behind them. Leave simplicity and length "
                      "aside, and keep each hypothesis to one or two sentences. "
                      + self._answer_format("hypotheses")]
        return [{"role": "system", "content": system}, {"role": "user", "content": "\n".join(lines)}]

    def evolution_messages(self, ideas: list[str]) -> list[dict]:
        system = self._system("You reason carefully about ideas on an unknown scientific law and draw new, "
                              "specific conclusions from them.")
        lines = ["Ideas gathered so far about the hidden law:"]
        lines += [f"{i}. {c}" for i, c in enumerate(ideas, 1)]
        lines += ["", f"Derive {N_PROPOSALS} new conclusions that follow from combining these ideas, as specific and "
                      "non-obvious as you can justify. Leave simplicity and length aside. "
                      + self._answer_format("conclusions")]
        return [{"role": "system", "content": system}, {"role": "user", "content": "\n".join(lines)}]

    # ------------------------------------------------------------------ asking

    def ask_all(self, requests: list[tuple[list[dict], str]]) -> list[tuple[str, int] | None]:
        """One completion for each (messages, purpose), sent together up to the client's
        concurrency; results in request order (None for a request that got no reply)."""
        assert self.session is not None
        return self.session.ask_many([(messages, purpose, {}) for messages, purpose in requests])

    # ------------------------------------------------------------------ LLM operators

    def plan_llm(self, p: int, kind: str) -> _Request:
        pop = self.pops[p]
        parents = [] if kind == "init" else [self.tournament(pop)] if kind == "mutation" \
            else [self.tournament(pop), self.tournament(pop)]
        return _Request(p, kind, self.operator_messages(kind, parents), parents)

    def serve(self, requests: list[_Request]) -> Iterator[Event]:
        replies = self.ask_all([(r.messages, ORIGIN[r.kind]) for r in requests])
        yield from self.session.drain()
        for request, reply in zip(requests, replies):
            pop = self.pops[request.population]
            chosen: list[Member] = []
            if reply is not None:
                text, seq = reply
                valid: list[Member] = []
                yield from self.proposals(text, seq, ORIGIN[request.kind], valid)
                if valid:
                    take = 2 if request.kind == "crossover" else 1
                    chosen = self.rng.sample(valid, min(take, len(valid)))
            if request.kind == "init":
                if chosen:
                    self._replace_oldest(pop, chosen[0])
                else:
                    self._replace_oldest(pop, self.member(self.random_tree(self.rng.randint(1, self.max_size))))
            elif request.kind == "mutation":
                parent = request.parents[0]
                if chosen and self._accept(parent, chosen[0].tree, chosen[0].loss):
                    self._replace_oldest(pop, chosen[0])
                elif chosen:
                    self._replace_oldest(pop, self.copy(parent))
                else:
                    self.mutate(pop, parent)
            else:
                if not chosen:
                    self.crossover(pop, request.parents)
                else:
                    for child in chosen:
                        self._replace_oldest(pop, child)
                    if len(chosen) == 1:
                        self._replace_oldest(pop, self.copy(request.parents[1]))

    def proposals(self, text: str, seq: int, origin: str, valid: list[Member]) -> Iterator[Event]:
        """Hypothesis events for the expressions of one reply; valid members are appended."""
        items = reply_items(text)
        if not items:
            self.hypotheses += 1
            yield Hypothesis(self.hypotheses, "", False, error="the reply contains no JSON list of expressions",
                             call_seq=seq, origin=origin)
            return
        for item in items:
            started = time.monotonic()
            self.hypotheses += 1
            hypothesis, member = self.proposal(item, seq, origin)
            hypothesis.seconds = time.monotonic() - started
            if member is not None:
                self.proposals_ok += 1
                if check_constraints(member.tree, self.max_size):
                    valid.append(member)
                else:
                    hypothesis.error = (f"kept in the hall of fame but not added to a population: larger than "
                                        f"{self.max_size} nodes or against LaSR's nesting constraints")
            yield hypothesis

    def proposal(self, item: str, seq: int, origin: str) -> tuple[Hypothesis, Member | None]:
        index = self.hypotheses
        text = _expression_text(item)[:2000]

        def failed(reason: str) -> tuple[Hypothesis, None]:
            return Hypothesis(index, text, False, error=reason, call_seq=seq, origin=origin), None

        try:
            expr = parse(text, self.names, constants={"C": 1.0})
        except ExpressionError as exc:
            return failed(f"not a valid expression: {exc}")
        try:
            tree = from_sympy(expr, self.index, self.allowed)
        except Unsupported as exc:
            return failed(f"not usable: {exc}")
        except RecursionError:
            return failed("not usable: the expression is nested too deeply")
        if not has_variable(tree):
            return failed("the expression is a constant")
        if tree_size(tree) > MAX_PROPOSAL_SIZE:
            return failed(f"the expression is too large ({tree_size(tree)} nodes; limit {MAX_PROPOSAL_SIZE})")
        tree = simplify_tree(tree)
        tree, loss = self.fit(tree, 4 * self.fit_iterations)
        if not math.isfinite(loss):
            return failed("the expression is undefined (NaN or infinite) on the training data")
        member = self.member(tree, loss)
        rendered = self.render(tree)
        if rendered is None:
            return failed("the fitted expression could not be printed as a real formula")
        params = constants_of(tree)
        return Hypothesis(index, text, True, loss=rendered.loss, expression=rendered.text,
                          complexity=rendered.complexity, params=params, call_seq=seq, origin=origin), member

    # ------------------------------------------------------------------ concept library

    def concept_step(self) -> Iterator[Event]:
        front = self.hof_front()
        good = self.rng.sample(front, min(CONTEXT_EXPRESSIONS, len(front)))
        good.sort(key=lambda m: m.loss)
        worst = [m for m in self.worst if math.isfinite(m.loss)]
        bad = self.rng.sample(worst, min(CONTEXT_EXPRESSIONS, len(worst)))
        if self.stop_reason():
            return
        reply = self.ask_all([(self.abstraction_messages(good, bad), "concept abstraction")])[0]
        yield from self.session.drain()
        if reply is not None:
            items = [c[:MAX_CONCEPT_CHARS] for c in reply_items(reply[0])]
            if items:
                added = self.rng.sample(items, min(ABSTRACTED_KEPT, len(items)))
                for concept in added:
                    self._add_concept(concept)
                yield self._library_log("concept abstraction", added)
            else:
                yield Log("Concept abstraction: the reply had no JSON list of hypotheses; the library is unchanged",
                          "warning")
        for _ in range(EVOLUTION_CALLS):
            if self.stop_reason() or len(self.library) < 2:
                return
            older = self.library[self.top_k:]
            source = older if older else self.library
            ideas = [self.rng.choice(source) for _ in range(CONTEXT_EXPRESSIONS)]
            reply = self.ask_all([(self.evolution_messages(ideas), "concept evolution")])[0]
            yield from self.session.drain()
            if reply is None:
                continue
            items = [c[:MAX_CONCEPT_CHARS] for c in reply_items(reply[0])]
            if not items:
                yield Log("Concept evolution: the reply had no JSON list of conclusions; the library is unchanged",
                          "warning")
                continue
            concept = self.rng.choice(items)
            self._add_concept(concept)
            yield self._library_log("concept evolution", [concept])

    def _add_concept(self, concept: str) -> None:
        """New concepts go first; a concept already in the library moves to the front."""
        if concept in self.library:
            self.library.remove(concept)
        self.library.insert(0, concept)

    def _library_log(self, source: str, added: list[str]) -> Log:
        lines = [f"Concept library ({source}, iteration {self.iteration}): {len(self.library)} concepts."]
        lines += ["Added:"] + [f"+ {c}" for c in added]
        lines += [f"Newest {min(self.top_k, len(self.library))} (sampled by the LLM operators):"]
        lines += [f"{i}. {c}" for i, c in enumerate(self.library[: self.top_k], 1)]
        return Log("\n".join(lines))

    # ------------------------------------------------------------------ iterations

    def stop_reason(self) -> str | None:
        if self.context.cancelled:
            return "cancelled"
        if (self.seconds and time.monotonic() - self.started >= self.seconds) or self.context.out_of_time():
            return "time"
        if self.use_llm and self.session is not None:
            if self.session.stop_reason:
                return "budget" if self.session.stop_reason == "budget" else self.session.stop_reason
            if self.session.exhausted():
                return "budget"
        if self.context.max_evaluations is not None and self.evaluations >= self.context.max_evaluations:
            return "budget"
        return None

    def _llm_kind(self) -> str | None:
        if self.llm_rate <= 0:
            return None
        r = self.rng.random()
        if r >= 3 * self.llm_rate:
            return None
        return ("init", "mutation", "crossover")[min(2, int(r / self.llm_rate))]

    def initialise(self) -> Iterator[Event]:
        # The linear least-squares model: a fallback that is always in the hall of fame.
        A = np.column_stack([*self.cols, np.ones(self.n)])
        coef = np.linalg.lstsq(A, self.y, rcond=None)[0]
        tree = (0, float(coef[-1]))
        for i, c in enumerate(coef[:-1]):
            tree = (3, "+", tree, (3, "*", (0, float(c)), (1, i)))
        self.member(tree)
        requests = []
        for p in range(self.n_pops):
            pop = [self.member(self.initial_tree()) for _ in range(self.pop_size)]
            self.pops.append(pop)
            for _ in range(self.pop_size):
                if self.llm_rate > 0 and self.rng.random() < self.llm_rate:
                    requests.append(_Request(p, "init", self.operator_messages("init", [])))
        if requests:
            yield from self.serve(requests)

    def cycle(self) -> Iterator[Event]:
        for p, pop in enumerate(self.pops):
            for _ in range(self.n_evol):
                kind = self._llm_kind()
                if kind is not None:
                    self.pending.append(self.plan_llm(p, kind))
                elif self.rng.random() < CROSSOVER_PROBABILITY:
                    self.crossover(pop)
                else:
                    self.mutate(pop)
        if len(self.pending) >= self.concurrency:
            yield from self.flush()

    def flush(self) -> Iterator[Event]:
        """Send the planned LLM operator requests together and apply their results in order."""
        requests, self.pending = self.pending, []
        if requests:
            yield from self.serve(requests)

    def end_iteration(self) -> None:
        front_best = min((m.loss for m in self.hof.values()), default=math.inf)
        self.worst = []
        for pop in self.pops:
            for i, m in enumerate(pop):
                tree = simplify_tree(m.tree)
                loss = m.loss if tree == m.tree else None
                if self.optimize_probability and self.rng.random() < self.optimize_probability:
                    tree, loss = self.fit(tree, self.fit_iterations)
                if loss is None:
                    loss = self.loss(tree)
                if tree != m.tree or loss != m.loss:
                    pop[i] = Member(tree, tree_size(tree), loss, loss + self.parsimony * tree_size(tree), m.birth)
                    self._hall_of_fame(pop[i])
            worst = max(pop, key=lambda m: m.loss)
            if worst.loss > front_best:
                self.worst.append(worst)
            for m in pop:
                if 0 < m.size <= self.max_size:
                    self.frequencies[m.size] += 1
        total = self.frequencies.sum()
        if total > FREQUENCY_WINDOW:
            self.frequencies *= FREQUENCY_WINDOW / total
        # Migration (PySR): from the best of every population, then from the hall-of-fame front.
        best_of_each = [m for pop in self.pops for m in sorted(pop, key=lambda m: m.score)[:TOPN]]
        front = self.hof_front()
        for pop in self.pops:
            for i in range(len(pop)):
                if best_of_each and self.rng.random() < FRACTION_REPLACED:
                    pop[i] = self.copy(self.rng.choice(best_of_each))
                if front and self.rng.random() < FRACTION_REPLACED_HOF:
                    pop[i] = self.copy(self.rng.choice(front))

    def run(self) -> Iterator[Event]:
        config, context = self.config, self.context
        stop = None
        reported = -1
        session = LLMSession(config, context, sandbox=False)
        self.session = session
        self.concurrency = max(1, int(session.settings.concurrency))
        try:
            if self.use_llm:
                yield Log(session.describe())
            else:
                yield Log("LLM operators and concept updates are off: plain regularised evolution")
            yield Log(f"LaSR: {self.n_pops} populations x {self.pop_size}, {self.iterations} iterations x "
                      f"{self.cycles} cycles ({self.n_evol} offspring per population per cycle), maximum size "
                      f"{self.max_size}, operators {' '.join(self.binary + self.unary)}, LLM rate {self.llm_rate:g} "
                      f"per operator, fitting on {self.n} of {len(self.y_full)} training rows")
            try:
                yield from self.initialise()
                stop = self.stop_reason()
                while stop is None and self.iteration < self.iterations:
                    self.iteration += 1
                    for _ in range(self.cycles):
                        stop = self.stop_reason()
                        if stop:
                            break
                        yield from self.cycle()
                    if stop is None:
                        yield from self.flush()
                        stop = self.stop_reason()
                    if stop:
                        break
                    self.end_iteration()
                    if self.concept_every and self.iteration % self.concept_every == 0:
                        yield from self.concept_step()
                    if self.update_front():
                        yield ParetoFront(self.iteration, list(self.front))
                    yield Progress(self.iteration, self.best_loss(), self.evaluations,
                                   time.monotonic() - self.started, self.iterations)
                    reported = self.iteration
                    stop = self.stop_reason()
                    if stop is None and self.iteration >= self.iterations:
                        stop = "completed"
            except RunCancelled as exc:
                stop = exc.reason
            stop = stop or "completed"
            yield from session.drain()
            yield from session.stop_notes()  # why the LLM stopped the run, when it did
            if session.failed_requests and session.stop_reason != "llm-failures":
                yield Log(f"{session.failed_requests} LLM requests failed after retries; their operators fell "
                          "back to the symbolic ones", "warning")
            if self.update_front():
                yield ParetoFront(self.iteration, list(self.front))
            if reported != self.iteration:  # stopped inside an iteration
                yield Progress(self.iteration, self.best_loss(), self.evaluations,
                               time.monotonic() - self.started, self.iterations)
            yield from self.final(stop)
        finally:
            session.close()

    def final(self, stop: str) -> Iterator[Event]:
        from ..pareto import recommended

        chosen = recommended(self.front)
        if chosen is None:
            raise RuntimeError("no expression could be evaluated on the training data")
        if self.library:
            yield Log("Final concept library (newest first):\n"
                      + "\n".join(f"{i}. {c}" for i, c in enumerate(self.library[: self.top_k], 1)))
        yield Log(f"Finished ({stop}) after {self.iteration} iterations, {self.evaluations:,} evaluations, "
                  f"{self.hypotheses} LLM proposals ({self.proposals_ok} usable)")
        yield Final(chosen.expression, int(chosen.complexity), float(chosen.loss), raw_expression=chosen.expression,
                    stop_reason=stop,
                    details={"iterations": self.iteration, "evaluations": self.evaluations,
                             "llm_proposals": self.hypotheses, "concepts": self.library[: self.top_k]})
