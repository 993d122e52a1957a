"""Start-up time of the window, against a bare Qt window measured in the same run.

Each measurement is a fresh Python process (cold imports), offscreen. Prints the median of
``--repeat`` runs for: a bare QMainWindow (the baseline), Kepler Lab's window shown, and
Kepler Lab's window with the task catalog loaded, plus the ratios to the baseline.
The goal (issue 2): interactive in under 3 s on a 2-core machine.

Usage: python benchmarks/bench_startup.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

BARE = """
import time; t0 = time.perf_counter()
from PySide6.QtWidgets import QApplication, QMainWindow
app = QApplication([]); w = QMainWindow(); w.show(); app.processEvents()
print(time.perf_counter() - t0)
"""

KEPLER = """
import time; t0 = time.perf_counter()
from app.application import create_app
from app.main_window import MainWindow
app = create_app(); w = MainWindow(); w.show(); app.processEvents()
shown = time.perf_counter() - t0
while not w.tasks and time.perf_counter() - t0 < 60:
    app.processEvents(); time.sleep(0.005)
print(shown, time.perf_counter() - t0)
w.close()
"""


def measure(code: str, home: str) -> list[float]:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", KEPLERLAB_HOME=home, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True, cwd=ROOT)
    return [float(v) for v in out.stdout.split()]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        bare = [measure(BARE, home)[0] for _ in range(args.repeat)]
        kepler = [measure(KEPLER, home) for _ in range(args.repeat)]
    b = statistics.median(bare)
    shown = statistics.median(k[0] for k in kepler)
    loaded = statistics.median(k[1] for k in kepler)
    print(f"bare Qt window shown         {b:6.2f} s   (baseline)")
    print(f"Kepler Lab window shown      {shown:6.2f} s   ratio {shown / b:5.2f}")
    print(f"Kepler Lab catalog loaded    {loaded:6.2f} s   ratio {loaded / b:5.2f}   goal < 3 s: "
          f"{'met' if loaded < 3 else 'NOT met'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
