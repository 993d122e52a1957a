"""Time limits for pure-Python work (SymPy) that has no time-out of its own.

:func:`call_with_deadline` runs a function on a helper thread and, when it has not returned in
time, raises :class:`Deadline` inside that thread with ``PyThreadState_SetAsyncExc``. SymPy is
pure Python, so the exception lands between two bytecodes and unwinds the call; a long C-level
operation (a huge integer power, say) delays it until the operation ends, so callers also bound
the size of what they hand over. The standard library has no interruptible call (a ``Future``
cannot be cancelled once it runs) and a subprocess costs a second of SymPy import per call,
which is why this small helper is ours. Used by GP's simplification and the equivalence check.
"""

from __future__ import annotations

import ctypes
import threading
from typing import Any, Callable


#: How often the deadline is raised in a helper that is still running (see call_with_deadline).
INJECTIONS = 4


class Deadline(BaseException):
    """Raised when work runs out of time. A BaseException, so that SymPy's
    ``except Exception`` blocks cannot swallow it."""


def call_with_deadline(func: Callable[[], Any], seconds: float, name: str = "deadline") -> tuple[bool, Any]:
    """Run ``func`` for at most ``seconds``; returns ``(finished, value)``.

    ``(True, value)`` when it returned; ``(False, None)`` when it ran out of time; ``(False,
    exception)`` when it raised an ordinary exception.
    """
    result: dict[str, Any] = {}
    lock = threading.Lock()

    def target() -> None:
        try:  # the outer handler also catches a deadline landing in the inner one
            try:
                value = func()
                with lock:
                    result["value"] = value
            except Exception as exc:  # noqa: BLE001 - reported to the caller as "not finished"
                with lock:
                    result["error"] = exc
        except Deadline:
            pass

    thread = threading.Thread(target=target, name=name, daemon=True)
    thread.start()
    thread.join(max(0.0, seconds))
    timed_out = False
    for _attempt in range(INJECTIONS):
        with lock:
            # Inject only while the helper has not stored a result, so the exception lands in
            # ``func`` (or the store right after it), where ``target`` catches it.
            if result:
                break
            timed_out = True
            ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread.ident), ctypes.py_object(Deadline))
        # The exception can land in code that swallows it: a garbage-collector callback (Dask
        # registers one) only prints it. Then the work goes on, so it is raised again.
        thread.join(1.0 / INJECTIONS)
        if not thread.is_alive():
            break
    if timed_out:
        return False, None
    thread.join()
    if "value" in result:
        return True, result["value"]
    return False, result.get("error")
