"""Engine work in processes of its own, streamed back item by item.

Why the window needs this
-------------------------
The window draws with pyqtgraph, whose paint code is Python, and CPython runs the Python of one
process one thread at a time (the GIL). A run, the scoring of a Pareto front, the fit of a
clicked model or a sweep's bookkeeping are CPU-bound Python (SymPy above all). On a thread of
the window's process, each of them takes the interpreter away from every paint: a paint is
hundreds of short calls into Python, and each waits up to the switch interval for a busy thread
to let go. Measured with ``benchmarks/bench_ui.py --only load``: stalls of 1-3 s per click on
the run history while a run or a sweep went on. In a process of its own the same work runs
beside the window instead of in front of it.

What this module is
-------------------
A *host* is a warm child process (started with *spawn*, the heavy modules imported once) that
runs one call at a time: a picklable top-level function whose result, if it is an iterator, is
sent back item by item. :class:`HostPool` hands out idle hosts and keeps a few warm. A call can
be cancelled from any thread: the function sees it through the ``threading.Event`` passed as
``cancelled`` and decides what it means (a run turns it into its ``RunContext``'s Stop and still
scores its best model; a scoring call returns at its next result); with ``kill_after`` the host is killed if it has not finished by then (a
symbolic check in the middle of a SymPy call cannot be interrupted otherwise), and the pool
starts another.

``concurrent.futures.ProcessPoolExecutor`` can neither stream the items of a generator nor stop
a call that has started, and Dask is for machines, not for one window; this is why the small
protocol below is our own.

A host dies with the window: its reader thread exits the process when the pipe to the parent
closes (a ``kill -9`` of the window included), so a run going on in it ends *interrupted* and
can be resumed, as it would have in the window's own process.

Nothing here imports Qt.
"""

from __future__ import annotations

import atexit
import multiprocessing
import multiprocessing.util  # noqa: F401 -- before our atexit handler: see pool()
import os
import queue
import signal
import sys
import threading
import time
import traceback
from typing import Any, Callable, Iterator

#: Modules a host imports at start, so that its first call does not pay for them.
WARM_MODULES = ("numpy", "scipy.optimize", "sympy", "engine.scoring", "engine.runner", "engine.candidates",
                "engine.fits", "engine.tasks.registry")

#: Niceness of a host (Unix). On a machine whose cores are all busy with a run or a sweep, the
#: window's thread then gets the CPU as soon as it has something to draw: at equal priority it
#: got a third of a core on two cores, and a 0.1-s redraw took 0.3-0.5 s.
HOST_NICE = 10

#: Seconds a cancelled call whose consumer has left may take to end before its host is killed.
SETTLE = 0.5

#: How often (seconds) a caller waiting on a host checks a cancelled call's deadline.
POLL = 0.05

#: Environment variable that keeps all engine work in the window's process (debugging, or a
#: platform where child processes cannot be started).
IN_PROCESS_ENV = "KEPLERLAB_IN_PROCESS"


class HostLost(RuntimeError):
    """The host process ended in the middle of a call (killed from outside, out of memory, a
    crash in a C extension)."""


class CallFailed(RuntimeError):
    """The function raised in the host; ``str`` is ``"Type: message"``, ``remote_traceback``
    the host's traceback."""

    def __init__(self, message: str, remote_traceback: str = ""):
        super().__init__(message)
        self.remote_traceback = remote_traceback


class Cancel(threading.Event):
    """The ``cancelled`` a call is given: an event that also counts how often the window asked
    (a sweep's second Stop abandons its running units)."""

    def __init__(self):
        super().__init__()
        self.times = 0

    def signal(self) -> None:
        self.times += 1
        self.set()

    def clear(self) -> None:
        self.times = 0
        super().clear()


def failure_text(message: str, first_line: bool = True) -> str:
    """A job's failure message (``"Type: message\n\ntraceback"``) as a user reads it: this
    module's wrapper types left out, since the function's own ``Type: message`` follows them."""
    for wrapper in ("CallFailed: ", "HostLost: "):
        message = message.removeprefix(wrapper)
    return message.split("\n", 1)[0] if first_line else message


def in_process() -> bool:
    return os.environ.get(IN_PROCESS_ENV, "").strip().lower() in ("1", "true", "yes")


# --------------------------------------------------------------------------- child side


def _serve(conn, warm: tuple[str, ...]) -> None:
    """The host's main loop (runs in the child)."""
    import importlib

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl+C in a terminal is the window's to handle
    try:  # a process group of its own, so that a sweep's workers go with it (Host.kill, below)
        # setpgid, not setsid: with the kernel's autogroups (sched_autogroup_enabled, on by
        # default in the common desktop kernels) every new session gets a scheduling group of
        # its own that weighs as much as the window's whole session, and the niceness below
        # then counts only inside it. As separate sessions, three busy hosts took about three
        # quarters of the CPU from the window on two cores: a history click kept the window
        # busy about 0.3 s instead of 0.1 s (measured with the hosts pinned off its core).
        os.setpgid(0, 0)
    except OSError:
        pass
    # A process group in the window's session, but not the terminal's foreground one when the
    # app was started from a shell: reading the terminal would stop the host (SIGTTIN), and so
    # would writing to it under `stty tostop` (SIGTTOU). It has nothing to read, and its output
    # is only diagnostics; its children, a sweep's workers, inherit both.
    for name in ("SIGTTIN", "SIGTTOU", "SIGTSTP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_IGN)
    try:
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
    except OSError:
        pass
    try:  # background work yields the CPU to the window (its children, a sweep's workers, inherit it)
        os.nice(HOST_NICE)
    except (AttributeError, OSError):
        pass
    calls: queue.Queue = queue.Queue()
    cancel = Cancel()

    def reader() -> None:
        while True:
            try:
                message = conn.recv()
            except (EOFError, OSError):  # the parent has gone: so does this process, at once
                _end_group()
            except Exception as exc:  # an unpicklable message: report it as the call's failure
                calls.put(("bad", f"{type(exc).__name__}: {exc}"))
                continue
            if message[0] == "call":
                cancel.clear()  # here, in pipe order: a cancel sent after the call is kept
            if message[0] == "cancel":
                cancel.signal()
            else:
                calls.put(message)
                if message[0] == "quit":
                    return

    threading.Thread(target=reader, name="host-reader", daemon=True).start()
    for name in warm:
        try:
            importlib.import_module(name)
        except Exception:  # a missing optional module costs its first call the import, no more
            pass
    while True:
        message = calls.get()
        if message[0] == "quit":
            conn.close()
            return
        if message[0] == "bad":
            conn.send(("error", message[1], ""))
            continue
        _, func, args, kwargs, env = message
        _apply_env(env)
        iterator = None
        try:
            result = func(*args, cancelled=cancel, **kwargs)
            if isinstance(result, Iterator):
                iterator = result
                for item in iterator:  # the function itself decides what a cancel means
                    conn.send(("item", item))
            else:
                conn.send(("item", result))
            conn.send(("done",))
        except BaseException as exc:  # noqa: BLE001 - everything goes back to the caller
            try:
                conn.send(("error", f"{type(exc).__name__}: {exc}", traceback.format_exc(limit=8)))
            except (OSError, EOFError):
                _end_group()
        finally:
            if iterator is not None:
                try:
                    iterator.close()
                except Exception:
                    pass


def _end_group() -> None:
    """End this host and its children (a sweep's workers) at once."""
    try:
        if os.getpgrp() == os.getpid():  # only a group of its own: never the window's
            os.killpg(0, signal.SIGKILL)
    finally:
        os._exit(0)


def _app_env() -> dict[str, str]:
    """The window's environment of the moment, sent with every call: a host started earlier must
    use the data folder, API-key variables and settings the window has now."""
    return dict(os.environ)


def _apply_env(env: dict[str, str]) -> None:
    if env == os.environ:
        return
    for key in [k for k in os.environ if k not in env]:
        del os.environ[key]
    os.environ.update(env)


# --------------------------------------------------------------------------- parent side


class Host:
    """One child process running one call at a time."""

    def __init__(self, warm: tuple[str, ...] = WARM_MODULES):
        context = multiprocessing.get_context("spawn")
        self._conn, child = context.Pipe(duplex=True)
        self.process = context.Process(target=_serve, args=(child, warm), name="keplerlab-host")
        self.process.start()
        child.close()
        self._send_lock = threading.RLock()  # also orders a call's start against a cancel
        self._busy = False
        self._cancelled = False  # a cancel was sent for the call going on
        self._killed = False  # this side killed the process (its end is then no surprise)
        self._kill_at: float | None = None  # a cancel's deadline (monotonic seconds), then the kill
        self._pending: tuple[float | None] | None = None  # a cancel that came before the call started
        #: False while a call's end ("done" or an error) has not been read: the host may still
        #: be working on it or have items in the pipe, so it must not take another call.
        self.clean = True
        self.calls = 0

    @property
    def pid(self) -> int | None:
        return self.process.pid

    def alive(self) -> bool:
        return self.process.is_alive()

    def busy(self) -> bool:
        return self._busy

    def _send(self, message) -> None:
        with self._send_lock:
            self._conn.send(message)

    def stream(self, func: Callable, *args, **kwargs) -> Iterator[Any]:
        """Run ``func(*args, cancelled=<Event>, **kwargs)`` in the host and yield what it yields
        (or its one return value). Raises :class:`CallFailed` when the function raised and
        :class:`HostLost` when the process died, unless this side killed it (a cancel's
        ``kill_after`` ran out, or :meth:`kill`): the stream then just ends."""
        if self._busy:
            raise RuntimeError("this host is already running a call")
        self._kill_at = None
        self._cancelled = False
        self._killed = False
        self.clean = False
        self.calls += 1
        try:
            with self._send_lock:  # a cancel from another thread is sent after the call, never before
                try:
                    self._conn.send(("call", func, args, kwargs, _app_env()))
                except (OSError, EOFError) as exc:
                    raise HostLost(f"the engine process could not be reached ({exc})") from exc
                except Exception as exc:  # the call does not pickle; nothing was sent (send pickles first)
                    self.clean = True
                    raise CallFailed(f"{type(exc).__name__}: the call cannot be sent to an engine process: "
                                     f"{exc}") from exc
                self._busy = True
                pending, self._pending = self._pending, None
            if pending is not None:  # cancelled between being handed out and starting
                self.cancel(pending[0])
            while True:
                # Polled, so that a cancel's deadline is kept without a timer thread per cancel.
                if not self._conn.poll(POLL):
                    if self._kill_at is not None and time.monotonic() >= self._kill_at:
                        self.kill()
                        self._kill_at = None
                    continue
                try:
                    message = self._conn.recv()
                except (EOFError, OSError) as exc:
                    if self._killed:  # our own kill of a cancelled call: the stream just ends
                        return
                    self.process.join(1.0)
                    raise HostLost(f"the engine process ended unexpectedly ({_how(self.process.exitcode)})") from exc
                if message[0] == "item":
                    yield message[1]
                elif message[0] == "done":
                    self.clean = True
                    return
                else:
                    self.clean = True
                    raise CallFailed(message[1], message[2] if len(message) > 2 else "")
        finally:
            with self._send_lock:
                self._kill_at = None
                self._busy = False

    def settle(self, timeout: float) -> bool:
        """After a stream was left early: read the rest of its call until the call's end (True,
        the host can serve again) or until ``timeout`` seconds have passed (False)."""
        deadline = time.monotonic() + timeout
        try:
            while not self.clean:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                if self._conn.poll(min(POLL, left)):
                    if self._conn.recv()[0] in ("done", "error"):
                        self.clean = True
        except (EOFError, OSError):
            return False
        return True

    def cancel(self, kill_after: float | None = None) -> None:
        """Ask the call going on to stop (any thread). With ``kill_after`` (seconds) the process
        is killed if the call has not ended by then."""
        with self._send_lock:
            if not self._busy:
                self._pending = (kill_after,)  # for the call about to start on this host (HostPool.stream)
                return
            self._cancelled = True
            try:
                self._conn.send(("cancel",))
            except (OSError, EOFError):
                return
            if kill_after is not None:
                deadline = time.monotonic() + kill_after
                self._kill_at = deadline if self._kill_at is None else min(self._kill_at, deadline)

    def kill(self) -> None:
        """Kill the host and its process group (a sweep's workers)."""
        self._killed = True
        if self.process.is_alive():
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except OSError:  # not a group leader yet (just started), or no process groups here
                self.process.kill()

    def close(self, timeout: float = 2.0) -> None:
        """Let the host finish its loop, or kill it after ``timeout``."""
        try:
            if self.process.is_alive() and not self._busy:
                self._send(("quit",))
                self.process.join(timeout)
        except (OSError, EOFError, BrokenPipeError):
            pass
        if self.process.is_alive():
            self.process.kill()
            self.process.join(1.0)
        try:
            self._conn.close()
        except OSError:
            pass


def _how(exitcode: int | None) -> str:
    if exitcode is None:
        return "still running, but it hung up"
    if exitcode < 0:
        try:
            return f"killed by {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"killed by signal {-exitcode}"
    return f"exit code {exitcode}"


class HostPool:
    """Hands out idle hosts, keeps up to ``keep`` of them warm, and starts new ones as needed.

    Three, because a click on a run of another task asks for three things at once (the data
    preview, the fit, the candidates' scores); with fewer, every such click started a host and
    paid its imports (1-2 s of CPU). A warm host holds about 115 MB.

    A host is used by one caller at a time: :meth:`stream` takes one, runs the call and gives
    it back when the stream ends (a host killed by a cancel is replaced, not given back)."""

    def __init__(self, keep: int = 3, warm: tuple[str, ...] = WARM_MODULES):
        self.keep = keep
        self.warm_modules = warm
        self._idle: list[Host] = []
        self._busy: set[Host] = set()
        self._lock = threading.Lock()
        self._closed = False

    def take(self) -> Host:
        """An idle host, or a new one (raises OSError when no process can be started)."""
        with self._lock:
            if self._closed:
                raise HostLost("the engine processes have been shut down")
            while self._idle:
                host = self._idle.pop()
                if host.alive():
                    self._busy.add(host)
                    return host
                host.close(0)
        host = Host(self.warm_modules)
        with self._lock:
            self._busy.add(host)
        return host

    def _give_back(self, host: Host) -> None:
        with self._lock:
            self._busy.discard(host)
            if not self._closed and host.clean and host.alive() and len(self._idle) < self.keep:
                self._idle.append(host)
                return
        host.close(0.5)

    def prestart(self, n: int = 1) -> None:
        """Start hosts now so that the first calls find them warm (returns at once)."""
        started = []
        with self._lock:
            if self._closed:
                return
            missing = max(0, min(n, self.keep) - len(self._idle))
        for _ in range(missing):
            started.append(Host(self.warm_modules))
        with self._lock:  # another thread may have given hosts back, or closed the pool, meanwhile
            room = 0 if self._closed else max(0, self.keep - len(self._idle))
            self._idle.extend(started[:room])
        for host in started[room:]:
            host.close(0)

    def stream(self, func: Callable, *args, on_host: Callable[[Host], None] | None = None, host: Host | None = None,
               **kwargs) -> Iterator[Any]:
        """Like :meth:`Host.stream` on a host of the pool (``host``, taken with :meth:`take`, or
        the next idle one); ``on_host`` is told which host runs the call (to cancel it)."""
        host = host or self.take()
        host._pending = None
        try:
            if on_host is not None:
                on_host(host)
            yield from host.stream(func, *args, **kwargs)
        finally:
            if on_host is not None:
                on_host(None)  # the caller lets go before the host can serve another call
            # A consumer that left early: a cancelled call gets a moment to end (its host then
            # serves again), any other is killed.
            replaced = not host.clean and not (host._cancelled and host.settle(SETTLE))
            if replaced:
                host.kill()
                host.process.join(1.0)
            self._give_back(host)
            if replaced:
                self.prestart(1)  # so that the next call finds a warm host, not a cold start

    def hosts(self) -> list[Host]:
        with self._lock:
            return list(self._idle) + list(self._busy)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            hosts = list(self._idle) + list(self._busy)
            self._idle.clear()
            self._busy.clear()
        for host in hosts:
            host.kill() if host.busy() else host.close(1.0)


_pool: HostPool | None = None
_pool_lock = threading.Lock()


def pool() -> HostPool:
    """The process-wide pool (created on first use, closed at exit)."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = HostPool()
            # Registered after multiprocessing's own exit handler (imported above), so it runs
            # first: that handler joins every live child process, and a host waits for calls
            # until it is told to quit, so the interpreter would never exit.
            atexit.register(_pool.close)
        return _pool


def shutdown() -> None:
    """Close the process-wide pool now (the app's exit; a later call starts a new pool)."""
    global _pool
    with _pool_lock:
        old, _pool = _pool, None
    if old is not None:
        old.close()


class Call:
    """One call in a host of the process-wide pool, cancellable from any thread; falls back to
    running in the calling thread when :func:`in_process` says so. Iterate it for the items."""

    def __init__(self, func: Callable, *args, kill_on_cancel: float | None = None, **kwargs):
        self.func, self.args, self.kwargs = func, args, kwargs
        self.kill_on_cancel = kill_on_cancel
        self._host: Host | None = None
        self._cancel = Cancel()
        self._lock = threading.Lock()

    def _attach(self, host: Host | None) -> None:
        """The host running this call (None once it has ended)."""
        with self._lock:
            self._host = host
            if host is not None and self._cancel.is_set():
                host.cancel(self.kill_on_cancel)

    def __iter__(self) -> Iterator[Any]:
        if self._cancel.is_set():
            return
        host = None
        if not in_process():
            try:
                host = pool().take()
            except (OSError, RuntimeError) as exc:  # no process can be started here: do the work anyway
                _warn_once(f"Kepler Lab: engine processes cannot be started ({exc}); working in the window's "
                           "process instead, which may make it stutter")
        if host is None:
            result = self.func(*self.args, cancelled=self._cancel, **self.kwargs)
            if isinstance(result, Iterator):
                yield from result
            else:
                yield result
            return
        yield from pool().stream(self.func, *self.args, on_host=self._attach, host=host, **self.kwargs)

    def result(self) -> Any:
        value = None
        for value in self:
            pass
        return value

    def cancel(self) -> None:
        """Ask the call to stop (any thread, any number of times: each one reaches it)."""
        with self._lock:  # held while the host is told, so the host cannot meanwhile be handed on
            self._cancel.signal()
            if self._host is not None:
                self._host.cancel(self.kill_on_cancel)


_warned: set[str] = set()


def _warn_once(message: str) -> None:
    if message not in _warned:
        _warned.add(message)
        print(message, file=sys.stderr)


def wait_idle(timeout: float = 5.0) -> bool:
    """True once no host of the pool runs a call (tests)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if _pool is None or not any(h.busy() for h in _pool.hosts()):
            return True
        time.sleep(0.02)
    return False
