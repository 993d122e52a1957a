"""The sandbox worker: runs untrusted programs in a child process (see ``engine.sandbox``).

This file is executed as a script (``python -I -S -B _worker.py CONFIG_JSON``) by
``engine.sandbox.pool``; it never imports the ``engine`` package and, being imported by
``tests/engine/test_qt_free.py``, it does nothing at import time.

Start-up, in this order:

1. ``unshare(CLONE_NEWUSER | CLONE_NEWNET | CLONE_NEWPID)`` (unprivileged user namespaces):
   a network namespace with no interface except a downed loopback, and a PID namespace.
2. ``fork()``. The child is PID 1 of the new PID namespace and does the work; the first process
   only waits for it. When PID 1 dies the kernel kills everything left in the namespace, so no
   process a program forked (even one that called ``setsid()``) can outlive the worker.
3. Import NumPy and SciPy, then set resource limits (address space, file size, core dumps,
   process count, open files), ``no_new_privs`` and a Landlock domain: reads only below the
   Python installation, writes only below the private temporary directory, no TCP, no signals
   to processes outside the sandbox.
4. Answer requests: one JSON object per line on stdin, one JSON object per line on the protocol
   fd (never fd 1). A program's prints go to a capped in-memory buffer; fd 1 is /dev/null.
   Ops: ``load_data``, ``evaluate`` (fit a program, or ``mode="apply"``: call it point by point),
   ``run_code`` (execute a code block and return its prints; needs no data), ``ping``, ``exit``.

Whatever cannot be put in place is reported in the ``hello`` message's ``protections``; the
parent logs the fallback loudly. Where no network namespace is possible, the socket module is
replaced by one that refuses to create sockets.
"""

from __future__ import annotations

import base64
import ctypes
import io
import json
import os
import signal
import sys
import time

# --- Linux constants (x86_64 and aarch64 share the Landlock syscall numbers) ------------------
CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
CLONE_NEWPID = 0x20000000
PR_SET_NO_NEW_PRIVS = 38
PR_SET_PDEATHSIG = 1
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
CLONE_NEWNS = 0x00020000
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 2, 4, 8, 0x4000, 1 << 18
SYS_LANDLOCK_CREATE_RULESET = 444
SYS_LANDLOCK_ADD_RULE = 445
SYS_LANDLOCK_RESTRICT_SELF = 446
LANDLOCK_CREATE_RULESET_VERSION = 1
LANDLOCK_RULE_PATH_BENEATH = 1

FS_EXECUTE = 1 << 0
FS_WRITE_FILE = 1 << 1
FS_READ_FILE = 1 << 2
FS_READ_DIR = 1 << 3
FS_REMOVE_DIR = 1 << 4
FS_REMOVE_FILE = 1 << 5
FS_MAKE_CHAR = 1 << 6
FS_MAKE_DIR = 1 << 7
FS_MAKE_REG = 1 << 8
FS_MAKE_SOCK = 1 << 9
FS_MAKE_FIFO = 1 << 10
FS_MAKE_BLOCK = 1 << 11
FS_MAKE_SYM = 1 << 12
FS_REFER = 1 << 13  # ABI 2
FS_TRUNCATE = 1 << 14  # ABI 3
FS_IOCTL_DEV = 1 << 15  # ABI 5
NET_BIND_TCP = 1 << 0  # ABI 4
NET_CONNECT_TCP = 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
SCOPE_SIGNAL = 1 << 1

FILE_ONLY_RIGHTS = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


class CpuTimeExceeded(BaseException):
    """Raised by the SIGXCPU handler: the evaluation used up its CPU seconds."""


def _libc():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def _errno_text() -> str:
    return os.strerror(ctypes.get_errno())


# --- step 1 and 2: namespaces -----------------------------------------------------------------

def enter_namespaces(libc, protections: dict) -> bool:
    """Try user+net+pid namespaces, then user+net; record what holds. True if a PID ns was made."""
    uid, gid = os.getuid(), os.getgid()
    for flags, pid_ns in ((CLONE_NEWUSER | CLONE_NEWNET | CLONE_NEWPID, True), (CLONE_NEWUSER | CLONE_NEWNET, False)):
        if libc.unshare(flags) == 0:
            protections["network"] = "namespace"
            protections["pid_namespace"] = pid_ns
            # Keep our own uid/gid visible inside (cosmetic; files keep their real owner anyway).
            try:
                with open("/proc/self/setgroups", "w") as f:
                    f.write("deny")
                with open("/proc/self/uid_map", "w") as f:
                    f.write(f"{uid} {uid} 1")
                with open("/proc/self/gid_map", "w") as f:
                    f.write(f"{gid} {gid} 1")
            except OSError:
                pass
            return pid_ns
        protections.setdefault("namespace_error", _errno_text())
    protections["network"] = "socket-module-blocked"
    protections["pid_namespace"] = False
    return False


def private_tmpfs(libc, cfg: dict, protections: dict) -> None:
    """Put a size-capped tmpfs over the work directory, in a mount namespace of our own.

    RLIMIT_FSIZE caps one file, not how many a program writes; the tmpfs caps their sum, so a
    program cannot fill the user's disk from its private directory. The mount is invisible to
    the app (its own directory stays empty and is removed as before) and vanishes with the
    namespace when the worker dies."""
    size = int(cfg.get("disk_bytes") or 0)
    if size <= 0:
        protections["disk"] = "per-file limit only (no disk quota asked)"
        return
    workdir = cfg["workdir"]
    if libc.unshare(CLONE_NEWNS) != 0:
        protections["disk"] = f"per-file limit only (mount namespace: {_errno_text()})"
        return
    # Nothing we mount may propagate back to the app's mount namespace.
    if libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) != 0:
        protections["disk"] = f"per-file limit only (private mounts: {_errno_text()})"
        return
    options = f"size={size},mode=0700,nr_inodes=4096".encode()
    if libc.mount(b"tmpfs", workdir.encode(), b"tmpfs", MS_NOSUID | MS_NODEV, options) != 0:
        protections["disk"] = f"per-file limit only (tmpfs: {_errno_text()})"
        return
    os.chdir(workdir)  # the old cwd is the directory under the mount
    protections["disk"] = "tmpfs"
    protections["disk_bytes"] = size


def fork_init(libc, proto_fd: int) -> None:
    """Fork; the parent waits and mirrors the child's exit. Only the child returns."""
    pid = os.fork()
    if pid == 0:
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        return
    # The waiting process: keep no copy of the protocol pipes, so EOF reaches the app promptly.
    for fd in (0, proto_fd):
        try:
            os.close(fd)
        except OSError:
            pass
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except ChildProcessError:
            status = 0
            break
        except InterruptedError:
            continue
    code = os.waitstatus_to_exitcode(status)
    os._exit(128 - code if code < 0 else code)


# --- step 3: limits, no_new_privs, Landlock ---------------------------------------------------

def set_limits(cfg: dict, protections: dict) -> None:
    import resource

    def lim(name, value):
        which = getattr(resource, name)
        try:
            resource.setrlimit(which, (value, value))
            return True
        except (ValueError, OSError):
            return False

    protections["rlimit_as"] = lim("RLIMIT_AS", int(cfg["memory_bytes"]))
    protections["rlimit_fsize"] = lim("RLIMIT_FSIZE", int(cfg["file_bytes"]))
    protections["rlimit_core"] = lim("RLIMIT_CORE", 0)
    protections["rlimit_nofile"] = lim("RLIMIT_NOFILE", 256)
    nproc = lim("RLIMIT_NPROC", int(cfg["max_processes"]))
    # The kernel does not apply RLIMIT_NPROC to root of the initial user namespace.
    protections["rlimit_nproc"] = ("ignored for root" if nproc and cfg.get("parent_uid") == 0 else nproc)
    # CPU: the soft limit is moved forward before every evaluation; the hard one bounds the
    # worker's whole life (the pool replaces a worker long before that).
    try:
        hard = int(cfg["lifetime_cpu_seconds"])
        resource.setrlimit(resource.RLIMIT_CPU, (hard, hard))
        protections["rlimit_cpu"] = True
    except (ValueError, OSError):
        protections["rlimit_cpu"] = False
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # an oversized write fails with EFBIG instead


def _add_path_rule(libc, ruleset_fd: int, path: str, access: int) -> bool:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        if not os.path.isdir(path):
            access &= FILE_ONLY_RIGHTS
        attr = _PathBeneathAttr(access, fd)
        return libc.syscall(SYS_LANDLOCK_ADD_RULE, ruleset_fd, LANDLOCK_RULE_PATH_BENEATH,
                            ctypes.byref(attr), 0) == 0
    finally:
        os.close(fd)


def apply_landlock(libc, cfg: dict, protections: dict) -> None:
    abi = libc.syscall(SYS_LANDLOCK_CREATE_RULESET, None, 0, LANDLOCK_CREATE_RULESET_VERSION)
    if abi < 1:
        protections["filesystem"] = "none"
        protections["landlock_error"] = _errno_text()
        return
    protections["landlock_abi"] = int(abi)
    read = FS_EXECUTE | FS_READ_FILE | FS_READ_DIR
    write = (FS_WRITE_FILE | FS_REMOVE_DIR | FS_REMOVE_FILE | FS_MAKE_CHAR | FS_MAKE_DIR | FS_MAKE_REG
             | FS_MAKE_SOCK | FS_MAKE_FIFO | FS_MAKE_BLOCK | FS_MAKE_SYM)
    if abi >= 2:
        write |= FS_REFER
    if abi >= 3:
        write |= FS_TRUNCATE
    if abi >= 5:
        write |= FS_IOCTL_DEV
    attr = _RulesetAttr(read | write, 0, 0)
    size = 8
    if abi >= 4:
        attr.handled_access_net = NET_BIND_TCP | NET_CONNECT_TCP  # no rule: no TCP at all
        size = 16
    if abi >= 6:
        attr.scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL
        size = 24
    ruleset = libc.syscall(SYS_LANDLOCK_CREATE_RULESET, ctypes.byref(attr), size, 0)
    if ruleset < 0:
        protections["filesystem"] = "none"
        protections["landlock_error"] = f"create_ruleset: {_errno_text()}"
        return
    try:
        for path in cfg["read_paths"]:
            _add_path_rule(libc, ruleset, path, read)
        if not _add_path_rule(libc, ruleset, cfg["workdir"], read | write):
            protections["filesystem"] = "none"
            protections["landlock_error"] = f"add_rule on the work directory: {_errno_text()}"
            return
        _add_path_rule(libc, ruleset, "/dev/null", FS_READ_FILE | FS_WRITE_FILE)
        if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            protections["filesystem"] = "none"
            protections["landlock_error"] = f"no_new_privs: {_errno_text()}"
            return
        if libc.syscall(SYS_LANDLOCK_RESTRICT_SELF, ruleset, 0) != 0:
            protections["filesystem"] = "none"
            protections["landlock_error"] = f"restrict_self: {_errno_text()}"
            return
    finally:
        os.close(ruleset)
    protections["filesystem"] = "landlock"
    protections["landlock_net"] = abi >= 4
    protections["landlock_signal_scope"] = abi >= 6


# Syscalls a program never needs and that reach past the other walls: sockets (a network
# namespace does not stop a *Unix* socket connecting to the session bus or an agent of the
# user's, and Landlock does not control connect()), io_uring (it can open sockets without the
# socket syscall), reading or writing other processes (ptrace, process_vm_*, pidfd_getfd), the
# kernel keyring (it can hold the user's credentials), BPF and perf events. Signals are denied
# too when there is no PID namespace to keep them inside the sandbox.
_SECCOMP = {
    # machine: (audit arch, x32 bit or 0, always denied, denied without a PID namespace)
    "x86_64": (0xC000003E, 0x40000000,
               {"socket": 41, "connect": 42, "socketpair": 53, "ptrace": 101, "add_key": 248,
                "request_key": 249, "keyctl": 250, "perf_event_open": 298, "process_vm_readv": 310,
                "process_vm_writev": 311, "bpf": 321, "userfaultfd": 323, "io_uring_setup": 425,
                "io_uring_enter": 426, "io_uring_register": 427, "pidfd_getfd": 438},
               {"kill": 62, "rt_sigqueueinfo": 129, "tkill": 200, "tgkill": 234, "rt_tgsigqueueinfo": 297,
                "pidfd_send_signal": 424}),
    "aarch64": (0xC00000B7, 0,
                {"socket": 198, "socketpair": 199, "connect": 203, "ptrace": 117, "add_key": 217,
                 "request_key": 218, "keyctl": 219, "perf_event_open": 241, "process_vm_readv": 270,
                 "process_vm_writev": 271, "bpf": 280, "userfaultfd": 282, "io_uring_setup": 425,
                 "io_uring_enter": 426, "io_uring_register": 427, "pidfd_getfd": 438},
                {"kill": 129, "tkill": 130, "tgkill": 131, "rt_sigqueueinfo": 138, "rt_tgsigqueueinfo": 240,
                 "pidfd_send_signal": 424}),
}


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.POINTER(_SockFilter))]


def apply_seccomp(libc, protections: dict) -> None:
    """A seccomp filter that answers EACCES to the syscalls of ``_SECCOMP`` (hand-written BPF:
    a dozen instructions do not justify a dependency on libseccomp)."""
    machine = os.uname().machine
    if machine not in _SECCOMP:
        protections["seccomp"] = f"none (no filter for {machine})"
        return
    arch, x32, always, no_pid_ns = _SECCOMP[machine]
    denied = dict(always)
    if not protections.get("pid_namespace"):
        denied.update(no_pid_ns)
    ld_w_abs, jeq_k, jge_k, ret_k = 0x20, 0x15, 0x35, 0x06
    errno = 0x00050000 | 13  # SECCOMP_RET_ERRNO | EACCES: "Permission denied", as Landlock says
    allow = 0x7FFF0000
    prog = [(ld_w_abs, 0, 0, 4), (jeq_k, 1, 0, arch), (ret_k, 0, 0, errno), (ld_w_abs, 0, 0, 0)]
    if x32:
        prog += [(jge_k, 0, 1, x32), (ret_k, 0, 0, errno)]
    for nr in sorted(set(denied.values())):
        prog += [(jeq_k, 0, 1, nr), (ret_k, 0, 0, errno)]
    prog.append((ret_k, 0, 0, allow))
    filters = (_SockFilter * len(prog))(*[_SockFilter(*ins) for ins in prog])
    fprog = _SockFprog(len(prog), filters)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or \
            libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        protections["seccomp"] = f"none ({_errno_text()})"
        return
    protections["seccomp"] = "filter"
    protections["seccomp_denied"] = sorted(denied)


def block_sockets() -> None:
    """Fallback without a network namespace: no socket objects from Python code."""
    import socket

    def refuse(*args, **kwargs):
        raise PermissionError("network access is disabled in the sandbox")

    class NoSocket:
        def __new__(cls, *args, **kwargs):
            refuse()

    for mod in (socket, sys.modules.get("_socket")):
        if mod is None:
            continue
        for name in ("socket", "SocketType"):
            if hasattr(mod, name):
                setattr(mod, name, NoSocket)
        for name in ("create_connection", "create_server", "socketpair", "fromfd", "getaddrinfo"):
            if hasattr(mod, name):
                setattr(mod, name, refuse)


# --- step 4: the request loop -----------------------------------------------------------------

class CappedText(io.TextIOBase):
    """A text sink that keeps the first ``limit`` characters and counts the rest."""

    def __init__(self, limit: int):
        self.limit = limit
        self.parts: list[str] = []
        self.kept = 0
        self.dropped = 0

    def writable(self) -> bool:
        return True

    def write(self, text) -> int:
        text = str(text)
        room = self.limit - self.kept
        if room > 0:
            piece = text[:room]
            self.parts.append(piece)
            self.kept += len(piece)
        self.dropped += max(0, len(text) - max(room, 0))
        return len(text)

    def flush(self) -> None:
        pass

    def value(self) -> str:
        text = "".join(self.parts)
        if self.dropped:
            text += f"\n[... {self.dropped} more characters dropped]"
        return text


class Worker:
    def __init__(self, cfg: dict, out_fd: int):
        import numpy as np

        if cfg.get("preload_scipy", True):
            import scipy.optimize  # noqa: F401  (imported before the limits and Landlock)

        self.np = np
        self.cfg = cfg
        self.out = os.fdopen(out_fd, "w", encoding="utf-8", buffering=1)
        self.X = None
        self.y = None
        self.real_stdout = sys.stdout

    def send(self, message: dict) -> None:
        self.out.write(json.dumps(message, allow_nan=True) + "\n")
        self.out.flush()

    def decode(self, blob: str, shape) -> "object":
        np = self.np
        data = np.frombuffer(base64.b64decode(blob), dtype="<f8")
        return data.reshape(shape).astype(np.float64, copy=True)

    def load_data(self, req: dict) -> dict:
        X = self.decode(req["X"], req["X_shape"])
        y = self.decode(req["y"], req["y_shape"]).reshape(-1)
        if X.ndim == 1:
            X = X.reshape(-1, 1)
        if X.shape[0] != y.shape[0]:
            return {"ok": False, "error": f"X has {X.shape[0]} rows but y has {y.shape[0]}"}
        self.X, self.y = X, y
        return {"ok": True, "n": int(y.shape[0])}

    def evaluate(self, req: dict) -> dict:
        import resource

        np = self.np
        if self.X is None and req.get("mode") != "run":
            return {"ok": False, "error": "no data loaded"}
        limit = int(req.get("output_chars", self.cfg["output_chars"]))
        capture = CappedText(limit)
        saved = sys.stdout, sys.stderr, sys.stdin
        sys.stdout = sys.stderr = capture
        sys.stdin = io.StringIO("")
        used = resource.getrusage(resource.RUSAGE_SELF)
        cpu_now = used.ru_utime + used.ru_stime
        cpu_seconds = float(req.get("cpu_seconds", self.cfg["cpu_seconds"]))
        hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
        soft = int(cpu_now + cpu_seconds) + 1
        if hard != resource.RLIM_INFINITY and soft >= hard:
            result = {"ok": False, "error": "worker CPU budget spent", "retire": True}
        else:
            resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))
            t0 = time.perf_counter()
            modules = _snapshot_modules(np)
            try:
                with np.errstate(all="ignore"):
                    mode = req.get("mode")
                    if mode == "run":
                        result = self._run(req)
                    elif mode == "predict":
                        result = self._predict(req)
                    elif mode == "apply":
                        result = self._apply(req)
                    else:
                        result = self._fit(req)
            except CpuTimeExceeded:
                result = {"ok": False, "error": f"CPU time limit ({cpu_seconds:g} s) exceeded"}
            except MemoryError:
                result = {"ok": False, "error": "memory limit exceeded (MemoryError)"}
            except RecursionError:
                result = {"ok": False, "error": "maximum recursion depth exceeded"}
            except SystemExit as exc:
                result = {"ok": False, "error": f"program called exit({exc.code!r})"}
            except KeyboardInterrupt:
                result = {"ok": False, "error": "program raised KeyboardInterrupt"}
            except BaseException as exc:  # noqa: BLE001 - anything the program raises is its failure
                result = {"ok": False, "error": f"{type(exc).__name__}: {_short(exc)}"}
            finally:
                sys.stdout, sys.stderr, sys.stdin = saved
                _restore_modules(modules)
                try:
                    resource.setrlimit(resource.RLIMIT_CPU, (hard, hard))
                except (ValueError, OSError):
                    pass
                self._clear_workdir()
            result["seconds"] = time.perf_counter() - t0
        result["output"] = capture.value()
        return result

    def _clear_workdir(self) -> None:
        """Empty the private directory after a program: its files count against the disk quota
        and must not reach the next program."""
        import shutil

        workdir = self.cfg["workdir"]
        try:
            os.chdir(workdir)
            for entry in os.scandir(workdir):
                if entry.name == ".worker-stderr":  # the app reads it when the worker dies
                    continue
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path, ignore_errors=True)
                else:
                    os.unlink(entry.path)
        except OSError:
            pass

    def _run(self, req: dict) -> dict:
        """Execute a code block (a code-assisted agent's ``<python>``) in a fresh namespace; its
        prints are the result. An exception is a failure naming its type, message and line."""
        try:
            code = compile(req["source"], "<python>", "exec")
        except SyntaxError as exc:
            return {"ok": False, "error": f"SyntaxError: {exc.msg} (line {exc.lineno})"}
        namespace = {"__name__": "__main__", "__builtins__": __builtins__}
        try:
            exec(code, namespace)  # sandboxed: the process is the boundary  # noqa: S102
        except Exception as exc:  # noqa: BLE001 - the block's own error, reported with its line
            line = None
            tb = exc.__traceback__
            while tb is not None:
                if tb.tb_frame.f_code.co_filename == "<python>":
                    line = tb.tb_lineno
                tb = tb.tb_next
            where = f" (line {line})" if line is not None else ""
            if isinstance(exc, MemoryError):
                return {"ok": False, "error": f"memory limit exceeded (MemoryError){where}"}
            return {"ok": False, "error": f"{type(exc).__name__}: {_short(exc)}{where}"}
        return {"ok": True, "params": [], "mse": 0.0, "nmse": 0.0, "error": None}

    def _apply(self, req: dict) -> dict:
        """Call the program's function on every row of X, one point at a time with Python
        floats (as NewtonBench evaluates a submitted law); no parameters, no fitting."""
        np = self.np
        try:
            code = compile(req["source"], "<program>", "exec")
        except SyntaxError as exc:
            return {"ok": False, "error": f"SyntaxError: {exc.msg} (line {exc.lineno})"}
        namespace = {"__name__": "program", "__builtins__": __builtins__}
        exec(code, namespace)  # sandboxed: this process is the boundary (rlimits, namespaces, Landlock)  # noqa: S102
        func = namespace.get(req.get("function", "discovered_law"))
        if not callable(func):
            return {"ok": False, "error": f"the program defines no function {req.get('function')!r}"}
        out = np.empty(self.X.shape[0])
        for i, row in enumerate(self.X.tolist()):
            value = func(*row)
            try:
                out[i] = float(value)
            except (TypeError, ValueError, OverflowError):
                return {"ok": False, "error": f"returned {type(value).__name__} at point {i + 1}, not a number"}
        blob = base64.b64encode(np.ascontiguousarray(out, dtype="<f8").tobytes()).decode("ascii")
        return {"ok": True, "params": [], "mse": 0.0, "nmse": 0.0, "error": None, "predictions": blob}

    def _predict(self, req: dict) -> dict:
        """The program's predictions at given parameters, no fitting: how the app re-scores a
        fit in a worker that has never seen the training targets (see ``pool.SandboxPool``)."""
        np = self.np
        try:
            code = compile(req["source"], "<program>", "exec")
        except SyntaxError as exc:
            return {"ok": False, "error": f"SyntaxError: {exc.msg} (line {exc.lineno})"}
        namespace = {"__name__": "program", "__builtins__": __builtins__}
        exec(code, namespace)  # sandboxed: this process is the boundary  # noqa: S102
        name = req.get("function", "equation")
        func = namespace.get(name)
        if not callable(func):
            return {"ok": False, "error": f"the program defines no function {name!r}"}
        X = self.X
        n = X.shape[0]
        params = np.asarray(req["params"], dtype=np.float64).reshape(-1)
        cols = tuple(X[:, j] for j in range(X.shape[1]))
        out = _checked(np, func(*cols, params) if req.get("call", "columns") == "columns" else func(X, params), n)
        values = np.ascontiguousarray(np.broadcast_to(out, (n,)), dtype="<f8")
        blob = base64.b64encode(values.tobytes()).decode("ascii")
        return {"ok": True, "params": [], "mse": 0.0, "nmse": 0.0, "error": None, "predictions": blob}

    def _fit(self, req: dict) -> dict:
        np = self.np
        from scipy.optimize import minimize

        source = req["source"]
        name = req.get("function", "equation")
        n_params = int(req.get("n_params", 10))
        style = req.get("call", "columns")
        try:
            code = compile(source, "<program>", "exec")
        except SyntaxError as exc:
            return {"ok": False, "error": f"SyntaxError: {exc.msg} (line {exc.lineno})"}
        namespace = {"__name__": "program", "__builtins__": __builtins__}
        exec(code, namespace)  # sandboxed: this process is the boundary (rlimits, namespaces, Landlock)  # noqa: S102
        func = namespace.get(name)
        if not callable(func):
            return {"ok": False, "error": f"the program defines no function {name!r}"}
        X, y = self.X, self.y
        cols = tuple(X[:, j] for j in range(X.shape[1]))
        n = y.shape[0]

        def predict(params):
            return _checked(np, func(*cols, params) if style == "columns" else func(X, params), n)

        def loss(params):
            return float(np.mean((predict(params) - y) ** 2))

        start = np.ones(n_params)
        init = req.get("init")
        if init is not None:  # the parent validated it; checked again, cheaply
            start = np.asarray(init, dtype=np.float64).reshape(-1)
            if start.shape != (n_params,) or not np.all(np.isfinite(start)):
                return {"ok": False, "error": f"invalid initial parameters for {n_params} parameters"}
        first = loss(start)  # type and shape errors surface here, with their message
        if n_params > 0:
            fit = minimize(loss, start, method="BFGS")
            params, mse = np.asarray(fit.x, dtype=np.float64), float(fit.fun)
            if not np.isfinite(mse) and np.isfinite(first):
                params, mse = start, first
        else:
            params, mse = start, first
        if not np.isfinite(mse):
            return {"ok": False, "error": f"the loss is {mse} (NaN or infinite predictions)",
                    "params": [float(p) for p in params]}
        var = float(np.mean((y - y.mean()) ** 2))
        nmse = mse / var if var > 0 else (0.0 if mse == 0 else float("inf"))
        return {"ok": True, "params": [float(p) for p in params], "mse": mse, "nmse": nmse, "error": None}

    def serve(self) -> None:
        stdin = sys.stdin.buffer
        while True:
            line = stdin.readline()
            if not line:
                return
            try:
                req = json.loads(line)
                op = req.get("op")
                if op == "load_data":
                    reply = self.load_data(req)
                elif op == "evaluate":
                    reply = self.evaluate(req)
                elif op == "run_code":
                    reply = self.evaluate(dict(req, mode="run"))
                elif op == "ping":
                    reply = {"ok": True}
                elif op == "exit":
                    return
                else:
                    reply = {"ok": False, "error": f"unknown op {op!r}"}
            except Exception as exc:  # noqa: BLE001 - a bad request must not end the worker
                reply = {"ok": False, "error": f"bad request: {type(exc).__name__}: {_short(exc)}"}
            reply["id"] = req.get("id") if isinstance(req, dict) else None
            self.send(reply)


_MISSING = object()


def _snapshot_modules(np) -> list:
    """The namespaces a program is most likely to patch (builtins, NumPy, math, the module
    table), copied before it runs: see :func:`_restore_modules`."""
    import builtins
    import math

    return [(mod.__dict__, dict(mod.__dict__)) for mod in (builtins, np, math)] + [(sys.modules, dict(sys.modules))]


def _restore_modules(snapshot: list) -> None:
    """Put back what a program replaced or removed in those namespaces (``builtins.float = …``,
    ``np.mean = …``), so it cannot make the next program in this worker fail. Modules it imported
    stay. Deeper tampering (NumPy's submodules, memory through ctypes) is not undone: the app's
    re-scoring still refuses any score it did not earn."""
    for index, (live, saved) in enumerate(snapshot):
        if index < len(snapshot) - 1:  # a module's own names: drop what the program added
            for key in [k for k in live if k not in saved]:
                del live[key]
        for key, value in saved.items():
            if live.get(key, _MISSING) is not value:
                live[key] = value


def _checked(np, out, n: int):
    """A program's return value as float64 predictions of shape (), (1,) or (n,), or why not."""
    if isinstance(out, (bool, np.bool_)) or out is None:
        raise TypeError(f"returned {type(out).__name__}, not an array of numbers")
    arr = np.asarray(out)
    if arr.dtype.kind not in "iuf":
        if arr.dtype.kind == "c":
            raise TypeError("returned complex numbers")
        raise TypeError(f"returned {type(out).__name__} (dtype {arr.dtype}), not an array of numbers")
    arr = arr.astype(np.float64, copy=False)
    if arr.ndim > 1 and arr.size == n:
        arr = arr.reshape(n)
    if arr.shape not in ((), (1,), (n,)):
        raise ValueError(f"returned shape {arr.shape}, expected ({n},)")
    return arr


def _short(exc: BaseException, limit: int = 500) -> str:
    text = str(exc)
    return text if len(text) <= limit else text[:limit] + "…"


def _on_sigxcpu(signum, frame):
    raise CpuTimeExceeded()


def main() -> None:
    cfg = json.loads(sys.argv[1])
    for path in reversed(cfg["sys_path"]):
        if path not in sys.path:
            sys.path.insert(0, path)
    os.chdir(cfg["workdir"])
    libc = _libc()
    protections: dict = {}
    if cfg.get("namespaces", True):
        enter_namespaces(libc, protections)
    else:
        protections.update(network="socket-module-blocked", pid_namespace=False, namespace_error="disabled")
    if protections["network"] == "namespace":
        private_tmpfs(libc, cfg, protections)
    else:
        protections["disk"] = "per-file limit only (no user namespace)"
    fork_init(libc, int(cfg["proto_fd"]))
    worker = Worker(cfg, int(cfg["proto_fd"]))
    if protections["network"] != "namespace":
        block_sockets()
    signal.signal(signal.SIGXCPU, _on_sigxcpu)
    set_limits(cfg, protections)
    if cfg.get("landlock", True):
        apply_landlock(libc, cfg, protections)
    else:
        protections["filesystem"] = "none"
        protections["landlock_error"] = "disabled"
    if cfg.get("seccomp", True):
        apply_seccomp(libc, protections)
    else:
        protections["seccomp"] = "none (disabled)"
    sys.stdout = sys.stderr = CappedText(0)  # stray prints outside evaluations go nowhere
    worker.send({"hello": True, "protections": protections, "pid": os.getpid()})
    worker.serve()


if __name__ == "__main__":
    main()
