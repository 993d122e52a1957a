"""The generic QThread worker: items arrive in order on the GUI thread, errors are reported,
a stop request closes the generator, and finished jobs do not pile up."""

from __future__ import annotations

import gc
import threading

from PySide6.QtCore import QThread

from app.worker import GeneratorJob, call_in_thread, live_jobs, start_job


def _count_jobs() -> int:
    gc.collect()
    return sum(isinstance(o, GeneratorJob) for o in gc.get_objects())


def test_items_arrive_in_order_on_the_gui_thread(qtbot, qapp):
    seen, threads = [], []

    def produce():
        for i in range(50):
            yield i

    job = start_job(produce, "count")
    job.item.connect(lambda i: (seen.append(i), threads.append(QThread.currentThread())))
    with qtbot.waitSignal(job.finished, timeout=5000):
        pass
    assert seen == list(range(50))
    assert all(t is qapp.thread() for t in threads)
    assert not job.is_running() and job.wait(10)


def test_a_job_runs_until_its_queued_items_and_finished_are_delivered(qtbot):
    """The thread can end while its last items still wait in the GUI's event queue. Until they
    and ``finished`` have been delivered the job is still running: a caller that sees it stopped
    (a Start button's handler, a test) must find every item and ``finished`` slot done."""
    seen, ended = [], []

    def produce():
        yield from range(3)

    job = start_job(produce, "queued")
    job.item.connect(seen.append)
    job.finished.connect(lambda: ended.append(job.is_running()))
    assert job.thread.wait(5000)  # the thread is gone; no event has been processed yet
    assert seen == [] and job.is_running()
    qtbot.waitUntil(lambda: not job.is_running(), timeout=5000)
    assert seen == [0, 1, 2] and ended == [False]


def test_an_exception_becomes_a_failed_signal(qtbot):
    def produce():
        yield 1
        raise ValueError("bad data")

    job = start_job(produce, "boom")
    messages = []
    job.failed.connect(messages.append)
    with qtbot.waitSignal(job.finished, timeout=5000):
        pass
    assert messages and messages[0].startswith("ValueError: bad data")


def test_stop_request_closes_the_generator(qtbot):
    closed = threading.Event()
    release = threading.Event()

    def produce():
        try:
            i = 0
            while True:
                yield i
                i += 1
                release.wait(0.01)
        finally:
            closed.set()

    job = start_job(produce, "endless")
    qtbot.waitSignal(job.item, timeout=5000).wait()
    job.request_stop()
    with qtbot.waitSignal(job.finished, timeout=5000):
        pass
    assert closed.is_set()


def test_finished_jobs_are_released(qtbot):
    before = _count_jobs()
    results = []
    for i in range(20):
        job = call_in_thread(lambda i=i: i * i, "square")
        job.item.connect(results.append)
        job.finished.connect(lambda job=job: job.name)  # a slot closing over its job, as the app's do
    qtbot.waitUntil(lambda: len(results) == 20 and not live_jobs(), timeout=10000)
    qtbot.wait(50)  # let deleteLater run
    del job
    assert sorted(results) == [i * i for i in range(20)]
    assert _count_jobs() - before <= 1


_STRESS = r"""
import os, sys, time
os.environ["QT_QPA_PLATFORM"] = "offscreen"
sys.path.insert(0, sys.argv[1])
from PySide6.QtCore import QObject, Signal
from app.application import create_app
from app.worker import call_in_thread, live_jobs

app = create_app()


class Sender(QObject):
    fired = Signal()


def slot():
    pass


senders = [Sender() for _ in range(300)]
started = time.monotonic()
jobs = 0
while time.monotonic() - started < 6:
    for _ in range(20):
        call_in_thread(lambda: sum(range(500)), "short")
    jobs += 20
    for s in senders:  # the GUI thread holds the GIL and takes Qt's signal-slot locks
        s.fired.connect(slot)
        s.fired.disconnect(slot)
    app.processEvents()
end = time.monotonic() + 10
while live_jobs() and time.monotonic() < end:
    app.processEvents()
print("ok", jobs, len(live_jobs()))
"""


def test_many_short_jobs_never_deadlock_the_gui_thread(tmp_path):
    # Deleting a finished worker on its own thread made PySide take the GIL under a Qt mutex
    # while the GUI thread, holding the GIL, waited for that mutex in connect/disconnect: the
    # window froze (it hung a CI run; this stress froze within seconds before the fix).
    import subprocess
    import sys
    from pathlib import Path

    script = tmp_path / "stress.py"
    script.write_text(_STRESS, encoding="utf-8")
    repo = str(Path(__file__).resolve().parents[2])
    try:
        done = subprocess.run([sys.executable, str(script), repo], capture_output=True, text=True, timeout=90)
    except subprocess.TimeoutExpired:
        raise AssertionError("the GUI thread deadlocked with worker threads finishing") from None
    assert done.returncode == 0, done.stderr[-2000:]
    ok, jobs, live = done.stdout.split()
    assert ok == "ok" and int(jobs) > 1000 and live == "0"
