"""Expressions: whitelist parsing, NumPy evaluation, complexity and rendering."""

from .equiv import Equivalence, check_equivalence
from .parse import CONSTANTS, FUNCTIONS, ExpressionError, parse, symbols_for
from .tools import compile_numpy, complexity, round_floats, to_latex, to_python, to_text

__all__ = [
    "CONSTANTS",
    "Equivalence",
    "FUNCTIONS",
    "ExpressionError",
    "check_equivalence",
    "compile_numpy",
    "complexity",
    "parse",
    "round_floats",
    "symbols_for",
    "to_latex",
    "to_python",
    "to_text",
]
