"""The cyclic garbage collector runs on the GUI thread only (a worker thread collecting Qt
objects deadlocked the window against the GIL)."""

from __future__ import annotations

import gc
import threading

from app.application import collect_garbage_on_gui_thread, collect_if_due, create_app


N = 5000  # cycles: several times the collector's first threshold (700)


def test_automatic_collection_is_off_and_the_gui_timer_collects(qtbot):
    app = create_app()
    collect_garbage_on_gui_thread(app)
    assert not gc.isenabled()
    assert app._keplerlab_gc_timer.isActive()
    # The collector counts allocations minus deallocations, so windows of earlier tests being
    # deleted now could cancel out this test's garbage: let them go first.
    from PySide6.QtCore import QCoreApplication, QEvent

    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    qtbot.wait(600)
    collected: list[str] = []

    class Cycle:
        def __init__(self):
            self.me = self

        def __del__(self):
            collected.append(threading.current_thread().name)

    def make_garbage():
        for _ in range(N):
            Cycle()

    worker = threading.Thread(target=make_garbage, name="worker")
    worker.start()
    worker.join()
    assert "worker" not in collected  # nothing was collected on the worker thread
    gc.set_threshold(*gc.get_threshold())
    qtbot.waitUntil(lambda: len(collected) >= N, timeout=10000)
    assert set(collected) == {threading.main_thread().name}
    collect_if_due()


def test_the_gui_thread_waits_at_most_a_millisecond_for_the_gil(qtbot):
    import sys

    create_app()
    assert sys.getswitchinterval() <= 0.001
