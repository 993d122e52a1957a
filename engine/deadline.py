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
    with lock:
        # Inject only while the helper has not stored a result, so the exception lands in
        # ``func`` (or the store right after it), where ``target`` catches it.
        timed_out = not result
        if timed_out:
            ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread.ident), ctypes.py_object(Deadline))
    if timed_out:
        thread.join(1.0)
        return False, None
    thread.join()
    if "value" in result:
        return True, result["value"]
    return False, result.get("error")
