"""The first-run welcome: a short tour through one discovery (pick a task, run, reveal the law).

On the first start, once the task catalog has loaded, a small card (widgets/welcome.py) floats
over the main window with three steps. Each step can be done from the card's own button or in
the window as usual (picking a task in the browser, pressing Start, pressing Reveal); the tour
notices either way. The card never blocks the window.

The tour opens by itself only while the setting ``welcome/done`` is unset, ``first_run`` is true
(the app's normal start) and the environment variable ``KEPLERLAB_NO_WELCOME`` is empty (the
test suite sets it). ``welcome/done`` is stored as soon as the tour has been seen to its end or
put away: Done, Skip tour, the card's ✕, or closing the window while it shows. Help ▸ Welcome
tour opens it again at step 1 at any time.
"""

from __future__ import annotations

import html
import math
import os

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QAction

from engine import methods as m
from widgets.welcome import Spotlight, WelcomeCard

from . import settings
from .controllers import progress_fraction

#: The setting that says the tour has been finished or put away.
DONE_KEY = "welcome/done"
#: A non-empty value keeps the tour from opening by itself (the test suite sets it).
ENV_OFF = "KEPLERLAB_NO_WELCOME"
#: The task "Pick one for me" selects. The flux of an isotropic source, Pwr / (4 π r²): an
#: inverse-square law every scientist knows, two inputs, and a 10-second GP run recovers it
#: exactly (0.0795775·Pwr/r², 0.0795775 being 1/(4π); symbolic accuracy yes, test NMSE ~1e-13)
#: with every seed we tried, where CKR2, I.47.23 (speed of sound) or III.15.12 often end with
#: a long approximation.
FIRST_TASK = "feynman/II.3.24"
#: Length of the tour's run in seconds (tests make it shorter).
RUN_SECONDS = 10
#: The method the tour runs: the embedded genetic programming, no network or key needed.
METHOD = "gp"

STEPS = 3
PICK, RUN, REVEAL, NEXT = range(4)  # pages; NEXT is "what next" after step 3

_LAB_KEY = "Ctrl+L"
_BOARD_KEY = "Ctrl+Shift+L"


def install(window, first_run: bool = True) -> "Welcome":
    """Add Help ▸ Welcome tour to ``window`` and, on a first start, open the tour once the task
    catalog has loaded. Returns the tour's controller."""
    return Welcome(window, first_run=first_run)


def is_done() -> bool:
    value = settings.settings().value(DONE_KEY, False)
    return value is True or str(value).lower() in ("true", "1", "yes")


def _short(text: str, limit: int = 140) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


class Welcome(QObject):
    """Runs the tour: which page is shown, what the card says, and what counts as done."""

    page_changed = Signal(int)  # PICK, RUN, REVEAL or NEXT
    finished = Signal(str)  # "done", "skipped" or "closed"

    def __init__(self, window, first_run: bool = True):
        super().__init__(window)
        self.window = window
        #: Seconds of the tour's run (RUN_SECONDS; a test sets it lower).
        self.run_seconds = RUN_SECONDS
        self.first_task = FIRST_TASK
        self.page = PICK
        self.card = WelcomeCard(window)
        self.card.hide()
        self.spotlights = [Spotlight(window), Spotlight(window)]
        self._auto = bool(first_run) and not os.environ.get(ENV_OFF) and not is_done()
        self._closing = False
        self._open = False
        self._result = None  # the last RunFinished seen while the tour was open
        self._failure: str | None = None  # the message of a run that raised
        self._switched_during_run: str | None = None  # title of a task picked while a run went
        self._last_progress = 0.0
        self._moved = False  # the user dragged the card: keep it where they put it
        self._reposition_timer = QTimer(self)
        self._reposition_timer.setSingleShot(True)
        self._reposition_timer.setInterval(0)
        self._reposition_timer.timeout.connect(self.reposition)

        self.action = QAction("&Welcome tour", window)
        self.action.setStatusTip("A three-step tour through one discovery: pick a task, run, reveal the law")
        self.action.setToolTip("Open the welcome tour at its first step")
        self.action.triggered.connect(lambda: self.open(PICK))
        help_menu = window.menus["help"]
        first = help_menu.actions()[0] if help_menu.actions() else None
        help_menu.insertAction(first, self.action)  # the first entry of Help

        self.card.action_clicked.connect(self._on_action)
        self.card.back_clicked.connect(lambda: self.go(max(PICK, self.page - 1)))
        self.card.next_clicked.connect(self._on_next)
        self.card.skip_clicked.connect(lambda: self.close("skipped"))
        self.card.close_clicked.connect(lambda: self.close("closed"))
        self.card.dragged.connect(self._on_dragged)
        self.card.font_changed.connect(self._reposition_timer.start)

        window.browser.task_selected.connect(self._on_task_selected)
        window.detail.reveal_toggled.connect(self._on_reveal_toggled)
        window.controller.started.connect(self._on_run_started)
        window.controller.event.connect(self._on_run_event)
        window.controller.finished.connect(self._on_run_finished)
        window.controller.failed.connect(self._on_run_failed)
        window.controller.idle.connect(self._on_run_idle)
        window.loader.ready.connect(self._on_loaded)
        window.close_hooks.append(self._on_window_closing)

    def _watch_window(self, on: bool) -> None:
        """Follow the window's resizes, dock moves and font only while the card is shown: a
        Python event filter sees every event of the window and its docks, paints included, which
        costs each click on a busy window a few milliseconds for nothing."""
        for obj in (self.window, *self.window.docks.values()):
            if on:
                obj.installEventFilter(self)
            else:
                obj.removeEventFilter(self)

    # ------------------------------------------------------------------ opening and closing

    def is_open(self) -> bool:
        """The tour is showing (its card is on the window)."""
        return self._open

    def _on_loaded(self, channel: str, _result) -> None:
        if channel == "catalog" and self._auto:
            self._auto = False  # a catalog reloaded after an import does not open it again
            # After the window's own handler has filled window.tasks and the browser.
            QTimer.singleShot(0, self, self._open_first_time)  # not after the window is gone

    def _open_first_time(self) -> None:
        if self._closing or not self.window.tasks or self.is_open() or is_done():
            return
        self.open(PICK)

    def open(self, page: int = PICK) -> None:
        """Show the card at ``page`` (Help ▸ Welcome tour: the first step)."""
        if self._closing:
            return
        self._failure = None
        self._switched_during_run = None
        self._moved = False
        if not self._open:
            self._watch_window(True)
            self.card.follow_font(self.window.font())  # a font change while closed was not seen
        self._open = True
        self.card.show()
        self.go(page)

    def close(self, how: str = "closed") -> None:
        """Hide the tour for good: Done, Skip tour, ✕ (``how``). Help ▸ Welcome tour reopens it."""
        was_open, self._open = self._open, False
        self.card.hide()
        self._spotlight([])
        if not was_open:
            return
        self._watch_window(False)
        s = settings.settings()
        s.setValue(DONE_KEY, True)
        s.sync()
        if not self._closing:
            messages = {
                "done": "Tour finished. Help ▸ Welcome tour replays it any time.",
                "skipped": "Tour skipped. Help ▸ Welcome tour brings it back any time.",
                "closed": "Tour closed. Help ▸ Welcome tour brings it back any time.",
            }
            self.window.status_label.setText(messages.get(how, messages["closed"]))
        self.finished.emit(how)

    def _on_window_closing(self) -> None:
        """A close hook: the tour, if open, counts as seen; nothing of it runs afterwards."""
        self.close("closed")
        self._closing = True
        self._reposition_timer.stop()

    # ------------------------------------------------------------------ pages

    def go(self, page: int) -> None:
        self.page = max(PICK, min(NEXT, page))
        self.card.set_extra("")
        if self.page == PICK:
            self._render_pick()
        elif self.page == RUN:
            self._render_run()
        elif self.page == REVEAL:
            self._render_reveal()
        else:
            self._render_next()
        self.page_changed.emit(self.page)
        self.reposition()

    def _task(self):
        return self.window.current_task

    def _render_pick(self, status: str = "", tone: str = "info") -> None:
        self.card.set_step(
            0, STEPS, "Pick a task",
            "A <b>task</b> is a table of measurements with a law hidden behind it: find the formula "
            "that produced the data. The <b>Tasks</b> browser on the left lists them from published "
            "benchmarks; pick one there, or let me choose one a short run can crack.")
        task = self._task()
        if not status and task is not None:
            status, tone = f"Selected: <b>{html.escape(task.title)}</b>. Go on with Next, or pick another.", "ok"
        self.card.set_status(status, tone)
        self.card.set_progress(None)
        self.card.set_action("Pick one for me", tip=f"Select {self.first_task} in the browser")
        self.card.set_navigation(back=False, next_enabled=task is not None,
                                 next_tip="" if task is not None else "Pick a task first")
        self._spotlight(["browser"])
        self._show_dock("browser")

    def _render_run(self, status: str | None = None, tone: str = "info") -> None:
        task = self._task()
        where = f" on <b>{html.escape(task.title)}</b>" if task is not None else ""
        self.card.set_step(
            1, STEPS, "Run a discovery",
            f"Kepler Lab's built-in method is <b>genetic programming</b>: it breeds thousands of small "
            f"formulas, keeps those that fit the data best and recombines them. The <b>loss curve</b> "
            f"(bottom) shows the error of the best formula so far falling as the search goes{where}.")
        running = self.window.controller.is_running()
        if status is None:
            if running:
                status, tone = "A run is going: its best formula appears when it ends.", "busy"
            elif task is None:
                status, tone = "Pick a task first (Back).", "warn"
            elif self._good_result() is not None:
                status, tone = "This task has a finished run: Next to see how it did, or run again.", "ok"
            else:
                status = "Press the button, or choose a method and press <b>Start</b> in the Run panel."
        self.card.set_status(status, tone)
        self.card.set_progress(self.card.progress.value() / 1000 if running else None)
        label = f"Start a {self._seconds_text()} run"
        if running:
            self.card.set_action(label, enabled=False, tip="Wait for the run that is going to end")
        else:
            again = self._result is not None and self._result.task_id == getattr(task, "id", None)
            self.card.set_action(f"Run again ({self.run_seconds:g} s)" if again else label, enabled=task is not None,
                                 tip="Genetic programming with a short time limit, from the Run panel")
        self.card.set_navigation(back=True, next_enabled=self._good_result() is not None and not running,
                                 next_tip="" if self._good_result() is not None else "Run first")
        self._spotlight(["run", "loss"])
        self._show_dock("run")

    def _render_reveal(self) -> None:
        task, result = self._task(), self._good_result()
        found = ""
        if result is not None and task is not None:
            found = (f"<p style='margin-top:6px'>Found: <code>{html.escape(task.model_label)} = "
                     f"{html.escape(_short(result.expression))}</code></p>")
        self.card.set_step(
            2, STEPS, "Reveal the law",
            "The <b>Result</b> panel (right) scores the formula found. <b>Symbolic accuracy</b> (SA) "
            "asks whether it is the true law up to the values of its constants. <b>NMSE</b> is its "
            "squared error on unseen test data divided by the data's variance: 0 is perfect, 1 is no "
            "better than guessing the mean." + found)
        shown = self.window.detail.reveal_button.isChecked()
        revealable = task is not None and bool(task.ground_truth.expression)
        if not revealable:
            self.card.set_status("This task has no known law to reveal (your own data). Next for what to try.",
                                 "warn")
        else:
            self.card.set_status(self._verdict(result) if result is not None else "", "info")
        self.card.set_progress(None)
        self.card.set_action("Hide the ground truth" if shown else "Reveal the ground truth", enabled=revealable,
                             tip="The same as Reveal ground truth in the Task panel (Ctrl+G)")
        self.card.set_navigation(back=True, next_enabled=True)
        self._spotlight(["result"])
        self._show_dock("result")

    def _render_next(self) -> None:
        task, result = self._task(), self._good_result()
        lines = []
        if task is not None and self.window.detail.reveal_button.isChecked() and task.ground_truth.expression:
            lines.append(f"The law: <code>{html.escape(task.model_label)} = "
                         f"{html.escape(_short(task.ground_truth.expression))}</code>")
            if result is not None:
                lines.append(f"Found: <code>{html.escape(_short(result.expression))}</code>")
        body = "<br>".join(lines) or "You have seen the whole loop: a task, a run, and its score."
        extra = (
            "<b>What next?</b><ul style='margin-left:-18px; margin-top:4px'>"
            "<li>Try another method in the Run panel, then <b>Run ▸ Compare runs…</b></li>"
            f"<li>Run experiments yourself in the virtual lab: <b>{_LAB_KEY}</b></li>"
            f"<li>See every stored run beside the papers' numbers: <b>Leaderboard</b> ({_BOARD_KEY})</li>"
            "<li><b>F1</b> lists every keyboard shortcut</li></ul>")
        self.card.set_step(2, STEPS, "You found the law" if self._recovered(result) else "That's the loop", body,
                           done=True)
        self.card.set_status(self._verdict(result) if result is not None else "", "ok" if self._recovered(result)
                             else "info")
        self.card.set_progress(None)
        self.card.set_extra(extra)
        self.card.set_action("Done", tip="Close the tour (Help ▸ Welcome tour replays it)")
        self.card.set_navigation(back=True, next_enabled=None, skip=False)
        self._spotlight([])

    # ------------------------------------------------------------------ what the run says

    def _seconds_text(self) -> str:
        s = self.run_seconds
        return f"{s:g}-second"

    def _good_result(self):
        """The last finished run on the selected task that has a formula, or None."""
        r, task = self._result, self._task()
        if r is None or task is None or r.task_id != task.id or not r.expression:
            return None
        if r.status not in ("finished", "cancelled"):
            return None
        return r

    @staticmethod
    def _recovered(result) -> bool:
        return bool(result is not None and ((result.metrics or {}).get("symbolic") or {}).get("equivalent"))

    def _verdict(self, result) -> str:
        metrics = result.metrics or {}
        nmse = (metrics.get("id") or {}).get("nmse")
        if isinstance(nmse, (int, float)) and math.isfinite(nmse):
            nmse_text = f"test NMSE {nmse:.2g}"
        else:
            nmse_text = "no finite test NMSE"
        if "symbolic" not in metrics:  # no ground truth to compare with (imported data)
            return f"The formula's {nmse_text}."
        equivalent = (metrics.get("symbolic") or {}).get("equivalent")
        if equivalent:
            return f"Symbolic accuracy: <b>yes</b>, the true law up to its constants; {nmse_text}."
        if equivalent is None:
            return f"Symbolic accuracy: undecided (the check could not tell); {nmse_text}."
        return f"Symbolic accuracy: <b>no</b>, a different formula; {nmse_text}."

    # ------------------------------------------------------------------ the card's buttons

    def _on_action(self) -> None:
        try:
            if self.page == PICK:
                self.pick_for_me()
            elif self.page == RUN:
                self.start_run()
            elif self.page == REVEAL:
                self.toggle_reveal()
            else:
                self.close("done")
        except Exception as exc:  # the tour never takes the window down with it
            self.card.set_status(f"Something went wrong: {html.escape(str(exc))}", "warn")

    def _on_next(self) -> None:
        self.go(self.page + 1)

    def pick_for_me(self) -> bool:
        """Select the tour's task in the browser (the page moves on when the browser says so)."""
        window = self.window
        task_id = self.first_task if self.first_task in window.tasks else None
        if task_id is None:  # a catalog without it: the first formula task shown
            task_id = next((tid for tid in window.browser.visible_task_ids()
                            if getattr(window.tasks.get(tid), "kind", None) == "function"), None)
        if task_id is None:
            self.card.set_status("The task list is still loading; try again in a moment.", "warn")
            return False
        self._show_dock("browser")
        if window.current_task is not None and window.current_task.id == task_id:
            self.go(RUN)  # already selected: the browser would not say so again
            return True
        return window.browser.select_task(task_id)

    def start_run(self) -> bool:
        """Genetic programming for ``run_seconds`` on the selected task, through the Run panel as
        a user would (so the panel shows what was run)."""
        window, panel = self.window, self.window.run_panel
        if window.controller.is_running():
            self._render_run("A run is already going; wait for it to end.", "warn")
            return False
        if window.current_task is None:
            self._render_run("Pick a task first (Back).", "warn")
            return False
        if not panel.select_method(METHOD):
            self._render_run(
                f"Genetic programming cannot run <b>{html.escape(window.current_task.title)}</b> (a "
                f"{html.escape(window.current_task.kind.replace('_', ' '))} task). Go Back and let me pick one.",
                "warn")
            return False
        if "seconds" in panel.editors:
            panel.set_value("seconds", self.run_seconds)
        if not panel.start_button.isEnabled():
            self._render_run("The Run panel is not ready to start; pick a task again.", "warn")
            return False
        self._failure = None
        self._switched_during_run = None
        self._show_dock("run")
        panel.start_button.click()
        if not window.controller.is_running():  # the window refused or failed: the panel says why
            self._render_run(f"The run did not start: {html.escape(panel.status.text())}", "warn")
            return False
        self._render_run("Starting…", "busy")  # at once; the run's own events follow
        self.card.set_progress(0.0)
        return True

    def toggle_reveal(self) -> None:
        button = self.window.detail.reveal_button
        if not button.isEnabled():
            self.card.set_status("This task has no known law to reveal.", "warn")
            return
        self._show_dock("detail")
        button.click()  # the page moves on in _on_reveal_toggled

    # ------------------------------------------------------------------ what happens in the window

    def _on_task_selected(self, task_id: str) -> None:
        if not self.is_open() or self._closing:
            return
        # After the window's own slot (connected first) has made it the current task.
        task = self.window.tasks.get(task_id)
        if task is None:
            return
        if self.page == PICK:
            self.go(RUN)
        elif self.page == RUN:
            if self.window.controller.is_running() and task_id != getattr(self.window.controller.task, "id", None):
                self._switched_during_run = task.title
                self._render_run(
                    f"You picked <b>{html.escape(task.title)}</b> while the run goes on "
                    f"<b>{html.escape(self.window.controller.task.title)}</b>. When it ends, run again here.",
                    "warn")
            else:
                self._switched_during_run = None
                self._render_run()
            self.reposition()
        elif self.page == REVEAL:
            if self._good_result() is None:
                self.go(RUN)
                self._render_run(f"New task: <b>{html.escape(task.title)}</b>. Run on it first, then reveal its "
                                 "law.", "info")
            else:
                self._render_reveal()
                self.reposition()

    def _on_reveal_toggled(self, shown: bool) -> None:
        if not self.is_open() or self._closing:
            return
        if self.page == REVEAL:
            if shown:
                self.go(NEXT)
            else:
                self._render_reveal()
        elif self.page == NEXT:
            self._render_next()
            self.reposition()

    def _on_run_started(self, _event) -> None:
        self._failure = None
        self._last_progress = 0.0
        if self.is_open() and not self._closing and self.page in (PICK, RUN):
            if self.page == PICK:
                self.go(RUN)
            else:
                self._render_run()
            self.card.set_progress(0.0)

    def _on_run_event(self, event) -> None:
        if not self.is_open() or self._closing or self.page != RUN or not isinstance(event, m.Progress):
            return
        # A GP run reports every generation; four updates a second are plenty to read.
        if event.elapsed - self._last_progress < 0.25 and self._last_progress:
            return
        self._last_progress = event.elapsed
        if self._switched_during_run:
            return  # keep the note about the switched task in view
        self.card.set_status(
            f"Searching… {event.elapsed:.1f} s · best training error (NMSE) <b>{event.best_loss:.3g}</b> "
            f"after {event.evaluations:,} formulas tried", "busy")
        self.card.set_progress(progress_fraction(event, self.window.run_seconds))

    def _on_run_finished(self, result) -> None:
        self._result = result

    def _on_run_failed(self, message: str) -> None:
        self._failure = message.split("\n", 1)[0] or "unknown error"

    def _on_run_idle(self) -> None:
        switched, self._switched_during_run = self._switched_during_run, None
        if not self.is_open() or self._closing:
            return
        if self.page != RUN:
            if self.page in (REVEAL, NEXT):
                self.go(self.page)  # a later run on this task: show its verdict
            return
        result, task = self._result, self._task()
        if self._failure or result is None or result.status == "failed":
            why = self._failure or (result.error if result is not None else None) or "no result came back"
            self._render_run(f"The run failed: {html.escape(_short(why, 200))}. Try again, or go Back and pick "
                             "another task.", "warn")
        elif task is None or result.task_id != task.id:
            now = f"<b>{html.escape(task.title)}</b>" if task is not None else "another task"
            ran = getattr(self.window.tasks.get(result.task_id), "title", result.task_id)
            self._render_run(
                f"That run was on <b>{html.escape(ran)}</b>, but {now} is selected now"
                f"{' (you switched during the run)' if switched else ''}. Run again to see its law.", "warn")
        elif result.status == "cancelled":
            if result.expression:
                self._render_run(
                    f"The run was stopped after {result.seconds:.1f} s. Its best formula so far is in the "
                    "Result panel: Next to reveal the law, or run again for the full time.", "warn")
            else:
                self._render_run("The run was stopped before it found a formula. Run again.", "warn")
        elif not result.expression:
            why = f": {html.escape(result.error)}" if result.error else ""
            self._render_run(f"The run ended without a formula{why}. Run again, or pick another task.", "warn")
        else:
            self.go(REVEAL)
            return
        self.card.set_progress(None)
        self.reposition()

    # ------------------------------------------------------------------ placement

    def _show_dock(self, key: str) -> None:
        dock = self.window.docks.get(key)
        if dock is not None and not self._closing:
            dock.show()
            dock.raise_()

    def _spotlight(self, keys: list[str]) -> None:
        docks = [self.window.docks.get(k) for k in keys]
        docks = [d for d in docks if d is not None]
        for i, light in enumerate(self.spotlights):
            light.set_target(docks[i] if i < len(docks) else None)
        if self._open:
            self.card.raise_()

    def _on_dragged(self) -> None:
        self._moved = True

    def eventFilter(self, obj, event) -> bool:
        if obj is self.window and event.type() == QEvent.Type.FontChange:
            self.card.follow_font(self.window.font())  # presentation mode's larger text
        if event.type() in (QEvent.Type.Resize, QEvent.Type.Show, QEvent.Type.Hide, QEvent.Type.Move) \
                and self._open and not self._closing:
            self._reposition_timer.start()  # once, after the burst of dock events of a resize
        return False

    def reposition(self) -> None:
        """Put the card in the free middle of the window: right of the left docks, left of the
        right docks, just above the bottom row (over it when the middle is too short)."""
        window, card = self.window, self.card
        if not self._open:
            return
        size = card.preferred_size()
        if self._moved:  # where the user dragged it, as far as the window still holds it
            height = card.layout().totalHeightForWidth(size.width()) if card.layout().hasHeightForWidth() \
                else size.height()
            card.resize(size.width(), min(height, window.height()))
            card.move(card.clamped(card.pos()))
            for light in self.spotlights:
                light.follow()
            card.raise_()
            return
        rect = window.rect()
        top = window.menuBar().geometry().bottom() + 1 if window.menuBar() else 0
        status = window.statusBar().geometry().top() if window.statusBar() and window.statusBar().isVisible() \
            else rect.bottom()
        left, right, bottom_row, top_row = 0, rect.width(), status, None
        for dock in window.docks.values():
            if not dock.isVisible() or dock.isFloating():
                continue
            g = dock.geometry()
            if not g.intersects(rect) or g.width() < 20 or g.height() < 20:
                continue
            area = window.dockWidgetArea(dock)
            if area == Qt.DockWidgetArea.LeftDockWidgetArea:
                left = max(left, g.right() + 1)
            elif area == Qt.DockWidgetArea.RightDockWidgetArea:
                right = min(right, g.left())
            elif area == Qt.DockWidgetArea.BottomDockWidgetArea:
                bottom_row = min(bottom_row, g.top())
            elif area == Qt.DockWidgetArea.TopDockWidgetArea:
                top_row = max(top_row or 0, g.bottom() + 1)
        if top_row is not None:  # above the tab bar of the top docks, not over it
            bottom_row = min(bottom_row, top_row)
        margin = 16
        centred = right - left < size.width() + 2 * margin
        if centred:  # no room in the middle (wide docks, small window): centre on the window
            left, right = 0, rect.width()
        width = min(size.width(), max(300, right - left - 2 * margin))
        height = card.layout().totalHeightForWidth(width) if card.layout().hasHeightForWidth() else size.height()
        height = min(height, max(200, status - top - 2 * margin))
        bottom = bottom_row if bottom_row - top >= height + 2 * margin else status
        x = (left + right - width) // 2 if centred else right - width - margin
        x = max(margin, x)
        y = max(top + margin, bottom - height - margin)
        card.setGeometry(x, y, width, height)
        for light in self.spotlights:
            light.follow()
        card.raise_()
