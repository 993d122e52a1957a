"""The Feynman suite: catalog, ground truth, generated data and splits."""

from __future__ import annotations

import csv
import math
import subprocess
import sys
import time
import zlib
from pathlib import Path

import numpy as np
import pytest

from engine.expr import compile_numpy, parse
from engine.tasks import feynman
from engine.tasks.model import SPLITS

REPO = Path(__file__).resolve().parents[2]
CSV_PATH = REPO.parent / "shared" / "data" / "feynman" / "FeynmanEquations.csv"


@pytest.fixture(scope="module")
def catalog():
    return feynman.read_catalog()


@pytest.fixture(scope="module")
def entries(catalog):
    return {e["filename"]: e for e in catalog["entries"]}


@pytest.fixture(scope="module")
def tasks():
    return feynman.load_tasks()


@pytest.fixture(scope="module")
def fy_home(tmp_path_factory):
    """A private KEPLERLAB_HOME (data cache) for the tests of this module that generate data."""
    home = tmp_path_factory.mktemp("feynman-home")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("KEPLERLAB_HOME", str(home))
        yield home


@pytest.fixture(scope="module")
def all_data(tasks, fy_home):
    return {task.id: task.load_data() for task in tasks}


def _nmse(y_hat: np.ndarray, y: np.ndarray) -> float:
    denom = float(np.sum((y - np.mean(y)) ** 2))
    err = float(np.sum((y_hat - y) ** 2))
    return err / denom if denom > 0 else (0.0 if err == 0 else math.inf)


# ----------------------------------------------------------------------------- catalog


def test_suite_has_the_100_equations_with_stable_ids(tasks, catalog):
    assert len(tasks) == 100
    assert len({t.id for t in tasks}) == 100
    ids = [t.id for t in tasks]
    assert ids[:3] == ["feynman/I.6.2a", "feynman/I.6.2", "feynman/I.6.2b"]
    assert ids[-1] == "feynman/III.21.20"
    for t in tasks:
        assert t.id == f"feynman/{t.name}"
        assert t.suite == "feynman" and t.kind == "function"
        assert t.group == f"volume {t.name.split('.')[0]}"
        assert t.name in t.title
    counts = {g: sum(t.group == g for t in tasks) for g in ("volume I", "volume II", "volume III")}
    assert counts == {"volume I": 51, "volume II": 34, "volume III": 15}
    assert sorted(e["number"] for e in catalog["entries"]) == list(range(1, 101))


@pytest.mark.skipif(not CSV_PATH.exists(), reason="shared data folder (FeynmanEquations.csv) is absent")
def test_catalog_matches_the_csv(entries):
    with open(CSV_PATH, encoding="utf-8-sig", newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if (r["Filename"] or "").strip()]
    assert len(rows) == 100
    assert [r["Filename"] for r in rows] == list(entries)
    for r in rows:
        e = entries[r["Filename"]]
        assert e["formula"] == r["Formula"] and e["output"]["name"] == r["Output"]
        assert e["number"] == int(r["Number"])
        names = [r[f"v{i}_name"] for i in range(1, 11) if r[f"v{i}_name"]]
        assert [v["name"] for v in e["inputs"]] == names
        for i, v in enumerate(e["inputs"], start=1):
            assert (v["low"], v["high"]) == (float(r[f"v{i}_low"]), float(r[f"v{i}_high"]))


def test_registry_and_cli_find_the_suite(tasks):
    from engine.tasks import registry

    assert len(registry.all_tasks("feynman")) == 100
    task = registry.get_task("feynman/II.11.27")
    assert task.ground_truth.source.endswith("row II.11.27, equation 64")
    assert registry.suite_label("feynman") == "Feynman equations"
    assert registry.benchmark_label("feynman") == "Feynman"


def test_every_ground_truth_parses_with_exactly_its_variables(tasks):
    for t in tasks:
        expr = parse(t.ground_truth.expression, t.input_names)
        assert {s.name for s in expr.free_symbols} == set(t.input_names), t.id
        assert t.target.name not in t.input_names


def test_every_variable_is_described(tasks, catalog):
    for t in tasks:
        for v in t.variables:
            assert v.description and v.unit and v.latex, (t.id, v.name)
        assert t.context and len(t.context) > 40
        # The context describes the physics without giving the formula away.
        assert t.ground_truth.expression not in t.context
    constants = {"G", "c", "h", "kb", "epsilon", "g"}
    for t in tasks:
        for v in t.inputs:
            if v.name in constants and "constant" in v.description:
                assert "input variable" in v.description


def test_loading_is_fast_and_light():
    best = min(_timed(feynman.load_tasks) for _ in range(5))
    assert best < 0.05, f"load_tasks took {best * 1000:.1f} ms"
    code = (
        "import sys; from engine.tasks import feynman; feynman.load_tasks(); "
        "print(sorted(m for m in ('sympy', 'scipy', 'PySide6') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def test_catalog_header_documents_the_protocol(catalog, entries):
    head = catalog["header"]
    assert "Udrescu" in head["source"] and "FeynmanEquations.csv" in head["source"]
    assert "(high, high + (high - low)/2]" in head["ood_rule"]
    assert any("test_ood" in line for line in head["sampling_protocol"])
    for e in entries.values():
        assert e["seed"] == zlib.crc32(e["filename"].encode())
        assert e["ood"]["rule"] in ("above", "custom")
        if e["ood"]["rule"] == "custom":
            assert e["ood"]["reason"] and set(e["ood"]["ranges"]) == {v["name"] for v in e["inputs"]}
    for t in feynman.load_tasks():
        assert "out-of-domain" in t.split_note
        assert ("(high − low)/2" in t.split_note) or ("own out-of-domain box" in t.split_note)


# ----------------------------------------------------------------------------- data


def test_data_satisfy_the_equation_on_every_split(tasks, entries, all_data):
    for t in tasks:
        data = all_data[t.id]
        assert [s.name for s in data] == list(SPLITS)
        assert (len(data["train"]), len(data["test_id"]), len(data["test_ood"])) == (4000, 500, 500)
        f = compile_numpy(parse(t.ground_truth.expression, t.input_names), t.input_names)
        e = entries[t.name]
        train_box = np.array(feynman.train_ranges(e))
        ood_box = np.array(feynman.ood_ranges(e))
        for split in data:
            assert split.X.shape == (len(split), len(t.input_names))
            assert np.all(np.isfinite(split.y)), (t.id, split.name)
            assert _nmse(f(split.X), split.y) < 1e-10, (t.id, split.name)
            box = ood_box if split.name == "test_ood" else train_box
            assert np.all(split.X >= box[:, 0]) and np.all(split.X <= box[:, 1]), (t.id, split.name)
        # OOD rule: every input above its training range, within half the range's width.
        X_ood = data["test_ood"].X
        if e["ood"]["rule"] == "above":
            lo, hi = train_box[:, 0], train_box[:, 1]
            assert np.all(X_ood > hi), t.id
            assert np.all(X_ood <= hi + (hi - lo) / 2), t.id
            # The OOD samples cover their box (not stuck at one edge).
            assert np.all(X_ood.max(axis=0) - X_ood.min(axis=0) > 0.8 * (hi - lo) / 2), t.id


def test_arcsin_task_rejects_invalid_ood_points(all_data):
    # I.26.2: theta1 = arcsin(n sin(theta2)); above the training range n sin(theta2) may leave
    # [-1, 1], and those points must have been redrawn rather than stored as NaN.
    ood = all_data["feynman/I.26.2"]["test_ood"]
    n, theta2 = ood.X[:, 0], ood.X[:, 1]
    assert np.all(np.abs(n * np.sin(theta2)) <= 1)
    assert np.all(n > 1)


def test_regeneration_is_deterministic(tasks, fy_home, all_data):
    picks = [t for t in tasks if t.name in ("I.6.2a", "I.26.2", "II.11.27", "III.19.51")]
    before = {t.id: all_data[t.id] for t in picks}
    cache_files = list((fy_home / "cache" / "taskdata").glob("feynman__*.npz"))
    assert len(cache_files) == 100
    for path in cache_files:
        path.unlink()
    for t in picks:
        again = t.load_data()
        for split in before[t.id]:
            np.testing.assert_array_equal(again[split.name].X, split.X)
            np.testing.assert_array_equal(again[split.name].y, split.y)
    # Also independent of the cache machinery: a direct rebuild gives the same arrays.
    e = {x["filename"]: x for x in feynman.read_catalog()["entries"]}["II.11.27"]
    direct = feynman.build_task_data(e)
    for split in before["feynman/II.11.27"]:
        np.testing.assert_array_equal(direct[split.name].X, split.X)


def test_different_tasks_get_different_samples(all_data):
    a = all_data["feynman/I.12.1"]["train"].X  # mu, Nn in [1, 5]
    b = all_data["feynman/I.25.13"]["train"].X  # q, C in [1, 5]
    assert not np.array_equal(a, b)


# ----------------------------------------------------------------------------- spot checks


def _eval(task_id: str, **values: float) -> float:
    from engine.tasks import registry

    t = registry.get_task(task_id)
    f = compile_numpy(parse(t.ground_truth.expression, t.input_names), t.input_names)
    return float(f(np.array([[values[n] for n in t.input_names]]))[0])


def test_spot_checks_against_hand_computed_values():
    # Standard normal density at 1: exp(-1/2)/sqrt(2 pi).
    assert _eval("feynman/I.6.2a", theta=1.0) == pytest.approx(0.24197072451914337, rel=1e-12)
    # Relativistic mass with v/c = 3/5: m0 / 0.8.
    assert _eval("feynman/I.10.7", m_0=2.0, v=3.0, c=5.0) == pytest.approx(2.5, rel=1e-12)
    # Friction: mu * N.
    assert _eval("feynman/I.12.1", mu=2.0, Nn=3.5) == pytest.approx(7.0, rel=1e-12)
    # Snell: arcsin(0.5 * sin(pi/2)) = pi/6.
    assert _eval("feynman/I.26.2", n=0.5, theta2=math.pi / 2) == pytest.approx(math.pi / 6, rel=1e-12)
    # Clausius-Mossotti polarisation: n alpha = 0.75 -> 0.75 / (1 - 0.25) * eps * E = 1 * 2 * 1.5.
    assert _eval("feynman/II.11.27", n=0.75, alpha=1.0, epsilon=2.0, Ef=1.5) == pytest.approx(3.0, rel=1e-12)
    # Waveguide: sqrt((4/1)^2 - pi^2/pi^2) = sqrt(15).
    assert _eval("feynman/II.24.17", omega=4.0, c=1.0, d=math.pi) == pytest.approx(math.sqrt(15), rel=1e-12)
    # Hydrogen levels with h = 2 pi (hbar = 1), eps = 1/(4 pi): -m q^4 / (2 n^2) = -1/8 at n = 2.
    assert _eval("feynman/III.19.51", m=1.0, q=1.0, h=2 * math.pi, n=2.0, epsilon=1 / (4 * math.pi)) == pytest.approx(
        -0.125, rel=1e-12
    )
    # Bose-Einstein occupation at hbar omega = kT ln 2: 1/(2 - 1) = 1.
    assert _eval("feynman/III.4.32", h=2 * math.pi, omega=math.log(2), kb=1.0, T=1.0) == pytest.approx(1.0, rel=1e-12)
