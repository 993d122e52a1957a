"""Take the README's screenshot of the main window after a real discovery run.

    xvfb-run -a -s "-screen 0 1600x1000x24" .venv/bin/python scripts/screenshot.py [--task ID] [--seconds N]

It opens the window exactly as a user does, selects the task, starts the embedded genetic
programming method, waits for the run to end and saves the window to
``docs/images/main-window.png``. The run goes to a throw-away store (a temporary
``KEPLERLAB_HOME``), so the user's own history is untouched.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--task", default="llmsrbench/lsr-synth/chemistry/CKR2")
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--size", default="1560x940", help="window size WxH")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "images" / "main-window.png")
    args = parser.parse_args()

    os.environ["KEPLERLAB_HOME"] = tempfile.mkdtemp(prefix="keplerlab-shot-")
    sys.path.insert(0, str(ROOT))
    from app.application import create_app, display_problem
    from app.main_window import MainWindow

    problem = display_problem()
    if problem:
        print(problem, file=sys.stderr)
        return 1
    app = create_app()
    window = MainWindow(restore_layout=False)
    width, height = (int(v) for v in args.size.split("x"))
    window.resize(width, height)
    window.show()

    def pump(seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            app.processEvents()
            time.sleep(0.01)

    def wait_for(condition, timeout: float) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if condition():
                return True
            pump(0.05)
        return False

    if not wait_for(lambda: len(window.tasks) > 0, 20):
        print("the task catalog did not load", file=sys.stderr)
        return 1
    if not window.browser.select_task(args.task):
        print(f"unknown task {args.task}", file=sys.stderr)
        return 2
    wait_for(lambda: window.detail.preview.point_count() > 0, 60)
    window.run_panel.set_value("seconds", args.seconds)
    window.run_panel.start_button.click()
    wait_for(lambda: not window.controller.is_running(), args.seconds + 60)
    wait_for(lambda: window.fit.plotted_point_count() > 0, 30)
    pump(1.0)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    if not window.grab().save(str(args.out)):
        print(f"could not write {args.out}", file=sys.stderr)
        return 1
    print(f"saved {args.out} ({window.width()}x{window.height()})")
    window.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
