"""The Kepler Lab window doing real work, for tests that kill it (tests/reliability/test_crash_resume.py).

``python crash_app.py run TASK SECONDS`` opens the main window off-screen, selects ``TASK``,
sets GP's time budget and presses Start, as a user would; it prints ``started <run id>`` once the
run is going and then keeps the window running until it is killed. ``KEPLERLAB_HOME`` says where
its run store is.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("KEPLERLAB_NO_WELCOME", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from PySide6.QtCore import QTimer  # noqa: E402

from app.application import create_app  # noqa: E402
from app.main_window import MainWindow  # noqa: E402


def main() -> None:
    _, what, task_id, seconds = sys.argv
    assert what == "run"
    app = create_app()
    window = MainWindow()
    window.show()
    window.controller.started.connect(lambda e: print(f"started {e.run_id}", flush=True))

    def start_when_ready():
        if not window.tasks:
            QTimer.singleShot(50, start_when_ready)
            return
        window.browser.select_task(task_id)
        press_start()

    def press_start():
        if not window.run_panel.start_button.isEnabled():  # the task is still loading
            QTimer.singleShot(50, press_start)
            return
        window.run_panel.set_value("seconds", float(seconds))
        window.run_panel.start_button.click()

    start_when_ready()
    app.exec()


if __name__ == "__main__":
    main()
