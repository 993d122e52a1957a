"""GP at a fixed budget on a sample of LSR-Synth tasks per domain: pyoperon against gplearn.

Every task gets the same wall-clock budget and seed for both genetic-programming engines:

* Kepler Lab's embedded GP (pyoperon), run through ``engine.runner.execute`` as the app runs
  it; its evaluation rate is the last ``Progress`` event's ``evaluations`` / ``elapsed``.
* gplearn's ``SymbolicRegressor`` (``pip install -e .[bench]``), grown one generation at a time
  with ``warm_start=True`` until the next generation would overrun the budget; its evaluation
  rate is population size x generations completed / seconds spent fitting. It is fitted on the
  standardised target (as Operon is), its prediction is mapped back, and it is scored with the
  project's own ``engine.metrics.score`` on the task's test splits. Its operators are the
  project GP's defaults that gplearn has built in (add, sub, mul, div, sqrt, log, sin, cos; no
  exp or square), its other settings gplearn's defaults with ``metric="mse"``. A gplearn model
  that predicts NaN or inf anywhere scores NMSE = inf and Acc = 0, as any method would.

Also measured in the same run: ordinary least squares on a cubic polynomial of the inputs
(NumPy ``lstsq``). Printed per domain: median test-ID NMSE, the share of tasks with
Acc_0.1 = 1 (ID / OOD), evaluations per second, and the ratios pyoperon / gplearn (NMSE and
evaluations per second) and pyoperon / polynomial (NMSE). PySR's published Acc_0.1 on
LSR-Synth (LLM-SRBench Table 3) is shown as a reference line only: the paper gives PySR a budget
"equivalent" to 1k LLM calls, far more than the seconds used here.

Usage: python benchmarks/bench_gp.py [--per-domain 3] [--seconds 10] [--seed 0]
                                     [--domains chemistry,physics] [--gplearn-jobs 1] [--json]
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import json
import math
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine import methods as m  # noqa: E402
from engine.metrics import acc_tau, nmse, score  # noqa: E402
from engine.runner import RunFinished, execute  # noqa: E402
from engine.store import RunStore  # noqa: E402
from engine.tasks import registry  # noqa: E402

DOMAINS = ("chemistry", "biology", "physics", "material_science")
#: LLM-SRBench Table 3, PySR column: Acc_0.1 in % of problems (SA is 0 except physics 4.54 %).
PYSR_ACC = {"chemistry": 41.67, "biology": 25.0, "physics": 29.55, "material_science": 68.0}
#: The project GP's default operators that gplearn provides as built-in functions.
GPLEARN_FUNCTIONS = ("add", "sub", "mul", "div", "sqrt", "log", "sin", "cos")
GPLEARN_POPULATION = 1000  # gplearn's default, and the project GP's default too
SPLITS = (("id", "test_id"), ("ood", "test_ood"))


def poly_baseline(task, degree: int = 3) -> dict:
    """Least squares on all monomials of the inputs up to ``degree`` (a cheap, honest baseline)."""
    data = task.load_data()

    def features(X):
        cols = [np.ones(len(X))]
        for d in range(1, degree + 1):
            for combo in itertools.combinations_with_replacement(range(X.shape[1]), d):
                cols.append(np.prod(X[:, combo], axis=1))
        return np.column_stack(cols)

    train = data["train"]
    F = features(train.X)
    scale = np.abs(F).max(axis=0)
    scale[scale == 0] = 1
    coef, *_ = np.linalg.lstsq(F / scale, train.y, rcond=None)
    out = {}
    for key, split in (("id", data["test_id"]), ("ood", data["test_ood"])):
        y_hat = (features(split.X) / scale) @ coef
        out[key] = {"nmse": nmse(split.y, y_hat), "acc_0.1": acc_tau(split.y, y_hat, 0.1)}
    return out


def _failed_scores() -> dict:
    return {"nmse": math.inf, "acc_0.1": 0.0}


def run_pyoperon(task, seconds: float, seed: int, store: RunStore) -> dict:
    """One embedded-GP run as the app does it; test scores and the evaluation rate."""
    last = None
    result = None
    for event in execute(task, "gp", {"seconds": seconds, "seed": seed}, m.RunContext(), store):
        if isinstance(event, m.Progress):
            last = event
        elif isinstance(event, RunFinished):
            result = event
    metrics = result.metrics if result is not None else {}
    out = {key: dict(metrics.get(key) or _failed_scores()) for key, _ in SPLITS}
    out["error"] = None if result is not None and result.status == "finished" else (
        result.error if result is not None else "no result")
    out["seconds"] = result.seconds if result is not None else math.nan
    out["evaluations"] = last.evaluations if last is not None else 0
    out["evals_per_s"] = last.evaluations / last.elapsed if last is not None and last.elapsed > 0 else math.nan
    out["expression"] = result.expression if result is not None else None
    return out


def run_gplearn(task, seconds: float, seed: int, jobs: int = 1) -> dict:
    """gplearn's SymbolicRegressor, one generation per ``fit`` (warm start) within ``seconds``."""
    from gplearn.genetic import SymbolicRegressor

    data = task.load_data()
    X, y = data["train"].X, data["train"].y
    mean, std = float(np.mean(y)), float(np.std(y))
    std = std if std > 0 else 1.0
    est = SymbolicRegressor(population_size=GPLEARN_POPULATION, generations=1, warm_start=True,
                            function_set=GPLEARN_FUNCTIONS, metric="mse", random_state=seed,
                            n_jobs=jobs, verbose=0)
    out = {"error": None, "generations": 0, "expression": None}
    started = time.monotonic()
    last_generation = 0.0
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            while True:
                now = time.monotonic()
                # Stop when the next generation, timed like the last one, would overrun the budget
                # (the first one always runs, so there is a model to score).
                if out["generations"] and now + last_generation > started + seconds:
                    break
                est.set_params(generations=out["generations"] + 1)
                est.fit(X, (y - mean) / std)
                out["generations"] += 1
                last_generation = time.monotonic() - now
    except Exception as exc:  # noqa: BLE001 - a failed baseline is reported, not fatal
        out["error"] = f"{type(exc).__name__}: {exc}"
    elapsed = time.monotonic() - started
    out["seconds"] = elapsed
    out["evaluations"] = GPLEARN_POPULATION * out["generations"]
    out["evals_per_s"] = out["evaluations"] / elapsed if elapsed > 0 else math.nan
    for key, split in SPLITS:
        if out["generations"] == 0:
            out[key] = _failed_scores()
            continue
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                y_hat = mean + std * np.asarray(est.predict(data[split].X), dtype=float)
            out[key] = score(data[split].y, y_hat)  # NaN / inf anywhere: NMSE inf, Acc 0
        except Exception as exc:  # noqa: BLE001
            out[key] = _failed_scores()
            out["error"] = out["error"] or f"{type(exc).__name__} while predicting: {exc}"
    if out["generations"]:
        out["expression"] = str(est._program)
    return out


def ratio(a: float, b: float) -> float:
    """a / b; NaN when it has no meaning (both infinite, both zero, or a NaN input)."""
    if math.isnan(a) or math.isnan(b) or (math.isinf(a) and math.isinf(b)):
        return math.nan
    if b == 0:
        return math.nan if a == 0 else math.inf
    return a / b


def _median(values) -> float:
    values = [v for v in values if not math.isnan(v)]
    return statistics.median(values) if values else math.nan


def _share(results, key) -> float:
    return 100 * statistics.mean(r[key]["acc_0.1"] for r in results)


def sample(tasks, k: int) -> list:
    """Every task if k covers the domain, else k spread evenly over the catalog order."""
    if k >= len(tasks):
        return tasks
    idx = np.linspace(0, len(tasks) - 1, k).round().astype(int)
    return [tasks[i] for i in idx]


def _jsonable(value):
    """Strict JSON: non-finite floats become null (a failed model's NMSE is inf)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-domain", type=int, default=3, help="tasks per domain (default 3)")
    parser.add_argument("--seconds", type=float, default=10.0, help="wall-clock budget per run (default 10)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--domains", default=",".join(DOMAINS), help="comma-separated LSR-Synth domains")
    parser.add_argument("--gplearn-jobs", type=int, default=1,
                        help="gplearn n_jobs (default 1: its per-fit process start-up costs more than "
                             "it gains on 2 cores)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args()
    domains = [d.strip() for d in args.domains.split(",") if d.strip()]
    unknown = [d for d in domains if d not in DOMAINS]
    if unknown or not domains:
        parser.error(f"unknown domain(s) {', '.join(unknown) or '(none given)'}; choose from {', '.join(DOMAINS)}")
    if args.per_domain < 1 or args.seconds <= 0:
        parser.error("--per-domain must be at least 1 and --seconds positive")
    if importlib.util.find_spec("gplearn") is None:
        print("gplearn is not installed: .venv/bin/pip install -e .[bench]", file=sys.stderr)
        return 1

    threads = m.get_method("gp").default_config()["threads"]
    rows, per_task = {}, []
    with tempfile.TemporaryDirectory() as tmp, RunStore(Path(tmp) / "bench.sqlite3") as store:
        for domain in domains:
            tasks = sample(registry.all_tasks(f"llmsrbench/lsr-synth/{domain}"), args.per_domain)
            gp, gl, base = [], [], []
            for task in tasks:
                gp.append(run_pyoperon(task, args.seconds, args.seed, store))
                gl.append(run_gplearn(task, args.seconds, args.seed, args.gplearn_jobs))
                base.append(poly_baseline(task))
                per_task.append({
                    "task": task.id,
                    "pyoperon": {k: gp[-1][k] for k in ("id", "ood", "evaluations", "evals_per_s", "seconds",
                                                          "expression", "error")},
                    "gplearn": {k: gl[-1][k] for k in ("id", "ood", "generations", "evaluations", "evals_per_s",
                                                         "seconds", "expression", "error")},
                    "poly": base[-1],
                })
                note = f"  gplearn error: {gl[-1]['error']}" if gl[-1]["error"] else ""
                print(
                    f"{task.id:<48} NMSE(ID) pyoperon {gp[-1]['id']['nmse']:.3g}  gplearn "
                    f"{gl[-1]['id']['nmse']:.3g} ({gl[-1]['generations']} gen)  poly "
                    f"{base[-1]['id']['nmse']:.3g}{note}",
                    file=sys.stderr,
                )
            r = {
                "tasks": len(tasks),
                "gp_median_nmse_id": _median(x["id"]["nmse"] for x in gp),
                "gp_median_nmse_ood": _median(x["ood"]["nmse"] for x in gp),
                "gp_acc_id": _share(gp, "id"),
                "gp_acc_ood": _share(gp, "ood"),
                "gp_evals_per_s": _median(x["evals_per_s"] for x in gp),
                "gp_failed": sum(x["error"] is not None for x in gp),
                "gplearn_median_nmse_id": _median(x["id"]["nmse"] for x in gl),
                "gplearn_median_nmse_ood": _median(x["ood"]["nmse"] for x in gl),
                "gplearn_acc_id": _share(gl, "id"),
                "gplearn_acc_ood": _share(gl, "ood"),
                "gplearn_evals_per_s": _median(x["evals_per_s"] for x in gl),
                "gplearn_generations": _median(x["generations"] for x in gl),
                "gplearn_nonfinite": sum(not math.isfinite(x["id"]["nmse"]) for x in gl),
                "poly_median_nmse_id": _median(x["id"]["nmse"] for x in base),
                "poly_acc_id": _share(base, "id"),
                "pysr_published_acc": PYSR_ACC[domain],
            }
            r["nmse_ratio_gp_over_gplearn"] = ratio(r["gp_median_nmse_id"], r["gplearn_median_nmse_id"])
            r["evals_ratio_gp_over_gplearn"] = ratio(r["gp_evals_per_s"], r["gplearn_evals_per_s"])
            r["nmse_ratio_gp_over_poly"] = ratio(r["gp_median_nmse_id"], r["poly_median_nmse_id"])
            rows[domain] = r

    settings = {"seconds": args.seconds, "seed": args.seed, "per_domain": args.per_domain,
                "pyoperon_threads": threads, "gplearn_jobs": args.gplearn_jobs,
                "gplearn_population": GPLEARN_POPULATION, "gplearn_functions": list(GPLEARN_FUNCTIONS)}
    if args.json:
        print(json.dumps(_jsonable({"settings": settings, "domains": rows, "tasks": per_task}), indent=2))
        return 0

    print(f"\n{args.seconds:g} s per run, seed {args.seed}, {args.per_domain} task(s) per domain; "
          f"pyoperon {threads} thread(s), gplearn n_jobs {args.gplearn_jobs}")
    print("\nMedian test-ID NMSE and Acc_0.1 share (ID / OOD)")
    header = (f"{'domain':<17} {'n':>2} {'pyoperon':>9} {'gplearn':>9} {'poly':>9} {'op/gpl':>7} {'op/poly':>8} "
              f"{'pyoperon Acc':>13} {'gplearn Acc':>12} {'PySR (paper)':>12}")
    print(header)
    print("-" * len(header))
    for domain, r in rows.items():
        print(
            f"{domain:<17} {r['tasks']:>2} {r['gp_median_nmse_id']:>9.3g} {r['gplearn_median_nmse_id']:>9.3g} "
            f"{r['poly_median_nmse_id']:>9.3g} {r['nmse_ratio_gp_over_gplearn']:>7.3g} "
            f"{r['nmse_ratio_gp_over_poly']:>8.3g} {r['gp_acc_id']:>5.0f}/{r['gp_acc_ood']:>3.0f} % "
            f"{r['gplearn_acc_id']:>6.0f}/{r['gplearn_acc_ood']:>3.0f} % {r['pysr_published_acc']:>10.2f} %"
        )
    print("\nModel evaluations per second (median over the domain's tasks)")
    header = f"{'domain':<17} {'pyoperon':>10} {'gplearn':>10} {'op/gpl':>7} {'gplearn gens':>13}"
    print(header)
    print("-" * len(header))
    for domain, r in rows.items():
        print(f"{domain:<17} {r['gp_evals_per_s']:>10,.0f} {r['gplearn_evals_per_s']:>10,.0f} "
              f"{r['evals_ratio_gp_over_gplearn']:>7.3g} {r['gplearn_generations']:>13g}")
    failed = {d: (r["gp_failed"], r["gplearn_nonfinite"]) for d, r in rows.items()
              if r["gp_failed"] or r["gplearn_nonfinite"]}
    for domain, (gp_failed, gl_bad) in failed.items():
        print(f"note: {domain}: {gp_failed} pyoperon run(s) failed, {gl_bad} gplearn model(s) non-finite "
              "on test-ID (scored NMSE inf, Acc 0)")
    print("\nop/gpl, op/poly < 1: pyoperon's median ID NMSE is lower (better). Evaluation ratio > 1: "
          "pyoperon evaluates more models per second (its evaluations include constant fitting).\n"
          "Acc = share of tasks whose every test point is within 10 % (Acc_0.1). "
          "PySR's line is LLM-SRBench's published ID Acc_0.1 at a far larger budget.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
