"""Reusable sandbox worker processes for LLM-written programs (architecture rule 5).

The parent side. A :class:`SandboxPool` keeps a few worker processes (``_worker.py``) alive;
the data of a run reach each worker once (:meth:`SandboxPool.load_data`), then every program is
compiled and fitted there (:meth:`SandboxPool.evaluate`). Nothing the child sends is unpickled:
requests and replies are JSON lines, arrays travel as base64 of little-endian float64 bytes.

A worker that overruns its wall-clock limit, dies, or sends something malformed has its whole
process group killed (``SIGKILL``), its temporary directory removed, and is replaced on the next
request. The same happens to every worker when the pool closes.
"""

from __future__ import annotations

import base64
import importlib.util
import itertools
import json
import logging
import math
import os
import queue
import select
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

log = logging.getLogger("engine.sandbox")

WORKER_SCRIPT = Path(__file__).with_name("_worker.py")
MAX_REPLY_BYTES = 8 << 20
_ENV_PASSTHROUGH_VALUES = {"LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}


@dataclass(frozen=True)
class SandboxLimits:
    """Limits of one evaluation (CPU, wall clock, output) and of one worker process."""

    cpu_seconds: float = 30.0
    wall_seconds: float | None = None  # default: cpu_seconds * 1.5 + 5
    memory_bytes: int = 2 << 30  # RLIMIT_AS
    file_bytes: int = 64 << 20  # RLIMIT_FSIZE
    disk_bytes: int = 128 << 20  # all files of the private directory (a tmpfs where the kernel allows)
    max_processes: int = 64  # RLIMIT_NPROC (threads count too)
    output_chars: int = 10_000  # a program's captured prints, per evaluation
    startup_seconds: float = 60.0
    lifetime_cpu_seconds: int = 3600  # hard RLIMIT_CPU of a worker; it is replaced before that
    max_evaluations: int = 2000  # per worker, then it is replaced

    @property
    def wall(self) -> float:
        return self.wall_seconds if self.wall_seconds is not None else self.cpu_seconds * 1.5 + 5.0


@dataclass
class EvalResult:
    """The outcome of one program: fitted parameters and losses, or why it failed."""

    ok: bool
    params: list[float] = field(default_factory=list)
    mse: float | None = None
    nmse: float | None = None
    error: str | None = None
    output: str = ""
    seconds: float = 0.0
    predictions: "Any" = None  # numpy array, from apply()

    @classmethod
    def failed(cls, error: str, output: str = "", seconds: float = 0.0) -> "EvalResult":
        return cls(ok=False, error=error, output=output, seconds=seconds)

    @classmethod
    def from_reply(cls, reply: dict) -> "EvalResult":
        """Validate a worker's reply; the child is untrusted, so nothing is taken on faith."""

        def num(value) -> float | None:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                return None
            return float(value)

        params_raw = reply.get("params") or []
        params = [num(p) for p in params_raw] if isinstance(params_raw, list) else [None]
        output = reply.get("output") if isinstance(reply.get("output"), str) else ""
        seconds = num(reply.get("seconds")) or 0.0
        error = reply.get("error")
        error = str(error)[:2000] if error is not None else None
        if reply.get("ok") is True:
            mse, nmse = num(reply.get("mse")), num(reply.get("nmse"))
            if mse is None or nmse is None or any(p is None for p in params):
                return cls.failed("malformed reply from the sandbox worker", output, seconds)
            return cls(True, params, mse, nmse, None, output, seconds)
        return cls(False, [p for p in params if p is not None], None, None, error or "failed", output, seconds)


class WorkerError(RuntimeError):
    """A worker died, timed out or broke the protocol; it has been killed."""


def _death(code: int | None) -> str:
    """Why the worker's process ended, in words (its first process mirrors the worker's
    status: 128 + N for a signal N)."""
    if code is None:
        return "the worker process died"
    number = -code if code < 0 else code - 128 if code > 128 else None
    if number is not None:
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = f"signal {number}"
        if name == "SIGKILL":
            return "the worker process was killed (SIGKILL: out of memory, or a signal)"
        return f"the program crashed the worker process ({name}, e.g. through ctypes or a C extension)"
    return f"the program ended the worker process (exit status {code}) before it answered"


def _import_paths() -> list[str]:
    """Directories the worker needs on sys.path (it runs with -I -S: no site-packages)."""
    paths: list[str] = []
    for name in ("numpy", "scipy"):
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.origin:
            raise RuntimeError(f"the sandbox needs {name}")
        paths.append(str(Path(spec.origin).resolve().parent.parent))
    return list(dict.fromkeys(paths))


def _read_paths(sys_path: Sequence[str]) -> list[str]:
    """What the worker may read once Landlock is on: the Python installation and its libraries."""
    candidates = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
                  str(Path(sys.executable).resolve().parent.parent), *sys_path,
                  sysconfig.get_paths().get("stdlib", ""), sysconfig.get_paths().get("platstdlib", ""),
                  "/usr/lib", "/usr/lib64", "/lib", "/lib64", "/usr/local/lib", "/etc/ld.so.cache",
                  "/usr/share/zoneinfo"]
    out = []
    for path in candidates:
        if path and os.path.exists(path):
            out.append(os.path.realpath(path))
            if os.path.realpath(path) != os.path.abspath(path):
                out.append(os.path.abspath(path))
    return list(dict.fromkeys(out))


def scrubbed_env(home: str) -> dict[str, str]:
    """An environment built from nothing: no API keys, tokens or anything else of the app's."""
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": home,
        "TMPDIR": home,
        **_ENV_PASSTHROUGH_VALUES,
        # One thread per worker: the pool is the parallelism, and RLIMIT_NPROC counts threads.
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }


#: Niceness of a sandbox worker and of its scheduling group: generated code runs at low priority.
WORKER_NICE = 10


def _yield_cpu(pgid: int) -> None:
    """Run the worker's process group at low priority, best effort. Its session of its own
    (start_new_session, so that killing the group takes everything it started) is also a
    scheduling group of its own under Linux autogroups, on by default in the common desktop
    kernels: there the processes' niceness counts only inside the group, so the group is niced
    too, through ``/proc/<pid>/autogroup``. Unprivileged, the kernel takes one such write per
    100 ms on the whole machine (EAGAIN otherwise), so a worker started alongside others gets
    its turn from a short-lived thread."""
    try:
        os.setpriority(os.PRIO_PGRP, pgid, WORKER_NICE)
    except (AttributeError, OSError):
        pass

    def nice_group() -> None:
        for _ in range(30):
            try:
                with open(f"/proc/{pgid}/autogroup", "w") as group:
                    group.write(str(WORKER_NICE))
                return
            except BlockingIOError:  # EAGAIN: another write in the last 100 ms
                time.sleep(0.11)
            except OSError:  # no autogroups, or the worker is gone
                return

    if os.path.exists(f"/proc/{pgid}/autogroup"):
        threading.Thread(target=nice_group, name="sandbox-nice", daemon=True).start()


class SandboxWorker:
    """One worker process: its own session (process group), temporary directory and pipes."""

    _ids = itertools.count(1)

    def __init__(self, limits: SandboxLimits, namespaces: bool = True, landlock: bool = True,
                 seccomp: bool = True, fitting: bool = True):
        self.limits = limits
        self.evaluations = 0
        self.data_version = -1
        self.dead = False
        self._buffer = b""
        self._next_id = 1
        self.workdir = tempfile.mkdtemp(prefix="keplerlab-sandbox-")
        os.chmod(self.workdir, 0o700)
        read_fd, write_fd = os.pipe()
        sys_path = _import_paths()
        cfg = {
            "workdir": self.workdir,
            "proto_fd": write_fd,
            "sys_path": sys_path,
            "read_paths": _read_paths(sys_path),
            "memory_bytes": limits.memory_bytes,
            "file_bytes": limits.file_bytes,
            "disk_bytes": limits.disk_bytes,
            "max_processes": limits.max_processes,
            "cpu_seconds": limits.cpu_seconds,
            "output_chars": limits.output_chars,
            "lifetime_cpu_seconds": limits.lifetime_cpu_seconds,
            "namespaces": namespaces,
            "landlock": landlock,
            "seccomp": seccomp,
            # SciPy's optimiser is loaded at start-up only in a worker that fits programs (about
            # 0.4 s); one that runs code or applies a law imports it on demand, if ever.
            "preload_scipy": fitting,
            "parent_uid": os.getuid(),
        }
        self._stderr_path = os.path.join(self.workdir, ".worker-stderr")
        stderr = open(self._stderr_path, "wb")
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-I", "-S", "-B", str(WORKER_SCRIPT), json.dumps(cfg)],
                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=stderr,
                pass_fds=(write_fd,), cwd=self.workdir, env=scrubbed_env(self.workdir),
                start_new_session=True, close_fds=True,
            )
        except BaseException:
            os.close(read_fd)
            os.close(write_fd)
            shutil.rmtree(self.workdir, ignore_errors=True)
            raise
        finally:
            stderr.close()
        os.close(write_fd)
        self._fd = read_fd
        self.pgid = self.proc.pid  # start_new_session: the worker leads its own group
        _yield_cpu(self.proc.pid)
        try:
            hello = self._read_reply(limits.startup_seconds)
        except WorkerError as exc:
            raise WorkerError(f"the sandbox worker did not start: {exc}") from None
        if not isinstance(hello, dict) or hello.get("hello") is not True:
            self.kill()
            raise WorkerError("the sandbox worker did not greet")
        prot = hello.get("protections")
        self.protections: dict[str, Any] = prot if isinstance(prot, dict) else {}

    # -- protocol ---------------------------------------------------------------------------------
    def _stderr_tail(self) -> str:
        try:
            with open(self._stderr_path, "rb") as f:
                f.seek(0, os.SEEK_END)
                f.seek(max(0, f.tell() - 1500))
                return f.read().decode("utf-8", "replace").strip()
        except OSError:
            return ""

    def _read_reply(self, timeout: float) -> dict:
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                self.kill()
                raise TimeoutError(f"no answer within {timeout:g} s")
            ready, _, _ = select.select([self._fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(self._fd, 1 << 16)
            if not chunk:
                try:
                    code = self.proc.wait(timeout=1.0)
                except subprocess.TimeoutExpired:
                    code = None
                tail = self._stderr_tail()
                self.kill()
                raise WorkerError(_death(code) + (f": {tail[-300:]}" if tail else ""))
            self._buffer += chunk
            if len(self._buffer) > MAX_REPLY_BYTES:
                self.kill()
                raise WorkerError("the worker sent an oversized reply")
        line, _, self._buffer = self._buffer.partition(b"\n")
        try:
            reply = json.loads(line)
        except (ValueError, RecursionError):  # RecursionError: a deeply nested forged reply
            self.kill()
            raise WorkerError("the worker broke the protocol") from None
        if not isinstance(reply, dict):
            self.kill()
            raise WorkerError("the worker broke the protocol")
        return reply

    def request(self, message: dict, timeout: float) -> dict:
        if self.dead:
            raise WorkerError("the worker is gone")
        message = dict(message, id=self._next_id)
        self._next_id += 1
        try:
            self.proc.stdin.write(json.dumps(message).encode() + b"\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            self.kill()
            raise WorkerError("the worker process died") from None
        reply = self._read_reply(timeout)
        if reply.get("id") != message["id"]:
            self.kill()
            raise WorkerError("the worker broke the protocol (reply out of order)")
        return reply

    # -- teardown ---------------------------------------------------------------------------------
    def kill(self) -> None:
        """Kill the whole process group, reap the worker, remove its directory. Idempotent."""
        if self.dead:
            return
        self.dead = True
        try:
            os.killpg(self.pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL does not fail
            log.error("sandbox worker %s did not die", self.proc.pid)
        for closer in (lambda: self.proc.stdin.close(), lambda: os.close(self._fd)):
            try:
                closer()
            except OSError:
                pass
        shutil.rmtree(self.workdir, ignore_errors=True)

    close = kill


def _encode(array) -> tuple[str, list[int]]:
    import numpy as np

    arr = np.ascontiguousarray(np.asarray(array, dtype="<f8"))
    return base64.b64encode(arr.tobytes()).decode("ascii"), list(arr.shape)


class SandboxPool:
    """A pool of reusable sandbox workers. Thread-safe; ``size`` evaluations run at once.

    >>> with SandboxPool(size=2) as pool:
    ...     pool.load_data(X, y)
    ...     result = pool.evaluate(source, "equation", n_params=10)
    """

    def __init__(self, size: int = 1, limits: SandboxLimits | None = None, *,
                 namespaces: bool = True, landlock: bool = True, seccomp: bool = True, verify: bool = True,
                 fitting: bool = True):
        if size < 1:
            raise ValueError("a sandbox pool needs at least one worker")
        self.size = size
        self.limits = limits or SandboxLimits()
        self._namespaces = namespaces
        self._landlock = landlock
        self._seccomp = seccomp
        self._verify = verify  # re-score every fit in a worker without the targets (see _rescore)
        self._fitting = fitting  # False: a pool that only runs code or applies laws (no BFGS)
        self._verifier: SandboxWorker | None = None
        self._verify_lock = threading.Lock()
        self._y = None  # the targets, kept here: the app scores fits itself
        self._blind: dict | None = None  # load_data for the verifier: X and zeros, never y
        self._idle: queue.LifoQueue[SandboxWorker | None] = queue.LifoQueue()
        for _ in range(size):
            self._idle.put(None)  # a slot; the worker starts on first use
        self._lock = threading.Lock()
        self._workers: set[SandboxWorker] = set()
        self._data: dict | None = None
        self._data_version = 0
        self._protections: dict[str, Any] | None = None
        self._warned = False
        self._closed = False
        self.replaced = 0  # workers killed and replaced (timeouts, crashes, protocol errors)

    # -- public API -------------------------------------------------------------------------------
    def load_data(self, X, y) -> None:
        """Set the data every later evaluation fits on (sent once to each worker)."""
        import numpy as np

        X = np.asarray(X, dtype=np.float64)
        if X.ndim == 1:
            X = X.reshape(-1, 1)
        y = np.asarray(y, dtype=np.float64).reshape(-1)
        if X.ndim != 2 or X.shape[0] != y.shape[0]:
            raise ValueError(f"X must be (n, d) and y (n,); got {X.shape} and {y.shape}")
        xb, xs = _encode(X)
        yb, ys = _encode(y)
        zb, _ = _encode(np.zeros_like(y))
        with self._lock:
            self._data = {"op": "load_data", "X": xb, "X_shape": xs, "y": yb, "y_shape": ys}
            self._blind = dict(self._data, y=zb)
            self._y = y.copy()
            self._data_version += 1

    def evaluate(self, source: str, function_name: str = "equation", n_params: int = 10, *,
                 call: str = "columns", init: Sequence[float] | None = None) -> EvalResult:
        """Compile ``source``, fit ``n_params`` parameters of ``function_name`` by BFGS from ones.

        ``call="columns"`` calls ``f(x0, x1, ..., params)`` (LLM-SR's skeletons), ``"matrix"``
        calls ``f(X, params)``. ``init`` (``n_params`` finite numbers) starts BFGS there instead
        of at all ones; an invalid ``init`` gives a failed result. Never raises for a bad program:
        the result says why it failed.
        """
        if self._closed:
            raise RuntimeError("the sandbox pool is closed")
        if self._data is None:
            raise RuntimeError("load_data() first")
        if not isinstance(source, str):
            return EvalResult.failed("the program is not text")
        request = {"op": "evaluate", "source": source, "function": str(function_name),
                   "n_params": int(n_params), "call": call, "cpu_seconds": self.limits.cpu_seconds,
                   "output_chars": self.limits.output_chars}
        if init is not None:
            start, why = _check_init(init, int(n_params))
            if start is None:
                return EvalResult.failed(why)
            request["init"] = start

        def check(reply: dict) -> tuple[EvalResult, bool]:
            result = self._result(reply)
            if not result.ok:
                return result, False
            if len(result.params) != int(n_params):
                return EvalResult.failed(f"malformed reply from the sandbox worker ({len(result.params)} "
                                         f"parameters for {int(n_params)})", result.output, result.seconds), True
            return self._rescore(request, result)

        reply = self._request(request, check)
        return self._result(reply) if isinstance(reply, dict) else reply

    def _result(self, reply: dict) -> EvalResult:
        result = EvalResult.from_reply(reply)
        cap = self.limits.output_chars + 100  # the worker caps prints; a forged reply may not
        if len(result.output) > cap:
            result.output = result.output[:cap] + "\n[... output cut by the app]"
        return result

    def _rescore(self, request: dict, claimed: EvalResult) -> tuple[EvalResult, bool]:
        """Score a fit in the app: the program's predictions at its fitted parameters come from a
        second worker that was never sent the targets, and the losses are computed here.

        A fit's numbers come from a process that ran the program next to the training data, so
        they can be forged (a reply written on the protocol pipe, NumPy patched, the targets
        read from the fitter's frames). Without the targets the program cannot reproduce a
        score it did not earn. Returns ``(result, suspect)``: ``suspect`` means the claim was not
        reproduced, and the fitting worker is replaced (the program may have tampered with it)."""
        import numpy as np

        if not self._verify:
            return claimed, False
        predictions, why, verifier = self._predict_blind(request, claimed.params)
        if predictions is None:
            return EvalResult.failed(f"re-scoring the fit without the training targets failed: {why}",
                                     claimed.output, claimed.seconds), True
        y = self._y
        with np.errstate(all="ignore"):
            mse = float(np.mean((predictions - y) ** 2))
            var = float(np.mean((y - y.mean()) ** 2))
        nmse = mse / var if var > 0 else (0.0 if mse == 0 else float("inf"))
        same = (math.isfinite(mse) and claimed.mse is not None and math.isfinite(claimed.mse)
                and abs(mse - claimed.mse) <= 1e-12 + 1e-6 * max(abs(mse), abs(claimed.mse)))
        if not same:
            with self._verify_lock:  # it ran the program too: start the next check afresh
                self._retire_verifier(verifier)
            return EvalResult.failed(
                f"the score could not be reproduced: the fit reported MSE {claimed.mse:.6g}, but the program's "
                f"predictions at its fitted parameters give {mse:.6g} when it cannot see the training targets",
                claimed.output, claimed.seconds), True
        return EvalResult(True, claimed.params, mse, nmse, None, claimed.output, claimed.seconds), False

    def _retire_verifier(self, worker) -> None:
        """Kill the verifier that ran a suspect program (under ``_verify_lock``); a newer one
        another thread has started since is left alone."""
        if worker is not None:
            self._drop(worker)
            if self._verifier is worker:
                self._verifier = None

    def _predict_blind(self, request: dict, params: list[float]):
        """``(predictions, None, worker)`` from the verifier worker, or ``(None, why not, worker)``."""
        import numpy as np

        message = {"op": "evaluate", "mode": "predict", "source": request["source"], "function": request["function"],
                   "call": request["call"], "params": list(params), "cpu_seconds": self.limits.cpu_seconds,
                   "output_chars": 0}
        with self._verify_lock:
            if self._closed:
                return None, "the sandbox pool is closed", None
            worker = self._verifier
            try:
                if worker is None or worker.dead:
                    worker = self._verifier = self._start_worker()
                with self._lock:
                    blind, version = self._blind, self._data_version
                if worker.data_version != version:
                    reply = worker.request(blind, self.limits.startup_seconds)
                    if reply.get("ok") is not True:
                        raise WorkerError(f"the worker refused the data: {reply.get('error')}")
                    worker.data_version = version
                reply = worker.request(message, self.limits.wall)
                worker.evaluations += 1
            except TimeoutError:
                self._drop(worker)
                return None, f"wall-clock limit ({self.limits.wall:g} s) exceeded", worker
            except WorkerError as exc:
                self._drop(worker)
                return None, str(exc), worker
            if reply.get("retire") or worker.evaluations >= self.limits.max_evaluations:
                self._drop(worker, replaced=False)
            if reply.get("ok") is not True:
                self._retire_verifier(worker)  # it ran a program that behaves differently without the targets
                return None, str(reply.get("error") or "failed")[:500], worker
        n = int(self._y.shape[0])
        try:
            values = np.frombuffer(base64.b64decode(reply.get("predictions"), validate=True), dtype="<f8")
        except (TypeError, ValueError):
            values = None
        if values is None or values.shape != (n,):
            with self._verify_lock:
                self._retire_verifier(worker)
            return None, "malformed reply from the sandbox worker", worker
        return values.astype(np.float64), None, worker

    def _request(self, request: dict, check=None, retire: bool = False) -> "dict | EvalResult":
        """Send one program request to an idle worker: its reply, or a failed EvalResult when the
        worker timed out, died or broke the protocol (it is then killed and replaced).

        ``check(reply)``, while the worker is still held, gives ``(result, suspect)``; a suspect
        worker is replaced. ``retire``: the worker ends after this request."""
        worker = self._idle.get()
        t0 = time.perf_counter()
        try:
            if worker is None or worker.dead:
                worker = self._start_worker()
            self._ensure_data(worker)
            reply = worker.request(request, self.limits.wall)
            worker.evaluations += 1
            retire = retire or reply.get("retire") or worker.evaluations >= self.limits.max_evaluations
            if check is not None:
                reply, suspect = check(reply)
                if suspect:
                    self._drop(worker)
                    worker = None
                    return reply
            if retire:
                self._drop(worker, replaced=False)
                worker = None
            return reply
        except TimeoutError:
            self._drop(worker)
            worker = None
            return EvalResult.failed(f"wall-clock limit ({self.limits.wall:g} s) exceeded; worker killed",
                                     seconds=time.perf_counter() - t0)
        except WorkerError as exc:
            self._drop(worker)
            worker = None
            return EvalResult.failed(str(exc), seconds=time.perf_counter() - t0)
        finally:
            self._idle.put(worker)

    def apply(self, source: str, function_name: str = "discovered_law") -> EvalResult:
        """Call ``function_name(*row)`` on every row of the loaded X, point by point, and return
        the values as ``result.predictions`` (NaN-free or not, as the program made them)."""
        import numpy as np

        if self._closed:
            raise RuntimeError("the sandbox pool is closed")
        if self._data is None:
            raise RuntimeError("load_data() first")
        if not isinstance(source, str):
            return EvalResult.failed("the program is not text")
        request = {"op": "evaluate", "mode": "apply", "source": source, "function": str(function_name),
                   "cpu_seconds": self.limits.cpu_seconds, "output_chars": self.limits.output_chars}
        reply = self._request(request)
        if not isinstance(reply, dict):
            return reply
        result = self._result(reply)
        if result.ok:
            blob = reply.get("predictions")
            n = int(self._data["y_shape"][0])
            try:
                values = np.frombuffer(base64.b64decode(blob, validate=True), dtype="<f8")
            except (TypeError, ValueError):
                return EvalResult.failed("malformed reply from the sandbox worker", result.output, result.seconds)
            if values.shape != (n,):
                return EvalResult.failed("malformed reply from the sandbox worker", result.output, result.seconds)
            result.predictions = values.astype(np.float64)
        return result

    def run_code(self, source: str, *, output_chars: int | None = None) -> EvalResult:
        """Execute ``source`` (e.g. a code-assisted agent's ``<python>`` block) in a fresh
        namespace in a worker, under the same CPU and wall-clock limits as a program; needs no
        :meth:`load_data`. ``result.output`` is what it printed (capped at ``output_chars``,
        default the limits'); a failure's ``error`` names the exception and its line."""
        if self._closed:
            raise RuntimeError("the sandbox pool is closed")
        if not isinstance(source, str):
            return EvalResult.failed("the code is not text")
        request = {"op": "run_code", "source": source, "cpu_seconds": self.limits.cpu_seconds,
                   "output_chars": int(output_chars if output_chars is not None else self.limits.output_chars)}
        # Each block gets a fresh worker: nothing one block patches (NumPy, builtins), forks or
        # leaves running reaches the next. Blocks are few (one per agent round), so the start-up
        # (~0.5 s) is small next to the LLM call that wrote the block.
        reply = self._request(request, lambda reply: (self._result(reply), False), retire=True)
        return self._result(reply) if isinstance(reply, dict) else reply

    def evaluate_many(self, sources: Iterable[str], function_name: str = "equation", n_params: int = 10,
                      *, call: str = "columns", init: Sequence[float] | None = None) -> list[EvalResult]:
        """Evaluate several programs on all workers at once; results in the order given.

        ``init``, if given, is the BFGS starting point of every program (see :meth:`evaluate`).
        """
        sources = list(sources)
        if self.size == 1 or len(sources) < 2:
            return [self.evaluate(s, function_name, n_params, call=call, init=init) for s in sources]
        with ThreadPoolExecutor(max_workers=self.size) as ex:
            return list(ex.map(lambda s: self.evaluate(s, function_name, n_params, call=call, init=init), sources))

    def protections(self) -> dict[str, Any]:
        """What is in force in the workers (starts one if none has run yet)."""
        if self._protections is None:
            worker = self._idle.get()
            try:
                if worker is None or worker.dead:
                    worker = self._start_worker()
            finally:
                self._idle.put(worker)
        return dict(self._protections or {})

    def close(self) -> None:
        """Kill every worker's process group and remove the temporary directories."""
        self._closed = True
        with self._lock:
            workers = list(self._workers)
            self._workers.clear()
        for worker in workers:
            worker.kill()

    def __enter__(self) -> "SandboxPool":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):  # pragma: no cover - best effort when a caller forgets close()
        try:
            self.close()
        except Exception:
            pass

    # -- internals --------------------------------------------------------------------------------
    def _start_worker(self) -> SandboxWorker:
        worker = SandboxWorker(self.limits, self._namespaces, self._landlock, self._seccomp, self._fitting)
        with self._lock:
            if self._closed:
                worker.kill()
                raise RuntimeError("the sandbox pool is closed")
            self._workers.add(worker)
            first = self._protections is None
            self._protections = summarize(worker.protections)
        if first and not self._warned:
            self._warned = True
            for message in fallback_warnings(self._protections):
                log.warning("SANDBOX FALLBACK: %s", message)
        return worker

    def _ensure_data(self, worker: SandboxWorker) -> None:
        with self._lock:
            data, version = self._data, self._data_version
        if data is None or worker.data_version == version:
            return  # no data yet: only run_code() requests get here
        reply = worker.request(data, self.limits.startup_seconds)
        if reply.get("ok") is not True:
            raise WorkerError(f"the worker refused the data: {reply.get('error')}")
        worker.data_version = version

    def _drop(self, worker: SandboxWorker | None, replaced: bool = True) -> None:
        if worker is None:
            return
        worker.kill()
        with self._lock:
            self._workers.discard(worker)
            if replaced:
                self.replaced += 1


def _check_init(init: Any, n_params: int) -> tuple[list[float] | None, str]:
    """``init`` as a list of ``n_params`` finite floats, or ``(None, why not)``."""
    import math
    import numbers

    if isinstance(init, (str, bytes, dict)) or not hasattr(init, "__iter__"):
        return None, f"initial parameters must be a list of numbers, not {type(init).__name__}"
    values = list(init)
    if len(values) != n_params:
        return None, f"{len(values)} initial parameter values given for {n_params} parameters"
    out = []
    for value in values:
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            return None, f"initial parameter {value!r:.40} is not a number"
        try:
            number = float(value)
        except OverflowError:
            return None, "an initial parameter is too large for a float"
        except (TypeError, ValueError):
            return None, f"initial parameter {value!r:.40} is not a number"
        if not math.isfinite(number):
            return None, f"initial parameter {value!r} is not finite"
        out.append(number)
    return out, ""


def summarize(raw: dict[str, Any]) -> dict[str, Any]:
    """The worker's report, plus the protections the parent itself provides."""
    out = dict(raw)
    out.update(
        process="separate process, own session; killed with SIGKILL to its process group",
        environment="scrubbed (PATH, HOME, TMPDIR, LANG, thread counts only)",
        workdir="private temporary directory, removed when the worker ends",
        output="captured and capped; protocol on its own pipe",
        wall_clock="parent timer kills and replaces the worker",
        scores="fits re-scored by the app from a second worker that never sees the training targets",
    )
    return out


def fallback_warnings(prot: dict[str, Any]) -> list[str]:
    messages = []
    if prot.get("network") != "namespace":
        messages.append("no network namespace (%s); only Python's socket module is blocked, native code "
                        "could still reach the network" % prot.get("namespace_error", "unknown"))
    if not prot.get("pid_namespace"):
        messages.append("no PID namespace; a forked process that leaves the process group may survive")
    if prot.get("filesystem") != "landlock":
        messages.append("no Landlock (%s); programs can read and write wherever this user can"
                        % prot.get("landlock_error", "unknown"))
    if prot.get("rlimit_nproc") is not True:
        messages.append(f"process-count limit not enforced ({prot.get('rlimit_nproc')})")
    if not prot.get("rlimit_as"):
        messages.append("memory limit (RLIMIT_AS) not set")
    if prot.get("seccomp") != "filter":
        messages.append(f"no seccomp filter ({prot.get('seccomp', 'unknown')}); Unix sockets and the kernel "
                        "keyring are reachable")
    if prot.get("disk") != "tmpfs":
        messages.append(f"no disk quota ({prot.get('disk', 'unknown')}); only the size of each file is limited")
    return messages
