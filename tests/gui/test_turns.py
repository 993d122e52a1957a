"""The window's one queue of steps (viewers/turns.py): one step per turn of the event loop for
all the panels that work in steps, in turn; the paints and relayouts a step asked for are done
before the next step runs; a failing step or a deleted owner does not stop the others."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QCoreApplication, QEvent, QObject

pytest.importorskip("pytestqt")

from viewers.turns import turns  # noqa: E402


class _Posted(QObject):
    """Counts the posted events it received: a stand-in for the relayouts and paints a step
    asks for, which Qt handles between turns."""

    KIND = QEvent.Type(QEvent.registerEventType())

    def __init__(self):
        super().__init__()
        self.received = 0

    def post(self) -> None:
        QCoreApplication.postEvent(self, QEvent(self.KIND))

    def event(self, event):  # noqa: D401 -- Qt's name
        if event.type() == self.KIND:
            self.received += 1
            return True
        return super().event(event)


def test_sequences_take_one_step_per_turn_in_turn_and_their_posted_work_runs_between(qtbot):
    posted = _Posted()
    log: list[tuple[str, int, int]] = []  # (sequence, step, posted events handled before it)
    ended: list[str] = []

    def sequence(name: str, steps: int):
        for k in range(steps):
            log.append((name, k, posted.received))
            posted.post()
            yield

    turns().run(sequence("a", 3), done=lambda: ended.append("a"))
    turns().run(sequence("b", 2), done=lambda: ended.append("b"))
    turns().call(lambda: log.append(("c", 0, posted.received)))
    assert log == []  # nothing in the turn that queued them
    qtbot.waitUntil(lambda: len(ended) == 2 and turns().pending() == 0, timeout=5000)
    assert [(name, k) for name, k, _ in log] == [("a", 0), ("b", 0), ("c", 0), ("a", 1), ("b", 1), ("a", 2)]
    # every step ran after what the step before it had posted was handled: its own turn
    assert [seen for _, _, seen in log] == [0, 1, 2, 2, 3, 4]
    assert ended == ["b", "a"]


def test_a_failing_step_is_reported_ends_its_sequence_and_the_others_go_on(qtbot):
    done: list[str] = []
    steps: list[str] = []

    def failing():
        steps.append("f0")
        yield
        raise RuntimeError("a step failed")

    def other():
        for k in range(3):
            steps.append(f"o{k}")
            yield

    with qtbot.capture_exceptions() as caught:
        turns().run(failing(), done=lambda: done.append("failing"))
        turns().run(other(), done=lambda: done.append("other"))
        qtbot.waitUntil(lambda: "other" in done, timeout=5000)
    assert [str(e[1]) for e in caught] == ["a step failed"]
    assert done == ["failing", "other"]  # the failed one was ended (its hold released)
    assert steps == ["f0", "o0", "o1", "o2"]


def test_a_sequence_whose_owner_is_deleted_is_dropped(qtbot):
    import shiboken6

    owner = QObject()
    ran: list[int] = []
    done: list[str] = []

    def steps():
        for k in range(5):
            ran.append(k)
            if k == 1:
                shiboken6.delete(owner)  # a panel closed between two of its steps
            yield

    turns().run(steps(), owner, done=lambda: done.append("owned"))
    qtbot.waitUntil(lambda: turns().pending() == 0, timeout=5000)
    assert ran == [0, 1] and done == []


def test_a_sequence_started_takes_its_first_step_at_once_and_the_rest_in_turns(qtbot):
    ran: list[int] = []

    def steps():
        for k in range(3):
            ran.append(k)
            yield

    turns().start(steps())
    assert ran == [0]  # in the caller's turn
    qtbot.waitUntil(lambda: turns().pending() == 0, timeout=5000)
    assert ran == [0, 1, 2]
    turns().start(iter(()))  # nothing to do: nothing queued
    assert turns().pending() == 0
