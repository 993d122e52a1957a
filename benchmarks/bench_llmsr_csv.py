"""GP on LLM-SR's four real problems, brought in the way a scientist brings data: as CSV files.

Each problem in ``../shared/data/llmsr/<problem>/`` (train / test_id / test_ood CSV splits, target
in the last column) is imported with ``engine.tasks.user_data.import_table`` into a temporary
``KEPLERLAB_HOME`` and run with the embedded GP for ``--seconds``. Printed per problem: test-ID
and test-OOD NMSE of GP, and of a baseline measured in the same run (least squares on a cubic
polynomial of the inputs, from ``bench_gp.py``), with the ratio GP / baseline.

The LLM-SR paper (Shojaee et al., ICLR 2025) reports its own NMSE on these problems; its table is
not in our reference notes, so no published number is printed here: compare by hand.

Usage: python benchmarks/bench_llmsr_csv.py [--seconds 60] [--seed 0] [--problems a,b] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

DATA = ROOT.parent / "shared" / "data" / "llmsr"
PROBLEMS = ("oscillator1", "oscillator2", "bactgrow", "stressstrain")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--problems", default=",".join(PROBLEMS))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if not DATA.is_dir():
        print(f"no LLM-SR data at {DATA}", file=sys.stderr)
        return 1
    os.environ["KEPLERLAB_HOME"] = tempfile.mkdtemp(prefix="bench-llmsr-")

    from bench_gp import poly_baseline  # noqa: E402

    from engine import methods as m
    from engine.runner import RunFinished, execute
    from engine.store import RunStore
    from engine.tasks import registry, user_data

    rows = []
    with RunStore(Path(os.environ["KEPLERLAB_HOME"]) / "runs.sqlite3") as store:
        for problem in [p.strip() for p in args.problems.split(",") if p.strip()]:
            folder = DATA / problem
            user_data.import_table(
                folder / "train.csv", f"llmsr/{problem}",
                test_file=folder / "test_id.csv", ood_file=folder / "test_ood.csv",
            )
            registry.invalidate()
            task = registry.get_task(f"user/llmsr/{problem}")
            result = None
            for event in execute(task, "gp", {"seconds": args.seconds, "seed": args.seed}, m.RunContext(), store):
                if isinstance(event, RunFinished):
                    result = event
            base = poly_baseline(task)
            row = {
                "problem": problem,
                "gp_id": result.metrics["id"]["nmse"],
                "gp_ood": result.metrics["ood"]["nmse"],
                "cubic_id": base["id"]["nmse"],
                "cubic_ood": base["ood"]["nmse"],
                "complexity": result.complexity,
                "expression": result.expression,
            }
            rows.append(row)
            print(f"{problem}: GP ID {row['gp_id']:.3g}  OOD {row['gp_ood']:.3g}", file=sys.stderr)
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    print(f"GP {args.seconds:g} s, seed {args.seed}; baseline: cubic least squares, same run")
    print(f"{'problem':<14}{'GP NMSE ID':>12}{'cubic ID':>12}{'ratio':>9}{'GP NMSE OOD':>13}{'cubic OOD':>12}{'ratio':>9}")
    for r in rows:
        print(
            f"{r['problem']:<14}{r['gp_id']:>12.3g}{r['cubic_id']:>12.3g}{r['gp_id'] / r['cubic_id']:>9.2g}"
            f"{r['gp_ood']:>13.3g}{r['cubic_ood']:>12.3g}{r['gp_ood'] / r['cubic_ood']:>9.2g}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
