"""LLM-SRBench's LSR-Transform suite: the pipeline, the shipped catalog, the data and the CLI."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

from engine.expr import complexity, compile_numpy, parse
from engine.tasks import feynman, lsr_transform
from engine.tasks.model import SPLITS

REPO = Path(__file__).resolve().parents[2]
SUITE = "llmsrbench/lsr-transform"


def _load_builder():
    spec = importlib.util.spec_from_file_location(
        "build_lsr_transform_catalog", REPO / "scripts" / "build_lsr_transform_catalog.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while being defined
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def builder():
    return _load_builder()


@pytest.fixture(scope="module")
def feynman_entries():
    return {e["filename"]: e for e in feynman.read_catalog()["entries"]}


@pytest.fixture(scope="module")
def catalog():
    return lsr_transform.read_catalog()


@pytest.fixture(scope="module")
def entries(catalog):
    return {e["name"]: e for e in catalog["entries"]}


@pytest.fixture(scope="module")
def tasks():
    return {t.name: t for t in lsr_transform.load_tasks()}


@pytest.fixture(scope="module")
def lt_home(tmp_path_factory):
    home = tmp_path_factory.mktemp("lsr-transform-home")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("KEPLERLAB_HOME", str(home))
        yield home


def _same_function(text: str, expected: str, names: list[str], X: np.ndarray) -> bool:
    got = compile_numpy(parse(text, names), names)(X)
    want = compile_numpy(parse(expected, names), names)(X)
    return bool(np.all(np.isfinite(want)) and np.allclose(got, want, rtol=1e-9, atol=0))


def _positive_points(n_inputs: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(1.0, 3.0, size=(200, n_inputs))


# ----------------------------------------------------------------------------- pipeline


def test_pipeline_reproduces_the_papers_oscillator_example(builder, feynman_entries):
    """E = 1/4 m (ω² + ω0²) x² solved for m is 4E / ((ω² + ω0²) x²) (LLM-SRBench Fig. 7)."""
    entry = feynman_entries["I.24.6"]
    out = builder.transform(entry, "m")
    assert out.status == "solved", out.detail
    names = builder.new_input_names(entry, "m")
    assert names == ["E_n", "omega", "omega_0", "x"]
    assert _same_function(out.chosen.text, "4*E_n/((omega**2+omega_0**2)*x**2)", names, _positive_points(4))
    assert out.chosen.kept_fraction == 1.0
    # SymPy's own node count of the paper's form.
    assert out.chosen.complexity == complexity(parse("4*E_n/((omega**2+omega_0**2)*x**2)", names))


def test_pipeline_reproduces_the_papers_dipole_examples(builder, feynman_entries):
    """V = p cos θ / (4π ε r²) solved for p_d and for r (LLM-SRBench App. A.1)."""
    entry = feynman_entries["II.6.11"]
    X = _positive_points(4, 1)
    X[:, 2] = np.random.default_rng(2).uniform(0.1, 1.4, 200)  # theta with cos(theta) > 0
    p = builder.transform(entry, "p_d")
    assert p.status == "solved"
    names = builder.new_input_names(entry, "p_d")
    assert names == ["epsilon", "Volt", "theta", "r"]
    assert _same_function(p.chosen.text, "4*pi*epsilon*r**2*Volt/cos(theta)", names, X)
    r = builder.transform(entry, "r")
    assert r.status == "solved"
    names = builder.new_input_names(entry, "r")
    assert _same_function(r.chosen.text, "sqrt(p_d*cos(theta)/(4*pi*epsilon*Volt))", names, X)


def test_equations_without_a_closed_form_are_dropped(builder, feynman_entries):
    # Planck's law cannot be solved for the frequency: omega is inside and outside exp().
    planck = builder.transform(feynman_entries["I.41.16"], "omega")
    assert planck.status == "no_solution" and planck.chosen is None
    # The normal density solved for sigma needs LambertW-like inversion; SymPy gives up.
    gauss = builder.transform(feynman_entries["I.6.2"], "sigma")
    assert gauss.status in ("no_solution", "not_closed_form") and gauss.chosen is None


def test_several_branches_keep_the_one_matching_the_feynman_data(builder, feynman_entries):
    """theta1 = arcsin(n sin theta2) solved for theta2 has two branches (asin and pi - asin);
    the kept one reproduces theta2 on the Feynman points where the other does not."""
    entry = feynman_entries["I.26.2"]
    out = builder.transform(entry, "theta2")
    assert out.status == "solved"
    assert out.n_solutions >= 2 and len(out.branches) >= 2
    assert out.chosen.kept_fraction == max(b.kept_fraction for b in out.branches)
    X0, y0 = builder.feynman_points(entry)
    X, target = lsr_transform.swap_roles(entry, "theta2", X0, y0)
    names = builder.new_input_names(entry, "theta2")
    pred = compile_numpy(parse(out.chosen.text, names), names)(X)
    ok = lsr_transform.in_domain(pred, target, (1.0, 5.0))
    assert ok.mean() == pytest.approx(out.chosen.kept_fraction)


def test_solver_time_limit_is_enforced(builder):
    import time

    started = time.monotonic()
    status, value = builder.run_limited(time.sleep, (30,), 0.5)
    assert status == "timeout" and value is None
    assert time.monotonic() - started < 10


# ----------------------------------------------------------------------------- catalog


def test_catalog_has_enough_tasks_with_unique_stable_ids(catalog, feynman_entries):
    items = catalog["entries"]
    assert len(items) >= 100
    ids = [e["id"] for e in items]
    assert len(set(ids)) == len(ids)
    for e in items:
        original = feynman_entries[e["original"]["filename"]]
        pivot = e["target"]["name"]
        assert e["name"] == f"{original['filename']}_{pivot}"
        assert e["id"] == f"{SUITE}/{e['name']}"
        assert e["original_id"] == f"feynman/{original['filename']}"
        assert pivot in feynman.input_names(original)
        # The old output took the pivot's column; every description is the original's.
        assert [v["name"] for v in e["inputs"]] == [
            original["output"]["name"] if n == pivot else n for n in feynman.input_names(original)
        ]
        assert e["original"]["formula"] == original["formula"]
        assert e["seed"] == original["seed"]
        assert e["context"].startswith(original["context"].rstrip())
        assert f"({pivot}) is the quantity to find" in e["context"]
        assert all(v["description"] and v["unit"] for v in [*e["inputs"], e["target"]])


def test_every_formula_parses_and_passes_the_complexity_rule(catalog):
    head = catalog["header"]
    slack, cap = head["complexity_slack"], head["complexity_cap"]
    for e in catalog["entries"]:
        names = [v["name"] for v in e["inputs"]]
        expr = parse(e["formula"], names)
        assert {s.name for s in expr.free_symbols} <= set(names)
        assert e["original"]["output"] in {s.name for s in expr.free_symbols}
        assert complexity(expr) == e["complexity"]
        assert e["complexity"] <= e["original_complexity"] + slack and e["complexity"] <= cap
        assert not expr.has(sp.I)


def test_header_records_every_stage(catalog):
    head = catalog["header"]
    stages = {s["stage"]: s for s in head["stages"]}
    assert list(stages) == ["feynman", "candidates", "solvable", "refined", "final"]
    assert stages["feynman"]["count"] == 100
    assert stages["candidates"]["count"] == sum(len(e["inputs"]) for e in feynman.read_catalog()["entries"])
    assert stages["candidates"]["count"] >= stages["solvable"]["count"] >= stages["refined"]["count"]
    assert stages["refined"]["count"] >= stages["final"]["count"] == len(catalog["entries"])
    removed = sum(stages["solvable"]["removed"].values())
    assert stages["candidates"]["count"] - removed == stages["solvable"]["count"]
    assert [stages[k]["paper"] for k in ("candidates", "solvable", "final")] == [471, 418, 111]
    assert "complexity(original)" in head["complexity_rule"]
    assert "branch" in head["branch_rule"]


def test_suite_is_registered_and_loads_without_sympy():
    from engine.tasks import registry

    listed = registry.all_tasks(SUITE)
    assert len(listed) >= 100
    assert all(t.kind == "function" and t.suite == SUITE for t in listed)
    assert registry.suite_label(SUITE) == "LSR-Transform"
    code = (
        "import sys; from engine.tasks import lsr_transform; lsr_transform.load_tasks(); "
        "print(sorted(m for m in ('sympy', 'scipy', 'PySide6') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# ----------------------------------------------------------------------------- data

#: A fixed sample of tasks whose data are generated here (the build script checks them all).
SAMPLE = 5


@pytest.fixture(scope="module")
def sample(catalog, tasks, lt_home):
    items = catalog["entries"]
    step = max(1, len(items) // SAMPLE)
    picked = [items[i] for i in range(0, step * SAMPLE, step)][:SAMPLE]
    return [(e, tasks[e["name"]], tasks[e["name"]].load_data()) for e in picked]


def test_data_satisfy_the_new_and_the_original_equation(sample):
    for entry, task, data in sample:
        assert [s.name for s in data] == ["train", "test_id"]  # no OOD set, as in the paper
        assert len(data["train"]) == lsr_transform.N_TRAIN and len(data["test_id"]) == lsr_transform.N_TEST_ID
        f_new = compile_numpy(parse(entry["formula"], task.input_names), task.input_names)
        original = entry["original"]
        f_old = feynman.target_function(original)
        pivot = task.target.name
        col = task.input_names.index(original["output"])
        lows = np.array([v["low"] for v in original["inputs"]])
        highs = np.array([v["high"] for v in original["inputs"]])
        for split in data:
            assert np.all(np.isfinite(split.X)) and np.all(np.isfinite(split.y))
            np.testing.assert_allclose(f_new(split.X), split.y, rtol=1e-6)
            # Swapping back gives original inputs within their ranges, and the old output column
            # is the original formula on them.
            X0 = split.X.copy()
            X0[:, col] = split.y
            assert np.all(X0 >= lows) and np.all(X0 <= highs)
            np.testing.assert_allclose(f_old(X0), split.X[:, col], rtol=1e-12)
        assert task.metadata["original"] == f"feynman/{original['filename']}"
        assert pivot in task.split_note and "No out-of-domain" in task.split_note


def test_data_start_from_the_feynman_tasks_own_points(sample, feynman_entries):
    entry, task, data = next(s for s in sample if s[0]["quality"]["kept_fraction"] == 1.0)
    original = feynman_entries[entry["original"]["filename"]]
    fy_data = feynman.build_task_data(original)
    col = task.input_names.index(original["output"]["name"])
    np.testing.assert_array_equal(data["train"].y, fy_data["train"].X[:, col])
    np.testing.assert_array_equal(data["train"].X[:, col], fy_data["train"].y)


def test_data_are_deterministic(sample, lt_home):
    for entry, task, data in sample[:3]:
        again = lsr_transform.build_task_data(entry)
        for split in data:
            np.testing.assert_array_equal(again[split.name].X, split.X)
            np.testing.assert_array_equal(again[split.name].y, split.y)
    cached = list((lt_home / "cache" / "taskdata").glob("llmsrbench__lsr-transform__*.npz"))
    assert len(cached) == len(sample)


def test_splits_do_not_overlap(sample):
    for _, _, data in sample:
        train = {tuple(r) for r in data["train"].X}
        assert not any(tuple(r) in train for r in data["test_id"].X)
        assert set(SPLITS) >= {s.name for s in data}


# ----------------------------------------------------------------------------- CLI


def keplerlab(*args: str, home: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, KEPLERLAB_HOME=str(home))
    env.pop("DISPLAY", None)
    return subprocess.run(
        [sys.executable, "-m", "app", *args], cwd=REPO, env=env, stdin=subprocess.DEVNULL,
        capture_output=True, text=True, timeout=120,
    )


def test_cli_build_report(catalog, tmp_path):
    done = keplerlab("tasks", "build-report", SUITE, "--json", home=tmp_path)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["suite"] == SUITE
    assert [s["count"] for s in report["stages"]] == [s["count"] for s in catalog["header"]["stages"]]
    assert report["tasks"] == len(catalog["entries"])
    assert report["complexity_rule"] == catalog["header"]["complexity_rule"]

    text = keplerlab("tasks", "build-report", SUITE, home=tmp_path)
    assert text.returncode == 0, text.stderr
    for stage in catalog["header"]["stages"]:
        line = next(l for l in text.stdout.splitlines() if stage["label"] in l)
        assert str(stage["count"]) in line and str(stage["paper"]) in line

    for bad, fragment in (("nosuch/suite", "unknown suite"), ("feynman", "no build report")):
        done = keplerlab("tasks", "build-report", bad, home=tmp_path)
        assert done.returncode == 2 and done.stdout == ""
        assert fragment in done.stderr


def test_cli_lists_the_suite(tmp_path):
    done = keplerlab("tasks", "list", "--suite", SUITE, "--json", home=tmp_path)
    assert done.returncode == 0, done.stderr
    listed = json.loads(done.stdout)
    assert len(listed) >= 100
    assert all(t["id"].startswith(SUITE + "/") and t["kind"] == "function" for t in listed)
    assert {t["group"] for t in listed} <= {"volume I", "volume II", "volume III"}
