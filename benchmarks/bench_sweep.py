"""Throughput of a sweep on a local Dask cluster with 1 and with 2 workers (scaling efficiency).

The same sweep (GP on the first ``--units`` LSR-Synth material-science laws, ``--seconds`` each)
runs three times into fresh run stores: on the local process pool (one worker, the default of
``keplerlab bench``), on a local Dask cluster of one worker, and on one of two workers. Printed:
wall time, throughput (runs per minute), the overhead per run beyond its search budget, and the
ratios measured in this run: Dask-1 / pool, Dask-2 / Dask-1, and the scaling efficiency
(speed-up ÷ workers). GP's own threads follow the workers (cores ÷ workers), as in a real sweep.

Usage: python benchmarks/bench_sweep.py [--units 8] [--seconds 3] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def measure(label: str, make_backend, spec, folder: Path) -> dict:
    from engine.store import RunStore
    from engine.sweep import run_sweep

    started = time.perf_counter()
    backend = make_backend()
    ready = time.perf_counter()
    with RunStore(folder / f"{label}.sqlite3") as store:
        try:
            ended = run_sweep(spec, store, backend)
        finally:
            backend.close()
        runs = store.list_runs()
    wall = time.perf_counter() - started
    finished = sum(1 for r in runs if r.status == "finished")
    search = sum(r.seconds or 0.0 for r in runs)
    return {
        "backend": label,
        "units": len(runs),
        "finished": finished,
        "status": ended.status,
        "startup_s": round(ready - started, 2),
        "wall_s": round(wall, 2),
        "runs_per_min": round(60 * len(runs) / wall, 2),
        "overhead_per_run_s": round((wall - search / max(1, backend_workers(label))) / max(1, len(runs)), 2),
        # The run's own time as recorded (search, then scoring of the final model): what is left
        # of the wall time per unit is hand-over, worker start-up and the import into the store.
        "run_s_mean": round(search / max(1, len(runs)), 2),
    }


def backend_workers(label: str) -> int:
    return 2 if label == "dask-2" else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--units", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    from engine.sweep import SweepSpec
    from engine.sweep.backends import DaskBackend, LocalPool
    from engine.tasks import registry

    tasks = [t.id for t in registry.all_tasks("llmsrbench/lsr-synth/material_science")][: args.units]
    spec = SweepSpec(tuple(tasks), ("gp",), 1, args.seconds)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        rows = [
            measure("pool-1", lambda: LocalPool(1), spec, folder),
            measure("dask-1", lambda: DaskBackend(workers=1), spec, folder),
            measure("dask-2", lambda: DaskBackend(workers=2), spec, folder),
        ]
    by = {r["backend"]: r for r in rows}
    speedup = by["dask-1"]["wall_s"] / by["dask-2"]["wall_s"]
    ratios = {
        "dask1_over_pool_wall": round(by["dask-1"]["wall_s"] / by["pool-1"]["wall_s"], 3),
        "dask2_speedup_over_dask1": round(speedup, 3),
        "scaling_efficiency_2_workers": round(speedup / 2, 3),
    }
    if args.json:
        print(json.dumps({"units": len(tasks), "seconds": args.seconds, "rows": rows, "ratios": ratios}, indent=2))
        return 0
    print(f"sweep of {len(tasks)} GP runs × {args.seconds:g} s (LSR-Synth material science)")
    print(f"{'backend':8} {'start s':>8} {'wall s':>8} {'runs/min':>9} {'run s (mean)':>13} {'overhead/run s':>15} finished")
    for r in rows:
        print(f"{r['backend']:8} {r['startup_s']:8.2f} {r['wall_s']:8.2f} {r['runs_per_min']:9.2f} "
              f"{r['run_s_mean']:13.2f} {r['overhead_per_run_s']:15.2f} {r['finished']}/{r['units']}")
    print(f"Dask (1 worker) / process pool, wall time: {ratios['dask1_over_pool_wall']:.3f}")
    print(f"speed-up of 2 Dask workers over 1: {speedup:.3f} → scaling efficiency {ratios['scaling_efficiency_2_workers']:.1%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
