"""``keplerlab --self-test``: does this installation work? (for an installed package and, later,
for a frozen build, which cannot be checked any other way after it is made).

It opens the real main window off-screen in a throw-away data folder (the user's run store and
settings are never touched), waits for the task catalog, selects an LSR-Synth task, runs the
embedded genetic programming for two seconds through the run panel's Start button, waits for the
run, its fit and its scoring, checks that a model was found and that the fit plot holds points,
and renders the window to a PNG. Each step is printed with its time; the exit status is 0 when
every step passed and 1 otherwise, with the step that failed and why.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

TASK = "llmsrbench/lsr-synth/chemistry/CKR2"
RUN_SECONDS = 2.0
#: Longest wait for any one step (the catalog, the run, its scoring), in seconds.
STEP_TIMEOUT = 120.0


class StepFailed(RuntimeError):
    pass


def run_self_test(keep: bool = False) -> int:
    if not os.environ.get("QT_QPA_PLATFORM"):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"  # no display needed
    home = Path(tempfile.mkdtemp(prefix="keplerlab-self-test-"))
    os.environ["KEPLERLAB_HOME"] = str(home)
    started = time.monotonic()
    steps: list[tuple[str, float, str]] = []

    def say(step: str, since: float, detail: str = "") -> None:
        steps.append((step, time.monotonic() - since, detail))
        print(f"  ok   {step:<34} {time.monotonic() - since:6.2f} s  {detail}", flush=True)

    from PySide6.QtCore import QEventLoop, QTimer

    def wait_until(predicate, what: str) -> None:
        deadline = time.monotonic() + STEP_TIMEOUT
        while not predicate():
            if time.monotonic() > deadline:
                raise StepFailed(f"timed out after {STEP_TIMEOUT:g} s waiting for {what}")
            loop = QEventLoop()
            QTimer.singleShot(20, loop.quit)
            loop.exec()

    print(f"Kepler Lab self-test (Qt platform {os.environ['QT_QPA_PLATFORM']}, data in {home})", flush=True)
    window = None
    try:
        t = time.monotonic()
        from app.application import create_app
        from app.main_window import MainWindow
        from engine import __version__

        create_app()
        window = MainWindow(restore_layout=False)
        window.resize(1400, 900)
        window.show()
        say("open the window", t, f"Kepler Lab {__version__}")

        t = time.monotonic()
        wait_until(lambda: len(window.tasks) > 0, "the task catalog")
        say("load the task catalog", t, f"{len(window.tasks)} tasks")

        t = time.monotonic()
        if not window.browser.select_task(TASK):
            raise StepFailed(f"task {TASK} is not in the browser")
        wait_until(lambda: window.current_task is not None and window.current_task.id == TASK
                   and window.detail.preview.point_count() > 0, "the task's data preview")
        say("select a task and preview its data", t, TASK)

        t = time.monotonic()
        if not window.run_panel.select_method("gp"):
            raise StepFailed("the run panel does not offer genetic programming")
        window.run_panel.set_value("seconds", RUN_SECONDS)
        window.run_panel.set_value("seed", 0)
        finished: list = []
        window.controller.finished.connect(finished.append)
        window.run_panel.start_button.click()
        wait_until(lambda: finished and not window.controller.is_running(), "the GP run to end")
        result = finished[0]
        if result.status != "finished" or not result.expression:
            raise StepFailed(f"the run ended as {result.status}: {result.error or 'no model'}")
        nmse = (result.metrics.get("id") or {}).get("nmse")
        say("run GP for 2 s", t, f"model {result.expression[:60]}" + (f", test NMSE {nmse:.3g}" if nmse is not None else ""))

        t = time.monotonic()
        wait_until(lambda: window.fit.plotted_point_count() > 0 and not window.loader.busy()
                   and not window.scorer.busy(), "the fit plot and the candidates' scores")
        say("draw the fit and score candidates", t, f"{window.fit.plotted_point_count()} points")

        t = time.monotonic()
        png = home / "self-test.png"
        image = window.grab()
        if image.isNull() or not image.save(str(png)) or png.stat().st_size < 10_000:
            raise StepFailed("the window could not be rendered to an image")
        say("render the window", t, f"{image.width()}×{image.height()} px")
    except StepFailed as exc:
        print(f"  FAIL {exc}", flush=True)
        return 1
    except Exception as exc:  # anything else is a failure of this installation, said plainly
        print(f"  FAIL {type(exc).__name__}: {exc}", flush=True)
        return 1
    finally:
        if window is not None:
            window.close()
        if not keep:
            shutil.rmtree(home, ignore_errors=True)
    print(f"self-test passed: {len(steps)} steps in {time.monotonic() - started:.1f} s", flush=True)
    return 0


def main(argv: list[str]) -> int:
    keep = "--keep" in argv
    return run_self_test(keep=keep)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
