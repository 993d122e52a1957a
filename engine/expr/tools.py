"""Evaluation, complexity and rendering of parsed expressions."""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
import sympy as sp

from .parse import symbols_for


def compile_numpy(expr: sp.Expr, variables: Sequence[str]) -> Callable[[np.ndarray], np.ndarray]:
    """A vectorised function ``f(X) -> y`` for an (n, len(variables)) array.

    SymPy's ``lambdify`` prints the already-whitelisted tree as NumPy code; invalid points
    (log of a negative number, division by zero) give NaN or inf rather than warnings.
    """
    syms = symbols_for(variables)
    ordered = [syms[name] for name in variables]
    # Rebind the expression's symbols to ours by name (assumptions may differ).
    mapping = {s: syms[s.name] for s in expr.free_symbols if s.name in syms}
    expr = expr.xreplace(mapping)
    # Complex infinity (from x/0) has no NumPy spelling; lambdify would raise KeyError.
    expr = expr.xreplace({sp.zoo: sp.nan})
    unknown = sorted(s.name for s in expr.free_symbols if s.name not in syms)
    if unknown:
        raise ValueError(f"expression uses unknown variables: {', '.join(unknown)}")
    func = sp.lambdify(ordered, expr, modules="numpy")

    def evaluate(X: np.ndarray) -> np.ndarray:
        X = np.asarray(X, dtype=float)
        if X.ndim == 1:
            X = X[:, None]
        try:
            with np.errstate(all="ignore"):
                out = func(*[X[:, i] for i in range(X.shape[1])])
            out = np.asarray(out, dtype=complex if np.iscomplexobj(out) else float)
        except (ArithmeticError, TypeError, ValueError):
            # A constant part computed in Python numbers (pi**1000, a 400-digit integer)
            # overflows instead of giving inf: the model is undefined everywhere.
            return np.full(X.shape[0], np.nan)
        if np.iscomplexobj(out):
            real = np.where(np.abs(out.imag) > 1e-12 * (1 + np.abs(out.real)), np.nan, out.real)
            out = real.astype(float)
        return np.broadcast_to(out, (X.shape[0],)).astype(float, copy=True)

    return evaluate


def complexity(expr: sp.Expr) -> int:
    """Number of nodes of the SymPy expression tree (the SRBench convention that LLM-SRBench
    uses, §2.4 of our notes): operators, functions, variables and constants each count one."""
    return sum(1 for _ in sp.preorder_traversal(expr))


def round_floats(expr: sp.Expr, digits: int = 4) -> sp.Expr:
    """The expression with every float shown to ``digits`` significant digits (display only)."""
    replacements = {}
    for atom in expr.atoms(sp.Float):
        value = float(atom)
        replacements[atom] = sp.Float(float(f"{value:.{digits}g}"), digits)
    return expr.xreplace(replacements)


def to_text(expr: sp.Expr, digits: int | None = 6) -> str:
    """Readable, re-parsable text (Python syntax with ``**``)."""
    shown = round_floats(expr, digits) if digits else expr
    return sp.sstr(shown)


def to_latex(expr: sp.Expr, digits: int | None = 4) -> str:
    shown = round_floats(expr, digits) if digits else expr
    return sp.latex(shown)


def to_python(expr: sp.Expr, variables: Sequence[str], name: str = "model") -> str:
    """Source of a NumPy function ``model(X)`` computing the expression (for export)."""
    printer = sp.printing.numpy.NumPyPrinter({"fully_qualified_modules": True})
    lines = [
        "import numpy",
        "",
        "",
        f"def {name}(X):",
        f'    """Columns of X: {", ".join(variables)}."""',
    ]
    for i, var in enumerate(variables):
        lines.append(f"    {var} = X[:, {i}]")
    lines.append(f"    return {printer.doprint(expr)}")
    return "\n".join(lines) + "\n"
