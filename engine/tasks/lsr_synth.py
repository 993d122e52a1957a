"""LLM-SRBench's LSR-Synth suite: 129 synthetic laws in four scientific domains.

The laws are the rows of Table 4 of Shojaee et al. (ICML 2025): chemistry (CKR1-CKR36),
biology (BPG1-BPG24), physics (PO1-PO44) and material science (MatSci1-MatSci25). The paper
publishes neither the constants nor the initial conditions, so ours were drawn once by
``scripts/build_lsr_synth_catalog.py`` and stored in ``assets/catalogs/lsr_synth.json``,
together with the repairs of the rows the paper's text rendering damaged.

This module only reads that catalog: :func:`load_tasks` is cheap (JSON and string work, no
SymPy or SciPy), and a task's data are generated on first use by :func:`build_task_data` and
cached on disk. Generation follows the paper's App. A.2:

* chemistry, biology and physics are dynamical systems integrated with SciPy's ``solve_ivp``
  (RK45) on 5000 evenly spaced times in [0, 60] (the two laws that are singular at t = 0,
  BPG20 and BPG22, start at t = 1); the target is the law evaluated at each
  sampled state and time, so it can be recomputed exactly from the stored inputs. Physics
  oscillators are second order: the state is (x, v) with x' = v and v' = law(x, t, v).
* material science is static: the law is evaluated on a 100 (strain) x 50 (temperature) grid.

Splits: the last 500 samples in time (or the 500 grid points at the highest temperatures) are
the out-of-domain test set; the other 4500 are shuffled with the task's seed into 4000 training
and 500 in-domain test points.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from functools import cache, partial
from importlib import metadata
from pathlib import Path

import numpy as np

from .. import paths
from .model import GroundTruth, Split, Task, TaskData, Variable

SUITE = "llmsrbench/lsr-synth"

#: Bumped whenever the generation code changes the arrays it produces. The cache key also
#: includes a digest of each catalog entry, so a rebuilt catalog never reuses stale data.
GENERATOR_VERSION = "lsr-synth-gen/1"

CATALOG_PATH = paths.assets_dir() / "catalogs" / "lsr_synth.json"

N_SAMPLES = 5000
N_OOD = 500
N_TRAIN = 4000
N_TEST_ID = N_SAMPLES - N_OOD - N_TRAIN

#: Solver settings for every dynamical task (App. A.2 names RK45; tolerances are ours).
SOLVER = {"method": "RK45", "rtol": 1e-8, "atol": 1e-10}
DEFAULT_T_SPAN = (0.0, 60.0)

#: Material-science grid (App. A.2): strain 0-0.6, temperature 273-573 K.
STRAIN_POINTS = 100
TEMPERATURE_POINTS = 50
STRAIN_RANGE = (0.0, 0.6)
TEMPERATURE_RANGE = (273.0, 573.0)

#: Integration is abandoned as soon as a state grows past this magnitude (a run-away that the
#: catalog builder rejects anyway); accepted trajectories stay far below it.
ABORT_MAGNITUDE = 1e6


class SimulationError(RuntimeError):
    """The law could not be integrated over the whole window (blow-up, invalid state, ...)."""


# --------------------------------------------------------------------------- domains


@dataclass(frozen=True)
class Domain:
    key: str  # catalog domain name, also the task-id group
    prefix: str  # equation-name prefix in Table 4
    label: str  # shown in titles
    target: Variable
    inputs: tuple[Variable, ...]
    states: tuple[str, ...]  # integrated state, in solver order (empty for static laws)
    positive_state: bool  # the state is a concentration / population and must stay > 0
    context: str

    @property
    def dynamical(self) -> bool:
        return bool(self.states)

    @property
    def input_names(self) -> list[str]:
        return [v.name for v in self.inputs]


_TIME = Variable(
    "t",
    "input",
    "Time, in the benchmark's dimensionless time units (each trajectory spans 60 of them)",
    "dimensionless",
    "t",
)

DOMAINS: dict[str, Domain] = {
    "chemistry": Domain(
        key="chemistry",
        prefix="CKR",
        label="Reaction kinetics",
        target=Variable(
            "dA_dt",
            "target",
            "Rate of change of the reactant concentration",
            "mol/L per time unit",
            r"\frac{dA}{dt}",
        ),
        inputs=(
            _TIME,
            Variable("A", "input", "Concentration of the reacting species at time t", "mol/L", "A"),
        ),
        states=("A",),
        positive_state=True,
        context=(
            "{name} is one of the 36 synthetic reaction-kinetics problems of LLM-SRBench's "
            "LSR-Synth suite. A single chemical species reacts in a closed, well-mixed vessel "
            "held at constant temperature; A(t) is its concentration in mol/L and t is time in "
            "the benchmark's dimensionless units. The rate law was assembled for the benchmark "
            "from textbook kinetic behaviour together with deliberately unconventional "
            "contributions, so it is not a formula one can simply recall. The concentration "
            "history was obtained by integrating the rate law numerically from one initial "
            "concentration, and every sample pairs the time and the concentration with the "
            "instantaneous reaction rate at that moment. Goal: find the rate dA/dt as a "
            "function of t and A, i.e. the right-hand side of dA/dt = f(t, A)."
        ),
    ),
    "biology": Domain(
        key="biology",
        prefix="BPG",
        label="Population growth",
        target=Variable(
            "dP_dt",
            "target",
            "Growth rate of the population (change in population size per unit time)",
            "10³ individuals per time unit",
            r"\frac{dP}{dt}",
        ),
        inputs=(
            _TIME,
            Variable("P", "input", "Population size at time t", "10³ individuals", "P"),
        ),
        states=("P",),
        positive_state=True,
        context=(
            "{name} is one of the 24 synthetic population-dynamics problems of LLM-SRBench's "
            "LSR-Synth suite. A single species lives in an environment that may limit, favour "
            "or periodically modulate its growth; P(t) is the population size in thousands of "
            "individuals and t is time in the benchmark's dimensionless units. The growth law "
            "combines mechanisms familiar from ecology with synthetic terms invented for the "
            "benchmark, so it cannot be obtained by recalling a standard model. The population "
            "history was obtained by integrating the law numerically from one initial "
            "population, and every sample pairs the time and the population with the "
            "instantaneous growth rate. Goal: find dP/dt as a function of t and P, i.e. the "
            "right-hand side of dP/dt = f(t, P)."
        ),
    ),
    "physics": Domain(
        key="physics",
        prefix="PO",
        label="Nonlinear oscillator",
        target=Variable(
            "dv_dt",
            "target",
            "Acceleration of the oscillating mass",
            "m per time unit²",
            r"\frac{dv}{dt}",
        ),
        inputs=(
            Variable("x", "input", "Displacement of the mass from its rest position at time t", "m", "x"),
            _TIME,
            Variable("v", "input", "Velocity of the mass at time t", "m per time unit", "v"),
        ),
        states=("x", "v"),
        positive_state=False,
        context=(
            "{name} is one of the 44 synthetic oscillator problems of LLM-SRBench's LSR-Synth "
            "suite. A mass moves along one axis under restoring, dissipative and possibly "
            "driving forces, any of which may be nonlinear; x(t) is its displacement, v(t) its "
            "velocity and t is time in the benchmark's dimensionless units. The equation of "
            "motion joins well-known oscillator physics with synthetic force terms invented "
            "for the benchmark, so it cannot be obtained by recalling a textbook oscillator. "
            "The motion was obtained by integrating the second-order system x' = v, "
            "v' = f(x, t, v) numerically from one initial position and velocity, and every "
            "sample pairs the position, time and velocity with the instantaneous acceleration. "
            "Goal: find the acceleration dv/dt as a function of x, t and v."
        ),
    ),
    "material_science": Domain(
        key="material_science",
        prefix="MatSci",
        label="Stress–strain",
        target=Variable("sigma", "target", "Stress carried by the material", "MPa", r"\sigma"),
        inputs=(
            Variable("epsilon", "input", "Applied strain (relative elongation)", "dimensionless", r"\epsilon"),
            Variable("T", "input", "Temperature of the specimen", "K", "T"),
        ),
        states=(),
        positive_state=False,
        context=(
            "{name} is one of the 25 synthetic stress-strain problems of LLM-SRBench's "
            "LSR-Synth suite. A material specimen is loaded in uniaxial tension at a range of "
            "temperatures; epsilon is the strain (dimensionless), T the temperature in kelvin "
            "and sigma the resulting stress in MPa. The constitutive law mixes familiar "
            "elastic, thermal and hardening behaviour with synthetic terms invented for the "
            "benchmark, so it cannot be obtained by recalling a standard material model. The "
            "stress was evaluated on a regular grid of strains from 0 to 0.6 and temperatures "
            "from 273 K to 573 K. Goal: find sigma as a function of epsilon and T."
        ),
    ),
}


# --------------------------------------------------------------------------- catalog


def read_catalog(path: Path | None = None) -> dict:
    """The parsed catalog JSON (header and entries)."""
    with open(path or CATALOG_PATH, encoding="utf-8") as fh:
        return json.load(fh)


_IDENT = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")


def substitute_constants(template: str, constants: dict[str, float]) -> str:
    """The template with every named constant replaced by its value, as parseable text."""

    def repl(match: re.Match) -> str:
        name = match.group(0)
        if name not in constants:
            return name
        value = float(constants[name])
        text = repr(value)
        return f"({text})" if value < 0 else text

    return _IDENT.sub(repl, template)


def task_id(domain: str, name: str) -> str:
    return f"{SUITE}/{domain}/{name}"


def entry_seed(entry: dict) -> int:
    return int(entry["seed"])


@cache
def _solver_version() -> str:
    """SciPy's version, read from its metadata (importing SciPy here would slow start-up).
    RK45's step sequence may change between SciPy releases, so data are cached per release."""
    try:
        return metadata.version("scipy")
    except metadata.PackageNotFoundError:
        return "unknown"


def entry_version(entry: dict) -> str:
    """Cache version: generator version plus a digest of everything the data depend on."""
    payload = json.dumps(
        {
            "template": entry["template"],
            "constants": entry["constants"],
            "initial_conditions": entry.get("initial_conditions", {}),
            "t_span": entry.get("t_span"),
            "scipy": _solver_version(),
        },
        sort_keys=True,
    )
    return f"{GENERATOR_VERSION}:{hashlib.sha256(payload.encode()).hexdigest()[:12]}"


def t_span_of(entry: dict) -> tuple[float, float]:
    span = entry.get("t_span") or DEFAULT_T_SPAN
    return float(span[0]), float(span[1])


def split_note(domain: Domain, entry: dict) -> str:
    if domain.dynamical:
        t0, t1 = t_span_of(entry)
        grid = np.linspace(t0, t1, N_SAMPLES)
        window = "" if (t0, t1) == DEFAULT_T_SPAN else f" (this law is singular at t = 0, so its window is [{t0:g}, {t1:g}])"
        return (
            f"{N_SAMPLES} evenly spaced time samples{window}; the last {N_OOD} "
            f"(t ≥ {grid[N_SAMPLES - N_OOD]:.2f}) are the out-of-domain test set, and the first "
            f"{N_SAMPLES - N_OOD} are shuffled with the task's seed into {N_TRAIN} training and "
            f"{N_TEST_ID} in-domain test points."
        )
    temps = np.linspace(*TEMPERATURE_RANGE, TEMPERATURE_POINTS)
    hot = N_OOD // STRAIN_POINTS
    return (
        f"{STRAIN_POINTS} × {TEMPERATURE_POINTS} grid of strain and temperature; the {N_OOD} points "
        f"at the {hot} highest temperatures (T ≥ {temps[-hot]:.1f} K) are the out-of-domain test "
        f"set, and the other {N_SAMPLES - N_OOD} are shuffled with the task's seed into {N_TRAIN} "
        f"training and {N_TEST_ID} in-domain test points."
    )


def _task_from_entry(entry: dict) -> Task:
    domain = DOMAINS[entry["domain"]]
    name = entry["name"]
    tid = task_id(domain.key, name)
    constants = {k: float(v) for k, v in entry["constants"].items()}
    truth = GroundTruth(
        expression=substitute_constants(entry["template"], constants),
        template=entry["template"],
        constants=constants,
        source=f"LLM-SRBench Table 4, row {name}",
        repair=entry.get("repair", ""),
    )
    metadata = {
        "paper": entry["paper"],
        "seed": entry_seed(entry),
        "attempts": entry.get("attempts"),
        "initial_conditions": dict(entry.get("initial_conditions", {})),
        "notes": entry.get("notes", ""),
    }
    if domain.dynamical:
        metadata["t_span"] = list(t_span_of(entry))
    return Task(
        id=tid,
        suite=SUITE,
        kind="function",
        name=name,
        group=domain.key,
        title=f"{domain.label} · {name}",
        variables=[domain.target, *domain.inputs],
        ground_truth=truth,
        context=domain.context.format(name=name),
        split_note=split_note(domain, entry),
        time_variable="t" if domain.dynamical else None,
        metadata=metadata,
        builder=partial(_build, entry),
    )


def load_tasks(path: Path | None = None) -> list[Task]:
    """Every LSR-Synth task, in catalog order (chemistry, biology, physics, material science)."""
    catalog = read_catalog(path)
    return [_task_from_entry(entry) for entry in catalog["entries"]]


def _build(entry: dict, task: Task) -> TaskData:
    from ..data.cache import cached_task_data

    return cached_task_data(task.id, entry_version(entry), entry_seed(entry), lambda: build_task_data(entry))


# --------------------------------------------------------------------------- generation


def build_task_data(entry: dict) -> TaskData:
    """Generate a task's three splits from its catalog entry (deterministic)."""
    X, y = simulate(entry)
    return split_samples(X, y, entry_seed(entry))


def split_samples(X: np.ndarray, y: np.ndarray, seed: int) -> TaskData:
    """Rows must be ordered by time (or temperature): the last ``N_OOD`` become test_ood."""
    n_id = X.shape[0] - N_OOD
    perm = np.random.default_rng(seed).permutation(n_id)
    parts = {
        "train": np.sort(perm[:N_TRAIN]),
        "test_id": np.sort(perm[N_TRAIN:]),
        "test_ood": np.arange(n_id, X.shape[0]),
    }
    return TaskData({name: Split(name, X[idx].copy(), y[idx].copy()) for name, idx in parts.items()})


def simulate(entry: dict, solver: dict | None = None) -> tuple[np.ndarray, np.ndarray]:
    """All 5000 samples of a task, ordered by time (or by temperature, then strain).

    Returns ``X`` with columns in the domain's input order and the target ``y``, which is the
    catalog law evaluated at those inputs with :func:`engine.expr.compile_numpy`. ``solver``
    overrides :data:`SOLVER` settings (the catalog builder uses it for its tolerance check).
    """
    from ..expr import compile_numpy, parse

    domain = DOMAINS[entry["domain"]]
    names = domain.input_names
    expr = parse(entry["template"], names, entry["constants"])
    if domain.dynamical:
        X = _integrate(domain, expr, entry, solver)
    else:
        X = material_grid()
    y = compile_numpy(expr, names)(X)
    if not np.all(np.isfinite(y)):
        raise SimulationError(f"{entry['name']}: the law is not finite on every sample")
    return X, y


def material_grid() -> np.ndarray:
    """The (epsilon, T) grid, temperature-major so the hottest rows come last."""
    strain = np.linspace(*STRAIN_RANGE, STRAIN_POINTS)
    temperature = np.linspace(*TEMPERATURE_RANGE, TEMPERATURE_POINTS)
    T, E = np.meshgrid(temperature, strain, indexing="ij")
    return np.column_stack([E.ravel(), T.ravel()])


class _Abort(Exception):
    pass


def _integrate(domain: Domain, expr, entry: dict, solver: dict | None = None) -> np.ndarray:
    import sympy as sp
    from scipy.integrate import solve_ivp

    from ..expr import symbols_for

    names = domain.input_names
    syms = symbols_for(names)
    rebound = expr.xreplace({s: syms[s.name] for s in expr.free_symbols if s.name in syms})
    # Scalar right-hand side: the math module is far cheaper per call than NumPy ufuncs.
    law = sp.lambdify([syms[n] for n in names], rebound, modules="math")
    t0, t1 = t_span_of(entry)
    ic = entry["initial_conditions"]
    y0 = [float(ic[f"{s}0"]) for s in domain.states]

    if domain.key == "physics":

        def rhs(t, s):
            x, v = s[0], s[1]
            if not (abs(x) < ABORT_MAGNITUDE and abs(v) < ABORT_MAGNITUDE):  # also catches NaN
                raise _Abort("the state ran away")
            try:
                return [v, float(law(x, t, v))]
            except (ValueError, OverflowError, ZeroDivisionError, TypeError) as exc:
                raise _Abort(str(exc)) from exc

    else:

        def rhs(t, s):
            a = s[0]
            if not 0.0 < a < ABORT_MAGNITUDE:
                raise _Abort("the state left (0, %g)" % ABORT_MAGNITUDE)
            try:
                return [float(law(t, a))]
            except (ValueError, OverflowError, ZeroDivisionError, TypeError) as exc:
                raise _Abort(str(exc)) from exc

    times = np.linspace(t0, t1, N_SAMPLES)
    settings = dict(SOLVER, **(solver or {}))
    try:
        sol = solve_ivp(rhs, (t0, t1), y0, t_eval=times, **settings)
    except _Abort as exc:
        raise SimulationError(f"{entry['name']}: integration stopped: {exc}") from None
    if not sol.success or sol.y.shape[1] != N_SAMPLES:
        raise SimulationError(f"{entry['name']}: the solver failed: {sol.message}")
    columns = {"t": sol.t}
    for i, s in enumerate(domain.states):
        columns[s] = sol.y[i]
    X = np.column_stack([columns[n] for n in names])
    if not np.all(np.isfinite(X)):
        raise SimulationError(f"{entry['name']}: the trajectory is not finite")
    return X


# --------------------------------------------------------------------------- quality


def quality_metrics(entry: dict, X: np.ndarray, y: np.ndarray) -> dict[str, float]:
    """Numbers the catalog's quality thresholds are checked against (see the catalog header).

    * ``state_min`` / ``state_max_abs``: smallest state value and largest magnitude over the
      trajectory (dynamical tasks), or the largest |target| (static tasks);
    * ``state_change``: the smallest, over state components, of (max - min) / max |value|;
    * ``ood_std_ratio``: std of the target on the out-of-domain rows over its std on all rows.
    """
    domain = DOMAINS[entry["domain"]]
    metrics: dict[str, float] = {}
    if domain.dynamical:
        names = domain.input_names
        states = [X[:, names.index(s)] for s in domain.states]
        metrics["state_min"] = float(min(np.min(s) for s in states))
        metrics["state_max_abs"] = float(max(np.max(np.abs(s)) for s in states))
        metrics["state_change"] = float(
            min((np.max(s) - np.min(s)) / max(np.max(np.abs(s)), 1e-300) for s in states)
        )
    else:
        metrics["state_max_abs"] = float(np.max(np.abs(y)))
    std_all = float(np.std(y))
    metrics["ood_std_ratio"] = float(np.std(y[-N_OOD:]) / std_all) if std_all > 0 else 0.0
    return metrics


def quality_violations(entry: dict, metrics: dict[str, float], thresholds: dict) -> list[str]:
    """Which of the catalog's thresholds a generated task breaks (empty when it is acceptable)."""
    domain = entry["domain"]
    problems = []
    bound = thresholds["state_bounds"][domain]
    if metrics["state_max_abs"] > bound:
        problems.append(f"diverges: max |state| {metrics['state_max_abs']:.4g} > {bound:g}")
    floor = thresholds["positivity_floor"].get(domain)
    if floor is not None and metrics["state_min"] < floor:
        problems.append(f"leaves the valid domain: min state {metrics['state_min']:.4g} < {floor:g}")
    if "state_change" in metrics and metrics["state_change"] < thresholds["min_state_change"]:
        problems.append(f"flat trajectory: relative change {metrics['state_change']:.4g}")
    if metrics["ood_std_ratio"] < thresholds["min_ood_std_ratio"]:
        problems.append(f"flat out-of-domain window: std ratio {metrics['ood_std_ratio']:.4g}")
    return problems
