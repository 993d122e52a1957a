"""The lab panel (issue 5): NewtonBench's model systems as a PhET-style virtual lab.

A control panel (task picker, one row per apparatus input with a spin box and a slider, noise,
Run / Add to batch / Undo / Reset, the experiment and round counters) sits beside a play area
(the experiment table, a scan plot of any input against any scalar output, the recorded series
of the selected experiment, and the hypothesis editor with Fit and Submit).

Rules kept: experiments, fits and scoring run off the GUI thread (``app.worker``); a hypothesis
is read by the whitelist parser and only its parsed tree is compiled (never ``eval``); the
ground truth is never shown, only the score of a submitted law. Every control has a stable
object name, and the same public API serves tests, agents and the study mode:
``set_task``, ``set_input``, ``run_experiment``, ``experiments``, ``set_hypothesis``,
``fit_hypothesis``, ``submit``; signals ``experiment_done``, ``fitted``, ``scored`` and
``event`` (one dict per user action, with a timestamp).

"Let an agent try" (``widgets/lab_agent.py``): ``start_agent``, ``stop_agent``, ``agent_running``,
``transcript_text`` and the signal ``agent_finished``; an agent's experiments join the same table
(column "by", tinted rows), its transcript sits beside the plots, its score below the person's.
"""

from __future__ import annotations

import ast
import math
import re
import secrets
import time
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np
from PySide6.QtCore import QCoreApplication, QEventLoop, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QFontDatabase, QKeySequence, QShortcut, QValidator
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFrame,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSlider,
    QSpinBox,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.worker import call_in_thread
from engine import lab
from engine.lab import DIFFICULTIES, MODULE_NAMES, NOISE_LEVELS, SYSTEMS, VERSIONS, ExperimentError, Noise
from engine.metrics.glossary import explain
from viewers.lab_plot import LabScanPlot, LabSeriesPlot
from widgets.lab_agent import AGENT_ROW_TINT, AgentRunner, AgentSection, TranscriptView, transcript_box

DEFAULT_TASK = "newtonbench/m0_gravity/v0/easy/vanilla"
#: NewtonBench's cap on parameter sets per round (the reference never enforces it).
MAX_BATCH = 20
SLIDER_STEPS = 1000
#: Points of a model curve drawn over the scan plot's x range.
CURVE_POINTS = 200
#: Longest hypothesis the box checks: it is parsed as the person types, on the GUI thread, and
#: SymPy needs seconds for some expressions of 10,000 characters (the parser's own limit).
#: NewtonBench's laws are under 200 characters.
MAX_HYPOTHESIS_CHARS = 2000

SYSTEM_LABELS = {"vanilla": "Vanilla: the law itself", "simple": "Simple system", "complex": "Complex system"}

#: A hypothesis written as a Python function (``def discovered_law(...)``), not an expression.
_FUNCTION_RE = re.compile(r"^\s*def\s+\w+\s*\(", re.M)
FUNCTION_NAME = "discovered_law"


def is_function(text: str) -> bool:
    """Whether a hypothesis is a Python function rather than an expression."""
    return bool(text) and _FUNCTION_RE.search(text) is not None


def function_summary(source: str) -> str:
    """The one line shown in the hypothesis box for a function (the full source is kept)."""
    n = len([line for line in source.strip("\n").splitlines()])
    return f"Python function ({n} line{'s' if n != 1 else ''})"


def check_function(source: str, variables: Sequence[str], X: np.ndarray, y: np.ndarray) -> FitResult:
    """Run ``discovered_law`` on every row of ``X`` in the sandbox (never in this process) and
    compare with ``y`` like a fit without constants. Raises ValueError with a reason."""
    from engine.lab.evaluate import apply_law

    variables = list(variables)
    X = np.asarray(X, dtype=float).reshape(len(y), len(variables))
    y = np.asarray(y, dtype=float)
    ok = np.isfinite(y) & np.isfinite(X).all(axis=1)
    if not ok.any():
        raise ValueError("no experiment has a finite output to check against")
    values, error = apply_law(source, X)
    if error:
        raise ValueError(error.replace("the law failed", "the function failed", 1))
    predicted = np.where(ok, np.asarray(values, dtype=float), np.nan)
    yf = y[ok]
    sigma = np.abs(yf)
    floor = np.max(sigma) * 1e-12 if np.max(sigma) > 0 else 1.0
    sigma = np.maximum(sigma, floor)
    with np.errstate(all="ignore"):
        rel = (predicted[ok] - yf) / sigma
    finite = np.isfinite(rel)
    rel_rms = float(np.sqrt(np.mean(rel[finite] ** 2))) if finite.any() else float("nan")

    def model(_X):  # no smooth curve: running the function again would need the sandbox
        raise RuntimeError("a function's curve is not drawn")

    return FitResult(source.strip(), {}, {}, source.strip(), predicted, rel_rms, int(ok.sum()), model)


class _CodeEdit(QPlainTextEdit):
    """A plain text editor for Python: Tab inserts four spaces (no tab/space mix-ups)."""

    def keyPressEvent(self, event):  # noqa: N802 -- Qt API
        if event.key() == Qt.Key.Key_Tab and not event.modifiers():
            self.insertPlainText("    ")
            return
        super().keyPressEvent(event)


_NUMBER_PREFIX = re.compile(r"^[+-]?(\d+\.?\d*|\.\d*)?([eE][+-]?\d*)?$")


def module_label(name: str) -> str:
    """``m1_coulomb_force`` → ``m1 · Coulomb force`` (without importing the module)."""
    code, _, rest = name.partition("_")
    words = rest.replace("_", " ")
    special = {"coulomb": "Coulomb", "snell": "Snell", "fourier": "Fourier", "malus": "Malus", "hooke": "Hooke",
               "be": "Bose–Einstein"}
    words = " ".join(special.get(w, w) for w in words.split())
    return f"{code} · {words[:1].upper()}{words[1:]}"


def fmt(value: Any, digits: int = 5) -> str:
    """A number as a person reads it; lists as their length."""
    if value is None:
        return "—"
    if isinstance(value, (list, tuple, np.ndarray)):
        return "(" + ", ".join(fmt(v, digits) for v in value) + ")"
    try:
        v = float(value)
    except (TypeError, ValueError):
        return str(value)
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "∞" if v > 0 else "−∞"
    return f"{v:.{digits}g}"


# ------------------------------------------------------------------------------ pure helpers (no Qt)

def slider_span(p) -> tuple[float, float, bool]:
    """(low, high, logarithmic) of a parameter's slider: its declared span, else its bounds,
    else two decades around the default. Logarithmic when the parameter says so or the span
    covers more than two decades (and is positive)."""
    if p.slider is not None:
        lo, hi = (float(v) for v in p.slider)
    elif p.minimum is not None and p.maximum is not None:
        lo, hi = float(p.minimum), float(p.maximum)
    else:
        d = float(p.default)
        if d > 0:
            lo, hi = d / 100, d * 100
        elif d < 0:
            lo, hi = d * 100, d / 100
        else:
            lo, hi = -1.0, 1.0
        if p.minimum is not None:
            lo = max(lo, float(p.minimum))
        if p.maximum is not None:
            hi = min(hi, float(p.maximum))
    if not hi > lo:
        hi = lo + 1.0
    log = lo > 0 and (p.log or hi / lo > 100)
    return lo, hi, log


def to_slider(value: float, span: tuple[float, float, bool]) -> int:
    lo, hi, log = span
    if not math.isfinite(value):
        return 0
    if log:
        if value <= 0:
            return 0
        frac = (math.log(value) - math.log(lo)) / (math.log(hi) - math.log(lo))
    else:
        frac = (value - lo) / (hi - lo)
    return int(round(min(1.0, max(0.0, frac)) * SLIDER_STEPS))


def from_slider(position: int, span: tuple[float, float, bool], integer: bool = False) -> float:
    lo, hi, log = span
    frac = position / SLIDER_STEPS
    value = math.exp(math.log(lo) + frac * (math.log(hi) - math.log(lo))) if log else lo + frac * (hi - lo)
    if integer:
        return float(round(value))
    if position in (0, SLIDER_STEPS):
        return lo if position == 0 else hi
    return float(f"{value:.3g}")  # round numbers are easier to read and to reason with


def law_columns(task) -> list[str] | None:
    """The apparatus inputs that carry the law's inputs, in the law's order: the same names, or
    (vanilla tasks, e.g. m6's ``k_constant`` for ``k``) the inputs in order; None if unknown."""
    names = [p.name for p in task.system.inputs]
    law = list(task.module.law_inputs)
    if all(n in names for n in law):
        return law
    if task.system_name == "vanilla" and len(names) == len(law):
        return names
    return None


def free_constants(text: str, variables: Sequence[str]) -> list[str]:
    """The names in ``text`` that are not variables or known constants (pi, e): the free constants.
    Raises ``ExpressionError`` for text the whitelist parser refuses."""
    from engine.expr import parse

    expr = parse(text, list(variables), allow_free_symbols=True, finite=True)
    return sorted({s.name for s in expr.free_symbols} - set(variables))


def substitute(text: str, values: dict[str, float]) -> str:
    """``text`` with each free constant replaced by its number. The text must already have
    passed the whitelist parser; it is rewritten as a syntax tree, never evaluated."""
    tree = ast.parse(text.strip().replace("^", "**"), mode="eval")

    class _Sub(ast.NodeTransformer):
        def visit_Name(self, node):  # noqa: N802 -- ast API
            if node.id in values:
                v = float(f"{values[node.id]:.8g}")
                const = ast.Constant(abs(v))
                return ast.copy_location(ast.UnaryOp(ast.USub(), const) if v < 0 else const, node)
            return node

    return ast.unparse(ast.fix_missing_locations(_Sub().visit(tree)))


@dataclass
class FitResult:
    """Constants of a hypothesis fitted to the collected data (vanilla tasks)."""

    hypothesis: str
    constants: dict[str, float]
    errors: dict[str, float]  # one standard error per constant (NaN when unknown)
    law: str  # the hypothesis with the constants written in
    predicted: np.ndarray  # the model at every experiment (NaN where the output was not finite)
    rel_rms: float  # root mean square of (y − model) / |y| over the finite points
    n: int  # points used
    model: Callable[[np.ndarray], np.ndarray] = field(repr=False)  # (n, k) law inputs -> outputs

    def to_json(self) -> dict:
        return {"hypothesis": self.hypothesis, "constants": dict(self.constants), "errors": dict(self.errors),
                "law": self.law, "rel_rms": self.rel_rms, "n": self.n}


def fit_law(text: str, variables: Sequence[str], X: np.ndarray, y: np.ndarray) -> FitResult:
    """Fit the free constants of ``text`` (an expression over ``variables``) to ``y`` by
    ``scipy.optimize.curve_fit`` on the relative error, from several starting points. The model
    is the whitelist-parsed tree given to ``sympy.lambdify``. Raises ValueError with a reason."""
    import sympy as sp
    from scipy.optimize import curve_fit

    from engine.expr import ExpressionError, compile_numpy, parse

    variables = list(variables)
    try:
        expr = parse(text, variables, allow_free_symbols=True, finite=True)
    except ExpressionError as exc:
        raise ValueError(f"the hypothesis cannot be read: {exc}") from None
    by_name = {s.name: s for s in expr.free_symbols}
    names = sorted(set(by_name) - set(variables))
    X = np.asarray(X, dtype=float).reshape(len(y), len(variables))
    y = np.asarray(y, dtype=float)
    ok = np.isfinite(y) & np.isfinite(X).all(axis=1)
    if not ok.any():
        raise ValueError("no experiment has a finite output to fit")
    Xf, yf = X[ok], y[ok]
    if len(yf) < len(names):
        raise ValueError(f"{len(names)} constant{'s' if len(names) != 1 else ''} to fit ({', '.join(names)}) "
                         f"but only {len(yf)} usable experiment{'s' if len(yf) != 1 else ''}; run more experiments")
    sigma = np.abs(yf)
    floor = np.max(sigma) * 1e-12 if np.max(sigma) > 0 else 1.0
    sigma = np.maximum(sigma, floor)
    values: dict[str, float] = {}
    errors: dict[str, float] = {}
    if names:
        args = [by_name.get(v, sp.Symbol(v, real=True)) for v in variables] + [by_name[n] for n in names]
        func = sp.lambdify(args, expr, modules="numpy")
        columns = [Xf[:, i] for i in range(Xf.shape[1])]

        def model(_x, *params):
            with np.errstate(all="ignore"):
                out = np.asarray(func(*columns, *params))
            if np.iscomplexobj(out):
                out = np.where(np.abs(out.imag) > 1e-12 * (1 + np.abs(out.real)), np.nan, out.real)
            out = np.broadcast_to(np.asarray(out, dtype=float), yf.shape)
            return np.where(np.isfinite(out), out, 1e300)

        best = None
        starts = [np.ones(len(names)), np.full(len(names), 0.5), np.full(len(names), 2.0), -np.ones(len(names)),
                  np.full(len(names), 1e-3), np.full(len(names), 1e3)]
        for p0 in starts:
            try:
                with np.errstate(all="ignore"), warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # OptimizeWarning: no covariance (reported as NaN)
                    popt, pcov = curve_fit(model, None, yf, p0=p0, sigma=sigma, maxfev=5000)
                    cost = float(np.sum(((model(None, *popt) - yf) / sigma) ** 2))
            except (RuntimeError, ValueError, OverflowError, ZeroDivisionError, FloatingPointError):
                continue
            if math.isfinite(cost) and (best is None or cost < best[0]):
                best = (cost, popt, pcov)
            if best is not None and best[0] < 1e-20 * len(yf):
                break
        if best is None:
            raise ValueError("the fit did not converge from any starting point; try other constants or more data")
        _, popt, pcov = best
        diag = np.diag(pcov) if np.ndim(pcov) == 2 else np.full(len(names), np.nan)
        for n, v, d in zip(names, popt, diag):
            values[n] = float(v)
            errors[n] = float(math.sqrt(d)) if (math.isfinite(d) and d >= 0) else float("nan")
    law = substitute(text, values) if values else text.strip()
    compiled = compile_numpy(parse(law, variables), variables)
    with np.errstate(all="ignore"):
        predicted = compiled(X)
    predicted = np.where(ok, predicted, np.nan)
    with np.errstate(all="ignore"):
        rel = (predicted[ok] - yf) / sigma
    finite = np.isfinite(rel)
    rel_rms = float(np.sqrt(np.mean(rel[finite] ** 2))) if finite.any() else float("nan")
    return FitResult(text.strip(), values, errors, law, predicted, rel_rms, int(ok.sum()), compiled)


def public_reason(reason: str) -> str:
    """The symbolic check's reason without anything that would show the ground truth's form."""
    reason = reason or ""
    if reason.startswith("same form up to constants"):
        return "same form up to constants"
    if "cannot parse the truth" in reason or "the truth is undefined" in reason:
        return "undecided"
    return reason


# ------------------------------------------------------------------------------ Qt pieces

class NumberBox(QDoubleSpinBox):
    """A spin box for any real number: shows ``%g`` text (so 6.674e-05 reads as such), accepts
    scientific notation, and steps by 10 % on a logarithmic parameter. Its range is wide on
    purpose: a value the apparatus refuses is reported when the experiment runs."""

    def __init__(self, log: bool = False, integer: bool = False, step: float = 1.0, parent=None):
        super().__init__(parent)
        self._log = log
        self._integer = integer
        self.setDecimals(300)  # no rounding of stored values (text is formatted below)
        self.setRange(-1e300, 1e300)
        self.setSingleStep(1.0 if integer else step)
        self.setKeyboardTracking(False)
        self.setAccelerated(True)
        self.setCorrectionMode(QDoubleSpinBox.CorrectionMode.CorrectToPreviousValue)
        self.setButtonSymbols(QDoubleSpinBox.ButtonSymbols.UpDownArrows)

    def textFromValue(self, value: float) -> str:  # noqa: N802 -- Qt API
        if self._integer and value == int(value) and abs(value) < 1e15:
            return str(int(value))
        return f"{value:.8g}"  # a fraction in a whole-number box stays visible (and is refused)

    def valueFromText(self, text: str) -> float:  # noqa: N802 -- Qt API
        try:
            return float(text.strip())
        except ValueError:
            return self.value()

    def validate(self, text: str, pos: int):
        t = text.strip()
        try:
            v = float(t)
        except ValueError:
            state = QValidator.State.Intermediate if _NUMBER_PREFIX.match(t) else QValidator.State.Invalid
            return state, text, pos
        if not math.isfinite(v) or abs(v) > 1e300:
            return QValidator.State.Invalid, text, pos
        return QValidator.State.Acceptable, text, pos

    def fixup(self, text: str) -> str:
        return self.textFromValue(self.value())

    def stepBy(self, steps: int) -> None:  # noqa: N802 -- Qt API
        v = self.value()
        if self._log and v > 0 and not self._integer:
            self.setValue(float(f"{v * 10 ** (0.05 * steps):.4g}"))
        else:
            self.setValue(v + steps * self.singleStep())
        self.selectAll()


class InputRow(QObject):
    """One apparatus input: label (name and unit), spin box and slider, kept in step."""

    changed = Signal(str, float)

    def __init__(self, param, parent: QWidget):
        super().__init__(parent)
        self.param = param
        self.span = slider_span(param)
        lo, hi, log = self.span
        unit = f" [{param.unit}]" if param.unit else ""
        self.label = QLabel(f"<b>{param.name}</b>{unit}")
        self.label.setToolTip(param.description or param.name)
        step = 1.0 if param.integer else float(f"{(hi - lo) / 100:.1g}") or 0.01
        self.box = NumberBox(log=log, integer=param.integer, step=step)
        self.box.setObjectName(f"labInput_{param.name}")
        self.box.setAccessibleName(f"{param.name}{unit}")
        self.box.setToolTip(self._tooltip())
        self.box.setMinimumWidth(96)
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setObjectName(f"labSlider_{param.name}")
        self.slider.setRange(0, SLIDER_STEPS)
        self.slider.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.slider.setSingleStep(10)
        self.slider.setPageStep(100)
        self.slider.setAccessibleName(f"{param.name} slider")
        self.slider.setToolTip(f"{fmt(lo)} … {fmt(hi)}{' (logarithmic)' if log else ''}")
        self.scale = QLabel(f"{fmt(lo, 3)} … {fmt(hi, 3)}{' · log' if log else ''}")
        self.scale.setStyleSheet("color: palette(placeholder-text); font-size: 8pt;")
        self.box.setValue(float(param.default))
        self.slider.setValue(to_slider(float(param.default), self.span))
        self.box.valueChanged.connect(self._on_box)
        self.slider.valueChanged.connect(self._on_slider)

    def _tooltip(self) -> str:
        p = self.param
        lo = "−∞" if p.minimum is None else fmt(p.minimum)
        hi = "∞" if p.maximum is None else fmt(p.maximum)
        text = f"{p.description or p.name}" + (f" ({p.unit})" if p.unit else "")
        text += f"\nvalid range: [{lo}, {hi}]" + ("; whole numbers" if p.integer else "")
        text += f"\ndefault: {fmt(p.default)}"
        return text

    def value(self) -> float:
        return float(self.box.value())

    def set_value(self, value: float) -> None:
        self.box.setValue(float(value))

    def problem(self) -> str | None:
        """Why the apparatus would refuse the current value, or None."""
        p, v = self.param, self.value()
        if not math.isfinite(v):
            return f"{p.name} must be a finite number"
        if p.integer and v != int(v):
            return f"{p.name} must be a whole number"
        if (p.minimum is not None and v < p.minimum) or (p.maximum is not None and v > p.maximum):
            lo = "−∞" if p.minimum is None else fmt(p.minimum)
            hi = "∞" if p.maximum is None else fmt(p.maximum)
            return f"{p.name} = {fmt(v)} is outside its valid range [{lo}, {hi}]"
        return None

    def mark(self, bad: bool) -> None:
        self.box.setStyleSheet("QDoubleSpinBox { border: 2px solid #c0392b; background: #fdecea; }" if bad else "")

    def _on_box(self, value: float) -> None:
        self.slider.blockSignals(True)
        self.slider.setValue(to_slider(value, self.span))
        self.slider.blockSignals(False)
        self.mark(self.problem() is not None)
        self.changed.emit(self.param.name, value)

    def _on_slider(self, position: int) -> None:
        self.box.blockSignals(True)
        self.box.setValue(from_slider(position, self.span, self.param.integer))
        self.box.blockSignals(False)
        self.mark(self.problem() is not None)
        self.changed.emit(self.param.name, self.value())


@dataclass
class Experiment:
    inputs: dict  # the parameter set as sent (every apparatus input)
    result: Any  # as the apparatus returned it: a number (vanilla) or a dict of numbers / lists
    outputs: dict  # output name -> number or list (vanilla: its one output)
    noise: float
    round: int
    t: float
    by: str = "you"  # who ran it: "you", or "agent: …" (an agent's rows, see widgets.lab_agent)


@dataclass
class _Session:
    """Everything collected on one task (switching tasks and back keeps it)."""

    task: Any
    seed: int
    rng: np.random.Generator
    experiments: list[Experiment] = field(default_factory=list)
    rounds: int = 0
    batch: list[dict] = field(default_factory=list)
    hypothesis: str = ""
    logged_hypothesis: str = ""  # the last hypothesis recorded as an event
    fit: FitResult | None = None
    score: dict | None = None
    agent_result: dict | None = None  # the last agent's law and public evaluation on this task


class LabPanel(QWidget):
    """The virtual lab. See the module docstring for the public API."""

    experiment_done = Signal(object)  # list of (inputs, result) of the round just run
    fitted = Signal(object)  # FitResult.to_json()
    scored = Signal(object)  # evaluate_law's result
    event = Signal(dict)  # every user action: {"kind", "t", "task", ...}
    task_changed = Signal(str)
    agent_finished = Signal(object)  # an agent's end: law, public evaluation, stop_reason, … (or error)

    def __init__(self, parent: QWidget | None = None, task_id: str = DEFAULT_TASK, seed: int | None = None):
        super().__init__(parent)
        self.setObjectName("labPanel")
        self._seed = seed
        self._sessions: dict[str, _Session] = {}
        self.session: _Session | None = None
        self.task = None
        self.rows: dict[str, InputRow] = {}
        self._events: list[dict] = []
        self._jobs: set = set()
        self._tokens: dict[str, int] = {}
        self._busy: set[str] = set()
        self._round_limit: int | None = None
        self._x_chosen = False  # the user picked the scan plot's x axis
        self._updating = False
        self._build()
        self.set_task(task_id)

    # ================================================================== construction

    def _build(self) -> None:
        # ---------------------------------------------------------------- task picker
        self.task_picker = QWidget()
        self.task_picker.setObjectName("labTaskPicker")
        grid = QGridLayout(self.task_picker)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setVerticalSpacing(4)
        self.module_box = QComboBox()
        self.module_box.setObjectName("labModule")
        for name in MODULE_NAMES:
            self.module_box.addItem(module_label(name), name)
        self.difficulty_box = QComboBox()
        self.difficulty_box.setObjectName("labDifficulty")
        for d in DIFFICULTIES:
            self.difficulty_box.addItem(d, d)
        self.version_box = QComboBox()
        self.version_box.setObjectName("labVersion")
        for v in VERSIONS:
            self.version_box.addItem(v, v)
        self.system_box = QComboBox()
        self.system_box.setObjectName("labSystem")
        for s in SYSTEMS:
            self.system_box.addItem(SYSTEM_LABELS[s], s)
        self.task_id_edit = QLineEdit()
        self.task_id_edit.setObjectName("labTaskId")
        self.task_id_edit.setPlaceholderText("newtonbench/<module>/<version>/<difficulty>/<system>")
        self.task_id_edit.setToolTip("The task id; type one and press Enter to open it")
        for box, tip in ((self.module_box, "Physical domain"), (self.difficulty_box, "How far the law is shifted"),
                         (self.version_box, "Which of the three shifted laws"),
                         (self.system_box, "The law itself, or an apparatus that hides it")):
            box.setToolTip(tip)
            box.setAccessibleName(tip)
        grid.addWidget(QLabel("Domain"), 0, 0)
        grid.addWidget(self.module_box, 0, 1, 1, 3)
        grid.addWidget(QLabel("Law"), 1, 0)
        grid.addWidget(self.difficulty_box, 1, 1, 1, 2)
        grid.addWidget(self.version_box, 1, 3)
        grid.addWidget(QLabel("System"), 2, 0)
        grid.addWidget(self.system_box, 2, 1, 1, 3)
        grid.addWidget(QLabel("Id"), 3, 0)
        grid.addWidget(self.task_id_edit, 3, 1, 1, 3)
        grid.setColumnStretch(1, 1)
        task_group = QGroupBox("Task")
        QVBoxLayout(task_group).addWidget(self.task_picker)

        # ---------------------------------------------------------------- apparatus inputs
        self.inputs_group = QGroupBox("Apparatus settings")
        self.inputs_layout = QGridLayout(self.inputs_group)
        self.inputs_layout.setVerticalSpacing(2)
        self.inputs_layout.setColumnStretch(1, 1)
        self.defaults_button = QPushButton("Defaults")
        self.defaults_button.setObjectName("labDefaults")
        self.defaults_button.setToolTip("Put every setting back to its default value")

        # ---------------------------------------------------------------- measurement
        measure = QGroupBox("Measurement")
        ml = QGridLayout(measure)
        self.noise_box = QComboBox()
        self.noise_box.setObjectName("labNoise")
        self.noise_box.setAccessibleName("Measurement noise")
        self.noise_box.setToolTip("Relative Gaussian noise on every measured output: σ = max(|y|·level, floor)")
        for level in NOISE_LEVELS:
            self.noise_box.addItem("none (exact)" if level == 0 else f"{level:g} ({level * 100:g} %)", level)
        self.round_limit_box = QSpinBox()
        self.round_limit_box.setObjectName("labRoundLimit")
        self.round_limit_box.setRange(0, 1000)
        self.round_limit_box.setSpecialValueText("none")
        self.round_limit_box.setToolTip("At most this many rounds (a run of one experiment or of a batch); "
                                        "NewtonBench's agents get 10")
        self.round_limit_box.setAccessibleName("Round limit")
        ml.addWidget(QLabel("Noise"), 0, 0)
        ml.addWidget(self.noise_box, 0, 1)
        ml.addWidget(QLabel("Round limit"), 1, 0)
        ml.addWidget(self.round_limit_box, 1, 1)
        ml.setColumnStretch(1, 1)

        self.run_button = QPushButton("Run e&xperiment")
        self.run_button.setObjectName("labRun")
        self.run_button.setToolTip("Measure with the settings above (Ctrl+Enter); with a batch, run the batch")
        self.run_button.setStyleSheet(
            "QPushButton#labRun { background: #0072B2; color: white; font-weight: bold; padding: 6px;"
            " border-radius: 4px; } QPushButton#labRun:disabled { background: #9bb8cc; }"
            " QPushButton#labRun:focus { border: 2px solid #E69F00; }")
        self.batch_button = QPushButton("Add to &batch")
        self.batch_button.setObjectName("labAddBatch")
        self.batch_button.setToolTip(f"Queue these settings; Run then measures the whole batch as one round "
                                     f"(at most {MAX_BATCH})")
        self.clear_batch_button = QPushButton("Clear batch")
        self.clear_batch_button.setObjectName("labClearBatch")
        self.undo_button = QPushButton("&Undo last")
        self.undo_button.setObjectName("labUndo")
        self.undo_button.setToolTip("Remove the last experiment from the table (rounds used stay used)")
        self.reset_button = QPushButton("Rese&t")
        self.reset_button.setObjectName("labReset")
        self.reset_button.setToolTip("Clear the table and start this task afresh")
        self.counter = QLabel()
        self.counter.setObjectName("labCounter")
        self.counter.setStyleSheet("font-weight: bold; color: palette(window-text);")
        self.message = QLabel()
        self.message.setObjectName("labMessage")
        self.message.setWordWrap(True)
        self.message.setTextFormat(Qt.TextFormat.PlainText)
        self.message.setMinimumHeight(34)
        self.message.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)

        buttons = QGridLayout()
        buttons.addWidget(self.run_button, 0, 0, 1, 2)
        buttons.addWidget(self.batch_button, 1, 0)
        buttons.addWidget(self.clear_batch_button, 1, 1)
        buttons.addWidget(self.undo_button, 2, 0)
        buttons.addWidget(self.reset_button, 2, 1)

        controls = QWidget()
        cl = QVBoxLayout(controls)
        cl.setContentsMargins(4, 4, 4, 4)
        cl.addWidget(task_group)
        cl.addWidget(self.inputs_group)
        cl.addWidget(measure)
        cl.addLayout(buttons)
        cl.addWidget(self.counter)
        cl.addWidget(self.message)
        self.agent_section = AgentSection()
        cl.addWidget(self.agent_section)
        cl.addStretch(1)
        scroll = QScrollArea()
        scroll.setObjectName("labControls")
        scroll.setWidgetResizable(True)
        scroll.setWidget(controls)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setMinimumWidth(300)
        scroll.setMaximumWidth(380)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)

        # ---------------------------------------------------------------- play area
        self.title = QLabel()
        self.title.setObjectName("labTitle")
        self.title.setWordWrap(True)
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.title.setStyleSheet("QLabel#labTitle { background: #eef5fb; border: 1px solid #cfe0ee;"
                                 " border-radius: 4px; padding: 6px; }")

        self.table = QTableWidget(0, 0)
        self.table.setObjectName("labTable")
        self.table.setAccessibleName("Experiments")
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setAlternatingRowColors(True)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(False)
        self.table.setToolTip("One row per experiment; select a row to see its series and where it sits on the plot")

        # scan plot and its axes
        self.scan = LabScanPlot()
        self.x_box = QComboBox()
        self.x_box.setObjectName("labPlotX")
        self.x_box.setAccessibleName("Plot x axis")
        self.y_box = QComboBox()
        self.y_box.setObjectName("labPlotY")
        self.y_box.setAccessibleName("Plot y axis")
        self.log_x = QCheckBox("log x")
        self.log_x.setObjectName("labLogX")
        self.log_y = QCheckBox("log y")
        self.log_y.setObjectName("labLogY")
        scan_bar = QHBoxLayout()
        scan_bar.addWidget(QLabel("x"))
        scan_bar.addWidget(self.x_box, 1)
        scan_bar.addWidget(self.log_x)
        scan_bar.addSpacing(12)
        scan_bar.addWidget(QLabel("y"))
        scan_bar.addWidget(self.y_box, 1)
        scan_bar.addWidget(self.log_y)
        scan_page = QWidget()
        sl = QVBoxLayout(scan_page)
        sl.setContentsMargins(2, 2, 2, 2)
        sl.addLayout(scan_bar)
        sl.addWidget(self.scan, 1)

        # series plot and its axes
        self.series = LabSeriesPlot()
        self.series_x_box = QComboBox()
        self.series_x_box.setObjectName("labSeriesX")
        self.series_x_box.setAccessibleName("Series plot x axis")
        self.series_y_box = QComboBox()
        self.series_y_box.setObjectName("labSeriesY")
        self.series_y_box.setAccessibleName("Series plot y axis")
        self.series_log_x = QCheckBox("log x")
        self.series_log_x.setObjectName("labSeriesLogX")
        self.series_log_y = QCheckBox("log y")
        self.series_log_y.setObjectName("labSeriesLogY")
        series_bar = QHBoxLayout()
        series_bar.addWidget(QLabel("x"))
        series_bar.addWidget(self.series_x_box, 1)
        series_bar.addWidget(self.series_log_x)
        series_bar.addSpacing(12)
        series_bar.addWidget(QLabel("y"))
        series_bar.addWidget(self.series_y_box, 1)
        series_bar.addWidget(self.series_log_y)
        series_page = QWidget()
        spl = QVBoxLayout(series_page)
        spl.setContentsMargins(2, 2, 2, 2)
        spl.addLayout(series_bar)
        spl.addWidget(self.series, 1)

        self.plot_tabs = QTabWidget()
        self.plot_tabs.setObjectName("labPlotTabs")
        self.plot_tabs.setDocumentMode(True)
        self.plot_tabs.addTab(scan_page, "Scan: output against input")
        self.plot_tabs.addTab(series_page, "Series of the selected experiment")

        # hypothesis
        hyp = QGroupBox("Hypothesis")
        hl = QGridLayout(hyp)
        self.law_label = QLabel()
        self.law_label.setObjectName("labLawLabel")
        self.hypothesis = QLineEdit()
        self.hypothesis.setObjectName("labHypothesis")
        self.hypothesis.setAccessibleName("Hypothesis")
        self.hypothesis.setClearButtonEnabled(True)
        self.hypothesis.setToolTip("An expression over the law's inputs. Free constants are plain names (C, k, a, …):"
                                   " Fit finds their values from your experiments. Operators + − * / ** and sqrt,"
                                   " exp, log, sin, cos, …")
        self.function_button = QPushButton("Python function…")
        self.function_button.setObjectName("labHypothesisFunction")
        self.function_button.setToolTip("Write the hypothesis as a Python function def discovered_law(<law inputs>):"
                                        " … (several lines); it runs only in the sandbox")
        self._function_source: str | None = None
        self._function_dialog: QDialog | None = None
        self.fit_button = QPushButton("F&it constants")
        self.fit_button.setObjectName("labFit")
        self.fit_button.setToolTip("Fit the free constants to the experiments in the table (least squares on the "
                                   "relative error)")
        self.submit_button = QPushButton("Sub&mit law")
        self.submit_button.setObjectName("labSubmit")
        self.submit_button.setToolTip("Score the law (constants written in) against the hidden law: RMSLE on 5000 "
                                      "points and a symbolic check")
        self.submit_button.setStyleSheet(
            "QPushButton#labSubmit { background: #009E73; color: white; font-weight: bold; padding: 4px 10px;"
            " border-radius: 4px; } QPushButton#labSubmit:disabled { background: #a5d6c6; }"
            " QPushButton#labSubmit:focus { border: 2px solid #E69F00; }")
        self.hypothesis_status = QLabel()
        self.hypothesis_status.setObjectName("labHypothesisStatus")
        self.hypothesis_status.setWordWrap(True)
        self.hypothesis_status.setTextFormat(Qt.TextFormat.PlainText)
        self.hypothesis_status.setStyleSheet("color: palette(placeholder-text);")
        self.constants_label = QLabel()
        self.constants_label.setObjectName("labConstants")
        self.constants_label.setWordWrap(True)
        self.constants_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.score_label = QLabel()
        self.score_label.setObjectName("labScore")
        self.score_label.setWordWrap(True)
        self.score_label.setTextFormat(Qt.TextFormat.RichText)
        self.score_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.score_label.setToolTip(
            f"{explain('rmsle')}\n✓ / ✗: the submitted law is (not) the hidden law once its constants may take any "
            "value (symbolic accuracy, decided offline).")
        hl.addWidget(self.law_label, 0, 0)
        hl.addWidget(self.hypothesis, 0, 1)
        hl.addWidget(self.function_button, 0, 2)
        hl.addWidget(self.fit_button, 0, 3)
        hl.addWidget(self.submit_button, 0, 4)
        hl.addWidget(self.hypothesis_status, 1, 0, 1, 5)
        hl.addWidget(self.constants_label, 2, 0, 1, 5)
        hl.addWidget(self.score_label, 3, 0, 1, 5)
        hl.setColumnStretch(1, 1)

        # Table, plots and hypothesis share one splitter, so each can be given room in a small dock.
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.setObjectName("labPlaySplitter")
        # The agent's transcript sits beside the plots (hidden until an agent runs or it is asked for).
        self.transcript = TranscriptView()
        self.transcript_box = transcript_box(self.transcript)
        self.transcript_box.setVisible(False)
        self.plot_splitter = QSplitter(Qt.Orientation.Horizontal)
        self.plot_splitter.setObjectName("labPlotSplitter")
        self.plot_splitter.addWidget(self.plot_tabs)
        self.plot_splitter.addWidget(self.transcript_box)
        self.plot_splitter.setStretchFactor(0, 3)
        self.plot_splitter.setStretchFactor(1, 2)
        self.plot_splitter.setChildrenCollapsible(False)
        self.transcript_box.setMinimumWidth(220)
        self.splitter.addWidget(self.table)
        self.splitter.addWidget(self.plot_splitter)
        self.splitter.addWidget(hyp)
        self.splitter.setStretchFactor(0, 2)
        self.splitter.setStretchFactor(1, 4)
        self.splitter.setStretchFactor(2, 0)
        self.splitter.setChildrenCollapsible(False)
        self.table.setMinimumHeight(90)
        self.plot_tabs.setMinimumHeight(160)
        self.splitter.setSizes([190, 420, 150])
        play = QWidget()
        pl = QVBoxLayout(play)
        pl.setContentsMargins(4, 4, 4, 4)
        pl.addWidget(self.title)
        pl.addWidget(self.splitter, 1)

        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(scroll)
        layout.addWidget(play, 1)

        # ---------------------------------------------------------------- signals
        for box in (self.module_box, self.difficulty_box, self.version_box, self.system_box):
            box.currentIndexChanged.connect(self._on_picker)
        self.task_id_edit.returnPressed.connect(self._on_task_id)
        self.defaults_button.clicked.connect(self.reset_inputs)
        self.noise_box.currentIndexChanged.connect(self._on_noise)
        self.round_limit_box.valueChanged.connect(lambda v: self.set_round_limit(v or None, _from_box=True))
        self.run_button.clicked.connect(self.run_experiment)
        self.batch_button.clicked.connect(self.add_to_batch)
        self.clear_batch_button.clicked.connect(self.clear_batch)
        self.undo_button.clicked.connect(self.undo)
        self.reset_button.clicked.connect(self.reset)
        self.table.itemSelectionChanged.connect(self._on_selection)
        self.scan.point_clicked.connect(self.select_experiment)
        self.x_box.activated.connect(self._on_x_chosen)
        for w in (self.x_box, self.y_box):
            w.currentIndexChanged.connect(lambda _i: self._refresh_scan())
        self.log_x.toggled.connect(lambda _c: self._refresh_scan())
        self.log_y.toggled.connect(lambda _c: self._refresh_scan())
        for w in (self.series_x_box, self.series_y_box):
            w.currentIndexChanged.connect(lambda _i: self._refresh_series())
        self.series_log_x.toggled.connect(lambda _c: self._refresh_series())
        self.series_log_y.toggled.connect(lambda _c: self._refresh_series())
        self.hypothesis.textChanged.connect(self._on_hypothesis_typed)
        self.hypothesis.returnPressed.connect(self._on_hypothesis_return)
        self.fit_button.clicked.connect(self.fit_hypothesis)
        self.function_button.clicked.connect(self.open_function_editor)
        self.submit_button.clicked.connect(self.submit)
        self.agent_runner = AgentRunner(self, self.agent_section, self.transcript)
        self.agent_runner.finished.connect(self.agent_finished)
        self.agent_section.show_transcript.toggled.connect(self._show_transcript)
        self._hyp_timer = QTimer(self)
        self._hyp_timer.setSingleShot(True)
        self._hyp_timer.setInterval(600)
        self._hyp_timer.timeout.connect(self._hypothesis_settled)
        run_shortcut = QShortcut(QKeySequence("Ctrl+Return"), self)
        run_shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        run_shortcut.activated.connect(self.run_experiment)
        run_shortcut2 = QShortcut(QKeySequence("Ctrl+Enter"), self)
        run_shortcut2.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        run_shortcut2.activated.connect(self.run_experiment)

    # ================================================================== events

    def _emit(self, kind: str, **data) -> dict:
        record = {"kind": kind, "t": time.time(), "task": self.task.id if self.task is not None else None, **data}
        self._events.append(record)
        self.event.emit(record)
        return record

    def events(self) -> list[dict]:
        """Every user action so far, oldest first (the study mode stores these)."""
        return list(self._events)

    def _say(self, text: str, level: str = "info") -> None:
        colour = {"info": "#333", "ok": "#1e7a4f", "error": "#b03a2e"}.get(level, "#333")
        self.message.setStyleSheet(f"color: {colour};")
        self.message.setText(text)

    # ================================================================== task

    def set_task(self, task_id: str) -> bool:
        """Open a task (its collected experiments come back if it was open before). Returns
        False, with a message, for an unknown id or a domain module that cannot be loaded."""
        try:
            task = lab.get_task(task_id)
            system = task.system  # imports the module
            _ = task.module.law_inputs
        except KeyError as exc:
            self._say(str(exc).strip('"'), "error")
            return False
        except Exception as exc:  # noqa: BLE001 -- a domain module being written may not import yet
            self._say(f"The domain {task_id.split('/')[1] if '/' in task_id else task_id} is not available: "
                      f"{type(exc).__name__}: {exc}", "error")
            return False
        if self.task is not None and self.task.id == task.id:
            return True
        self.task = task
        session = self._sessions.get(task.id)
        if session is None:
            seed = self._seed if self._seed is not None else secrets.randbits(32)
            session = _Session(task, seed, np.random.default_rng(seed))
            self._sessions[task.id] = session
        self.session = session
        self._sync_picker(task)
        self._build_inputs(system)
        self._build_axes(task)
        self._updating = True
        self._display_hypothesis(session.hypothesis)
        self._updating = False
        self.law_label.setText(f"<b>{task.module.law_output}</b> =")
        self.title.setText(self._title_html(task))
        self.hypothesis.setPlaceholderText(self._example(task))
        self._check_hypothesis()
        self._show_fit_text()
        self._show_score()
        self._refresh_table()
        self._refresh_plots()
        self._update_state()
        self._say(f"{system.title}: set the inputs and press Run experiment.")
        self._emit("task", seed=session.seed, system=task.system_name)
        self.task_changed.emit(task.id)
        return True

    def _sync_picker(self, task) -> None:
        self._updating = True
        for box, value in ((self.module_box, task.module_name), (self.difficulty_box, task.difficulty),
                           (self.version_box, task.version), (self.system_box, task.system_name)):
            box.setCurrentIndex(max(0, box.findData(value)))
        self.task_id_edit.setText(task.id)
        self.task_id_edit.setCursorPosition(0)
        self._updating = False

    def _on_picker(self) -> None:
        if self._updating:
            return
        task_id = "/".join([lab.PREFIX, self.module_box.currentData(), self.version_box.currentData(),
                            self.difficulty_box.currentData(), self.system_box.currentData()])
        if not self.set_task(task_id) and self.task is not None:
            self._sync_picker(self.task)

    def _on_task_id(self) -> None:
        if not self.set_task(self.task_id_edit.text()) and self.task is not None:
            self.task_id_edit.selectAll()

    @staticmethod
    def _title_html(task) -> str:
        module, system = task.module, task.system
        law = f"{module.law_output} = f({', '.join(module.law_inputs)})"
        desc = system.description.replace("&", "&amp;").replace("<", "&lt;")
        what = ("Measure the law directly, then write a hypothesis and fit its constants."
                if task.system_name == "vanilla" else
                "The apparatus hides the law inside its dynamics: infer it from what it records.")
        return (f"<span style='font-size: 11pt'><b>{module.title}</b> · {system.title}</span> "
                f"<span style='color:#888'>({task.difficulty} {task.version})</span><br>{desc}<br>"
                f"<span style='color:#0b5a8a'>Law to discover: <b><code>{law}</code></b></span> — {what}")

    @staticmethod
    def _example(task) -> str:
        names = task.module.law_inputs  # a form of the syntax only, not a hint at the law
        return f"e.g. C*{names[0]}**a" + (f"/{names[1]}" if len(names) > 1 else "") + "   (named constants are fitted)"

    def _build_inputs(self, system) -> None:
        while self.inputs_layout.count():
            item = self.inputs_layout.takeAt(0)
            widget = item.widget()
            if widget is not None and widget is not self.defaults_button:
                widget.hide()  # gone at once, even before the deferred delete runs
                widget.setParent(None)
                widget.deleteLater()
        for row in self.rows.values():
            row.deleteLater()
        self.rows = {}
        r = 0
        for p in system.inputs:
            row = InputRow(p, self.inputs_group)
            self.rows[p.name] = row
            self.inputs_layout.addWidget(row.label, r, 0, 1, 2)
            self.inputs_layout.addWidget(row.box, r, 2, 2, 1)
            self.inputs_layout.addWidget(row.slider, r + 1, 0, 1, 2)
            self.inputs_layout.addWidget(row.scale, r + 2, 0, 1, 2)
            r += 3
        self.inputs_layout.addWidget(self.defaults_button, r, 2)
        # A sensible keyboard order: each box, then its slider, then the next input.
        previous = self.task_id_edit
        for row in self.rows.values():
            QWidget.setTabOrder(previous, row.box)
            QWidget.setTabOrder(row.box, row.slider)
            previous = row.slider
        QWidget.setTabOrder(previous, self.defaults_button)
        QWidget.setTabOrder(self.defaults_button, self.noise_box)

    def reset_inputs(self) -> None:
        for row in self.rows.values():
            row.set_value(row.param.default)

    # ================================================================== inputs and noise

    def input_names(self) -> list[str]:
        return list(self.rows)

    def set_input(self, name: str, value: float) -> None:
        """Set one apparatus input (as typing it would). KeyError for an unknown name."""
        if name not in self.rows:
            raise KeyError(f"unknown input {name!r}; this apparatus takes {', '.join(self.rows)}")
        self.rows[name].set_value(float(value))

    def inputs(self) -> dict[str, float]:
        """The current settings, as the next experiment would send them."""
        out = {}
        for name, row in self.rows.items():
            row.box.interpretText()  # text typed but not yet committed (no Enter, focus still there)
            v = row.value()
            out[name] = int(v) if (row.param.integer and v == int(v)) else v
        return out

    def noise_level(self) -> float:
        return float(self.noise_box.currentData())

    def set_noise(self, level: float) -> None:
        index = self.noise_box.findData(float(level))
        if index < 0:
            raise ValueError(f"noise level {level!r} is not one of {', '.join(f'{v:g}' for v in NOISE_LEVELS)}")
        self.noise_box.setCurrentIndex(index)

    def _on_noise(self) -> None:
        self._emit("noise", level=self.noise_level())

    def set_round_limit(self, limit: int | None, _from_box: bool = False) -> None:
        self._round_limit = int(limit) if limit else None
        if not _from_box:
            self.round_limit_box.blockSignals(True)
            self.round_limit_box.setValue(self._round_limit or 0)
            self.round_limit_box.blockSignals(False)
        self._update_state()

    def _problems(self, params: dict) -> str | None:
        try:
            self.task.system.complete(params)
        except ExperimentError as exc:
            return str(exc)
        return None

    # ================================================================== experiments

    def experiments(self) -> list[tuple[dict, Any]]:
        """(inputs, result) of every experiment on the current task, oldest first."""
        return [(dict(e.inputs), e.result) for e in (self.session.experiments if self.session else [])]

    def experiment_records(self) -> list[Experiment]:
        return list(self.session.experiments if self.session else [])

    def is_busy(self, what: str | None = None) -> bool:
        return bool(self._busy) if what is None else what in self._busy

    def add_to_batch(self) -> bool:
        """Queue the current settings; Run measures the queued sets as one round."""
        if self.task is None:
            return False
        params = self.inputs()
        problem = self._problems(params)
        if problem:
            self._reject(params, problem)
            return False
        if len(self.session.batch) >= MAX_BATCH:
            self._say(f"A batch holds at most {MAX_BATCH} parameter sets; run it first.", "error")
            return False
        self.session.batch.append(params)
        self._emit("batch_add", inputs=params, size=len(self.session.batch))
        self._say(f"Batch: {len(self.session.batch)} parameter set{'s' if len(self.session.batch) > 1 else ''} "
                  f"queued. Change the settings and add more, or press Run.")
        self._update_state()
        return True

    def clear_batch(self) -> None:
        if self.session and self.session.batch:
            self.session.batch = []
            self._emit("batch_clear")
            self._say("Batch cleared.")
        self._update_state()

    def _reject(self, params: dict, problem: str) -> None:
        for name, row in self.rows.items():
            row.mark(row.problem() is not None or re.search(rf"\b{re.escape(name)}\b", problem) is not None)
        self._say(f"Invalid input: {problem}", "error")
        self._emit("experiment", ok=False, inputs=params, error=problem, noise=self.noise_level())

    def run_experiment(self) -> bool:
        """Measure the current settings (or the queued batch) as one round, off the GUI thread.
        Returns False with a message when the round cannot start; ``experiment_done`` follows."""
        if self.task is None or "experiment" in self._busy:
            return False
        session = self.session
        if self._round_limit is not None and session.rounds >= self._round_limit:
            self._say(f"All {self._round_limit} rounds are used. Submit a law, or Reset to start over.", "error")
            return False
        sets = list(session.batch) if session.batch else [self.inputs()]
        for i, params in enumerate(sets):
            problem = self._problems(params)
            if problem:
                self._reject(params, problem if len(sets) == 1 else f"batch set {i + 1}: {problem}")
                return False
        for row in self.rows.values():
            row.mark(False)
        level = self.noise_level()
        task = self.task
        noise = Noise(level, rng=session.rng)
        from_batch = bool(session.batch)
        session.batch = []
        self._busy.add("experiment")
        self._update_state()
        self._say("Measuring…" if len(sets) == 1 else f"Measuring {len(sets)} parameter sets…")

        def work():
            return lab.run_experiments(task, sets, noise)

        def done(results, session=session, sets=sets):
            self._busy.discard("experiment")
            self._on_results(session, sets, results, level, from_batch)

        def failed(message, session=session, sets=sets):
            self._busy.discard("experiment")
            first = message.split("\n", 1)[0]
            self._emit("experiment", ok=False, inputs=sets[0] if len(sets) == 1 else sets, error=first, noise=level)
            if session is self.session:
                self._say(f"The experiment failed: {first}", "error")
            self._update_state()

        self._start("experiment", work, done, failed, latest_only=False)
        return True

    def _on_results(self, session: _Session, sets: list[dict], results: list, level: float, from_batch: bool) -> None:
        session.rounds += 1
        outputs = session.task.system.outputs
        added = []
        now = time.time()
        for params, result in zip(sets, results):
            if isinstance(result, dict):
                named = dict(result)
            else:
                named = {outputs[0].name: result}
            exp = Experiment(dict(params), result, named, level, session.rounds, now)
            session.experiments.append(exp)
            added.append((dict(params), result))
            self._emit("experiment", ok=True, inputs=dict(params), result=result, noise=level, round=session.rounds,
                       index=len(session.experiments), batch=from_batch)
        if session is self.session:
            self._refresh_table()
            self.select_experiment(len(session.experiments) - 1)
            self._auto_axes()
            self._refresh_plots()
            if any(o.series for o in outputs) and not any(not o.series for o in outputs):
                self.plot_tabs.setCurrentIndex(1)
            last = added[-1][1]
            summary = self._summary(last, outputs)
            self._say(f"Round {session.rounds}: {len(added)} experiment{'s' if len(added) > 1 else ''} measured. "
                      f"{summary}", "ok")
            self._update_state()
        self.experiment_done.emit(added)

    @staticmethod
    def _summary(result, outputs) -> str:
        if not isinstance(result, dict):
            return f"{outputs[0].name} = {fmt(result)}" + (f" {outputs[0].unit}" if outputs[0].unit else "")
        parts = []
        for o in outputs:
            v = result.get(o.name)
            if isinstance(v, list):
                parts.append(f"{o.name}: {len(v)} values")
            else:
                parts.append(f"{o.name} = {fmt(v)}" + (f" {o.unit}" if o.unit else ""))
        return "; ".join(parts)

    def undo(self) -> bool:
        """Remove the last experiment (the rounds used are not given back)."""
        if self.session is None or not self.session.experiments or "experiment" in self._busy:
            return False
        exp = self.session.experiments.pop()
        self._invalidate_fit()
        self._emit("undo", inputs=exp.inputs, result=exp.result, index=len(self.session.experiments) + 1)
        self._refresh_table()
        self._refresh_plots()
        self._update_state()
        self._say(f"Removed experiment {len(self.session.experiments) + 1}.")
        return True

    def reset(self) -> None:
        """Clear the table, the batch, the round count, the fit and the score of this task."""
        if self.session is None or "experiment" in self._busy:
            return
        n = len(self.session.experiments)
        self.session.experiments.clear()
        self.session.batch.clear()
        self.session.rounds = 0
        self.session.fit = None
        self.session.score = None
        self.session.agent_result = None
        self._x_chosen = False
        self._emit("reset", removed=n)
        self._show_fit_text()
        self._show_score()
        self._refresh_table()
        self._refresh_plots()
        self._update_state()
        self._say("Cleared. Set the inputs and press Run experiment.")

    def select_experiment(self, index: int) -> None:
        if 0 <= index < self.table.rowCount():
            self.table.selectRow(index)

    def selected_index(self) -> int | None:
        rows = self.table.selectionModel().selectedRows() if self.table.selectionModel() else []
        return rows[0].row() if rows else None

    def _on_selection(self) -> None:
        if not self._updating:
            self._refresh_plots()

    # ================================================================== table

    def _columns(self) -> list[tuple[str, str, str]]:
        """(kind, name, header) of the table's columns."""
        system = self.task.system
        cols = [("index", "#", "#"), ("by", "by", "by"), ("round", "round", "round")]
        for p in system.inputs:
            cols.append(("input", p.name, p.name + (f"\n[{p.unit}]" if p.unit else "")))
        cols.append(("noise", "noise", "noise"))
        for o in system.outputs:
            cols.append(("output", o.name, o.name + (f"\n[{o.unit}]" if o.unit else "")))
        if self.task.system_name == "vanilla":
            cols.append(("residual", "residual", "fit residual\n(rel.)"))
        return cols

    def _refresh_table(self) -> None:
        if self.task is None:
            return
        self._updating = True
        selected = self.selected_index()
        cols = self._columns()
        self.table.clear()
        self.table.setColumnCount(len(cols))
        self.table.setHorizontalHeaderLabels([c[2] for c in cols])
        series = {o.name for o in self.task.system.outputs if o.series}
        exps = self.session.experiments
        fit = self._current_fit()
        self.table.setRowCount(len(exps))
        for r, e in enumerate(exps):
            for c, (kind, name, _h) in enumerate(cols):
                tip = None
                if kind == "index":
                    text = str(r + 1)
                elif kind == "round":
                    text = str(e.round)
                elif kind == "by":
                    text = e.by
                    tip = "an agent ran this experiment" if e.by != "you" else "you ran this experiment"
                elif kind == "input":
                    text = fmt(e.inputs.get(name), 6)
                    tip = repr(e.inputs.get(name))
                elif kind == "noise":
                    text = "—" if e.noise == 0 else f"{e.noise:g}"
                elif kind == "output":
                    v = e.outputs.get(name)
                    if name in series or isinstance(v, list):
                        seq = v or []
                        text = (f"{fmt(seq[0])} … series [{len(seq)}]" if seq else "empty series")
                        tip = f"series of {len(seq)} values; see the Series plot"
                    else:
                        text = fmt(v, 7)
                        tip = repr(v)
                else:  # residual
                    text, tip = "", "fit the hypothesis to fill this column"
                    if fit is not None and r < len(fit.predicted):
                        y = e.outputs.get(self.task.system.outputs[0].name)
                        p = fit.predicted[r]
                        if isinstance(y, (int, float)) and math.isfinite(y) and y != 0 and math.isfinite(p):
                            rel = (y - p) / abs(y)
                            text = f"{rel * 100:+.3g} %"
                            tip = f"(measured − model) / |measured| = {rel:.3g}; model = {p:.8g}"
                item = QTableWidgetItem(text)
                if tip:
                    item.setToolTip(tip)
                if kind in ("index", "round", "input", "output", "residual", "noise"):
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                if kind == "output":
                    item.setForeground(QColor(0, 84, 140))
                if text == "NaN":
                    item.setForeground(QColor(150, 150, 150))
                if e.by != "you":
                    item.setBackground(QColor(AGENT_ROW_TINT))
                    if kind == "by":
                        item.setForeground(QColor(179, 89, 0))
                self.table.setItem(r, c, item)
        self._updating = False
        if exps:
            self.table.selectRow(selected if selected is not None and selected < len(exps) else len(exps) - 1)

    # ================================================================== plots

    def _build_axes(self, task) -> None:
        self._updating = True
        self._x_chosen = False
        system = task.system
        self.x_box.clear()
        for p in system.inputs:
            self.x_box.addItem(p.name + (f" [{p.unit}]" if p.unit else ""), p.name)
        self.y_box.clear()
        for o in system.outputs:
            if not o.series:
                self.y_box.addItem(o.name + (f" [{o.unit}]" if o.unit else ""), o.name)
        has_scalar = self.y_box.count() > 0
        self.plot_tabs.setTabEnabled(0, has_scalar)
        self.series_x_box.clear()
        self.series_y_box.clear()
        series = [o for o in system.outputs if o.series]
        self.plot_tabs.setTabEnabled(1, bool(series))
        self.plot_tabs.setCurrentIndex(0 if has_scalar else 1)
        self.series_x_box.addItem("sample index", "#index")
        self._series_components: dict[str, tuple[str, int | None]] = {}
        self._series_pending = True  # components of 2-D series are known once data arrive
        for o in series:
            self.series_x_box.addItem(o.name + (f" [{o.unit}]" if o.unit else ""), o.name)
            self.series_y_box.addItem(o.name + (f" [{o.unit}]" if o.unit else ""), o.name)
        # x: the time axis, else (a profile such as x and T) the first series; y: the next series.
        time_index = self.series_x_box.findData("time")
        x_name = "time" if time_index >= 0 else (series[0].name if len(series) > 1 else None)
        if x_name is not None:
            self.series_x_box.setCurrentIndex(self.series_x_box.findData(x_name))
            for i in range(self.series_y_box.count()):
                if self.series_y_box.itemData(i) != x_name:
                    self.series_y_box.setCurrentIndex(i)
                    break
        first = system.inputs[0] if system.inputs else None
        self.log_x.setChecked(bool(first is not None and slider_span(first)[2]))
        self.log_y.setChecked(False)
        self.series_log_x.setChecked(False)
        self.series_log_y.setChecked(False)
        self._updating = False
        self._expand_series_components()

    def _expand_series_components(self) -> None:
        """A series of [x, y] pairs (an orbit) gets one axis choice per component."""
        if self.session is None or not self.session.experiments:
            return
        last = self.session.experiments[-1].outputs
        self._updating = True
        for box in (self.series_x_box, self.series_y_box):
            for i in range(box.count() - 1, -1, -1):
                name = box.itemData(i)
                v = last.get(name)
                if isinstance(v, list) and v and isinstance(v[0], (list, tuple)):
                    was = box.currentIndex() == i
                    label = box.itemText(i)
                    box.removeItem(i)
                    comps = "xyz" if len(v[0]) <= 3 else [str(k) for k in range(len(v[0]))]
                    for k in range(len(v[0])):
                        box.insertItem(i + k, f"{name}.{comps[k]}{label[len(name):]}", f"{name}#{k}")
                    if was:
                        box.setCurrentIndex(i)
        self._updating = False

    def _on_x_chosen(self, _index: int) -> None:
        self._x_chosen = True
        name = self.x_box.currentData()
        row = self.rows.get(name)
        if row is not None:
            self.log_x.setChecked(slider_span(row.param)[2])

    def _auto_axes(self) -> None:
        """Until the user picks an x axis, show the first input that has been varied."""
        self._expand_series_components()
        if self._x_chosen or len(self.session.experiments) < 2:
            return
        for p in self.task.system.inputs:
            values = {e.inputs.get(p.name) for e in self.session.experiments}
            if len(values) > 1:
                index = self.x_box.findData(p.name)
                if index >= 0 and index != self.x_box.currentIndex():
                    self._updating = True
                    self.x_box.setCurrentIndex(index)
                    self.log_x.setChecked(slider_span(p)[2])
                    self._updating = False
                break

    def _refresh_plots(self) -> None:
        self._refresh_scan()
        self._refresh_series()

    def _refresh_scan(self) -> None:
        if self._updating or self.task is None:
            return
        exps = self.session.experiments
        x_name, y_name = self.x_box.currentData(), self.y_box.currentData()
        if y_name is None:
            self.scan.clear("This apparatus records series only: see the Series tab.")
            return
        if not exps:
            self.scan.clear("No experiments yet: set the inputs and press Run experiment.")
            return
        x = np.array([_scalar(e.inputs.get(x_name)) for e in exps])
        y = np.array([_scalar(e.outputs.get(y_name)) for e in exps])
        fit = self._current_fit()
        model_x = model_y = predicted = None
        if fit is not None and y_name == self.task.system.outputs[0].name:
            predicted = fit.predicted
            model_x, model_y = self._model_curve(fit, x_name, x)
        x_label = self.x_box.currentText()
        y_label = self.y_box.currentText()
        self.scan.show_data(x, y, x_label=x_label, y_label=y_label, log_x=self.log_x.isChecked(),
                            log_y=self.log_y.isChecked(), selected=self.selected_index(), model_x=model_x,
                            model_y=model_y, predicted=predicted)

    def _model_curve(self, fit: FitResult, x_name: str, x: np.ndarray):
        """A smooth curve of the model over x when every other law input is the same in all
        experiments (a one-variable scan); else None (the model is drawn at each point)."""
        columns = law_columns(self.task)
        if columns is None or x_name not in columns:
            return None, None
        exps = self.session.experiments
        held = {}
        for c in columns:
            if c == x_name:
                continue
            values = {_scalar(e.inputs.get(c)) for e in exps}
            if len(values) != 1:
                return None, None
            held[c] = values.pop()
        finite = x[np.isfinite(x)]
        if finite.size < 2:
            return None, None
        lo, hi = float(finite.min()), float(finite.max())
        if lo == hi:
            return None, None
        if self.log_x.isChecked() and lo > 0:
            grid = np.geomspace(lo, hi, CURVE_POINTS)
        else:
            grid = np.linspace(lo, hi, CURVE_POINTS)
        X = np.column_stack([grid if c == x_name else np.full(CURVE_POINTS, held[c]) for c in columns])
        try:
            with np.errstate(all="ignore"):
                return grid, fit.model(X)
        except Exception:  # noqa: BLE001 -- a model that cannot be drawn is simply not drawn
            return None, None

    def _series_values(self, outputs: dict, key: str, n: int | None = None) -> np.ndarray | None:
        if key == "#index":
            return np.arange(n or 0, dtype=float)
        name, _, comp = key.partition("#")
        v = outputs.get(name)
        if not isinstance(v, list):
            return None
        try:
            arr = np.asarray(v, dtype=float)
        except (TypeError, ValueError):
            return None
        if comp:
            if arr.ndim != 2 or int(comp) >= arr.shape[1]:
                return None
            return arr[:, int(comp)]
        return arr if arr.ndim == 1 else None

    def _refresh_series(self) -> None:
        if self._updating or self.task is None:
            return
        if not any(o.series for o in self.task.system.outputs):
            self.series.clear("This apparatus records no series.")
            return
        exps = self.session.experiments
        if not exps:
            self.series.clear("Run an experiment to see its recorded series.")
            return
        x_key, y_key = self.series_x_box.currentData(), self.series_y_box.currentData()
        if y_key is None:
            return
        selected = self.selected_index()
        if selected is None:
            selected = len(exps) - 1
        curves = []
        for i, e in enumerate(exps):
            y = self._series_values(e.outputs, y_key)
            if y is None:
                continue
            x = self._series_values(e.outputs, x_key, len(y))
            if x is None:
                continue
            label = f"experiment {i + 1}" if i == selected else "other experiments"
            curves.append((label, x, y, i == selected))
        self.series.show_series(curves, x_label=self.series_x_box.currentText(),
                                y_label=self.series_y_box.currentText(), log_x=self.series_log_x.isChecked(),
                                log_y=self.series_log_y.isChecked(),
                                title=f"{self.series_y_box.currentText()} against {self.series_x_box.currentText()}"
                                      f" — experiment {selected + 1}")

    # ================================================================== hypothesis

    def set_hypothesis(self, text: str) -> None:
        """Write the hypothesis (as typing it would) and record the edit at once. Text with a
        ``def`` is a Python function: the box shows a summary, the full source is kept."""
        self._display_hypothesis(text)
        self._on_hypothesis_typed(self.hypothesis.text())  # also when the summary did not change
        self._hyp_timer.stop()
        self._hypothesis_settled()

    def hypothesis_text(self) -> str:
        if self._function_source is not None:
            return self._function_source.strip()
        return self.hypothesis.text().strip()

    def is_function_hypothesis(self) -> bool:
        return self._function_source is not None

    def _display_hypothesis(self, text: str | None) -> None:
        """Put ``text`` in the box: a function as its one-line summary (source kept aside)."""
        text = text or ""
        if is_function(text):
            self._function_source = text.strip("\n")
            self.hypothesis.setText(function_summary(text))
            self.hypothesis.setCursorPosition(0)
        else:
            self._function_source = None
            self.hypothesis.setText(text)

    def open_function_editor(self) -> QDialog:
        """A multi-line editor for ``def discovered_law(<law inputs>): …``; OK sets the hypothesis."""
        if self._function_dialog is not None:
            self._function_dialog.close()
        dialog = QDialog(self)
        dialog.setObjectName("labFunctionDialog")
        dialog.setWindowTitle("Hypothesis as a Python function")
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        layout = QVBoxLayout(dialog)
        inputs = ", ".join(self.task.module.law_inputs) if self.task is not None else ""
        note = QLabel(f"Define <code>{FUNCTION_NAME}({_html(inputs)})</code> returning "
                      f"{_html(self.task.module.law_output) if self.task is not None else 'the output'}. It runs "
                      "only in the sandbox, one experiment at a time (math and numpy are available).")
        note.setWordWrap(True)
        layout.addWidget(note)
        editor = _CodeEdit()
        editor.setObjectName("labFunctionEditor")
        editor.setAccessibleName("Python function")
        editor.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        editor.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        editor.setPlainText(self._function_source or f"def {FUNCTION_NAME}({inputs}):\n    return ...\n")
        layout.addWidget(editor)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.setObjectName("labFunctionButtons")
        buttons.accepted.connect(dialog.accept)
        buttons.rejected.connect(dialog.reject)
        layout.addWidget(buttons)
        dialog.accepted.connect(lambda: self.set_hypothesis(editor.toPlainText()))
        dialog.destroyed.connect(lambda *_: setattr(self, "_function_dialog", None))
        dialog.resize(620, 320)
        self._function_dialog = dialog
        dialog.open()
        editor.setFocus()
        return dialog

    def _on_hypothesis_typed(self, text: str) -> None:
        if self._function_source is not None and text != function_summary(self._function_source):
            self._function_source = None  # the person typed over the summary: an expression again
        if self._updating or self.session is None:
            return
        self.session.hypothesis = self.hypothesis_text() if self._function_source is not None else text
        self._check_hypothesis()
        self._update_state()
        self._hyp_timer.start()  # one "hypothesis" event once the typing settles

    def _on_hypothesis_return(self) -> None:
        self._hyp_timer.stop()
        self._hypothesis_settled()
        if self.fit_button.isEnabled():
            self.fit_hypothesis()

    def _hypothesis_settled(self) -> None:
        if self.session is None:
            return
        text = self.hypothesis_text()
        if text == self.session.logged_hypothesis:
            return
        self.session.logged_hypothesis = text
        self._emit("hypothesis", text=text, valid=self._hyp_ok)

    def _check_hypothesis(self) -> None:
        """Parse as the user types: which constants will be fitted, or what is wrong."""
        text = self.hypothesis_text()
        self._hyp_ok = False
        self._hyp_constants: list[str] = []
        if not text:
            self.hypothesis_status.setText(
                f"Write {self.task.module.law_output} as an expression of {', '.join(self.task.module.law_inputs)}; "
                "name unknown constants (C, k, …) and Fit finds them.")
            self.hypothesis_status.setStyleSheet("color: palette(placeholder-text);")
            return
        if self._function_source is not None:
            from engine.lab.evaluate import check_signature

            problem = check_signature(self.task, text)
            if problem:
                self.hypothesis_status.setText(f"Python function: {problem}")
                self.hypothesis_status.setStyleSheet("color: #b03a2e;")
                return
            self._hyp_ok = True
            self.hypothesis_status.setText("Python function: Check on data runs it (in the sandbox) on your "
                                           "experiments; Submit scores it.")
            self.hypothesis_status.setStyleSheet("color: #1e7a4f;")
            return
        from engine.expr import ExpressionError

        if len(text) > MAX_HYPOTHESIS_CHARS:  # parsed on every keystroke, on the GUI thread
            self.hypothesis_status.setText(f"Cannot read it: the expression is too long ({len(text):,} characters; "
                                           f"at most {MAX_HYPOTHESIS_CHARS:,} here)")
            self.hypothesis_status.setStyleSheet("color: #b03a2e;")
            return
        try:
            names = free_constants(text, self.task.module.law_inputs)
        except ExpressionError as exc:
            self.hypothesis_status.setText(f"Cannot read it: {exc}")
            self.hypothesis_status.setStyleSheet("color: #b03a2e;")
            return
        except Exception as exc:  # noqa: BLE001 -- SymPy may refuse odd input
            self.hypothesis_status.setText(f"Cannot read it: {type(exc).__name__}: {exc}")
            self.hypothesis_status.setStyleSheet("color: #b03a2e;")
            return
        self._hyp_ok = True
        self._hyp_constants = names
        if names:
            how = (("Fit finds its value from your experiments." if len(names) == 1 else
                    "Fit finds their values from your experiments.") if self.task.system_name == "vanilla" else
                   "On this system, write numbers for them before submitting.")
            self.hypothesis_status.setText(f"Free constant{'s' if len(names) > 1 else ''}: {', '.join(names)}. {how}")
        else:
            self.hypothesis_status.setText("No free constants: the expression can be submitted as it is.")
        self.hypothesis_status.setStyleSheet("color: #1e7a4f;")

    def _current_fit(self) -> FitResult | None:
        s = self.session
        if s is None or s.fit is None or s.fit.hypothesis != self.hypothesis_text():
            return None
        if len(s.fit.predicted) != len(s.experiments):
            return None
        return s.fit

    def _invalidate_fit(self) -> None:
        if self.session is not None and self.session.fit is not None:
            self.session.fit = None
            self._show_fit_text()

    def fit_hypothesis(self) -> bool:
        """Fit the hypothesis' constants to the collected data off the GUI thread (vanilla
        tasks). Returns False with a message when it cannot start; ``fitted`` follows."""
        if self.task is None:
            return False
        self._hyp_timer.stop()
        self._hypothesis_settled()
        if self.task.system_name != "vanilla":
            self._say("Fitting to the table needs the law's own output: use a vanilla task, or work the law out "
                      "from the recorded series and submit it with numbers.", "error")
            return False
        text = self.hypothesis_text()
        if not self._hyp_ok:
            self._say("Write a valid hypothesis first.", "error")
            return False
        columns = law_columns(self.task)
        exps = self.session.experiments
        if columns is None or not exps:
            self._say("Run some experiments first: the constants are fitted to the table.", "error")
            return False
        out = self.task.system.outputs[0].name
        X = np.array([[_scalar(e.inputs.get(c)) for c in columns] for e in exps], dtype=float)
        y = np.array([_scalar(e.outputs.get(out)) for e in exps], dtype=float)
        variables = list(self.task.module.law_inputs)
        session = self.session
        function = self._function_source is not None
        self.constants_label.setText("Running the function in the sandbox…" if function else "Fitting…")
        self._emit("fit_start", text=text, n=len(exps), **({"form": "function"} if function else {}))

        def done(result: FitResult, session=session):
            if function:
                return self._on_function_checked(result, session)
            self._busy.discard("fit")
            session.fit = result
            self._emit("fit", ok=True, **result.to_json())
            if session is self.session:
                self._show_fit_text()
                self._refresh_table()
                self._refresh_plots()
                self._say(f"Fitted {', '.join(result.constants)} to {result.n} experiments." if result.constants
                          else "No free constants to fit: the hypothesis is drawn over the data as written.", "ok")
                self._update_state()
            self.fitted.emit(result.to_json())

        def failed(message: str, session=session, text=text):
            self._busy.discard("fit")
            first = message.split("\n", 1)[0].split(": ", 1)[-1]
            self._emit("fit", ok=False, text=text, error=first)
            if session is self.session:
                self.constants_label.setText("")
                self._say(f"Could not {'check the function' if function else 'fit'}: {first}", "error")
                if function:
                    self.hypothesis_status.setText(f"Python function: {first}")
                    self.hypothesis_status.setStyleSheet("color: #b03a2e;")
                self._update_state()
            self.fitted.emit({"hypothesis": text, "error": first})

        self._busy.add("fit")
        self._update_state()
        fit = check_function if function else fit_law
        work = lambda: fit(text, variables, X, y)  # noqa: E731
        self._start("fit", work, done, failed)
        return True

    def _on_function_checked(self, result: FitResult, session) -> None:
        """A function's predictions came back from the sandbox: shown as a fit without constants."""
        self._busy.discard("fit")
        session.fit = result
        data = {**result.to_json(), "kind": "function"}
        self._emit("fit", ok=True, form="function", **result.to_json())
        if session is self.session:
            self._show_fit_text()
            self._refresh_table()
            self._refresh_plots()
            self._say(f"Ran the function on {result.n} experiments (in the sandbox).", "ok")
            self._update_state()
        self.fitted.emit(data)

    def _show_fit_text(self) -> None:
        fit = self._current_fit()
        if fit is None:
            self.constants_label.setText("")
            return
        parts = []
        for name, value in fit.constants.items():
            err = fit.errors.get(name, float("nan"))
            parts.append(f"<b>{name}</b> = {value:.6g}" + (f" ± {err:.2g}" if math.isfinite(err) else ""))
        consts = ", ".join(parts) if parts else "no free constants"
        if is_function(fit.law):
            self.constants_label.setText(
                f"Python function run in the sandbox &nbsp;·&nbsp; RMS relative residual {fit.rel_rms:.3g} on "
                f"{fit.n} experiments")
            return
        self.constants_label.setText(
            f"{consts} &nbsp;·&nbsp; RMS relative residual {fit.rel_rms:.3g} on {fit.n} experiments<br>"
            f"<span style='color:#888'>law with constants: <code>{self.task.module.law_output} = {_html(fit.law)}"
            f"</code></span>")

    def law_to_submit(self) -> tuple[str | None, str | None]:
        """(law text, None) or (None, why not)."""
        text = self.hypothesis_text()
        if not text:
            return None, "Write a hypothesis first."
        if not self._hyp_ok:
            return None, "The hypothesis cannot be read; fix it first."
        fit = self.session.fit
        if fit is not None and fit.hypothesis == text:
            return fit.law, None
        if self._hyp_constants:
            if self.task.system_name == "vanilla":
                return None, f"Fit the constants ({', '.join(self._hyp_constants)}) first, or write numbers."
            return None, f"Write numbers for {', '.join(self._hyp_constants)}: only the law's inputs may be names."
        return text, None

    def submit(self) -> bool:
        """Score the law (constants written in) off the GUI thread; ``scored`` follows."""
        if self.task is None or "submit" in self._busy:
            return False
        self._hyp_timer.stop()
        self._hypothesis_settled()
        law, why = self.law_to_submit()
        if law is None:
            self._say(why, "error")
            return False
        task = self.task
        session = self.session
        self.score_label.setText("<i>Scoring on 5000 points and checking the form…</i>")
        self._emit("submit_start", law=law)

        def work():
            from engine.lab.evaluate import evaluate_law

            return evaluate_law(task, law)

        def done(result: dict, session=session):
            self._busy.discard("submit")
            public = {k: v for k, v in result.items() if k != "ground_truth"}
            public["symbolic"] = dict(public.get("symbolic") or {})
            public["symbolic"]["reason"] = public_reason(public["symbolic"].get("reason", ""))
            session.score = public
            self._emit("submit", ok=public.get("error") is None, law=law, rmsle=public.get("rmsle"),
                       equivalent=public["symbolic"].get("equivalent"), error=public.get("error"),
                       experiments=len(session.experiments), rounds=session.rounds)
            if session is self.session:
                self._show_score()
                self._update_state()
                self._say("Submitted. The score is below the hypothesis.", "ok")
            self.scored.emit(public)

        def failed(message: str, session=session):
            self._busy.discard("submit")
            first = message.split("\n", 1)[0]
            self._emit("submit", ok=False, law=law, error=first)
            if session is self.session:
                self.score_label.setText("")
                self._say(f"Could not score the law: {first}", "error")
                self._update_state()
            self.scored.emit({"error": first, "law": law})

        self._busy.add("submit")
        self._update_state()
        self._start("submit", work, done, failed)
        return True

    def _show_score(self) -> None:
        s = self.session
        parts = []
        if s is not None and s.score:
            parts.append(self._score_html(s.score))
        if s is not None and s.agent_result:
            parts.append(self._agent_score_html(s.agent_result))
        self.score_label.setText("<br>".join(parts))
        if parts:
            QTimer.singleShot(0, self._make_room_for_score)

    def _make_room_for_score(self) -> None:
        """Grow the hypothesis pane (taking from the plots) so the score lines are not cut off."""
        sizes = self.splitter.sizes()
        if len(sizes) != 3 or not self.isVisible():
            return
        pane = self.splitter.widget(2)
        need = pane.sizeHint().height()
        if sizes[2] < need:
            extra = min(need - sizes[2], max(0, sizes[1] - self.plot_tabs.minimumHeight()))
            self.splitter.setSizes([sizes[0], sizes[1] - extra, sizes[2] + extra])

    def _agent_score_html(self, result: dict) -> str:
        from widgets.lab_agent import agent_label

        who = f"<b style='color:#B35900'>{_html(agent_label(result.get('agent') or ''))}</b>"
        evaluation = result.get("evaluation")
        if evaluation is None:
            return (f"{who}: <span style='color:#888'>stopped ({_html(result.get('stop_reason') or '')}) "
                    f"after {result.get('rounds', 0)} rounds; not scored</span>")
        law = evaluation.get("expression") or result.get("law") or ""
        head = f"{who} <span style='color:#888'>({_html(result.get('stop_reason') or '')}, " \
               f"{result.get('experiments', 0)} experiments)</span>: "
        if evaluation.get("error") and evaluation.get("rmsle") is None:
            return head + f"<span style='color:#b03a2e'>not scored: {_html(evaluation['error'])}</span>"
        rmsle = evaluation.get("rmsle")
        verdict = (evaluation.get("symbolic") or {}).get("equivalent")
        badge = {True: "<span style='color:#1e7a4f; font-weight:bold'>✓ symbolically equivalent</span>",
                 False: "<span style='color:#b03a2e; font-weight:bold'>✗ not equivalent</span>"}.get(
            verdict, "<span style='color:#8a6d00; font-weight:bold'>? undecided</span>")
        rm = "—" if rmsle is None else f"{rmsle:.3g}"
        return head + f"RMSLE <b>{rm}</b> &nbsp; {badge} &nbsp; <span style='color:#888'>law: <code>{_html(law)}</code></span>"

    def _score_html(self, score: dict) -> str:
        if score.get("error") and score.get("rmsle") is None:
            return f"<span style='color:#b03a2e'>Not scored: {_html(score['error'])}</span>"
        rmsle = score.get("rmsle")
        sym = score.get("symbolic") or {}
        verdict = sym.get("equivalent")
        if verdict is True:
            badge = "<span style='color:#1e7a4f; font-weight:bold'>✓ symbolically equivalent</span>"
        elif verdict is False:
            badge = "<span style='color:#b03a2e; font-weight:bold'>✗ not equivalent</span>"
        else:
            badge = "<span style='color:#8a6d00; font-weight:bold'>? undecided</span>"
        reason = sym.get("reason") or ""
        rm = "—" if rmsle is None else f"{rmsle:.3g}"
        return (f"<span style='font-size:11pt'>RMSLE <b>{rm}</b> &nbsp; {badge}</span>"
                + (f" <span style='color:#888'>({_html(reason)})</span>" if reason else "")
                + f"<br><span style='color:#888'>submitted: <code>{_html(score.get('expression') or '')}</code></span>")

    # ================================================================== agents

    def start_agent(self, agent: str | None = None) -> bool:
        """Let an agent (``vanilla``, ``code`` or ``baseline``; default: the picker's) work on the
        current task off the GUI thread. False with a message when it cannot start. Its rows go
        into the table marked as the agent's; ``agent_finished`` follows."""
        return self.agent_runner.start(agent)

    def stop_agent(self) -> None:
        """Stop a running agent (returns at once; ``agent_finished`` follows shortly)."""
        self.agent_runner.stop()

    def agent_running(self) -> bool:
        return self.agent_runner.is_running()

    def transcript_text(self) -> str:
        return self.transcript.toPlainText()

    def _show_transcript(self, shown: bool) -> None:
        self.transcript_box.setVisible(shown)
        if shown and self.plot_splitter.sizes()[1] < 200:
            total = max(600, sum(self.plot_splitter.sizes()))
            self.plot_splitter.setSizes([total * 3 // 5, total * 2 // 5])

    # ================================================================== state and jobs

    def _update_state(self) -> None:
        s = self.session
        busy = "experiment" in self._busy
        has = bool(s and s.experiments)
        out_of_rounds = bool(s and self._round_limit is not None and s.rounds >= self._round_limit)
        batch = len(s.batch) if s else 0
        self.run_button.setEnabled(s is not None and not busy and not out_of_rounds)
        self.run_button.setText(f"Run batch of {batch} e&xperiments" if batch else "Run e&xperiment")
        self.batch_button.setEnabled(s is not None and batch < MAX_BATCH)
        self.clear_batch_button.setVisible(batch > 0)
        self.undo_button.setEnabled(has and not busy)
        self.reset_button.setEnabled(s is not None and not busy and (has or batch > 0 or bool(s.rounds)))
        vanilla = self.task is not None and self.task.system_name == "vanilla"
        self.fit_button.setEnabled(vanilla and has and getattr(self, "_hyp_ok", False) and "fit" not in self._busy)
        self.fit_button.setToolTip(
            "Fit the free constants to the experiments in the table (least squares on the relative error)"
            if vanilla else "Fitting needs the law's own output: available on vanilla tasks")
        if self._function_source is not None:
            self.fit_button.setText("Check on d&ata")
            if vanilla:
                self.fit_button.setToolTip("Run the function (in the sandbox) on the experiments in the table and "
                                           "draw its predictions and residuals")
        else:
            self.fit_button.setText("F&it constants")
        self.submit_button.setEnabled(getattr(self, "_hyp_ok", False) and "submit" not in self._busy)
        n = len(s.experiments) if s else 0
        text = f"experiments: {n}"
        if s is not None:
            if self._round_limit is not None:
                text += f" · round {s.rounds} of {self._round_limit}"
            elif s.rounds:
                text += f" · rounds: {s.rounds}"
        if batch:
            text += f" · batch: {batch} queued"
        self.counter.setText(text)

    def _start(self, channel: str, func, on_result, on_error, latest_only: bool = True) -> None:
        token = self._tokens.get(channel, 0) + 1
        self._tokens[channel] = token
        job = call_in_thread(func, name=f"lab-{channel}")
        self._jobs.add(job)

        def deliver(result, token=token):
            if not latest_only or self._tokens.get(channel) == token:
                on_result(result)

        def fail(message, token=token):
            if not latest_only or self._tokens.get(channel) == token:
                on_error(message)

        job.item.connect(deliver)
        job.failed.connect(fail)
        job.finished.connect(lambda job=job: self._jobs.discard(job))

    def busy_jobs(self) -> bool:
        return any(j.is_running() for j in list(self._jobs))

    def shutdown(self, msecs: int = 10000) -> None:
        """Wait for running experiments, fits and scoring (letting queued signals through)."""
        self.agent_runner.stop()  # an agent is stopped, not waited for to the end
        deadline = time.monotonic() + msecs / 1000
        while self.busy_jobs() and time.monotonic() < deadline:
            QCoreApplication.processEvents(QEventLoop.ProcessEventsFlag.ExcludeUserInputEvents, 20)
            for job in list(self._jobs):
                job.wait(20)


def _scalar(value) -> float:
    if isinstance(value, (list, tuple)):
        return float("nan")
    try:
        return float(value)
    except (TypeError, ValueError):
        return float("nan")


def _html(text: str) -> str:
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


__all__ = ["LabPanel", "FitResult", "fit_law", "law_columns", "slider_span", "substitute", "free_constants"]
