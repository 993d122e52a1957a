"""Sessions and projects, driven as a user would: what was open comes back at the next start,
File ▸ Recent runs, and a .klab project saved in one installation and opened in another."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QMessageBox

pytest.importorskip("pytestqt")

from app import session, settings  # noqa: E402
from app.application import create_app  # noqa: E402
from app.main_window import MainWindow  # noqa: E402
from engine import paths  # noqa: E402
from engine import project as pj  # noqa: E402
from engine.store import RunStore  # noqa: E402
from engine.tasks import registry  # noqa: E402
from engine.tasks import user_data as ud  # noqa: E402
from stored_runs import FRONT, MATSCI1, add_run  # noqa: E402

CKR1 = "llmsrbench/lsr-synth/chemistry/CKR1"
Button = QMessageBox.StandardButton


class Answers:
    """What the message boxes were asked and told, and the reply to questions."""

    def __init__(self):
        self.asked: list[str] = []
        self.warnings: list[str] = []
        self.reply = Button.Discard

    def question(self, _parent, _title, text, *_args, **_kwargs):
        self.asked.append(text)
        return self.reply

    def tell(self, _parent, _title, text, *_args, **_kwargs):
        self.warnings.append(text)


@pytest.fixture(autouse=True)
def answers(monkeypatch):
    """Every question a test does not answer itself is answered Discard, so a window left with
    unsaved changes can never block the run; tests record what was asked and shown."""
    got = Answers()
    monkeypatch.setattr(QMessageBox, "question", staticmethod(got.question))
    monkeypatch.setattr(QMessageBox, "warning", staticmethod(got.tell))
    monkeypatch.setattr(QMessageBox, "information", staticmethod(got.tell))
    yield got
    registry.invalidate()


def _open(qtbot) -> MainWindow:
    create_app()
    win = MainWindow()
    qtbot.addWidget(win)
    win.show()
    qtbot.waitUntil(lambda: len(win.tasks) > 0, timeout=20000)
    return win


def _settle(qtbot, win) -> None:
    qtbot.waitUntil(lambda: not win.loader.busy() and not win.session.loader.busy() and not win.scorer.busy(),
                    timeout=30000)


def _close(qtbot, win) -> None:
    win.scorer.cancel()
    _settle(qtbot, win)
    win.close()
    win.controller.shutdown()
    win.loader.wait_all()


def _type(qtbot, widget, text: str) -> None:
    """Type text into a widget, lines separated by Return (QTest types no control characters)."""
    widget.setFocus()
    for i, line in enumerate(text.split("\n")):
        if i:
            qtbot.keyClick(widget, Qt.Key.Key_Return)
        qtbot.keyClicks(widget, line)


def _draft() -> str:
    """The project draft the session keeps beside settings.ini ("" while there is none)."""
    path = session.draft_path()
    return path.read_text(encoding="utf-8") if path.exists() else ""


def _use_home(monkeypatch, home: Path) -> Path:
    monkeypatch.setenv("KEPLERLAB_HOME", str(home))
    registry.invalidate()
    return home


def _click_history_row(qtbot, win, run_id: str) -> None:
    table = win.history.table
    row = next(r for r in range(table.rowCount()) if win.history.run_ids()[r] == run_id)
    rect = table.visualItemRect(table.item(row, 1))
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def _double_click_entry(qtbot, id_list, item_id: str) -> None:
    widget = id_list.list
    item = next(widget.item(i) for i in range(widget.count()) if widget.item(i).data(Qt.ItemDataRole.UserRole + 1)
                == item_id)
    widget.scrollToItem(item)
    pos = widget.visualItemRect(item).center()
    qtbot.mouseClick(widget.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    qtbot.mouseDClick(widget.viewport(), Qt.MouseButton.LeftButton, pos=pos)


# ------------------------------------------------------------------------------ session restore


def test_session_restore_brings_back_task_run_layout_and_recent_runs(qtbot, isolated_home):
    with RunStore(paths.default_db_path()) as store:
        first = add_run(store, seed=1)
        second = add_run(store, seed=2, method="pysr", metrics={"id": {"nmse": 0.125}})
    win = _open(qtbot)
    assert win.session.recent_run_actions() == []  # a fresh home has no recent runs
    _click_history_row(qtbot, win, first)  # the user opens a stored run …
    qtbot.waitUntil(lambda: win.displayed_run == first and win.candidates.row_count() == len(FRONT), timeout=15000)
    win.browser.select_task(CKR1)  # … then moves on to another task
    assert win.current_task.id == CKR1 and win.displayed_run == first
    win.docks["llm"].close()  # and rearranges the docks
    win.docks["project"].setFloating(True)
    _close(qtbot, win)

    again = _open(qtbot)
    qtbot.waitUntil(lambda: again.displayed_run == first and again.current_task is not None
                    and again.current_task.id == CKR1, timeout=15000)
    assert again.browser.current_task_id() == CKR1
    qtbot.waitUntil(lambda: again.candidates.row_count() == len(FRONT), timeout=15000)
    assert again.history.selected_run_id() == first
    assert not again.docks["llm"].isVisible()  # the dock state came back, the session's own dock too
    assert again.docks["project"].isFloating()
    reset = next(a for a in again.menus["view"].actions() if a.text() == "Reset &layout")
    reset.trigger()  # View ▸ Reset layout puts the Project dock back beside the run history
    assert not again.docks["project"].isFloating()
    assert again.docks["history"] in again.tabifiedDockWidgets(again.docks["project"])
    # File ▸ Recent runs lists the run with its task, method, NMSE and date; clicking opens it.
    entries = again.session.recent_run_actions()
    assert [a.data() for a in entries] == [first]
    assert entries[0].text().startswith("MatSci1 · gp · NMSE 0.05 · 20")
    again.session.recent_tasks_menu.aboutToShow.emit()  # opening the menu fills it
    assert [a.data() for a in again.session.recent_tasks_menu.actions() if a.data()][:2] == [CKR1, MATSCI1]
    _click_history_row(qtbot, again, second)
    qtbot.waitUntil(lambda: again.displayed_run == second, timeout=15000)
    assert [a.data() for a in again.session.recent_run_actions()] == [second, first]
    assert "pysr · NMSE 0.125" in again.session.recent_run_actions()[0].text()
    again.session.recent_run_actions()[1].trigger()
    qtbot.waitUntil(lambda: again.displayed_run == first, timeout=15000)
    assert again.history.selected_run_id() == first
    clear = [a for a in again.session.recent_runs_menu.actions() if a.text() == "Clear list"][0]
    clear.trigger()
    assert again.session.recent_run_actions() == []
    _close(qtbot, again)
    assert json.loads(settings.settings().value("session/recent_runs")) == []


def test_a_vanished_run_or_task_is_skipped_with_a_note(qtbot, isolated_home):
    s = settings.settings()
    s.setValue("session/last_run", "0123456789ab")
    s.setValue("session/last_task", "nowhere/at/all")
    s.setValue("session/recent_runs", json.dumps(["0123456789ab"]))
    s.sync()
    win = _open(qtbot)
    qtbot.waitUntil(lambda: "Skipped" in win.status_label.text(), timeout=10000)
    text = win.status_label.text()
    assert "0123456789ab" in text and "nowhere/at/all" in text
    assert win.displayed_run is None and win.current_task is None
    win.session.recent_run_actions()[0].trigger()  # the menu's stale entry goes when clicked
    assert "not in your run store" in win.status_label.text()
    assert win.session.recent_run_actions() == []
    _close(qtbot, win)


def test_a_noise_variant_comes_back(qtbot, isolated_home):
    win = _open(qtbot)
    surface = next((t for t in win.tasks.values() if t.kind == "surface"), None)
    if surface is None:
        pytest.skip("no SurfaceBench task in this catalog")
    win.browser.select_task(surface.id)
    box = win.detail.noise_box
    qtbot.waitUntil(lambda: box.count() > 1, timeout=5000)
    box.setCurrentIndex(1)  # the first noise level
    qtbot.waitUntil(lambda: win.current_task.id != surface.id, timeout=5000)
    variant = win.current_task.id
    _close(qtbot, win)
    again = _open(qtbot)
    qtbot.waitUntil(lambda: again.current_task is not None and again.current_task.id == variant, timeout=15000)
    assert again.browser.current_task_id() == surface.id and again.detail.noise_box.currentIndex() == 1
    _close(qtbot, again)


# ------------------------------------------------------------------------------ projects


def _csv(path: Path) -> Path:
    rng = np.random.default_rng(3)
    x, v = np.linspace(0.1, 1, 30), rng.uniform(-1, 1, 30)
    rows = np.column_stack([x, v, 3 * x - v])
    path.write_text("x,v,a\n" + "\n".join(",".join(f"{c:.17g}" for c in r) for r in rows) + "\n")
    return path


def test_a_project_saved_in_one_home_opens_in_another(qtbot, tmp_path, monkeypatch, answers):
    asked, warnings = answers.asked, answers.warnings
    _use_home(monkeypatch, tmp_path / "teacher")
    ud.import_table(_csv(tmp_path / "pendulum.csv"), "class/pendulum")
    with RunStore(paths.default_db_path()) as store:
        runs = [add_run(store, seed=1), add_run(store, seed=2, method="pysr")]
    win = _open(qtbot)
    panel = win.session.panel
    assert win.windowTitle() == "Kepler Lab" and not win.isWindowModified()
    for run_id in runs:
        _click_history_row(qtbot, win, run_id)
        qtbot.waitUntil(lambda r=run_id: win.displayed_run == r, timeout=15000)
        qtbot.mouseClick(panel.runs.add_button, Qt.MouseButton.LeftButton)
    win.browser.select_task(MATSCI1)
    qtbot.mouseClick(panel.tasks.add_button, Qt.MouseButton.LeftButton)
    qtbot.mouseClick(panel.tasks.add_button, Qt.MouseButton.LeftButton)  # twice: listed once
    win.browser.select_task("user/class/pendulum")
    qtbot.mouseClick(panel.tasks.add_button, Qt.MouseButton.LeftButton)
    qtbot.keyClicks(panel.title_edit, "Week 3")
    notes = "Compare GP and PySR on MatSci1.\nThen fit the pendulum table."
    _type(qtbot, panel.notes, notes)
    assert panel.task_ids() == [MATSCI1, "user/class/pendulum"] and panel.run_ids() == runs
    assert "Week 3" in win.windowTitle() and win.isWindowModified()

    target = tmp_path / "shared" / "week3"  # no suffix: .klab is added
    target.parent.mkdir()
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(target), "")))
    with qtbot.waitSignal(win.session.project_saved, timeout=20000) as saved:
        win.session.save_action.trigger()
    path = Path(saved.args[0])
    assert path == target.with_suffix(".klab") and path.exists()
    assert not win.isWindowModified() and "Week 3" in win.windowTitle()
    assert str(path) in panel.location.text()
    assert "Project saved" in win.status_label.text()
    _close(qtbot, win)
    assert asked == []  # nothing unsaved, so no question

    _use_home(monkeypatch, tmp_path / "student")
    other = _open(qtbot)
    assert other.history.run_ids() == [] and other.session.panel.is_empty()
    assert "user/class/pendulum" not in other.tasks
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: (str(path), "")))
    with qtbot.waitSignal(other.session.project_opened, timeout=20000) as opened:
        other.session.open_action.trigger()
    report = opened.args[0]
    assert report.imported_runs == runs and report.installed_tasks == ["user/class/pendulum"]
    assert sorted(other.history.run_ids()) == sorted(runs)  # the runs are in the history
    shown = other.session.panel
    assert shown.notes_text() == notes and shown.title() == "Week 3"  # the notes are shown
    assert shown.task_ids() == [MATSCI1, "user/class/pendulum"] and shown.run_ids() == runs
    assert other.docks["project"].isVisible() and "Week 3" in other.windowTitle()
    assert not other.isWindowModified()
    # Its current task (the imported table, new here) is selected once the catalog has reloaded.
    qtbot.waitUntil(lambda: other.current_task is not None and other.current_task.id == "user/class/pendulum",
                    timeout=20000)
    # The reloaded catalog's task count did not replace what the opening added.
    assert "Opened the project Week 3: 2 runs added, 1 imported task added" in other.status_label.text()
    assert "MatSci1 · gp · NMSE 0.05" in shown.runs.list.item(0).text()
    _double_click_entry(qtbot, shown.runs, runs[1])  # a run opens from the project
    qtbot.waitUntil(lambda: other.displayed_run == runs[1], timeout=15000)
    _double_click_entry(qtbot, shown.tasks, MATSCI1)
    qtbot.waitUntil(lambda: other.current_task.id == MATSCI1, timeout=15000)
    assert warnings == []
    _close(qtbot, other)


def test_closing_with_unsaved_changes_asks_save_discard_or_cancel(qtbot, tmp_path, monkeypatch, isolated_home,
                                                                  answers):
    asked = answers.asked
    win = _open(qtbot)
    panel = win.session.panel
    panel.notes.setFocus()
    qtbot.keyClicks(panel.notes, "Half-written thoughts")
    assert win.isWindowModified()
    # The draft reaches the settings shortly after typing: a crash would not lose it.
    qtbot.waitUntil(lambda: "Half-written" in _draft(), timeout=5000)

    answers.reply = Button.Cancel
    assert not win.close()
    assert win.isVisible() and len(asked) == 1 and "not saved" in asked[0]

    answers.reply = Button.Save
    target = tmp_path / "thoughts.klab"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(target), "")))
    win.close()  # Save: the file is written, then the window closes
    qtbot.waitUntil(lambda: not win.isVisible(), timeout=20000)
    assert target.exists() and len(asked) == 2
    win.controller.shutdown()
    win.loader.wait_all()

    # The next start reopens the saved project.
    again = _open(qtbot)
    qtbot.waitUntil(lambda: again.session.path == target and not again.session.loader.busy(), timeout=15000)
    assert again.session.panel.notes_text() == "Half-written thoughts"
    assert not again.isWindowModified()
    again.session.panel.notes.setFocus()
    qtbot.keyClicks(again.session.panel.notes, " and more")
    answers.reply = Button.Discard
    again.close()
    assert not again.isVisible() and len(asked) == 3
    again.controller.shutdown()
    again.loader.wait_all()

    third = _open(qtbot)  # discarded edits do not come back; the saved file does
    qtbot.waitUntil(lambda: third.session.path == target and not third.session.loader.busy(), timeout=15000)
    assert third.session.panel.notes_text() == "Half-written thoughts"
    _close(qtbot, third)


def test_unsaved_notes_survive_a_crash(qtbot, isolated_home):
    win = _open(qtbot)
    win.session.panel.notes.setFocus()
    qtbot.keyClicks(win.session.panel.notes, "Only in memory")
    qtbot.waitUntil(lambda: "Only in memory" in _draft(), timeout=5000)
    # A second window reads the session as a restart after a crash would (the first never closed).
    second = _open(qtbot)
    assert second.session.panel.notes_text() == "Only in memory" and second.isWindowModified()
    win.session.dirty = second.session.dirty = False
    _close(qtbot, second)
    _close(qtbot, win)


def test_a_damaged_project_is_refused_and_nothing_changes(qtbot, tmp_path, monkeypatch, isolated_home, answers):
    warnings = answers.warnings
    win = _open(qtbot)
    panel = win.session.panel
    qtbot.keyClicks(panel.title_edit, "Mine")
    bad = tmp_path / "bad.klab"
    bad.write_bytes(b"PK\x03\x04 not really a zip")
    answers.reply = Button.Discard  # replacing the unsaved project is allowed …
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: (str(bad), "")))
    win.session.open_action.trigger()
    qtbot.waitUntil(lambda: len(warnings) == 1, timeout=15000)
    assert "not a zip archive" in warnings[0] and str(bad) in warnings[0]
    assert "Nothing was changed" in warnings[0]
    assert panel.title() == "Mine" and win.isWindowModified()  # … but nothing was lost
    assert win.history.run_ids() == []
    win.session.dirty = False
    _close(qtbot, win)


def test_a_project_that_cannot_be_reread_at_start_keeps_the_session_notes(qtbot, tmp_path, monkeypatch,
                                                                          isolated_home):
    win = _open(qtbot)
    qtbot.keyClicks(win.session.panel.notes, "Keep me")
    target = tmp_path / "p.klab"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(target), "")))
    with qtbot.waitSignal(win.session.project_saved, timeout=20000):
        win.session.save_as_action.trigger()
    _close(qtbot, win)
    target.write_bytes(target.read_bytes()[:100])  # cut short behind our back
    again = _open(qtbot)
    qtbot.waitUntil(lambda: "Could not reopen the project" in again.status_label.text(), timeout=15000)
    assert again.session.panel.notes_text() == "Keep me"
    assert os.fspath(target) in again.status_label.text()
    _close(qtbot, again)


# ------------------------------------------------------------------------------ closing while busy


def _held(monkeypatch, name: str) -> threading.Event:
    """Make engine.project's ``name`` wait (on the worker thread) until the returned gate opens."""
    gate = threading.Event()
    real = getattr(pj, name)

    def held(*args, **kwargs):
        gate.wait(30)
        return real(*args, **kwargs)

    monkeypatch.setattr(pj, name, held)
    return gate


def test_closing_while_the_project_is_written_closes_once_it_is(qtbot, tmp_path, monkeypatch, isolated_home,
                                                                answers):
    gate = _held(monkeypatch, "save_project")
    win = _open(qtbot)
    qtbot.keyClicks(win.session.panel.title_edit, "Slow to write")
    target = tmp_path / "slow.klab"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(target), "")))
    win.session.save_action.trigger()
    assert win.session.busy()
    assert not win.close()  # the file is being written: the close waits for it
    assert win.isVisible() and "the window closes when it is written" in win.status_label.text()
    gate.set()
    qtbot.waitUntil(lambda: not win.isVisible(), timeout=20000)
    assert target.exists() and pj.read_project(target).title == "Slow to write"
    assert answers.asked == [] and answers.warnings == []  # saved, so nothing to ask
    win.controller.shutdown()
    win.loader.wait_all()


def test_closing_while_a_project_is_opened_closes_once_it_is(qtbot, tmp_path, monkeypatch, isolated_home, answers):
    with RunStore(paths.default_db_path()) as store:
        run_id = add_run(store)
        path = pj.save_project(tmp_path / "lesson.klab", store, [MATSCI1], [run_id], "Read me", title="Lesson").path
    gate = _held(monkeypatch, "read_project")
    win = _open(qtbot)
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: (str(path), "")))
    win.session.open_action.trigger()
    assert not win.close()  # the file is being read: the close waits for it
    assert win.isVisible() and "the window closes when it has been opened" in win.status_label.text()
    gate.set()
    qtbot.waitUntil(lambda: not win.isVisible(), timeout=20000)
    assert win.session.path == path and win.session.panel.notes_text() == "Read me"
    assert '"Lesson"' in _draft()  # the opened project is what the next start reopens
    assert answers.asked == [] and answers.warnings == []
    win.controller.shutdown()
    win.loader.wait_all()


# ------------------------------------------------------------------------------ what is written when


def test_choosing_tasks_and_runs_does_not_rewrite_the_notes(qtbot, isolated_home, monkeypatch):
    with RunStore(paths.default_db_path()) as store:
        run_id = add_run(store)
    win = _open(qtbot)
    win.session.panel.notes.setFocus()
    qtbot.keyClicks(win.session.panel.notes, "Lesson plan")
    qtbot.waitUntil(lambda: "Lesson plan" in _draft(), timeout=5000)  # the draft timer wrote it
    writes = []
    real = session.write_atomically
    monkeypatch.setattr(session, "write_atomically", lambda path, *a, **k: (writes.append(path), real(path, *a, **k)))
    _click_history_row(qtbot, win, run_id)
    qtbot.waitUntil(lambda: win.displayed_run == run_id, timeout=15000)
    win.browser.select_task(CKR1)
    assert win.current_task.id == CKR1
    assert writes == []  # the draft was not written again …
    ini = (paths.data_dir() / "settings.ini").read_text(encoding="utf-8")
    assert "Lesson plan" not in ini  # … and the notes are not in the settings
    s = settings.settings()
    assert s.value("session/last_run") == run_id and s.value("session/last_task") == CKR1
    assert json.loads(s.value("session/recent_runs")) == [run_id]
    win.session.dirty = False
    _close(qtbot, win)
    assert writes == [session.draft_path()]  # once more at closing
    assert "Lesson plan" in _draft()


def test_the_title_field_stops_at_what_a_project_file_holds(qtbot, tmp_path, monkeypatch, isolated_home):
    win = _open(qtbot)
    edit = win.session.panel.title_edit
    qtbot.keyClicks(edit, "T" * (pj.MAX_TITLE_CHARS + 20))
    assert edit.text() == "T" * pj.MAX_TITLE_CHARS
    target = tmp_path / "titled.klab"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(target), "")))
    with qtbot.waitSignal(win.session.project_saved, timeout=20000):
        win.session.save_as_action.trigger()
    assert pj.read_project(target).title == "T" * pj.MAX_TITLE_CHARS  # and it reads back
    _close(qtbot, win)
