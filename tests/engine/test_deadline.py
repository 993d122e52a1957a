"""call_with_deadline: pure-Python work is stopped when it runs out of time."""

from __future__ import annotations

import threading
import time

from engine.deadline import Deadline, call_with_deadline


def test_a_quick_call_returns_its_value():
    assert call_with_deadline(lambda: 6 * 7, 5.0) == (True, 42)


def test_an_ordinary_exception_is_handed_back():
    def boom():
        raise ValueError("bad")

    finished, error = call_with_deadline(boom, 5.0)
    assert not finished and isinstance(error, ValueError)


def _spin(stop_flag: dict):
    while True:  # pure Python: the deadline lands between two bytecodes
        stop_flag["spins"] = stop_flag.get("spins", 0) + 1


def test_a_runaway_loop_is_stopped():
    flag: dict = {}
    before = threading.active_count()
    started = time.monotonic()
    assert call_with_deadline(lambda: _spin(flag), 0.2, name="spin") == (False, None)
    assert time.monotonic() - started < 2.0
    time.sleep(0.1)
    assert threading.active_count() <= before  # the helper thread has ended


def test_a_deadline_swallowed_once_is_raised_again():
    """As when it lands in a garbage-collector callback, which only prints it."""
    swallowed = []

    def stubborn():
        while True:
            try:
                while True:
                    pass
            except Deadline:
                if swallowed:
                    raise
                swallowed.append(True)  # the first one is lost; the work goes on

    before = threading.active_count()
    assert call_with_deadline(stubborn, 0.2, name="stubborn") == (False, None)
    time.sleep(0.1)
    assert swallowed and threading.active_count() <= before
