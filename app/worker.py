"""One generic worker that moves any engine generator onto a QThread (architecture rule 4).

``GeneratorJob`` runs a zero-argument callable returning an iterator on its own QThread and
re-emits every item as a Qt signal, which Qt queues onto the GUI thread. The engine stays
ignorant of threads; views subscribe to the signals and redraw on their own timers.

Use :func:`start_job` to run one; the returned job keeps itself alive until its thread ends.
"""

from __future__ import annotations

import traceback
from typing import Callable, Iterable

from PySide6.QtCore import QObject, Qt, QThread, Signal, Slot

_live_jobs: set["GeneratorJob"] = set()


class _Worker(QObject):
    item = Signal(object)
    failed = Signal(str)
    done = Signal()

    def __init__(self, produce: Callable[[], Iterable]):
        super().__init__()
        self._produce = produce
        self._stop = False

    @Slot()
    def run(self) -> None:
        try:
            iterator = self._produce()
            for item in iterator:
                self.item.emit(item)
                if self._stop:
                    close = getattr(iterator, "close", None)
                    if close:
                        close()
                    break
        except Exception as exc:  # report, never crash the application
            self.failed.emit(f"{type(exc).__name__}: {exc}\n\n{traceback.format_exc(limit=6)}")
        finally:
            self.done.emit()


class GeneratorJob(QObject):
    """A running generator. Signals: ``item(object)``, ``failed(str)``, ``finished()``."""

    item = Signal(object)
    failed = Signal(str)
    finished = Signal()

    def __init__(self, produce: Callable[[], Iterable], name: str = "job", parent: QObject | None = None):
        super().__init__(parent)
        self.name = name
        self._started = False
        self._done = False
        self.thread = QThread(self)
        self.thread.setObjectName(f"keplerlab-{name}")
        self.worker = _Worker(produce)
        self.worker.moveToThread(self.thread)
        self.thread.started.connect(self.worker.run)
        self.worker.item.connect(self.item)
        self.worker.failed.connect(self.failed)
        # Directly from the worker's thread (QThread.quit is thread-safe): a queued call would need
        # the GUI thread's event loop, so a GUI thread blocked in wait() would always time out.
        self.worker.done.connect(self.thread.quit, Qt.ConnectionType.DirectConnection)
        # The worker is NOT deleted from its own thread (the usual ``finished -> deleteLater``):
        # destroying a Python-made QObject there makes PySide take the GIL while Qt holds a
        # signal-slot mutex, and a GUI thread that holds the GIL and connects or disconnects
        # anything waits for that mutex: a deadlock (seen as a frozen window). It is released on
        # the GUI thread in _on_thread_finished, after the thread has exited.
        self.thread.finished.connect(self._on_thread_finished)

    def start(self) -> "GeneratorJob":
        _live_jobs.add(self)
        self._started = True
        self.thread.start()
        return self

    def request_stop(self) -> None:
        """Ask the loop to close the generator after the next item (for jobs with no context)."""
        if self.worker is not None:
            self.worker._stop = True

    def is_running(self) -> bool:
        """True from ``start`` until ``finished`` has been emitted on the GUI thread. A thread
        that has ended still counts while its last items wait in the event queue: callers that
        see ``False`` know every item has been delivered and every ``finished`` slot has run
        (a button re-enabled there, say), not only that the thread is gone."""
        return self._started and not self._done

    def wait(self, msecs: int = 5000) -> bool:
        return self._done or self.thread.wait(msecs)

    @Slot()
    def _on_thread_finished(self) -> None:
        # `finished` is emitted from the thread just before it exits; let it exit for good
        # before anything can delete the QThread (a running QThread must not be destroyed).
        self.thread.wait()
        self._done = True
        self.finished.emit()
        _live_jobs.discard(self)
        worker, self.worker = self.worker, None
        if worker is not None:
            # Disconnect before the worker goes, so nothing can call into it; the C++ object is
            # destroyed here, on the GUI thread, when the last Python reference is dropped.
            try:
                self.thread.started.disconnect(worker.run)
            except (RuntimeError, TypeError):
                pass
            worker.setParent(None)
            del worker
        # Slots connected to this job often close over it; PySide keeps them alive from C++, where
        # Python's garbage collector cannot see the cycle. Deleting the Qt side once everyone has
        # heard `finished` drops those connections, so finished jobs do not pile up.
        self.deleteLater()


def start_job(produce: Callable[[], Iterable], name: str = "job") -> GeneratorJob:
    return GeneratorJob(produce, name).start()


def call_in_thread(func: Callable[[], object], name: str = "call") -> GeneratorJob:
    """Run one function off the GUI thread; its return value arrives as a single ``item``."""

    def produce():
        yield func()

    return start_job(produce, name)


def live_jobs() -> list[GeneratorJob]:
    return list(_live_jobs)
