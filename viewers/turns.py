"""One step per turn of the event loop, for all of the window's work that is done in steps.

Several panels spread their work over turns of the event loop so that the window can paint and
take input in between: a run picked in the history fills the panels one per turn, a plot
settles its ranges and axes in steps before it paints (viewers/settle.py), the history writes a
long list of runs a few rows at a time, a run's end brings its panels forward one by one. Each
used to re-arm a 1-ms timer of its own. Timers that are due fire together in one pass of Qt's
event loop, so a step of the Loss plot and a step of a history click often ran in the same
turn, followed by the relayout and repaint that both had asked for: under load (a sweep on both
cores) the longest turns of a history click, 55-80 ms, were two or three such steps together.

Here every such step waits in one queue, and one step runs per turn: a sequence takes a step,
then goes to the back of the queue, so that the panels advance in turn and a long sequence (a
500-run history) does not keep the others waiting. Qt has no scheduler of this kind (a
``QTimer`` per task is what it offers), hence this small one.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator

import shiboken6
from PySide6.QtCore import QCoreApplication, QObject, Qt, QTimer

_DONE = object()
#: A sequence that ends within this (seconds) did no work in its last step: the turn goes on.
IDLE_STEP_S = 0.0005


class _Sequence:
    __slots__ = ("steps", "owner", "done")

    def __init__(self, steps: Iterator[None], owner: QObject | None, done: Callable[[], None] | None):
        self.steps, self.owner, self.done = steps, owner, done


class Turns(QObject):
    """The queue of steps. Use :func:`turns` for the application's one."""

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._queue: deque[_Sequence] = deque()
        # 1 ms, not 0: Qt handles a zero-delay timer as a posted event, and all posted events
        # (the paints among them) in one pass, with no turn in between.
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(1)
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.timeout.connect(self._turn)

    def run(self, steps: Iterable[None], owner: QObject | None = None,
            done: Callable[[], None] | None = None) -> None:
        """Take one step of ``steps`` (an iterator that yields after each step) per turn, from
        the next turn on, taking turns with the other sequences; then call ``done``, also when
        a step raised (the exception then goes on to Qt's handler, which reports it). A
        sequence whose ``owner`` has been deleted is dropped, ``done`` not called."""
        self._queue.append(_Sequence(iter(steps), owner, done))
        if not self._timer.isActive():
            self._timer.start()

    def start(self, steps: Iterable[None], owner: QObject | None = None) -> None:
        """Take the first step of ``steps`` at once, in the caller's turn (what a click must
        change before anything else can), and the rest as :meth:`run` does."""
        steps = iter(steps)
        if next(steps, _DONE) is not _DONE:
            self.run(steps, owner)

    def call(self, function: Callable[[], object], owner: QObject | None = None) -> None:
        """Call ``function`` on a turn of its own."""
        self.run(_Once(function), owner)

    def pending(self) -> int:
        """Sequences in the queue."""
        return len(self._queue)

    def _turn(self) -> None:
        """One step; more only while the sequences met end with next to no work (a generator's
        last ``next`` after its last step, a sequence whose owner is gone, a call of under
        ``IDLE_STEP_S``): those cost no turn."""
        while self._queue:
            sequence = self._queue.popleft()
            alive = sequence.owner is None or shiboken6.isValid(sequence.owner)
            finished = True  # also if the step raises
            started = time.perf_counter()
            try:
                if alive:
                    finished = next(sequence.steps, _DONE) is _DONE
            finally:
                if not finished:
                    self._queue.append(sequence)
                if self._queue:
                    self._timer.start()
                if finished and alive and sequence.done is not None:
                    sequence.done()
            if not finished or time.perf_counter() - started > IDLE_STEP_S:
                return


class _Once:
    """An iterator whose one step is a call."""

    def __init__(self, function: Callable[[], object]):
        self.function = function

    def __iter__(self) -> _Once:
        return self

    def __next__(self) -> None:
        if self.function is None:
            raise StopIteration
        function, self.function = self.function, None
        function()
        raise StopIteration  # done in the turn of the call: no turn is spent to find that out


_turns: Turns | None = None


def turns() -> Turns:
    """The application's queue of steps (made with the first call; a QApplication must exist)."""
    global _turns
    if _turns is None or not shiboken6.isValid(_turns):
        _turns = Turns(QCoreApplication.instance())
    return _turns
