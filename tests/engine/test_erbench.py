"""ERBench: the SynEq generator and catalog, robustness variants and the sweep engine."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import sympy as sp

from engine.expr import compile_numpy, complexity, parse
from engine.tasks import erbench, registry, variants

FEYNMAN = "feynman/I.6.2a"  # exp(-theta**2/2)/sqrt(2*pi), theta in [1, 3]
MATSCI = "llmsrbench/lsr-synth/material_science/MatSci1"  # no published ranges


def _check_formula_constraints(template: str, expression: str, names: list[str], box) -> None:
    expr = parse(template, names + ["c"])
    free = {s.name for s in expr.free_symbols}
    assert set(names) <= free <= set(names) | {"c"}, template  # every variable, ≤ 1 constant
    assert len(names) <= 3
    assert not expr.atoms(sp.Float), template  # the constant is c; no other free number
    assert 4 <= complexity(expr) <= 15, template
    f = compile_numpy(parse(expression, names), names)
    rng = np.random.default_rng(0)
    X = erbench.sample_uniform(rng, box, 500)
    y = f(X)
    assert erbench.valid_values(y).mean() > 0.99, expression  # valid on its box
    assert erbench.linear_r2(f, box, rng) <= erbench.PARAMS["linear_r2_threshold"], expression


# --------------------------------------------------------------------------- generator


@pytest.fixture(scope="module")
def small_generation():
    return erbench.generate(11, per_cell=1, dimensions=(1, 2, 3), complexities=range(5, 9))


def test_generator_obeys_every_constraint(small_generation):
    formulas = small_generation
    assert len(formulas) >= 10
    cells = {(f.dimension, f.complexity) for f in formulas}
    assert len(cells) == len(formulas)  # one per cell, as asked
    for f in formulas:
        names = list(erbench.VARIABLES[: f.dimension])
        assert 5 <= f.complexity <= 8
        assert len(f.constants) <= 1
        _check_formula_constraints(f.template, f.expression, names, f.box)
    # No two formulas of the same dimension agree at the 100 fixed points.
    for a, b in itertools.combinations(formulas, 2):
        if a.dimension == b.dimension:
            assert not erbench.same_values(a.values, b.values), (a.expression, b.expression)


def test_generator_is_deterministic():
    a = erbench.generate(5, per_cell=1, dimensions=(1,), complexities=range(4, 7))
    b = erbench.generate(5, per_cell=1, dimensions=(1,), complexities=range(4, 7))
    assert [f.expression for f in a] == [f.expression for f in b]
    assert [f.box for f in a] == [f.box for f in b]


def test_linear_and_duplicate_formulas_are_refused():
    rng = np.random.default_rng(0)
    formula, why = erbench.make_formula("x_0 + 2*x_1", 2, rng)
    assert formula is None and why == "linear"
    formula, why = erbench.make_formula("sin(x_0)", 2, rng)
    assert formula is None and why == "missing variable"
    f1, _ = erbench.make_formula("x_0*sin(x_1)", 2, rng)
    f2, _ = erbench.make_formula("sin(x_1)*x_0*2/2", 2, rng)
    assert f1 is not None and f2 is not None
    assert erbench.same_values(f1.values, f2.values)


def test_valid_box_avoids_the_undefined_region():
    f = compile_numpy(parse("log(x_0 - 2) + sqrt(3 - x_1)", ["x_0", "x_1"]), ["x_0", "x_1"])
    box = erbench.find_valid_box(f, 2, np.random.default_rng(1))
    assert box is not None
    (lo0, hi0), (lo1, hi1) = box
    assert lo0 >= 2 and hi1 <= 3
    assert hi0 - lo0 > 5 and hi1 - lo1 > 5  # grown to most of the search box


def test_mixture_sampler_stays_in_the_box_and_is_not_uniform():
    rng = np.random.default_rng(3)
    box = [(-2.0, 2.0), (10.0, 11.0)]
    X = erbench.sample_mixture(rng, box, 5000)
    assert X.shape == (5000, 2)
    assert np.all(X[:, 0] >= -2) and np.all(X[:, 0] <= 2)
    assert np.all(X[:, 1] >= 10) and np.all(X[:, 1] <= 11)
    # Over a few draws at least one column is clearly non-uniform (ten equal bins).
    uneven = []
    for seed in range(5):
        Xs = erbench.sample_mixture(np.random.default_rng(seed), [(0.0, 1.0)], 5000)
        counts, _ = np.histogram(Xs[:, 0], bins=10, range=(0, 1))
        uneven.append(counts.max() / max(counts.min(), 1))
    assert max(uneven) > 3


# --------------------------------------------------------------------------- catalog


def test_shipped_catalog_loads_and_obeys_the_constraints():
    catalog = erbench.read_catalog()
    assert catalog["format"] == "keplerlab-erbench-syneq/1"
    assert catalog["parameters"]["constant_interval"]
    tasks = registry.all_tasks("erbench/syneq")
    assert len(tasks) == len(catalog["entries"]) >= 100
    assert {t.group for t in tasks} == {"d1", "d2", "d3"}
    values: dict[int, list[np.ndarray]] = {}
    for entry, task in zip(catalog["entries"], tasks):
        assert task.id == entry["id"] == f"erbench/syneq/{entry['group']}/{entry['name']}"
        names = task.input_names
        assert names == entry["variables"] and len(names) == entry["dimension"]
        box = [tuple(entry["valid_box"][n]) for n in names]
        _check_formula_constraints(entry["template"], entry["expression"], names, box)
        f = compile_numpy(parse(entry["expression"], names), names)
        values.setdefault(len(names), []).append(f(erbench.fixed_points(len(names))))
    for group in values.values():
        for a, b in itertools.combinations(group, 2):
            assert not erbench.same_values(a, b)


def test_syneq_task_data_match_the_formula_and_the_boxes():
    task = registry.get_task(registry.all_tasks("erbench/syneq/d2")[0].id)
    data = task.load_data()
    f = compile_numpy(parse(task.ground_truth.expression, task.input_names), task.input_names)
    train = [tuple(task.metadata["ranges"][n]) for n in task.input_names]
    for split in data:
        assert np.allclose(f(split.X), split.y)
    for j, (lo, hi) in enumerate(train):
        assert data["train"].X[:, j].min() >= lo and data["train"].X[:, j].max() <= hi
        assert data["test_id"].X[:, j].min() >= lo and data["test_id"].X[:, j].max() <= hi
    X_ood = data["test_ood"].X
    inside = np.all([(X_ood[:, j] >= lo) & (X_ood[:, j] <= hi) for j, (lo, hi) in enumerate(train)], axis=0)
    assert not inside.any()
    assert len(data["train"]) == erbench.N_TRAIN


# --------------------------------------------------------------------------- variants


def _truth(task):
    return compile_numpy(parse(task.ground_truth.expression, task.input_names), task.input_names)


@pytest.mark.parametrize("n", [10, 10000])
def test_sample_size_variant_has_n_rows(n):
    task = registry.get_task(f"erbench/variants/sample_size/{n}/{FEYNMAN}")
    data = task.load_data()
    assert data["train"].X.shape == (n, 1)
    assert np.allclose(_truth(task)(data["train"].X), data["train"].y)
    assert len(data["test_id"]) == variants.N_TEST_ID


@pytest.mark.parametrize("level", [0.01, 0.05, 0.1])
def test_noise_variant_has_the_requested_relative_noise_on_train_only(level):
    base = registry.get_task("feynman/I.12.11")
    task = variants.make_variant(base, "noise", level)
    data = task.load_data()
    f = _truth(task)
    clean = f(data["train"].X)
    measured = np.std(data["train"].y - clean) / np.sqrt(np.mean(clean**2))
    assert measured == pytest.approx(level, rel=0.1)
    assert np.allclose(f(data["test_id"].X), data["test_id"].y)  # test targets are clean
    assert np.allclose(f(data["test_ood"].X), data["test_ood"].y)


def test_noise_zero_is_clean():
    task = registry.get_task(f"erbench/variants/noise/0/{FEYNMAN}")
    data = task.load_data()
    assert np.allclose(_truth(task)(data["train"].X), data["train"].y)


def test_domain_variants_lie_where_promised():
    lo, hi = 1.0, 3.0  # I.6.2a's published theta range
    w = hi - lo
    for level, (a, b) in {
        "shifted": (lo + w / 2, hi + w / 2),
        "narrowed": (lo + w / 4, hi - w / 4),
        "widened": (lo / 2, hi + w / 2),  # the low end keeps its sign: max(lo - w/2, lo/2)
        "base": (lo, hi),
    }.items():
        task = registry.get_task(f"erbench/variants/domain/{level}/{FEYNMAN}")
        X = task.load_data()["train"].X[:, 0]
        assert task.metadata["ranges"]["theta"] == pytest.approx([a, b])
        assert X.min() >= a and X.max() <= b, level
        assert X.min() < a + 0.05 * (b - a) and X.max() > b - 0.05 * (b - a), level  # fills the box
        assert task.metadata["recovery_domain"]["theta"] == [lo, hi]


def test_distribution_variant_uses_the_mixture_in_the_same_box():
    uni = registry.get_task(f"erbench/variants/distribution/uniform/{FEYNMAN}").load_data()["train"].X[:, 0]
    mix = registry.get_task(f"erbench/variants/distribution/mixture/{FEYNMAN}").load_data()["train"].X[:, 0]
    assert mix.min() >= 1 and mix.max() <= 3
    assert not np.allclose(np.sort(uni), np.sort(mix))


def test_variant_of_a_task_without_ranges_uses_its_training_box():
    base = registry.get_task(MATSCI)
    X = base.load_data()["train"].X
    task = variants.make_variant(base, "domain", "narrowed")
    for j, name in enumerate(base.input_names):
        lo, hi = X[:, j].min(), X[:, j].max()
        assert task.metadata["recovery_domain"][name] == pytest.approx([lo, hi])
        assert task.metadata["ranges"][name] == pytest.approx([lo + (hi - lo) / 4, hi - (hi - lo) / 4])


def test_dimensionality_is_a_grouping():
    one = registry.get_task(FEYNMAN)
    five = registry.get_task("feynman/I.12.11")
    task = variants.make_variant(one, "dimensionality", 1)
    assert task.id == f"erbench/variants/dimensionality/1/{FEYNMAN}"
    with pytest.raises(ValueError):
        variants.make_variant(five, "dimensionality", 2)
    assert variants.group_by_dimension([five, one]) == {1: [one], 5: [five]}


def test_variant_ids_resolve_and_data_are_deterministic():
    vid = f"erbench/variants/noise/0.05/{FEYNMAN}"
    task = registry.get_task(vid)
    assert task.id == vid and task.suite == "erbench/variants"
    assert task.ground_truth.expression == registry.get_task(FEYNMAN).ground_truth.expression
    a = variants.make_variant(registry.get_task(FEYNMAN), "noise", "0.05").load_data()
    b = task.load_data()
    assert np.array_equal(a["train"].y, b["train"].y)
    assert vid not in {t.id for t in registry.all_tasks()}  # not listed in the catalog
    for bad in (f"erbench/variants/noise/0.050/{FEYNMAN}",  # not the canonical spelling
                f"erbench/variants/loudness/1/{FEYNMAN}",
                "erbench/variants/noise/0.1/feynman/no-such-task",
                f"erbench/variants/noise/0.1/erbench/variants/noise/0.1/{FEYNMAN}"):
        with pytest.raises(registry.UnknownTaskError):
            registry.get_task(bad)


# --------------------------------------------------------------------------- sweep


@pytest.mark.slow
def test_sweep_reports_rates_per_level_and_resumes_from_the_store(isolated_home):
    from engine import robustness
    from engine.store import RunStore

    base = [registry.get_task(FEYNMAN)]
    with RunStore(isolated_home / "runs.sqlite3") as store:
        events = list(robustness.sweep(base, "noise", "gp", store, levels=["0", "0.1"], seconds=1.5))
        done = events[-1]
        assert isinstance(done, robustness.SweepFinished) and not done.cancelled
        assert [r.level for r in done.rows] == ["0", "0.1"]
        assert all(r.runs == 1 and r.rate in (0.0, 1.0) and r.median_nmse is not None for r in done.rows)
        first = [e for e in events if isinstance(e, robustness.SweepRun)]
        assert all(not r.reused for r in first)
        for r in first:  # the table agrees with the recovery check of the stored expression
            task = registry.get_task(r.task_id)
            assert r.recovered == robustness.recovery_of(task, store.get_run(r.run_id).expression)
        again = list(robustness.sweep(base, "noise", "gp", store, levels=["0", "0.1"], seconds=1.5))
        second = [e for e in again if isinstance(e, robustness.SweepRun)]
        assert all(r.reused for r in second)
        assert [r.run_id for r in second] == [r.run_id for r in first]
        assert again[-1].rows == done.rows
        # Other method settings are another experiment: nothing is reused.
        other = list(robustness.sweep(base, "noise", "gp", store, levels=["0"], seconds=1.5,
                                      config={"population_size": 200}))
        assert [e.reused for e in other if isinstance(e, robustness.SweepRun)] == [False]
