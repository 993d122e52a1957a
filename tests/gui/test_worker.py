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
