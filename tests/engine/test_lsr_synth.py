"""LLM-SRBench LSR-Synth suite: catalog, ground truth, generated data and splits."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import zlib
from pathlib import Path

import numpy as np
import pytest

from engine.expr import compile_numpy, parse
from engine.tasks import lsr_synth
from engine.tasks.model import SPLITS

REPO = Path(__file__).resolve().parents[2]
COUNTS = {"chemistry": ("CKR", 36), "biology": ("BPG", 24), "physics": ("PO", 44), "material_science": ("MatSci", 25)}
VARIABLES = {
    "chemistry": ("dA_dt", ["t", "A"]),
    "biology": ("dP_dt", ["t", "P"]),
    "physics": ("dv_dt", ["x", "t", "v"]),
    "material_science": ("sigma", ["epsilon", "T"]),
}
GARBLED = {"CKR4", "CKR9", "CKR15", "BPG14", "PO21"}


@pytest.fixture(scope="module")
def catalog():
    return lsr_synth.read_catalog()


@pytest.fixture(scope="module")
def tasks():
    return lsr_synth.load_tasks()


@pytest.fixture(scope="module")
def lsr_home(tmp_path_factory):
    """A private KEPLERLAB_HOME (data cache) for the tests of this module that generate data."""
    home = tmp_path_factory.mktemp("lsr-home")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("KEPLERLAB_HOME", str(home))
        yield home


@pytest.fixture(scope="module")
def all_data(tasks, lsr_home):
    """Every task's data, generated once into the private cache."""
    return {task.id: task.load_data() for task in tasks}


def _nmse(y_hat: np.ndarray, y: np.ndarray) -> float:
    return float(np.sum((y_hat - y) ** 2) / np.sum((y - np.mean(y)) ** 2))


def _time_ordered(task, data):
    X, y, _ = data.stacked()
    key = task.input_names.index("t") if task.time_variable else None
    if key is None:  # material science: temperature-major, then strain
        order = np.lexsort((X[:, 0], X[:, 1]))
    else:
        order = np.argsort(X[:, key], kind="stable")
    return X[order], y[order]


# ----------------------------------------------------------------------------- catalog


def test_suite_has_the_129_table_4_laws_with_stable_ids(tasks):
    assert len(tasks) == 129
    for domain, (prefix, count) in COUNTS.items():
        group = [t for t in tasks if t.group == domain]
        assert [t.name for t in group] == [f"{prefix}{i}" for i in range(1, count + 1)]
        for t in group:
            assert t.id == f"llmsrbench/lsr-synth/{domain}/{t.name}"
            assert t.suite == "llmsrbench/lsr-synth"
            assert t.kind == "function"
            assert t.name in t.title
    assert len({t.id for t in tasks}) == 129


def test_registry_finds_the_suite(tasks):
    from engine.tasks import registry

    task = registry.get_task("llmsrbench/lsr-synth/physics/PO44")
    assert task.ground_truth.source == "LLM-SRBench Table 4, row PO44"
    assert len(registry.all_tasks("llmsrbench/lsr-synth")) == 129


def test_variables_follow_the_reference_signature(tasks):
    for t in tasks:
        target, inputs = VARIABLES[t.group]
        assert t.target.name == target
        assert t.input_names == inputs
        assert [v.name for v in t.variables] == [target, *inputs]
        for v in t.variables:
            assert v.description and v.unit and v.latex
        assert t.time_variable == ("t" if t.group != "material_science" else None)
        if t.time_variable:
            time_var = next(v for v in t.variables if v.name == "t")
            assert "dimensionless" in time_var.unit


def test_loading_is_fast_and_light():
    # Best of several runs, so a busy machine does not make the test flaky.
    best = min(_timed(lsr_synth.load_tasks) for _ in range(5))
    assert best < 0.05, f"load_tasks took {best * 1000:.1f} ms"
    code = (
        "import sys; from engine.tasks import lsr_synth; lsr_synth.load_tasks(); "
        "print(sorted(m for m in ('sympy', 'scipy') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def test_catalog_header_documents_the_protocol(catalog):
    head = catalog["header"]
    assert "LLM-SRBench" in head["source"] and "2504.10415" in head["source"]
    assert set(head["constant_ranges"]) == set(COUNTS)
    assert set(head["initial_condition_ranges"]) == {"chemistry", "biology", "physics"}
    for key in ("state_bounds", "positivity_floor", "min_state_change", "min_ood_std_ratio", "min_term_share"):
        assert key in head["quality_thresholds"] and key in head["quality_threshold_notes"]
    assert head["sampling_protocol"] and head["split_protocol"]


def test_constants_are_stored_as_used(catalog):
    header = catalog["header"]
    for e in catalog["entries"]:
        assert e["seed"] == zlib.crc32(e["name"].encode())
        assert e["attempts"] >= 1
        assert e["attempts"] <= header["quality_thresholds"]["max_attempts"]
        values = {**e["constants"], **e["initial_conditions"]}
        for name, value in values.items():
            assert float(f"{value:.4g}") == value, f"{e['name']}.{name} = {value} is not rounded"
        # Every named constant of the template has a value, and nothing else does.
        names = lsr_synth.DOMAINS[e["domain"]].input_names
        free = {s.name for s in parse(e["template"], names, allow_free_symbols=True).free_symbols}
        assert free - set(names) == set(e["constants"])
        # Sampled constants lie in their documented range.
        for name, rng in e["sampling"].items():
            assert rng["low"] <= e["constants"][name] <= rng["high"]
        if e["domain"] != "material_science":
            assert set(e["initial_conditions"]) == {f"{s}0" for s in lsr_synth.DOMAINS[e["domain"]].states}


def test_shared_symbols_share_one_value(tasks):
    ckr2 = next(t for t in tasks if t.name == "CKR2")
    k = ckr2.ground_truth.constants["k"]
    assert ckr2.ground_truth.expression.count(repr(k)) == 2
    po20 = next(t for t in tasks if t.name == "PO20")
    assert "omega0**2" in po20.ground_truth.template


def test_ground_truth_expression_is_the_template_with_its_constants(tasks):
    rng = np.random.default_rng(0)
    for t in tasks:
        gt = t.ground_truth
        assert gt.source == f"LLM-SRBench Table 4, row {t.name}"
        expr = parse(gt.expression, t.input_names)
        from_template = parse(gt.template, t.input_names, gt.constants)
        X = _sample_inputs(t, rng)
        a = compile_numpy(expr, t.input_names)(X)
        b = compile_numpy(from_template, t.input_names)(X)
        assert np.all(np.isfinite(a)), t.name
        np.testing.assert_array_equal(a, b)


def _sample_inputs(task, rng, n=64):
    cols = []
    for name in task.input_names:
        low, high = {"t": (1, 60), "A": (0.1, 2), "P": (1, 50), "x": (-1, 1), "v": (-1, 1), "epsilon": (0, 0.6), "T": (273, 573)}[name]
        cols.append(rng.uniform(low, high, n))
    return np.column_stack(cols)


def test_damaged_rows_say_what_was_repaired(tasks, catalog):
    entries = {e["name"]: e for e in catalog["entries"]}
    for t in tasks:
        repair = t.ground_truth.repair
        template = t.ground_truth.template
        if t.name in GARBLED:
            assert len(repair) > 40, t.name
        if "abs(" in template:
            assert "Absolute-value bars restored" in repair, t.name
        if "(1/3)" in template:
            assert "1/3" in repair, t.name
        if t.name not in GARBLED and "abs(" not in template and "(1/3)" not in template:
            assert repair == "", t.name
        assert t.metadata["paper"] == entries[t.name]["paper"]
    # The repaired forms themselves.
    by_name = {t.name: t.ground_truth.template for t in tasks}
    assert by_name["CKR9"] == "-k*A**2 - k*A + k_t*sin(log(A + 1))"
    assert by_name["CKR15"] == "-k*sqrt(A) - k*A*exp(-k_s*t) + k_p*sin(omega*A)"
    assert by_name["BPG14"] == "r*(-1 + P/alpha)*(1 - P/K0)*P + r*P + r*P/(1 + exp(-alpha*(-beta + P)))"
    assert by_name["PO21"].count("log(abs(v) + 1)") == 1
    assert "exp(-abs(x))" in by_name["PO1"]


def test_context_describes_the_problem_without_giving_the_law_away(tasks):
    for t in tasks:
        assert t.name in t.context
        assert t.split_note
        text = t.context.lower()
        for fragment in ("sin(", "cos(", "exp(", "log(", "sqrt", "**", "^", "omega0", "k_", "k0"):
            assert fragment not in text, (t.name, fragment)
        for name in t.ground_truth.constants:
            if len(name) > 1:
                assert f" {name.lower()} " not in f" {text} ", (t.name, name)


# ----------------------------------------------------------------------------- data


def test_every_task_satisfies_its_equation_on_every_split(tasks, all_data):
    for t in tasks:
        data = all_data[t.id]
        f = compile_numpy(parse(t.ground_truth.expression, t.input_names), t.input_names)
        for split in SPLITS:
            s = data[split]
            assert s.X.shape == (len(s), len(t.input_names))
            assert np.all(np.isfinite(s.X)) and np.all(np.isfinite(s.y))
            assert _nmse(f(s.X), s.y) < 1e-10, (t.name, split)


def test_split_sizes_and_out_of_domain_rows(tasks, all_data):
    for t in tasks:
        data = all_data[t.id]
        assert [len(data[s]) for s in SPLITS] == [4000, 500, 500], t.name
        X_id = np.vstack([data["train"].X, data["test_id"].X])
        X_ood = data["test_ood"].X
        axis = t.input_names.index("t" if t.time_variable else "T")
        assert X_ood[:, axis].min() > X_id[:, axis].max(), t.name
        X, _ = _time_ordered(t, data)
        if t.time_variable:
            t0, t1 = t.metadata["t_span"]
            np.testing.assert_allclose(X[:, axis], np.linspace(t0, t1, 5000), rtol=0, atol=1e-12)
            assert (t0, t1) == ((0.0, 60.0) if t.name not in ("BPG20", "BPG22") else (1.0, 60.0))
        else:
            assert len(np.unique(X[:, 0])) == 100 and len(np.unique(X[:, 1])) == 50
            assert X[:, 0].min() == 0.0 and X[:, 0].max() == pytest.approx(0.6)
            assert X[:, 1].min() == 273.0 and X[:, 1].max() == 573.0
            assert len(np.unique(X_ood[:, 1])) == 5


def test_trajectories_are_integrals_of_their_law(tasks, all_data):
    """The target is the time derivative of the stored state (and v is dx/dt for oscillators)."""
    for t in tasks:
        if not t.time_variable:
            continue
        X, y = _time_ordered(t, all_data[t.id])
        names = t.input_names
        time_axis = X[:, names.index("t")]
        state = X[:, names.index(lsr_synth.DOMAINS[t.group].states[-1])]
        slope = np.gradient(state, time_axis, edge_order=2)
        assert _nmse(slope[2:-2], y[2:-2]) < 1e-4, t.name
        if t.group == "physics":
            dx = np.gradient(X[:, names.index("x")], time_axis, edge_order=2)
            assert _nmse(dx[2:-2], X[2:-2, names.index("v")]) < 1e-4, t.name


def test_no_trajectory_is_flat_divergent_or_out_of_domain(tasks, all_data, catalog):
    thresholds = catalog["header"]["quality_thresholds"]
    entries = {e["name"]: e for e in catalog["entries"]}
    for t in tasks:
        entry = entries[t.name]
        X, y = _time_ordered(t, all_data[t.id])
        metrics = lsr_synth.quality_metrics(entry, X, y)
        assert lsr_synth.quality_violations(entry, metrics, thresholds) == [], t.name
        if lsr_synth.DOMAINS[t.group].positive_state:
            assert metrics["state_min"] > 0


def test_quality_check_rejects_bad_trajectories(catalog):
    thresholds = catalog["header"]["quality_thresholds"]
    entry = {"name": "X", "domain": "chemistry"}
    t = np.linspace(0, 60, 5000)
    flat = np.column_stack([t, np.full_like(t, 0.5)])
    assert lsr_synth.quality_violations(entry, lsr_synth.quality_metrics(entry, flat, np.zeros_like(t)), thresholds)
    settled = np.column_stack([t, 1 + np.exp(-t)])
    problems = lsr_synth.quality_violations(entry, lsr_synth.quality_metrics(entry, settled, -np.exp(-t)), thresholds)
    assert any("out-of-domain" in p for p in problems)
    runaway = np.column_stack([t, np.exp(t)])
    problems = lsr_synth.quality_violations(entry, lsr_synth.quality_metrics(entry, runaway, np.exp(t)), thresholds)
    assert any("diverges" in p for p in problems)
    extinct = np.column_stack([t, 1e-9 + np.maximum(1 - t / 30, 0)])
    problems = lsr_synth.quality_violations(entry, lsr_synth.quality_metrics(entry, extinct, -np.ones_like(t)), thresholds)
    assert any("valid domain" in p for p in problems)


def test_split_is_seeded_and_stable(tasks, all_data):
    t = next(t for t in tasks if t.name == "CKR1")
    X, y = lsr_synth.simulate(next(e for e in lsr_synth.read_catalog()["entries"] if e["name"] == "CKR1"))
    again = lsr_synth.split_samples(X, y, t.metadata["seed"])
    for split in SPLITS:
        np.testing.assert_array_equal(again[split].X, all_data[t.id][split].X)
    other = lsr_synth.split_samples(X, y, t.metadata["seed"] + 1)
    assert not np.array_equal(other["test_id"].X, again["test_id"].X)
    np.testing.assert_array_equal(other["test_ood"].X, again["test_ood"].X)


@pytest.mark.parametrize("name", ["CKR4", "BPG22", "PO21", "MatSci13"])
def test_data_are_regenerated_identically_without_the_cache(tasks, tmp_path, monkeypatch, name):
    monkeypatch.setenv("KEPLERLAB_HOME", str(tmp_path))
    task = next(t for t in tasks if t.name == name)
    first = task.load_data()
    cache_files = list((tmp_path / "cache").rglob("*.npz"))
    assert len(cache_files) == 1
    for path in cache_files:
        path.unlink()
    second = task.load_data()
    assert list((tmp_path / "cache").rglob("*.npz"))
    for split in SPLITS:
        np.testing.assert_array_equal(first[split].X, second[split].X)
        np.testing.assert_array_equal(first[split].y, second[split].y)


def test_rebuilt_catalog_changes_the_cache_key(catalog):
    entry = dict(catalog["entries"][0])
    changed = dict(entry, constants={**entry["constants"], "k": entry["constants"]["k"] * 2})
    assert lsr_synth.entry_version(entry) != lsr_synth.entry_version(changed)
    assert lsr_synth.entry_version(entry) == lsr_synth.entry_version(json.loads(json.dumps(entry)))
