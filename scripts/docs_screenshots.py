"""Take the user guide's screenshots from the real application, after real runs.

    xvfb-run -a -s "-screen 0 1920x1200x24" .venv/bin/python scripts/docs_screenshots.py [--only NAME ...] [--out docs/images] [--list]

Every picture in ``docs/user-guide.md`` and the README's tour comes from here, so retaking them
after a change to the window is one command. The script opens the real main window in a
throw-away ``KEPLERLAB_HOME`` (your own runs, settings and caches are never touched), drives it as
a user would (select a task, set parameters, press Start, open dialogs from the menus) and saves
one PNG per shot. The runs are real: genetic programming on pyoperon, SINDy on a system of ODEs,
experiments in the NewtonBench lab, a small sweep, and an LLM-SR run answered by a scripted
OpenAI-compatible server on 127.0.0.1 (``tests/llm_server.py``), so no network and no API key.
Seeds are fixed, genetic programming ends by its number of generations (not by the clock) and the
windows have fixed sizes, so the pictures change when the interface changes. (Run ids, times,
dates and the scripted server's port still differ from one run of the script to the next.)

Without a display the script starts itself again under ``xvfb-run`` when that is installed;
otherwise it falls back to Qt's offscreen platform with a warning, and the 3-D surface shot then
shows the panel's "3-D view unavailable" message instead of the surfaces (no OpenGL offscreen).

Adding a shot is one function::

    @shot("my-dialog", "What the picture shows, in a few words")
    def _my_dialog(s: Studio):
        dialog = s.window.open_my_dialog()
        s.wait(lambda: dialog.is_ready(), "the dialog to fill")
        return dialog          # a widget (grabbed), a QPixmap / QImage, s.side_by_side(...) or s.screen(...)

The function gets a :class:`Studio`: the main window (opened once at a fixed size; its dock
layout is put back after every shot), ``wait`` / ``pump``, ``float_dock`` for a panel too small
in the default layout, memoised preparation steps shared by the shots (``s.gp_run()``,
``s.sweep()``, ``s.llm_server()`` …), and ``s.later(fn)`` for clean-up. Top-level windows a shot
opens are closed after it, and a run it left going is stopped. The PNG is written to
``<out>/<name>.png``; one line per shot gives its size and time, and the exit status is 1 when
any shot failed (the others are still taken).
``--list`` prints the registered shots (it needs neither Qt nor a display).
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import signal
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "docs" / "images"
SCREEN = "1920x1200x24"
#: The main window's size in every shot (the README's picture is this size).
WINDOW_SIZE = (1560, 940)
#: PNGs larger than this are re-encoded with a 256-colour palette (screenshots have few colours).
MAX_BYTES = 400_000
#: Set when the script has re-executed itself under xvfb-run, so it does not loop.
XVFB_MARK = "KEPLERLAB_DOCS_UNDER_XVFB"
#: The throw-away KEPLERLAB_HOME: a fixed path (it shows in some pictures, e.g. the imported
#: file's path), emptied at the start and removed at the end. The marker file says it is ours.
HOME = Path(tempfile.gettempdir()) / "keplerlab-docs"
HOME_MARK = ".keplerlab-docs-screenshots"

# Tasks the shots use. Each is a public benchmark task; none of the lab's hidden laws is shown.
GP_TASK = "llmsrbench/lsr-synth/chemistry/CKR2"
BELL_TASK = "feynman/I.6.2a"  # the normal density exp(-theta**2/2)/sqrt(2*pi)
#: Genetic programming in the shots: small enough to end by generations well within the time
#: limit on a busy machine, so a seed gives the same models every time.
GP_SETTINGS = {"seed": 0, "population_size": 500, "generations": 40, "seconds": 600}
DETAIL_TASK = "llmsrbench/lsr-synth/physics/PO1"
SURFACE_TASK = "surfacebench/explicit/TFS/TFS8"
ODE_TASK = "symbolbench/cde/odebench-27"
LLM_TASK = "llmsrbench/lsr-synth/physics/PO1"
SWEEP_TASKS = ("llmsrbench/lsr-synth/material_science/MatSci1", "llmsrbench/lsr-synth/material_science/MatSci2",
               "llmsrbench/lsr-synth/material_science/MatSci3")
LAB_TASK = "newtonbench/m0_gravity/v0/easy/vanilla"
STUDY_TASKS = ("newtonbench/m0_gravity/v0/easy/vanilla", "newtonbench/m7_malus_law/v0/easy/vanilla")


class ShotFailed(RuntimeError):
    """A shot could not be taken (a wait timed out, a run failed)."""


# ------------------------------------------------------------------------------ the registry


@dataclass(frozen=True)
class Shot:
    name: str
    summary: str
    take: Callable[["Studio"], Any]

    @property
    def filename(self) -> str:
        return f"{self.name}.png"


#: name -> Shot, in the order the shots are taken.
SHOTS: dict[str, Shot] = {}


def shot(name: str, summary: str):
    """Register ``fn(studio)`` as the shot ``name`` (saved as ``<name>.png``)."""

    def register(fn):
        if name in SHOTS:
            raise ValueError(f"two shots named {name!r}")
        SHOTS[name] = Shot(name, summary, fn)
        return fn

    return register


def once(method):
    """Memoise a Studio preparation step (a run several shots share)."""
    key = method.__name__

    def wrapper(self):
        if key not in self.memo:
            self.memo[key] = method(self)
        return self.memo[key]

    wrapper.__name__ = key
    wrapper.__doc__ = method.__doc__
    return wrapper


# ------------------------------------------------------------------------------ the studio


class Studio:
    """The application under the camera: the main window and the runs the shots need."""

    def __init__(self, home: Path):
        from app.application import create_app

        self.home = home
        self.app = create_app()
        self.memo: dict[str, Any] = {}
        self._window = None
        self._base_state = None
        self._cleanups: list[Callable[[], None]] = []
        self._server = None

    # ---- waiting

    def pump(self, seconds: float = 0.2) -> None:
        """Let Qt work (paint, deliver queued signals) for ``seconds``."""
        end = time.monotonic() + seconds
        while True:
            self.app.processEvents()
            if time.monotonic() >= end:
                break
            time.sleep(0.01)

    def wait(self, condition: Callable[[], Any], what: str | Callable[[], str], timeout: float = 120.0) -> None:
        """Pump events until ``condition()`` holds; ShotFailed naming ``what`` after ``timeout`` s."""
        end = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > end:
                raise ShotFailed(f"timed out after {timeout:g} s waiting for {what() if callable(what) else what}")
            self.pump(0.05)

    def later(self, fn: Callable[[], None]) -> None:
        """Run ``fn`` after the current shot (also when it fails)."""
        self._cleanups.append(fn)

    # ---- the window

    @property
    def window(self):
        if self._window is None:
            from app.main_window import MainWindow

            win = MainWindow(restore_layout=False)
            win.resize(*WINDOW_SIZE)
            win.move(0, 0)
            win.show()
            self.wait(lambda: len(win.tasks) > 0, "the task catalog", 60)
            self.pump(0.3)
            self._window = win
            self._base_state = win.saveState()
        return self._window

    def reset_window(self) -> None:
        """The dock layout as the window opened, the main window in front, nothing selected."""
        win = self._window
        if win is None:
            return
        win.restore_dock_state(self._base_state)
        win.resize(*WINDOW_SIZE)
        win.raise_()
        win.activateWindow()
        self.pump(0.1)

    def after_shot(self) -> None:
        from PySide6.QtWidgets import QApplication, QDockWidget

        win = self._window
        if win is not None and win.controller.is_running():  # a shot that failed mid-run
            win.stop_run()
            try:
                self.wait(lambda: not win.controller.is_running(), "the stopped run to end", 90)
            except ShotFailed:
                traceback.print_exc()
        for fn in reversed(self._cleanups):
            try:
                fn()
            except Exception:  # a clean-up problem must not hide the shot's own result
                traceback.print_exc()
        self._cleanups.clear()
        for w in QApplication.topLevelWidgets():
            if w is not self._window and w.isVisible() and not isinstance(w, QDockWidget):
                w.close()
        self.reset_window()

    def wait_idle(self, timeout: float = 180.0) -> None:
        """No run going, nothing loading, every candidate of the displayed front scored."""
        win = self.window
        self.wait(lambda: not win.controller.is_running(), "the run to end", timeout)
        self.wait(lambda: not win.loader.busy() and not win.scorer.busy(), "loading and scoring", timeout)
        self.pump(0.3)

    def run(self, task_id: str, method: str, values: dict | None = None, timeout: float | None = None) -> str:
        """Select ``task_id``, pick ``method``, set its parameters to their defaults and then to
        ``values`` in the run panel, press Start and wait for the run, its fit and its scoring.
        Returns the run id."""
        from engine import methods

        win = self.window
        if not win.browser.select_task(task_id):
            raise ShotFailed(f"unknown task {task_id}")
        if not win.run_panel.select_method(method):
            raise ShotFailed(f"the run panel does not offer {method} for {task_id}")
        # The panel keeps what the previous run of the same method used: start from the defaults.
        for name, value in {**methods.get_method(method).default_config(), **(values or {})}.items():
            if name in win.run_panel.editors:
                win.run_panel.set_value(name, value)
        self.wait(win.run_panel.start_button.isEnabled, "the Start button")
        before = set(win.history.run_ids())
        win.run_panel.start_button.click()
        self.wait(lambda: win.controller.is_running() or set(win.history.run_ids()) != before, "the run to start", 30)
        # A busy machine makes runs slow: wait for the run's own time limit and some more.
        limit = float(win.run_panel.config().get("seconds") or 0)
        self.wait_idle(timeout or max(180.0, limit + 120.0))
        new = [r for r in win.history.run_ids() if r not in before]
        if not new:
            raise ShotFailed(f"{method} on {task_id} left no run in the history ({win.status_label.text()})")
        record = win.store.get_run(new[0])
        if record.status != "finished":
            raise ShotFailed(f"{method} on {task_id} ended {record.status}: {record.error or ''}")
        print(f"      run   {method} on {task_id}: {record.seconds or 0:.1f} s, stopped by {record.stop_reason}",
              flush=True)
        return new[0]

    def gp_panel(self) -> None:
        """The run panel showing genetic programming with its defaults (an earlier shot may have
        left another method there), for pictures of a GP run."""
        from engine import methods

        win = self.window
        win.run_panel.select_method("gp")
        for name, value in methods.get_method("gp").default_config().items():
            if name in win.run_panel.editors:
                win.run_panel.set_value(name, value)

    def open_run(self, run_id: str) -> None:
        """Show a stored run (as a click in the run history does) and wait until it is drawn."""
        win = self.window
        if win.displayed_run != run_id:
            win.history.select_run(run_id)
        self.wait(lambda: win.displayed_run == run_id and not win.opening_run(), "the run to open", 30)
        self.wait(lambda: win.fit.plotted_point_count() > 0 or win.current_task.kind != "function",
                  "the fit to be drawn", 60)
        self.wait_idle()

    # ---- preparation steps (shared by several shots, made once)

    @once
    def gp_run(self) -> str:
        """Genetic programming on an LSR-Synth chemistry task (a larger search: it recovers the law)."""
        return self.run(GP_TASK, "gp", {**GP_SETTINGS, "population_size": 1000, "generations": 60})

    @once
    def bell_run(self) -> str:
        """Genetic programming on the normal density with every default operator (exp included)."""
        return self.run(BELL_TASK, "gp", {**GP_SETTINGS, "generations": 30})

    @once
    def bell_arithmetic_run(self) -> str:
        """The same task with + − × ÷ only: a polynomial-like model that fits the published range
        of theta and goes astray beyond it, where the out-of-domain test points are."""
        return self.run(BELL_TASK, "gp", {**GP_SETTINGS, "generations": 30, "operators": ["add", "sub", "mul", "div"]})

    @once
    def surface_run(self) -> str:
        return self.run(SURFACE_TASK, "gp", GP_SETTINGS)

    @once
    def sindy_run(self) -> str:
        return self.run(ODE_TASK, "sindy", {})

    @once
    def llm_server(self):
        """The scripted OpenAI-compatible endpoint on 127.0.0.1 (replies in LLM_REPLIES order)."""
        from tests.llm_server import FakeLLMServer

        server = FakeLLMServer([{"text": text, "prompt_tokens": 1450 + 40 * i, "completion_tokens": 120 + 15 * i}
                                for i, text in enumerate(LLM_REPLIES)],
                               default={"text": LLM_REPLIES[-1]}, models=LLM_MODELS)
        server.start()
        self._server = server
        return server

    @once
    def llm_settings_saved(self) -> None:
        """Run ▸ LLM settings… pointed at the scripted server, as saved settings."""
        from app import settings

        server = self.llm_server()
        settings.save_llm_settings({
            "llm": {"base_url": server.base_url, "model": LLM_MODELS[0], "api_key_env": "OPENAI_API_KEY",
                    "max_retries": 1, "timeout": 30},
            "llm_cache": "record", "max_llm_calls": len(LLM_REPLIES),
        })

    @once
    def llmsr_run(self) -> str:
        """LLM-SR on the oscillator, one island and one reply per prompt, answered by the script."""
        self.llm_settings_saved()
        return self.run(LLM_TASK, "llmsr", {"samples_per_prompt": 1, "islands": 1, "evaluators": 1, "seed": 0,
                                             "max_llm_calls": len(LLM_REPLIES)}, timeout=240)

    @once
    def sweep(self):
        """Run ▸ Sweep… on three LSR-Synth tasks × GP × 1 s, finished. Returns the dialog."""
        win = self.window
        dialog = win.open_sweep()
        dialog.resize(1200, 760)
        for i in range(dialog.tree.topLevelItemCount()):
            dialog.check_suite(dialog.tree.topLevelItem(i).text(0), False)
        dialog.custom.setText(", ".join(SWEEP_TASKS))
        dialog.check_methods(["gp"])
        dialog.seconds.setValue(1)
        dialog.seeds.setValue(1)
        self.wait(lambda: not dialog._plan_timer.isActive(), "the sweep plan")
        dialog.start_button.click()
        self.wait(lambda: dialog.is_running() or dialog.last_ended is not None, "the sweep to start", 30)
        self.wait(lambda: not dialog.is_running() and dialog.last_ended is not None, "the sweep to finish", 300)
        self.pump(0.5)
        ended = dialog.last_ended
        if ended.status != "finished":
            raise ShotFailed(f"the sweep ended {ended.status}")
        return dialog

    # ---- capturing

    def side_by_side(self, *widgets, gap: int = 6):
        """The widgets grabbed one by one and set side by side on the window's background (a
        region of the window could catch a sibling painted over it, such as a dock tab bar)."""
        from PySide6.QtGui import QImage, QPainter

        pictures = [w.grab() for w in widgets]
        width = sum(p.width() for p in pictures) + gap * (len(pictures) - 1)
        height = max(p.height() for p in pictures)
        image = QImage(width, height, QImage.Format.Format_RGB32)
        image.fill(self.window.palette().window().color())
        painter = QPainter(image)
        x = 0
        for p in pictures:
            painter.drawPixmap(x, 0, p)
            x += p.width() + gap
        painter.end()
        return image

    def float_dock(self, key: str, width: int, height: int):
        """Float the dock ``key`` at ``width`` x ``height`` (the layout is put back after the shot)."""
        dock = self.window.docks[key]
        dock.show()
        dock.setFloating(True)
        dock.resize(width, height)
        dock.move(40, 40)
        dock.raise_()
        self.pump(0.6)
        return dock

    def screen(self, widget):
        """What the X server shows where ``widget`` is: needed for OpenGL (VTK) content, which
        ``QWidget.grab`` cannot render. Falls back to ``grab`` on platforms without a screen."""
        from PySide6.QtCore import QPoint
        from PySide6.QtGui import QGuiApplication

        if QGuiApplication.platformName() != "xcb":
            return widget.grab()
        top = widget.window()
        top.raise_()
        self.pump(0.5)
        origin = widget.mapToGlobal(QPoint(0, 0))
        return QGuiApplication.primaryScreen().grabWindow(0, origin.x(), origin.y(), widget.width(), widget.height())

    def close(self) -> None:
        win = self._window
        if win is not None:
            dialog = getattr(win, "sweep_dialog", None)
            if dialog is not None:
                dialog.shutdown()
            win.controller.shutdown()
            win.loader.wait_all()
            win.close()
            self.pump(0.2)
        if self._server is not None:
            self._server.stop()


# ------------------------------------------------------------------------------ LLM script

#: Models the scripted endpoint lists (Test connection shows them).
LLM_MODELS = ("scripted-oscillator-model", "scripted-small-model")

#: The scripted endpoint's replies to the LLM-SR run, in order: LLM-SR's own prompt format, a
#: Python skeleton with free params. A first guess, a reply with broken code, then better
#: skeletons, the last one with the oscillator's terms.
LLM_REPLIES = [
    '''A damped, driven linear oscillator is a natural first guess.

```python
def equation(x, t, v, params):
    """Linear restoring force, linear damping and a periodic drive."""
    return -params[0] * x - params[1] * v + params[2] * np.sin(t)
```''',
    '''Adding a cubic stiffness term (Duffing):

```python
def equation(x, t, v, params):
    return -params[0] * x - params[1] * x**3 - params[2] * v + params[3] * np.sin(params[4] * t
```''',
    '''```python
def equation(x, t, v, params):
    """Duffing oscillator with linear damping and a periodic drive."""
    restoring = -params[0] * x - params[1] * x**3
    damping = -params[2] * v
    drive = params[3] * np.sin(t)
    return restoring + damping + drive
```''',
    '''The residuals suggest the damping saturates at large speed and the linear restoring
force fades with distance:

```python
def equation(x, t, v, params):
    """Cubic stiffness, a restoring term that decays with |x|, saturating damping, a drive."""
    restoring = -params[0] * x**3 - params[1] * x * np.exp(-np.abs(x))
    damping = -params[2] * np.sin(v)
    drive = params[3] * np.sin(t)
    return restoring + damping + drive
```''',
]


# ------------------------------------------------------------------------------ the shots


@shot("welcome", "The first-run welcome tour, step 1 of 3, over the window as it first opens")
def _welcome(s: Studio):
    win = s.window
    win.welcome.open()
    s.later(lambda: win.welcome.close("skipped"))
    s.pump(0.8)
    return win


@shot("main-window", "The main window after a genetic-programming run: fit, Pareto front, candidates, result")
def _main_window(s: Studio):
    win = s.window
    run_id = s.gp_run()
    s.open_run(run_id)
    win.docks["fit"].raise_()
    win.progress_tabs.setCurrentWidget(win.pareto)
    s.pump(0.5)
    return win


@shot("task-detail", "A task's context, variables, data preview and revealed ground truth")
def _task_detail(s: Studio):
    from PySide6.QtWidgets import QSplitter

    win = s.window
    win.browser.select_task(DETAIL_TASK)
    s.wait(lambda: win.detail.preview.point_count() > 0, "the data preview", 60)
    if not win.detail.reveal_button.isChecked():
        win.detail.reveal_button.click()
    s.later(lambda: win.detail.reveal_button.isChecked() and win.detail.reveal_button.click())
    # The Task dock is small in the default layout: shown floating at a size where its context,
    # variables, truth and preview all fit, as a user may drag it out (and its splitter down).
    dock = s.float_dock("detail", 1000, 1000)
    splitter = win.detail.findChild(QSplitter)
    if splitter is not None:
        splitter.setSizes([620, 380])
    s.pump(0.5)
    return dock


@shot("pareto-candidates", "The Pareto front beside the candidate table, one candidate selected")
def _pareto_candidates(s: Studio):
    from PySide6.QtCore import Qt

    win = s.window
    s.open_run(s.gp_run())
    # A taller bottom row (as a user drags the splitter) so the front and the table have room.
    win.resizeDocks([win.docks["detail"], win.docks["loss"]], [330, 560], Qt.Orientation.Vertical)
    win.resizeDocks([win.docks["loss"], win.docks["candidates"]], [520, 640], Qt.Orientation.Horizontal)
    win.progress_tabs.setCurrentWidget(win.pareto)
    rows = win.candidates.row_count()
    if rows == 0:
        raise ShotFailed("the run has no candidates")
    win.candidates.select_row(min(2, rows - 1))
    s.pump(0.5)
    return s.side_by_side(win.docks["loss"], win.docks["candidates"])


@shot("fit", "The fit viewer on a model that fits the training range but not beyond it")
def _fit(s: Studio):
    win = s.window
    s.open_run(s.bell_arithmetic_run())
    win.docks["fit"].raise_()
    s.pump(0.5)
    return win.docks["fit"]


@shot("compare", "Run ▸ Compare runs… on two runs of one task, with and without exp among the operators")
def _compare(s: Studio):
    win = s.window
    first, second = s.bell_run(), s.bell_arithmetic_run()
    dialog = win.compare_runs(first, second)
    if dialog is None:
        raise ShotFailed("Compare runs did not open")
    dialog.resize(1300, 820)
    s.wait(lambda: all(side.run is not None for side in dialog.sides), "both runs to load", 30)
    s.wait(lambda: not any(sc.busy() for sc in win._compare_scorers), "the candidates' scores", 120)
    s.pump(0.5)
    return dialog


@shot("lab", "The NewtonBench lab: experiments, a scan plot and a fitted (wrong) hypothesis")
def _lab(s: Studio):
    from PySide6.QtWidgets import QPushButton

    win = s.window
    panel = win.show_lab()
    dock = win.docks["lab"]
    panel.set_task(LAB_TASK)
    panel.reset()
    panel.set_input("mass1", 2.0)
    panel.set_input("mass2", 5.0)
    for distance in (0.5, 1, 2, 4, 8, 16):
        panel.set_input("distance", distance)
        done = []
        panel.experiment_done.connect(done.append)
        if not panel.run_experiment():
            raise ShotFailed(f"the lab refused to run: {panel.message.text()}")
        s.wait(lambda: done, "an experiment", 30)
        panel.experiment_done.disconnect(done.append)
    panel.x_box.setCurrentIndex(panel.x_box.findData("distance"))
    panel.log_y.setChecked(True)  # a power law is a straight line on log-log axes
    # Newton's inverse square law, which this counterfactual world does not obey: the fit and
    # its residuals show it (the hidden law itself is never shown).
    panel.set_hypothesis("C*mass1*mass2/distance**2")
    fitted = []
    panel.fitted.connect(fitted.append)
    panel.findChild(QPushButton, "labFit").click()
    s.wait(lambda: fitted, "the hypothesis fit", 60)
    scored = []
    panel.scored.connect(scored.append)
    panel.findChild(QPushButton, "labSubmit").click()
    s.wait(lambda: scored, "the submission's score", 120)
    s.pump(0.8)
    s.later(panel.reset)
    return dock if dock.isFloating() else panel


@shot("study-results", "File ▸ Study results…: the instructor's table after three participants")
def _study_results(s: Studio):
    import json

    from widgets.lab_panel import LabPanel
    from widgets.study import StudyController

    path = s.home / "week3-study.json"
    path.write_text(json.dumps({"title": "Week 3: laws from experiments", "tasks": list(STUDY_TASKS),
                                "order": "fixed", "noise": 0.0, "round_limit": 10, "max_sets_per_round": 5,
                                "show_scores": "end"}))
    panel = LabPanel(seed=0)
    panel.resize(1200, 800)
    controller = StudyController(panel, interactive=False)
    s.later(panel.shutdown)
    s.later(panel.deleteLater)
    # Three participants: each measures a few points per task and submits a hypothesis.
    answers = {
        "p01": ("C*mass1*mass2/distance**2", "I0*cos(theta)**2"),
        "p02": ("C*mass1*mass2/distance**1.5", "I0*cos(theta)"),
        "p03": ("C*mass1*mass2/distance**1.5", "I0*cos(theta)**2"),
    }
    scans = (("distance", (1, 2, 4, 8)), ("theta", (0.1, 0.4, 0.8, 1.2)))
    for participant, laws in answers.items():
        if not controller.open_study(path, participant=participant):
            raise ShotFailed(f"the study did not open: {controller.last_error}")
        for (name, values), law in zip(scans, laws):
            for value in values:
                panel.set_input(name, value)
                done = []
                panel.experiment_done.connect(done.append)
                panel.run_experiment()
                s.wait(lambda: done, "an experiment", 30)
                panel.experiment_done.disconnect(done.append)
            panel.set_hypothesis(law)
            fitted, scored = [], []
            panel.fitted.connect(fitted.append)
            panel.scored.connect(scored.append)
            panel.fit_hypothesis()
            s.wait(lambda: fitted, "the fit", 60)
            if not panel.submit():
                raise ShotFailed(f"{participant} could not submit {law}: {panel.message.text()}")
            s.wait(lambda: scored, "the score", 120)
            controller.next_task(confirm=False)
        controller.close_study()
    dialog = controller.open_results(path)
    if dialog is None:
        raise ShotFailed(f"no results dialog: {controller.last_error}")
    dialog.resize(1100, 600)
    s.pump(0.5)
    return dialog


@shot("surface", "A SurfaceBench task in 3-D: the true and the predicted surface side by side")
def _surface(s: Studio):
    win = s.window
    run_id = s.surface_run()
    s.open_run(run_id)
    dock = s.float_dock("surface", 1240, 760)
    view = win.surface_view
    s.pump(1.0)
    if view.unavailable_reason() is None:
        s.wait(lambda: view.plotter is not None, "the 3-D view", 60)
        s.wait(lambda: view.drawn_counts().get("predicted", 0) > 0, "the predicted surface", 60)
        s.pump(1.5)
    return s.screen(dock)


@shot("time-series", "SINDy on a two-dimensional system of ODEs: trajectories and phase portrait")
def _time_series(s: Studio):
    win = s.window
    s.open_run(s.sindy_run())
    dock = win.docks["series"]
    dock.show()
    dock.raise_()
    s.wait(lambda: win.trajectory_view.curve_count() > 0, "the trajectories", 60)
    s.pump(0.8)
    return dock


@shot("sweep", "Run ▸ Sweep… after a small finished sweep (three tasks × GP × 1 s)")
def _sweep(s: Studio):
    dialog = s.sweep()
    dialog.show()
    dialog.raise_()
    s.pump(0.5)
    return dialog


@shot("leaderboard", "View ▸ Leaderboard: our runs in LLM-SRBench's table beside the published numbers")
def _leaderboard(s: Studio):
    win = s.window
    s.sweep()  # the sweep's runs are the ones the table shows
    board = win.open_leaderboard()
    board.resize(1640, 820)
    s.wait(lambda: board.generation >= 1 and not board.is_loading(), "the leaderboard", 120)
    index = board.benchmark_box.findData("llmsrbench")
    if index < 0:
        raise ShotFailed("the leaderboard offers no LLM-SRBench table")
    board.benchmark_box.setCurrentIndex(index)
    s.wait(lambda: not board.is_loading(), "the LLM-SRBench table", 120)
    s.pump(0.8)
    return board


@shot("llm-settings", "Run ▸ LLM settings… pointed at a local endpoint, after Test connection")
def _llm_settings(s: Studio):
    win = s.window
    s.llm_settings_saved()
    dialog = win.open_llm_settings()
    dialog.test_button.click()
    s.wait(lambda: "Connected" in dialog.connection_label.text(), "Test connection", 30)
    s.pump(0.5)
    s.later(dialog.reject)
    return dialog


@shot("llm-panel", "The LLM panel after an LLM-SR run answered by a local scripted endpoint")
def _llm_panel(s: Studio):
    win = s.window
    run_id = s.llmsr_run()
    s.open_run(run_id)
    calls = len(win.store.llm_calls(run_id))
    panel = win.llm_panel
    s.wait(lambda: panel.call_index(calls).isValid() and panel.pending() == 0,
           lambda: f"the LLM calls ({panel.row_count()} of {calls} shown)", 30)
    s.pump(0.5)
    dock = s.float_dock("llm", 1200, 860)
    # Open the last call and select its program, as a click on the row's arrow and the program does:
    # the program's full text and score show below.
    call = panel.call_index(calls)
    if not call.isValid():
        raise ShotFailed(f"no call #{calls} in the LLM panel")
    panel.tree.expand(call)
    children = panel.model.rowCount(call)
    if children:
        panel.tree.setCurrentIndex(panel.model.index(children - 1, 0, call))
    s.pump(0.3)
    panel.tree.scrollToTop()  # the list of calls in view, the program's text below
    s.pump(0.5)
    if not panel.tree.isExpanded(call) or not panel.detail.toPlainText():
        raise ShotFailed("the call did not open")
    return dock


@shot("import", "File ▸ Import data… on a small CSV table")
def _import(s: Studio):
    import math

    from widgets.import_dialog import OOD_THRESHOLD

    win = s.window
    path = s.home / "pendulum.csv"
    lines = ["length_m,angle_rad,period_s"]
    for i in range(40):
        length = 0.2 + 0.05 * i
        angle = 0.05 + 0.01 * (i % 7)
        period = 2 * math.pi * math.sqrt(length / 9.81) * (1 + angle**2 / 16)
        lines.append(f"{length:.3f},{angle:.3f},{period:.5f}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    dialog = win.open_import_dialog()
    dialog.set_path(path)
    s.wait(lambda: not dialog.busy(), "the file to be read", 30)
    s.pump(0.3)
    dialog.target_combo.setCurrentText("period_s")
    dialog.set_unit("length_m", "m")
    dialog.set_unit("angle_rad", "rad")
    dialog.set_unit("period_s", "s")
    dialog.set_description("length_m", "Length of the pendulum")
    dialog.set_description("angle_rad", "Amplitude of the swing")
    dialog.set_description("period_s", "Time of one full swing")
    # Long pendulums held out as the out-of-domain test set.
    dialog.ood_mode.setCurrentIndex(OOD_THRESHOLD)
    dialog.ood_column.setCurrentText("length_m")
    dialog.ood_op.setCurrentText(">")
    dialog.ood_value.setText("1.8")
    dialog.context_edit.setPlainText("Periods of a pendulum timed with a stopwatch, 40 lengths, small swings.")
    dialog.resize(900, 900)
    s.pump(0.3)
    s.later(dialog.reject)
    return dialog


@shot("shortcuts", "Help ▸ Keyboard shortcuts (F1)")
def _shortcuts(s: Studio):
    win = s.window
    dialog = win.show_shortcuts()
    dialog.resize(940, 1040)
    s.pump(0.3)
    return dialog


@shot("presentation", "View ▸ Presentation mode (F5): large text, thick lines, the secondary panels hidden")
def _presentation(s: Studio):
    win = s.window
    s.gp_panel()
    s.open_run(s.gp_run())
    win.docks["fit"].raise_()
    win.progress_tabs.setCurrentWidget(win.pareto)
    win.appearance.set_presentation(True)
    s.later(lambda: win.appearance.set_presentation(False))
    s.pump(0.8)
    return win


@shot("dark-theme", "View ▸ Theme ▸ Dark, after a genetic-programming run")
def _dark_theme(s: Studio):
    win = s.window
    s.gp_panel()
    s.open_run(s.gp_run())
    win.docks["fit"].raise_()
    win.progress_tabs.setCurrentWidget(win.loss)
    win.appearance.set_theme("dark")
    s.later(lambda: win.appearance.set_theme("light"))
    s.pump(0.8)
    return win


@shot("demo-replay", "Run ▸ Demo replay…: a stored run played back, here about halfway through")
def _demo_replay(s: Studio):
    win = s.window
    s.gp_panel()
    run_id = s.gp_run()
    s.open_run(run_id)
    if not win.demo.start(run_id):
        raise ShotFailed("the demo did not start")
    s.later(lambda: win.demo.end(show_run=True))
    s.wait(lambda: win.demo.step_count() > 0, "the run's timeline", 60)
    win.demo.go_to(int(win.demo.step_count() * 0.45))
    win.docks["fit"].raise_()
    win.progress_tabs.setCurrentWidget(win.loss)
    s.pump(0.8)
    return win


@shot("project", "The Project panel: a title, notes, tasks and runs, saved to a .klab file to share")
def _project(s: Studio):
    win = s.window
    session = win.session
    s.open_run(s.bell_run())
    session.add_current_task()
    session.add_displayed_run()
    s.open_run(s.bell_arithmetic_run())
    session.add_displayed_run()
    win.browser.select_task(DETAIL_TASK)
    session.add_current_task()
    panel = session.panel
    panel.title_edit.setText("Week 3: when a good fit is not the law")
    panel.notes.setPlainText(
        "Two GP runs on the normal density (Feynman I.6.2a), one with exp among the operators and one "
        "with + − × ÷ only.\n\nBoth fit the training range; open each run's Fit tab and compare the "
        "orange out-of-domain points. Which one would you trust for σ = 3?\n\nThen try the "
        "nonlinear oscillator (PO1): can you find its law before revealing it?")
    # Saved (to the throw-away home), as a user would before sharing it; the panel says where.
    session.save_to(s.home / "week-3.klab")
    s.wait(lambda: not session.busy() and not win.isWindowModified(), "the project to be saved", 60)
    s.later(session.new_project)
    return s.float_dock("project", 900, 620)


# ------------------------------------------------------------------------------ running


def _png_bytes(image) -> bytes:
    """Encode a QPixmap / QImage as PNG, made smaller with Pillow when it is installed."""
    from PySide6.QtCore import QBuffer, QIODevice

    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(buffer, "PNG"):
        raise ShotFailed("Qt could not encode the picture")
    data = bytes(buffer.data())
    try:
        from PIL import Image
    except ImportError:
        return data
    with Image.open(io.BytesIO(data)) as picture:
        picture = picture.convert("RGB")
        out = io.BytesIO()
        picture.save(out, "PNG", optimize=True)
        if out.tell() > MAX_BYTES:
            # A 256-colour palette keeps text and flat plots exact enough and halves the size.
            small = io.BytesIO()
            picture.quantize(colors=256, method=Image.Quantize.MEDIANCUT).save(small, "PNG", optimize=True)
            if small.tell() < out.tell():
                out = small
    return out.getvalue()


def capture(result):
    """A shot's return value as a QImage / QPixmap."""
    from PySide6.QtGui import QImage, QPixmap
    from PySide6.QtWidgets import QWidget

    if isinstance(result, (QImage, QPixmap)):
        return result
    if isinstance(result, QWidget):
        return result.grab()
    raise ShotFailed(f"a shot must return a widget or a picture, not {type(result).__name__}")


def take(studio: Studio, item: Shot, out: Path) -> tuple[bool, str]:
    started = time.monotonic()
    try:
        picture = capture(item.take(studio))
        if picture.isNull() or picture.width() < 50 or picture.height() < 50:
            raise ShotFailed(f"the picture is empty ({picture.width()}x{picture.height()})")
        data = _png_bytes(picture)
        path = out / item.filename
        path.write_bytes(data)
        line = (f"ok    {item.name:<18} {picture.width():>4}x{picture.height():<4} {len(data) / 1024:7.0f} KB "
                f"{time.monotonic() - started:6.1f} s  {path}")
        ok = True
    except Exception as exc:  # one broken shot must not stop the others
        traceback.print_exc()
        line = f"FAIL  {item.name:<18} {time.monotonic() - started:6.1f} s  {type(exc).__name__}: {exc}"
        ok = False
    finally:
        try:
            studio.after_shot()
        except Exception:
            traceback.print_exc()
    return ok, line


def _ensure_display(argv: list[str]) -> None:
    """Re-run under xvfb-run when there is no display; else fall back to offscreen, warning."""
    if os.environ.get("QT_QPA_PLATFORM") or os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"):
        return
    xvfb = shutil.which("xvfb-run")
    if xvfb and not os.environ.get(XVFB_MARK):
        os.environ[XVFB_MARK] = "1"
        print(f"no display: running again under {xvfb} (screen {SCREEN})", file=sys.stderr, flush=True)
        os.execv(xvfb, [xvfb, "-a", "-s", f"-screen 0 {SCREEN}", sys.executable, str(Path(__file__).resolve()),
                        *argv])
    print("warning: no display and no xvfb-run; using Qt's offscreen platform. The 'surface' shot will show "
          "the 3-D panel's \"no OpenGL\" message instead of the surfaces. Install Xvfb (scripts/setup.sh does "
          "as root) for the real pictures.", file=sys.stderr, flush=True)
    os.environ["QT_QPA_PLATFORM"] = "offscreen"
    # The offscreen plugin warns about every window it cannot raise or resize: not news here.
    os.environ.setdefault("QT_LOGGING_RULES", "qt.qpa.*=false")


def _make_home() -> tuple[Path, Any]:
    """Empty HOME (only if an earlier run of this script made it) and lock it against a second
    run at the same time. Returns the folder and the open lock file."""
    lock = open(f"{HOME}.lock", "w")
    try:
        import fcntl

        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except ImportError:  # not POSIX: no lock, the marker check below still guards foreign folders
        pass
    except OSError:
        raise SystemExit(f"another run of this script is using {HOME}; wait for it to end") from None
    if HOME.exists():
        if not (HOME / HOME_MARK).exists():
            raise SystemExit(f"{HOME} exists and was not made by this script; move it away first")
        shutil.rmtree(HOME)
    HOME.mkdir(parents=True)
    (HOME / HOME_MARK).write_text("Throw-away data of scripts/docs_screenshots.py; safe to delete.\n")
    return HOME, lock


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", metavar="NAME", help="take only these shots")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="folder for the PNGs (default docs/images)")
    parser.add_argument("--list", action="store_true", help="list the shots and exit")
    parser.add_argument("--keep-home", action="store_true", help="keep the throw-away KEPLERLAB_HOME afterwards")
    args = parser.parse_args(argv)

    if args.list:
        for item in SHOTS.values():
            print(f"{item.name:<18} {item.filename:<24} {item.summary}")
        return 0
    unknown = [n for n in args.only or () if n not in SHOTS]
    if unknown:
        print(f"unknown shot(s): {', '.join(unknown)}; --list shows them", file=sys.stderr)
        return 2
    chosen = [SHOTS[n] for n in (args.only or SHOTS)]

    _ensure_display(argv)
    # SIGTERM (timeout, kill) ends like Ctrl+C: the finally blocks close the window and the folder.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    home, lock = _make_home()
    os.environ["KEPLERLAB_HOME"] = str(home)
    os.environ["KEPLERLAB_NO_WELCOME"] = "1"  # the first-run welcome would cover the window
    os.environ.pop("OPENAI_API_KEY", None)  # the scripted endpoint needs no key; never show a real one
    sys.path.insert(0, str(ROOT))
    from app.application import display_problem

    problem = display_problem()
    if problem:
        print(problem, file=sys.stderr)
        return 1
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    print(f"Kepler Lab screenshots: {len(chosen)} shot(s) into {out} (data in {home})", flush=True)
    started = time.monotonic()
    studio = Studio(home)
    failures = 0
    try:
        from PySide6.QtGui import QGuiApplication

        print(f"Qt platform: {QGuiApplication.platformName()}", flush=True)
        for item in chosen:
            ok, line = take(studio, item, out)
            failures += not ok
            print(line, flush=True)
    finally:
        studio.close()
        if not args.keep_home:
            shutil.rmtree(home, ignore_errors=True)
        lock.close()
    print(f"{len(chosen) - failures} of {len(chosen)} shots taken in {time.monotonic() - started:.0f} s"
          + (f"; {failures} failed" if failures else ""), flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
