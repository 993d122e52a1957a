"""Responsiveness of the main window: main-thread stalls while it works, and start-up time.

(a) Stalls. A QTimer firing every 5 ms on the GUI thread records the gaps between its ticks;
a tick's stall is its gap minus the 5 ms interval. Measured in the real main window
(``MainWindow(restore_layout=False)``, private ``KEPLERLAB_HOME``) in three phases:

* idle: the window with an LSR-Synth task selected and nothing running (the baseline);
* GP run: the embedded GP started from the run panel's Start button, streaming progress,
  Pareto fronts and finally its fit and candidate scores into the window, until all is done;
* fit updates: the window's fit viewer redrawn with 5000 points (4000 train, 500 test-ID,
  500 test-OOD, as an LSR-Synth task) every ``--fit-interval`` ms.

Printed per phase: ticks, max and 99th-percentile stall, ticks stalled over 50 ms, the ratio
busy / idle of the p99 stall, and PASS / FAIL against the target "no stall over 50 ms".

(b) Start-up. Each measurement is a fresh ``python -c`` process with cold imports: the time
from spawning it to the first event its event loop processes after ``window.show()``, median
of ``--repeat``, for a bare ``QApplication`` + empty ``QMainWindow`` (the baseline) and for
Kepler Lab's window as the app opens it, plus the time until its task catalog has loaded
(issue 2's goal: under 3 s on a 2-core machine) and the ratios to the baseline.

(c) Load (``--only load``; not in the default run). The same stall meter in a window whose
history holds ten real short GP runs (made headless first), in four phases: idle (the
baseline); a live GP run while a QTimer selects the next history run every
``--click-interval`` ms (as a user clicking through the history: each opens that run, its
task, its fit); a sweep of ``--sweep-units`` short runs (``bn-search`` on ten small
SymbolBench networks, a 2-worker process pool) going on in the background on a QThread, as
the Sweep dialog runs it, with the same clicks; and the live run, the sweep and the clicks
together. The run phases also report the longest stall while the run's thread scores its
final model (from its ``Final`` event to ``RunFinished``: SymPy on the run's thread).

Qt runs on the offscreen platform unless ``--platform`` says otherwise; the platform used is
printed. On a display or under a virtual one: ``xvfb-run -a python benchmarks/bench_ui.py
--platform xcb``.

Usage: python benchmarks/bench_ui.py [--only stalls|startup|load] [--run-seconds 10] [--idle-seconds 5]
                                     [--fit-seconds 5] [--fit-interval 50] [--repeat 3]
                                     [--sweep-units 500] [--click-interval 700]
                                     [--platform offscreen] [--json]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TICK_MS = 5
STALL_LIMIT_MS = 50.0
CATALOG_GOAL_S = 3.0
TASK = "llmsrbench/lsr-synth/chemistry/CKR1"
#: The load scenario's background sweep: bn-search on ten small SymbolBench networks (real runs
#: of about 15 ms of search each, recorded in the store like any other).
LOAD_NETWORKS = tuple("symbolbench/bn/" + name for name in (
    "n3s1c1a", "n3s1c1b", "raf", "n7s3", "multivalued", "xiao_wnt5a", "n5s3", "n6s1c2",
    "saadatpour_guardcell", "krumsiek_myeloid"))

# Each start-up script prints the platform name and time.monotonic() readings (CLOCK_MONOTONIC,
# shared by all processes on Linux); the parent subtracts the moment it spawned the process.
STARTUP_BARE = """
import time
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QMainWindow
app = QApplication([])
w = QMainWindow()
w.show()
def interactive():
    print(app.platformName(), time.monotonic(), flush=True)
    app.quit()
QTimer.singleShot(0, interactive)
app.exec()
"""

STARTUP_KEPLER = """
import time
from PySide6.QtCore import QTimer
from app.application import create_app
from app.main_window import MainWindow
app = create_app()
w = MainWindow()
w.show()
marks = {}
def interactive():
    marks["shown"] = time.monotonic()
poll = QTimer()
poll.setInterval(5)
def check():
    if w.tasks:
        marks["catalog"] = time.monotonic()
        poll.stop()
        app.quit()
    elif time.monotonic() - marks.get("shown", time.monotonic()) > 120:
        app.quit()
poll.timeout.connect(check)
QTimer.singleShot(0, interactive)
QTimer.singleShot(0, poll.start)
app.exec()
print(app.platformName(), marks["shown"], marks.get("catalog", float("nan")), flush=True)
w.close()
"""


# --------------------------------------------------------------------------- start-up


def _spawn(code: str, env: dict) -> tuple[str, list[float]]:
    """Run ``code`` in a fresh interpreter; its readings relative to the spawn moment."""
    spawned = time.monotonic()
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"start-up probe failed (exit {out.returncode}):\n{out.stderr.strip()[-2000:]}")
    fields = out.stdout.split()
    return fields[0], [float(v) - spawned for v in fields[1:]]


def measure_startup(repeat: int, platform: str) -> dict:
    with tempfile.TemporaryDirectory(prefix="bench-ui-start-") as home:
        env = dict(os.environ, QT_QPA_PLATFORM=platform, KEPLERLAB_HOME=home, PYTHONPATH=str(ROOT))
        bare, shown, catalog = [], [], []
        used = platform
        for _ in range(repeat):
            used, (t,) = _spawn(STARTUP_BARE, env)
            bare.append(t)
            used, (s, c) = _spawn(STARTUP_KEPLER, env)
            shown.append(s)
            catalog.append(c)
    b, s, c = statistics.median(bare), statistics.median(shown), statistics.median(catalog)
    return {
        "platform": used,
        "repeat": repeat,
        "bare_window_s": b,
        "kepler_window_s": s,
        "kepler_catalog_s": c,
        "ratio_window_over_bare": s / b,
        "ratio_catalog_over_bare": c / b,
        "catalog_goal_s": CATALOG_GOAL_S,
        "catalog_goal_met": c < CATALOG_GOAL_S,
        "runs": {"bare": bare, "window": shown, "catalog": catalog},
    }


# --------------------------------------------------------------------------- stalls


def _stall_tools():
    """The stall meter and two event-loop helpers (Qt imported only when a GUI part runs)."""
    import numpy as np
    from PySide6.QtCore import QEventLoop, QObject, Qt, QTimer

    class StallMeter(QObject):
        """A precise 5 ms timer on the GUI thread; the gaps between its ticks."""

        def __init__(self):
            super().__init__()
            self.timer = QTimer(self)
            self.timer.setTimerType(Qt.TimerType.PreciseTimer)
            self.timer.setInterval(TICK_MS)
            self.timer.timeout.connect(self._tick)
            self.ticks: list[float] = []

        def _tick(self):
            self.ticks.append(time.perf_counter())

        def start(self):
            self.ticks = [time.perf_counter()]
            self.timer.start()

        def stop(self) -> dict:
            self.timer.stop()
            gaps = np.diff(np.asarray(self.ticks)) * 1000.0
            stalls = np.clip(gaps - TICK_MS, 0.0, None)
            return {
                "ticks": int(len(gaps)),
                "seconds": float(self.ticks[-1] - self.ticks[0]) if len(self.ticks) > 1 else 0.0,
                "max_ms": float(stalls.max()) if len(stalls) else math.nan,
                "p99_ms": float(np.percentile(stalls, 99)) if len(stalls) else math.nan,
                "over_50ms": int(np.sum(stalls > STALL_LIMIT_MS)),
                # The five longest stalls: (seconds into the phase when the gap began, stall ms).
                "worst": [(round(float(self.ticks[i] - self.ticks[0]), 3), round(float(stalls[i]), 1))
                          for i in sorted(np.argsort(stalls)[::-1][:5])],
            }

    def spin(ms: int) -> None:
        """Run the event loop normally for ``ms`` milliseconds."""
        loop = QEventLoop()
        QTimer.singleShot(ms, loop.quit)
        loop.exec()

    def wait_until(predicate, timeout_s: float, what: str) -> None:
        """Run the event loop until ``predicate()`` holds (checked every 20 ms)."""
        if predicate():
            return
        loop = QEventLoop()
        poll = QTimer()
        poll.setInterval(20)
        poll.timeout.connect(lambda: predicate() and loop.quit())
        deadline = QTimer()
        deadline.setSingleShot(True)
        deadline.timeout.connect(loop.quit)
        poll.start()
        deadline.start(int(timeout_s * 1000))
        loop.exec()
        poll.stop()
        deadline.stop()
        if not predicate():
            raise RuntimeError(f"timed out after {timeout_s:g} s waiting for {what}")

    return StallMeter, spin, wait_until


def measure_stalls(args) -> dict:
    os.environ["KEPLERLAB_HOME"] = tempfile.mkdtemp(prefix="bench-ui-")
    sys.path.insert(0, str(ROOT))
    import numpy as np
    from PySide6.QtCore import QTimer

    from app.application import create_app
    from app.main_window import MainWindow
    from engine import methods as m
    from viewers.fit_viewer import FitData

    StallMeter, spin, wait_until = _stall_tools()

    app = create_app()
    win = MainWindow(restore_layout=False)
    win.show()
    meter = StallMeter()
    results: dict = {"platform": app.platformName(), "task": TASK}
    try:
        wait_until(lambda: len(win.tasks) > 0, 60, "the task catalog")
        if not win.browser.select_task(TASK):
            raise RuntimeError(f"task {TASK} is not in the browser")
        wait_until(lambda: win.current_task is not None and win.detail.preview.point_count() > 0
                   and not win.loader.busy(), 120, "the task's data preview")
        spin(500)  # let the last redraws settle

        meter.start()
        spin(int(args.idle_seconds * 1000))
        results["idle"] = meter.stop()

        if not win.run_panel.select_method("gp"):
            raise RuntimeError("the run panel does not offer the GP method")
        win.run_panel.set_value("seconds", args.run_seconds)
        win.run_panel.set_value("seed", 0)
        counts = {"progress": 0, "fronts": 0}

        def count(event):
            if isinstance(event, m.Progress):
                counts["progress"] += 1
            elif isinstance(event, m.ParetoFront):
                counts["fronts"] += 1

        win.controller.event.connect(count)
        finished: list = []
        milestones: dict = {}

        def mark(name):
            milestones.setdefault(name, round(time.perf_counter() - meter.ticks[0], 3))

        win.controller.event.connect(lambda e: isinstance(e, m.Progress) and mark("first_progress"))
        win.controller.finished.connect(finished.append)
        win.controller.finished.connect(lambda _r: mark("run_finished"))
        win.controller.fit_ready.connect(lambda _f: mark("fit_ready"))
        win.controller.idle.connect(lambda: mark("controller_idle"))
        win.docks["loss"].raise_()
        meter.start()
        win.run_panel.start_button.click()
        wait_until(lambda: win.controller.is_running() or finished, 30, "the run to start")
        wait_until(lambda: finished and not win.controller.is_running() and not win.loader.busy()
                   and not win.scorer.busy(), args.run_seconds + 120, "the run and its scoring to finish")
        results["gp_run"] = meter.stop()
        status = finished[0].status if finished else "unknown"
        if status != "finished":
            raise RuntimeError(f"the GP run ended as {status}: {finished[0].error if finished else ''}")
        results["gp_run"].update(run_seconds=args.run_seconds, progress_events=counts["progress"],
                                 pareto_fronts=counts["fronts"], status=status, milestones=milestones)
        win.controller.event.disconnect(count)
        spin(300)

        rng = np.random.default_rng(0)
        fits = []
        for shift in (0.0, 0.05):
            splits = {}
            for split, n in (("train", 4000), ("test_id", 500), ("test_ood", 500)):
                y = rng.normal(size=n)
                splits[split] = (y, y + shift + 0.1 * rng.normal(size=n))
            fits.append(FitData("y", splits, title="bench_ui: 5000 points"))
        win.docks["fit"].raise_()
        updates, update_ms = [0], []

        def redraw():
            t0 = time.perf_counter()
            win.fit.show_fit(fits[updates[0] % 2])
            update_ms.append(1000 * (time.perf_counter() - t0))
            updates[0] += 1

        feeder = QTimer()
        feeder.setInterval(args.fit_interval)
        feeder.timeout.connect(redraw)
        meter.start()
        feeder.start()
        spin(int(args.fit_seconds * 1000))
        feeder.stop()
        results["fit_updates"] = meter.stop()
        results["fit_updates"].update(points=win.fit.plotted_point_count(), updates=updates[0],
                                      interval_ms=args.fit_interval,
                                      median_update_ms=statistics.median(update_ms) if update_ms else math.nan)
    finally:
        win.close()
        app.processEvents()

    idle_p99 = results["idle"]["p99_ms"]
    for key in ("gp_run", "fit_updates"):
        r = results[key]
        r["ratio_p99_over_idle"] = r["p99_ms"] / idle_p99 if idle_p99 > 0 else math.inf
        r["pass"] = r["max_ms"] <= STALL_LIMIT_MS
    return results


# --------------------------------------------------------------------------- load


def _stalls_between(ticks: list[float], start: float, end: float) -> float:
    """The longest stall (ms) of a gap overlapping [start, end] (seconds into the phase)."""
    t0 = ticks[0]
    worst = 0.0
    for a, b in zip(ticks, ticks[1:]):
        if b - t0 >= start and a - t0 <= end:
            worst = max(worst, (b - a) * 1000.0 - TICK_MS)
    return worst


def measure_load(args) -> dict:
    """Stalls with ten runs in the history: idle (the baseline); a live GP run while the history
    is clicked every ``--click-interval`` ms; a sweep of ``--sweep-units`` short runs going on in
    the background (on its own QThread, as the Sweep dialog runs it) with the same clicks; and
    the live run, the sweep and the clicks together."""
    os.environ["KEPLERLAB_HOME"] = tempfile.mkdtemp(prefix="bench-ui-load-")
    sys.path.insert(0, str(ROOT))
    from PySide6.QtCore import QTimer

    from app.application import create_app
    from app.main_window import MainWindow
    from app.worker import start_job
    from engine import host_calls
    from engine import methods as m
    from engine import paths
    from engine.host import Call
    from engine.store import RunStore
    from engine.sweep import SweepSpec, run_sweep
    from engine.sweep.backends import LocalPool

    StallMeter, spin, wait_until = _stall_tools()

    # Ten real short GP runs for the history, made headless before the window opens.
    with RunStore(paths.default_db_path()) as store:
        pool = LocalPool(2)
        try:
            history = SweepSpec(tuple(f"llmsrbench/lsr-synth/material_science/MatSci{i}" for i in range(1, 11)),
                                ("gp",), 1, 1.0, settings={"population_size": 50, "generations": 20})
            made = run_sweep(history, store, pool)
        finally:
            pool.close()
        history_ids = [r.id for r in store.list_runs()]
    if made.counts != {"finished": 10}:
        raise RuntimeError(f"the ten history runs did not all finish: {made.counts}")

    app = create_app()
    win = MainWindow(restore_layout=False)
    win.show()
    meter = StallMeter()
    results: dict = {"platform": app.platformName(), "task": TASK, "history_runs": len(history_ids),
                     "sweep_units": args.sweep_units, "click_interval_ms": args.click_interval}
    phase: dict = {}

    def mark(name):
        if "milestones" in phase and meter.ticks:
            phase["milestones"].setdefault(name, round(time.perf_counter() - meter.ticks[0], 3))

    def on_event(event):
        if isinstance(event, m.Progress):
            phase["progress"] = phase.get("progress", 0) + 1
            mark("first_progress")
        elif isinstance(event, m.Final):
            mark("final_model")  # the run's thread now scores it (engine.runner.execute)

    win.controller.event.connect(on_event)
    win.controller.finished.connect(lambda r: (phase.setdefault("finished", r), mark("run_finished")))
    clicks = [0]

    def click():  # as a user's click on the next stored run: selection → open_run
        win.history.select_run(history_ids[clicks[0] % len(history_ids)])
        clicks[0] += 1

    clicker = QTimer()
    clicker.setInterval(args.click_interval)
    clicker.timeout.connect(click)

    def select_task():
        if not win.browser.select_task(TASK):
            raise RuntimeError(f"task {TASK} is not in the browser")
        wait_until(lambda: win.current_task is not None and win.current_task.id == TASK
                   and win.detail.preview.point_count() > 0 and not win.loader.busy() and not win.scorer.busy(),
                   120, "the task's data preview")
        spin(300)

    sweep_state: dict = {}

    def start_sweep():
        """The background sweep (not resumed: each call plans and records a new one)."""
        spec = SweepSpec(LOAD_NETWORKS, ("bn-search",), max(1, args.sweep_units // len(LOAD_NETWORKS)), 5.0)
        sweep_state.clear()
        sweep_state.update(done=0, ended=None)

        # As the Sweep dialog runs it: coordinated in an engine host, streamed to a job thread.
        call = Call(host_calls.sweep, spec, str(paths.default_db_path()), {"local_workers": 2}, False)
        sweep_state["call"] = call

        def produce():
            yield from call

        def on_item(event):
            if getattr(event, "kind", "") == "unit_done":
                sweep_state["done"] += 1
                sweep_state.setdefault("first_done", time.perf_counter())
            elif getattr(event, "kind", "") == "sweep_ended":
                sweep_state["ended"] = event
                sweep_state["ended_at"] = time.perf_counter()

        job = start_job(produce, name="bench-sweep")
        job.item.connect(on_item)
        job.failed.connect(lambda message: sweep_state.setdefault("error", message))
        sweep_state["job"] = job
        wait_until(lambda: sweep_state["done"] > 0 or "error" in sweep_state, 120, "the sweep's first result")
        if "error" in sweep_state:
            raise RuntimeError(f"the background sweep failed: {sweep_state['error']}")

    def sweep_over() -> bool:
        return sweep_state.get("ended") is not None or "error" in sweep_state

    def run_phase(with_run: bool, with_sweep: bool) -> dict:
        phase.clear()
        phase["milestones"] = {}
        if with_run:
            select_task()
            win.run_panel.set_value("seconds", args.run_seconds)
            win.run_panel.set_value("seed", 0)
        if with_sweep:
            start_sweep()
        meter.start()
        started = time.perf_counter()
        clicks[0] = 0
        clicker.start()
        if with_run:
            win.run_panel.start_button.click()
            wait_until(lambda: win.controller.is_running() or "finished" in phase, 30, "the run to start")
            wait_until(lambda: "finished" in phase and not win.controller.is_running(), args.run_seconds + 120,
                       "the run to finish")
        if with_sweep:
            wait_until(sweep_over, 600, "the sweep to finish")
        clicker.stop()
        wait_until(lambda: not win.loader.busy() and not win.scorer.busy(), 120, "the window's background work")
        out = meter.stop()
        out.update(clicks=clicks[0], milestones=dict(phase["milestones"]))
        if with_run:
            finished = phase["finished"]
            if finished.status != "finished":
                raise RuntimeError(f"the GP run ended as {finished.status}: {finished.error}")
            ms = phase["milestones"]
            out.update(progress_events=phase.get("progress", 0))
            if "final_model" in ms and "run_finished" in ms:
                out["scoring_window_s"] = round(ms["run_finished"] - ms["final_model"], 3)
                out["scoring_max_ms"] = _stalls_between(meter.ticks, ms["final_model"], ms["run_finished"])
        if with_sweep:
            ended = sweep_state.get("ended")
            out.update(sweep_done=sweep_state["done"], sweep_status=ended.status if ended else "failed",
                       sweep_seconds=round(sweep_state.get("ended_at", time.perf_counter()) - started, 2))
            sweep_state["job"].wait(30000)
        spin(300)
        return out

    try:
        wait_until(lambda: len(win.tasks) > 0, 60, "the task catalog")
        if sorted(win.history.run_ids()) != sorted(history_ids):
            raise RuntimeError("the history does not show the ten runs")
        select_task()
        meter.start()
        spin(int(args.idle_seconds * 1000))
        results["idle"] = meter.stop()
        win.docks["history"].raise_()
        results["run"] = run_phase(with_run=True, with_sweep=False)
        results["sweep"] = run_phase(with_run=False, with_sweep=True)
        results["run_sweep"] = run_phase(with_run=True, with_sweep=True)
    finally:
        clicker.stop()
        job = sweep_state.get("job")
        if job is not None and job.is_running():
            job.wait(60000)
        win.close()
        app.processEvents()

    idle_p99 = results["idle"]["p99_ms"]
    for key in ("run", "sweep", "run_sweep"):
        r = results[key]
        r["ratio_p99_over_idle"] = r["p99_ms"] / idle_p99 if idle_p99 > 0 else math.inf
        r["pass"] = r["max_ms"] <= STALL_LIMIT_MS
    return results



# --------------------------------------------------------------------------- report


def _jsonable(value):
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    return value


def report(stalls: dict | None, startup: dict | None) -> None:
    if stalls is not None:
        print(f"Main-thread stalls (Qt platform: {stalls['platform']}; {TICK_MS} ms timer, stall = gap - "
              f"{TICK_MS} ms; target: none over {STALL_LIMIT_MS:g} ms)")
        header = f"{'phase':<34} {'ticks':>6} {'max ms':>8} {'p99 ms':>8} {'>50 ms':>7} {'p99/idle':>9}  verdict"
        print(header)
        print("-" * len(header))
        labels = {
            "idle": "idle window (baseline)",
            "gp_run": f"GP run, {stalls['gp_run']['run_seconds']:g} s budget + wrap-up",
            "fit_updates": f"fit plot, {stalls['fit_updates']['points']} pts / "
                           f"{stalls['fit_updates']['interval_ms']} ms",
        }
        for key, label in labels.items():
            r = stalls[key]
            ratio = "" if key == "idle" else f"{r['ratio_p99_over_idle']:>9.2f}"
            verdict = "" if key == "idle" else ("PASS" if r["pass"] else "FAIL")
            print(f"{label:<34} {r['ticks']:>6} {r['max_ms']:>8.1f} {r['p99_ms']:>8.2f} {r['over_50ms']:>7} "
                  f"{ratio:>9}  {verdict}")
        g, f = stalls["gp_run"], stalls["fit_updates"]
        print(f"GP run on {stalls['task']}: {g['progress_events']} progress events, {g['pareto_fronts']} "
              f"Pareto fronts, {g['seconds']:.1f} s measured. Fit plot: {f['updates']} redraws, median "
              f"show_fit {f['median_update_ms']:.1f} ms (painting comes on top).")
        print("GP run milestones (s into the phase): "
              + ", ".join(f"{k} {v:.2f}" for k, v in g["milestones"].items()))
        for key in labels:
            worst = ", ".join(f"{ms:.0f} ms at {t:.2f} s" for t, ms in stalls[key]["worst"])
            print(f"longest stalls, {key}: {worst}")
    if startup is not None:
        if stalls is not None:
            print()
        print(f"Start-up to interactive window (Qt platform: {startup['platform']}; fresh process, "
              f"median of {startup['repeat']}; from spawn to first processed event after show())")
        b = startup["bare_window_s"]
        print(f"bare QApplication + QMainWindow  {b:6.2f} s   (baseline)")
        print(f"Kepler Lab window interactive    {startup['kepler_window_s']:6.2f} s   ratio "
              f"{startup['ratio_window_over_bare']:5.2f}")
        print(f"Kepler Lab task catalog loaded   {startup['kepler_catalog_s']:6.2f} s   ratio "
              f"{startup['ratio_catalog_over_bare']:5.2f}   goal < {CATALOG_GOAL_S:g} s: "
              f"{'PASS' if startup['catalog_goal_met'] else 'FAIL'}")


def report_load(load: dict) -> None:
    print(f"Main-thread stalls under load (Qt platform: {load['platform']}; {load['history_runs']} runs in the "
          f"history, one clicked every {load['click_interval_ms']} ms in the busy phases; background sweep of "
          f"{load['sweep_units']} bn-search runs on a 2-worker process pool; target: none over {STALL_LIMIT_MS:g} ms)")
    header = f"{'phase':<34} {'ticks':>6} {'max ms':>8} {'p99 ms':>8} {'>50 ms':>7} {'p99/idle':>9}  verdict"
    print(header)
    print("-" * len(header))
    labels = {
        "idle": "idle window, 10 runs (baseline)",
        "run": "live GP run + clicks",
        "sweep": "sweep + clicks",
        "run_sweep": "live GP run + sweep + clicks",
    }
    for key, label in labels.items():
        r = load[key]
        ratio = "" if key == "idle" else f"{r['ratio_p99_over_idle']:>9.2f}"
        verdict = "" if key == "idle" else ("PASS" if r["pass"] else "FAIL")
        print(f"{label:<34} {r['ticks']:>6} {r['max_ms']:>8.1f} {r['p99_ms']:>8.2f} {r['over_50ms']:>7} "
              f"{ratio:>9}  {verdict}")
    for key in ("run", "run_sweep"):
        r = load[key]
        if "scoring_max_ms" in r:
            print(f"{labels[key]}: the run's thread scored its final model for {r['scoring_window_s']:.2f} s "
                  f"(Final → RunFinished); longest stall in that window {r['scoring_max_ms']:.0f} ms "
                  f"(the phase's longest: {r['max_ms']:.0f} ms); {r['progress_events']} progress events, "
                  f"{r['clicks']} history clicks")
    for key in ("sweep", "run_sweep"):
        r = load[key]
        print(f"{labels[key]}: {r['sweep_done']} units done, sweep {r['sweep_status']} after {r['sweep_seconds']:.1f} s "
              f"of the phase, {r['clicks']} history clicks")
    for key in labels:
        worst = ", ".join(f"{ms:.0f} ms at {t:.2f} s" for t, ms in load[key]["worst"])
        milestones = ", ".join(f"{k} {v:.2f}" for k, v in load[key].get("milestones", {}).items())
        print(f"longest stalls, {key}: {worst}" + (f"  [milestones: {milestones}]" if milestones else ""))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=("stalls", "startup", "load"),
                        help="run one part only; 'load' (not in the default run) measures stalls with ten runs in "
                             "the history, history clicks, a live run and a background sweep")
    parser.add_argument("--run-seconds", type=float, default=10.0, help="GP run budget (default 10)")
    parser.add_argument("--idle-seconds", type=float, default=5.0, help="idle baseline length (default 5)")
    parser.add_argument("--fit-seconds", type=float, default=5.0, help="fit-update phase length (default 5)")
    parser.add_argument("--fit-interval", type=int, default=50,
                        help="ms between fit redraws (default 50: the ~20 redraws/s views are held to)")
    parser.add_argument("--sweep-units", type=int, default=500,
                        help="runs in the load scenario's background sweep (default 500)")
    parser.add_argument("--click-interval", type=int, default=700,
                        help="ms between history clicks in the load scenario (default 700)")
    parser.add_argument("--repeat", type=int, default=3, help="start-up measurements per variant (default 3)")
    parser.add_argument("--platform", default=os.environ.get("QT_QPA_PLATFORM") or "offscreen",
                        help="Qt platform plugin (default offscreen; xcb needs a display, e.g. xvfb-run)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args()
    if min(args.run_seconds, args.idle_seconds, args.fit_seconds) <= 0 or args.fit_interval < 0 or args.repeat < 1 \
            or args.sweep_units < 1 or args.click_interval < 1:
        parser.error("durations must be positive, --fit-interval non-negative, --repeat, --sweep-units and "
                     "--click-interval at least 1")
    if args.platform == "xcb" and not os.environ.get("DISPLAY"):
        parser.error("--platform xcb needs a display; run under xvfb-run -a")
    os.environ["QT_QPA_PLATFORM"] = args.platform

    if args.only == "load":
        load = measure_load(args)
        if args.json:
            print(json.dumps(_jsonable({"load": load}), indent=2))
        else:
            report_load(load)
        return 0
    startup = None if args.only == "stalls" else measure_startup(args.repeat, args.platform)
    stalls = None if args.only == "startup" else measure_stalls(args)
    if args.json:
        print(json.dumps(_jsonable({"stalls": stalls, "startup": startup}), indent=2))
    else:
        report(stalls, startup)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
