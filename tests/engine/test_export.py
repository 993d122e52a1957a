"""Exports: an equation as LaTeX / SymPy / Python / C, and a stored run as JSON / CSV."""

from __future__ import annotations

import json
import math
import shutil
import subprocess

import numpy as np
import pytest
import sympy as sp

from engine import expr as ex
from engine import export as run_export
from engine.expr import export
from engine.store import RunStore

VARS = ["x", "v"]
EXPRESSIONS = [
    "2.5*sin(x) + exp(-v)/x",
    "sqrt(abs(x))*v**1.5 - pi*log(x)",
    "x**2 + 3*x*v - 1/3",
    "tanh(v) + cos(x)**2 + sign(v - 0.5)",
    "0.123456789123*x/(v + 2.0)",
]


def _points(n=50, seed=1):
    rng = np.random.default_rng(seed)
    return np.column_stack([rng.uniform(0.2, 3.0, n), rng.uniform(-2.0, 2.0, n)])


@pytest.mark.parametrize("text", EXPRESSIONS)
def test_python_function_computes_what_compile_numpy_computes(text):
    source = export.to_python_function(text, VARS)
    assert source.splitlines()[3].startswith("def f(x, v):")
    namespace: dict = {}
    exec(compile(source, "<export>", "exec"), namespace)  # our own generated code
    X = _points()
    expected = ex.compile_numpy(ex.parse(text, VARS), VARS)(X)
    with np.errstate(all="ignore"):
        got = np.broadcast_to(namespace["f"](X[:, 0], X[:, 1]), expected.shape)
    np.testing.assert_allclose(got, expected, rtol=1e-12, equal_nan=True)
    assert np.isfinite(expected[~np.isnan(expected)]).all()


@pytest.mark.parametrize("text", EXPRESSIONS)
def test_sympy_code_rebuilds_the_same_expression(text):
    source = export.to_sympy(text, VARS)
    namespace: dict = {}
    exec(compile(source, "<export>", "exec"), namespace)
    rebuilt = namespace["expr"]
    original = ex.parse(text, VARS)
    f1 = sp.lambdify(sp.symbols("x v", real=True), rebuilt)
    f2 = sp.lambdify(sp.symbols("x v", real=True), original)
    for x, v in np.abs(_points(10)):
        assert f1(x, v) == pytest.approx(f2(x, v), rel=1e-12)
    # The exact structure survives (rationals stay rational).
    assert sp.simplify(rebuilt.xreplace({s: sp.Symbol(s.name, real=True) for s in rebuilt.free_symbols}) - original) == 0


def test_latex_contains_the_expected_pieces():
    tex = export.to_latex("2.5*sin(x) + exp(-v)/x + sqrt(x)", VARS, target="y")
    assert tex.startswith("y = ")
    assert r"\sin{\left(x \right)}" in tex
    assert r"\frac{e^{- v}}{x}" in tex
    assert r"\sqrt{x}" in tex
    assert "2.5" in tex
    # Greek variable names become Greek letters; long constants are rounded for reading.
    tex = export.to_latex("0.123456789123*epsilon", ["epsilon"])
    assert r"\epsilon" in tex and "0.123457" in tex and "0.123456789" not in tex


def _compile_and_run_c(source: str, values: list[float], tmp_path) -> float:
    main = source + (
        "\n#include <stdio.h>\n"
        "int main(void) { printf(\"%.17g\\n\", f(" + ", ".join(repr(v) for v in values) + ")); return 0; }\n"
    )
    src = tmp_path / "model.c"
    src.write_text(main)
    exe = tmp_path / "model"
    done = subprocess.run(["gcc", "-std=c99", "-Wall", "-Werror", "-o", str(exe), str(src), "-lm"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return float(subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout)


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")
@pytest.mark.parametrize("text", EXPRESSIONS[:4])
def test_c_function_compiles_and_gives_the_same_number(text, tmp_path):
    source = export.to_c_function(text, VARS)
    assert "double f(double x, double v)" in source
    point = [1.7, 0.8]
    expected = float(ex.compile_numpy(ex.parse(text, VARS), VARS)(np.array([point]))[0])
    assert _compile_and_run_c(source, point, tmp_path) == pytest.approx(expected, rel=1e-12)


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")
def test_c_keyword_variables_are_renamed(tmp_path):
    source = export.to_c_function("int*2 + x", ["int", "x"])
    assert "double f(double int_, double x)" in source
    assert _compile_and_run_c(source, [2.0, 1.0], tmp_path) == pytest.approx(5.0)


def test_unknown_format_and_bad_text_are_refused():
    with pytest.raises(ValueError):
        export.export_expression("x", VARS, "fortran")
    with pytest.raises(ex.ExpressionError):
        export.export_expression("__import__('os')", VARS, "python")


# ---------------------------------------------------------------------- runs


@pytest.fixture
def stored_run(tmp_path):
    store = RunStore(tmp_path / "runs.sqlite3")
    run_id = store.create_run("suite/group/T1", "gp", {"seconds": 2, "seed": 4}, 4)
    store.add_event(run_id, "progress", {"iteration": 1, "best_loss": 0.5})
    store.add_pareto(run_id, 1, [{"expression": "x", "complexity": 1, "loss": 1.0}])
    store.add_event(run_id, "progress", {"iteration": 2, "best_loss": math.inf})
    front = [
        {"expression": "x", "complexity": 1, "loss": 1.0},
        {"expression": "2*x", "complexity": 3, "loss": 0.1},
        {"expression": "x*v + 1", "complexity": 5, "loss": 0.05},
        {"expression": "x*v*x + x - 1", "complexity": 8, "loss": 0.04},
        {"expression": "log(x - 9)", "complexity": 6, "loss": math.inf},
    ]
    store.add_pareto(run_id, 2, front)
    metrics = {"train": {"nmse": 0.04}, "id": {"nmse": 0.05, "acc_0.1": 0.0}, "ood": {"nmse": math.inf}}
    store.finish_run(run_id, "finished", seconds=2.0, expression="x*v*x + x - 1", complexity=8,
                     train_loss=0.04, metrics=metrics, stop_reason="budget")
    yield store, run_id
    store.close()


def test_json_export_round_trips(stored_run, tmp_path):
    store, run_id = stored_run
    path = run_export.export_run(store, run_id, tmp_path / "run.json")
    json.loads(path.read_text(), parse_constant=lambda c: pytest.fail(f"non-standard JSON constant {c}"))
    doc = run_export.read_run_json(path)
    record = store.get_run(run_id)
    assert doc["run"] == record.to_dict()
    assert doc["run"]["metrics"]["ood"]["nmse"] == math.inf
    assert doc["events"] == store.events(run_id)
    assert [e["kind"] for e in doc["events"]] == ["progress", "progress"]
    assert len(doc["candidates"]) == 6 and {c["report"] for c in doc["candidates"]} == {1, 2}
    assert doc["final_front"] == store.last_front(run_id)
    assert doc["recommended"] == "x*v + 1"


def test_csv_export_round_trips(stored_run, tmp_path):
    store, run_id = stored_run
    metrics = {"x*v + 1": {"id_nmse": 0.06, "ood_nmse": 0.3, "id_acc_0.1": 0.0, "sa": True}}
    path = run_export.export_run(store, run_id, tmp_path / "front.csv", candidate_metrics=metrics)
    rows = run_export.read_run_csv(path)
    front = store.last_front(run_id)
    assert [r["expression"] for r in rows] == [c["expression"] for c in front]
    assert [r["complexity"] for r in rows] == [1, 3, 5, 6, 8]
    assert [r["train_loss"] for r in rows] == [c["loss"] for c in front]  # None for the inf loss
    assert all(r["run_id"] == run_id and r["method"] == "gp" and r["seed"] == 4 for r in rows)
    assert [r["expression"] for r in rows if r["is_final"]] == ["x*v*x + x - 1"]
    assert [r["expression"] for r in rows if r["is_recommended"]] == ["x*v + 1"]
    rec = next(r for r in rows if r["expression"] == "x*v + 1")
    assert rec["id_nmse"] == 0.06 and rec["ood_nmse"] == 0.3 and rec["sa"] is True
    assert rows[0]["id_nmse"] is None and rows[0]["sa"] is None
    assert tuple(rows[0]) == run_export.CSV_COLUMNS


def test_export_of_a_missing_run_or_format_fails(stored_run, tmp_path):
    store, run_id = stored_run
    with pytest.raises(KeyError):
        run_export.export_run(store, "nope", tmp_path / "x.csv")
    with pytest.raises(ValueError):
        run_export.export_run(store, run_id, tmp_path / "x.xlsx")


@pytest.mark.parametrize(
    "text, variables",
    [("S/2 + x", ["S", "x"]), ("3*x**2 - 1/x", ["x"]), ("sqrt(x) + abs(E)*pi", ["x", "E"])],
)
def test_sympy_code_runs_with_one_variable_and_with_names_sympy_also_uses(text, variables):
    # A variable called S (entropy) or E must not shadow SymPy's S(2) or break the unpacking.
    code = export.to_sympy(text, variables)
    namespace: dict = {}
    exec(code, namespace)  # our own generated code
    rebuilt = namespace["expr"]
    assert sp.simplify(rebuilt - ex.parse(text, variables)) == 0
