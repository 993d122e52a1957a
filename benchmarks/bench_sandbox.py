"""Reused sandbox workers against one fresh process per program (LLM-SR's design).

Both sides evaluate the same skeletons on the same data: compile, fit up to ten parameters by
BFGS from ones, report the MSE. "fresh" starts a new sandbox worker (same limits and isolation)
for every program, as LLM-SR starts a new ``multiprocessing`` process per sample; "pool" loads
the data once and reuses the worker(s). Prints both times and their ratio.

Usage: python benchmarks/bench_sandbox.py [--programs 200] [--workers 1] [--json]
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.sandbox import SandboxLimits, SandboxPool  # noqa: E402

TERMS = ["params[{i}] * x", "params[{i}] * v", "params[{i}] * x**3", "params[{i}] * np.sin(x)",
         "params[{i}] * x * v", "params[{i}] * v**2", "params[{i}] * np.cos(v)", "params[{i}]"]


def skeletons(count: int) -> list[str]:
    rng = np.random.default_rng(1)
    out = []
    for _ in range(count):
        k = int(rng.integers(2, 6))
        picks = rng.choice(len(TERMS), size=k, replace=False)
        body = " + ".join(TERMS[j].format(i=i) for i, j in enumerate(picks))
        out.append("import numpy as np\n\ndef equation(x, v, params):\n"
                   f"    \"\"\"A skeleton in the style of LLM-SR's oscillator problems.\"\"\"\n    return {body}\n")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--programs", type=int, default=200)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--json", action="store_true", help="print the results as JSON")
    args = ap.parse_args()
    if args.programs < 1 or args.workers < 1:
        ap.error("--programs and --workers must be at least 1")

    rng = np.random.default_rng(0)
    X = rng.uniform(-2, 2, size=(500, 2))
    y = -0.8 * X[:, 0] - 0.3 * X[:, 1] + 0.5 * np.sin(X[:, 0])
    programs = skeletons(args.programs)
    limits = SandboxLimits(cpu_seconds=30)

    t0 = time.perf_counter()
    with SandboxPool(size=args.workers, limits=limits) as pool:
        pool.load_data(X, y)
        reused = pool.evaluate_many(programs, "equation", n_params=10)
        protections = {k: pool.protections()[k] for k in ("network", "filesystem", "pid_namespace")}
        if not args.json:
            print("protections:", protections)
    t_pool = time.perf_counter() - t0
    logging.getLogger("engine.sandbox").setLevel(logging.ERROR)  # the warnings were shown once above

    t0 = time.perf_counter()
    fresh = []
    for source in programs:
        with SandboxPool(size=1, limits=limits) as one:
            one.load_data(X, y)
            fresh.append(one.evaluate(source, "equation", n_params=10))
    t_fresh = time.perf_counter() - t0

    same = sum(a.ok == b.ok and (not a.ok or abs(a.mse - b.mse) <= 1e-9 * max(1.0, abs(a.mse)))
               for a, b in zip(reused, fresh))
    n = len(programs)
    if args.json:
        print(json.dumps({
            "programs": n, "workers": args.workers, "fitted": sum(r.ok for r in reused), "identical": same,
            "protections": protections, "reused_seconds": t_pool, "fresh_seconds": t_fresh,
            "ratio_fresh_over_reused": t_fresh / t_pool,
        }, indent=2))
        return
    print(f"{n} skeletons, {sum(r.ok for r in reused)} fitted; identical results: {same}/{n}")
    print(f"reused pool ({args.workers} worker(s)): {t_pool:7.2f} s  ({1000 * t_pool / n:6.1f} ms/program)")
    print(f"fresh process per program:   {t_fresh:7.2f} s  ({1000 * t_fresh / n:6.1f} ms/program)")
    print(f"ratio fresh / reused: {t_fresh / t_pool:.1f}x")


if __name__ == "__main__":
    main()
