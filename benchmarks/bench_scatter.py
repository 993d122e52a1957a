"""Refilling the fit viewer's scatters: pyqtgraph's ScatterPlotItem (the baseline) against
viewers.scatter.UniformScatter, which looks the points' one style up once instead of once per
point.

One "fit" is what the fit viewer sets when a run is opened: 4000 train, 500 test-ID and 500
test-OOD points, in the predicted-against-true plot and in the residual plot (six ``setData``).
Printed: the median time of a fit's ``setData`` calls for each item class, the ratio baseline /
ours, and whether both gave every point the same place in the symbol atlas (the same picture).

Usage: python benchmarks/bench_scatter.py [--fits 30] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPLITS = (4000, 500, 500)


def measure(fits: int) -> dict:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    sys.path.insert(0, str(ROOT))
    import numpy as np
    import pyqtgraph as pg
    from PySide6.QtWidgets import QApplication

    from viewers.scatter import UniformScatter

    app = QApplication.instance() or QApplication([])
    view = pg.PlotWidget()
    view.resize(600, 400)
    view.show()
    app.processEvents()
    rng = np.random.default_rng(0)
    data = [[(rng.random(n), rng.random(n)) for n in SPLITS for _plot in range(2)] for _ in range(fits)]
    out: dict = {"fits": fits, "points_per_fit": 2 * sum(SPLITS)}
    atlas = {}
    # Interleaved rounds, so that a change in the machine's load falls on both alike.
    times: dict[str, list[float]] = {"pyqtgraph": [], "uniform": []}
    items = {name: [cls(size=4, pen=None, brush=pg.mkBrush(30, 90, 200), symbol="o", hoverable=False)
                    for _ in range(2 * len(SPLITS))]
             for name, cls in (("pyqtgraph", pg.ScatterPlotItem), ("uniform", UniformScatter))}
    for name in items:
        for item in items[name]:
            view.addItem(item)
    for fit in data:
        for name, group in items.items():
            t0 = time.perf_counter()
            for item, (x, y) in zip(group, fit):
                item.setData(x=x, y=y)
            times[name].append((time.perf_counter() - t0) * 1000.0)
            app.processEvents()
    for name, group in items.items():
        atlas[name] = [item.data["sourceRect"].copy() for item in group]
    for name, values in times.items():
        out[f"{name}_ms"] = float(np.median(values))
    out["ratio"] = out["pyqtgraph_ms"] / out["uniform_ms"]
    out["same_picture"] = all(np.array_equal(a, b) for a, b in zip(atlas["pyqtgraph"], atlas["uniform"]))
    view.close()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fits", type=int, default=30, help="fits set per item class (default 30)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    result = measure(args.fits)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"One fit = {result['points_per_fit']} points in six scatters; median of {result['fits']} fits")
    print(f"pyqtgraph ScatterPlotItem (baseline)  {result['pyqtgraph_ms']:7.2f} ms")
    print(f"UniformScatter                        {result['uniform_ms']:7.2f} ms")
    print(f"ratio baseline / ours                 {result['ratio']:7.2f}")
    print(f"same place in the symbol atlas for every point: {'yes' if result['same_picture'] else 'NO'}")
    return 0 if result["same_picture"] else 1


if __name__ == "__main__":
    sys.exit(main())
