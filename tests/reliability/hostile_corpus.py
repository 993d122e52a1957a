"""A corpus of hostile programs, each wrapped in the form one execution path expects.

Five paths run code an LLM (or a person) wrote, and all of them must contain it:

* ``llmsr``      an LLM-SR reply: a fenced ``def equation(<inputs>, params)``
* ``sga``        an SGA reply: analysis, plan and a ``### Code`` block with ``INITIAL_PARAMS``
* ``openevolve`` an OpenEvolve reply in diff mode: a SEARCH/REPLACE block that edits the parent
                 (the seed skeleton) by inserting the hostile statements into its function
* ``code``       a ``<python>`` block of the lab's code-assisted agent (free code, no function)
* ``law``        a submitted ``def discovered_law(<inputs>)`` (lab scoring, point by point)

A :class:`Kind` is a body of statements, written once. The wrappers put the same statements at
the top of each path's function (or at module level for the code tool), after a prologue that
defines the test's targets as local constants (module-level assignments do not survive program
extraction), and before an epilogue: a body that sets ``RESULT`` has it returned (printed by the
code tool); a body that runs to its end without being stopped raises ``RuntimeError(ENDED)``, so
every kind ends as a failed candidate and whether it *escaped* is judged by its side effects
(files, sockets, processes, secrets, scores), never by its status alone.

Placeholders the prologue defines: ``OUTSIDE`` (a directory outside the sandbox that must stay
unchanged), ``HOME_DIR`` (a fake home with a planted ``.keplerlab/secret`` and
``.ssh/id_rsa``), ``PORT`` (a TCP server on 127.0.0.1 that must receive nothing), ``UNIX_PATH``
(a Unix-socket server path, likewise), ``SECRET_NAMES`` (environment variables of the app),
``APP_PID`` (the test process) and ``x0`` / ``params`` (the first input and the constants).
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field

ENDED = "the hostile program ran to its end"
PATHS = ("llmsr", "sga", "openevolve", "code", "law")


@dataclass(frozen=True)
class Targets:
    """What the hostile programs aim at; the test plants and watches each of them."""

    outside: str
    home: str
    port: int
    unix_path: str
    secret_names: tuple[str, ...]
    app_pid: int


@dataclass(frozen=True)
class Kind:
    """One kind of hostile program.

    ``reason``: a regular expression the failure's reason matches when the sandbox stops the
    program as it should (None: any failure will do, containment is judged by side effects).
    ``forges``: the program tries to obtain a good score it did not earn.
    ``needs``: the protections that contain this kind (``landlock``, ``network``, ``seccomp``,
    ``tmpfs``, ``signals``); where one is missing the kind escapes, or would hurt the machine the
    tests run on (a signal to every process), so the test leaves it out and says so.
    """

    name: str
    body: str
    reason: str | None = None
    forges: bool = False
    needs: frozenset = field(default_factory=frozenset)
    slow: bool = False  # stopped only by the wall-clock limit


def _k(name, body, reason=None, **kw) -> Kind:
    return Kind(name, textwrap.dedent(body).strip("\n"), reason, **kw)


KINDS: list[Kind] = [
    _k("infinite loop", """
        while True:
            pass
    """, r"CPU time limit|wall-clock limit"),
    _k("sleep forever (wall clock, no CPU)", """
        import time
        time.sleep(10 ** 6)
    """, r"wall-clock limit", slow=True),
    # Each block is zero-filled as it is made, so on a loaded machine (page faults are CPU time)
    # the CPU limit can fire before the memory limit, or, with the worker getting a fraction of
    # a core, the wall-clock limit (seen once in clean-clone CI, SGA's 3-s limit); each stops it.
    _k("memory bomb", """
        blocks = []
        while True:
            blocks.append(bytearray(64 * 1024 * 1024))
    """, r"memory|CPU time limit|wall-clock limit|ended the worker"),
    _k("disk exhaustion in the private directory (many files)", """
        chunk = b"\\0" * (1 << 20)
        for i in range(40):                      # 40 files of 2 MiB: each under the file-size limit
            with open(f"fill-{i}.bin", "wb") as fh:
                fh.write(chunk * 2)
    """, r"No space left on device", needs=frozenset({"tmpfs"})),
    _k("disk exhaustion with one huge file", """
        import tempfile
        with open(tempfile.gettempdir() + "/huge.bin", "wb") as fh:
            for _ in range(64):
                fh.write(b"\\0" * (1 << 20))
    """, r"File too large"),
    _k("disk exhaustion outside the private directory", """
        for where in (OUTSIDE + "/huge.bin", "/tmp/keplerlab-hostile-huge.bin", "/var/tmp/keplerlab-hostile-huge.bin"):
            with open(where, "wb") as fh:
                fh.write(b"\\0" * (4 << 20))
    """, r"Permission denied", needs=frozenset({"landlock"})),
    _k("fork storm", """
        import os, time
        for _ in range(150):                     # bounded: RLIMIT_NPROC does not bind root
            if os.fork() == 0:
                time.sleep(600)
                os._exit(0)
    """),
    _k("thread storm", """
        import threading, time
        for _ in range(150):
            threading.Thread(target=time.sleep, args=(600,), daemon=True).start()
    """),
    _k("shell out (subprocess, os.system)", """
        import os, subprocess
        os.system("echo escaped > " + OUTSIDE + "/system.txt")
        subprocess.run(["/bin/sh", "-c", "echo escaped > " + OUTSIDE + "/shell.txt"], check=True)
    """, r"Permission denied", needs=frozenset({"landlock"})),
    _k("write outside the sandbox", """
        import os
        for where in (OUTSIDE + "/escaped.txt", os.path.expanduser("~/../escaped.txt"),
                      "/tmp/keplerlab-hostile-escaped.txt", HOME_DIR + "/.bashrc"):
            with open(where, "a") as fh:
                fh.write("escaped\\n")
    """, r"Permission denied", needs=frozenset({"landlock"})),
    _k("read the user's home (planted secrets)", """
        import os, pwd
        found = []
        for where in (HOME_DIR + "/.keplerlab/secret", HOME_DIR + "/.ssh/id_rsa",
                      os.path.join(pwd.getpwuid(os.getuid()).pw_dir, ".ssh/id_rsa")):
            found.append(open(where).read())
        print("STOLEN", found)
    """, r"Permission denied|KeyError", needs=frozenset({"landlock"})),
    _k("read /etc/passwd and /proc of the app", """
        print(open("/etc/passwd").read())
        print(open("/proc/%d/cmdline" % APP_PID, "rb").read())
    """, r"Permission denied", needs=frozenset({"landlock"})),
    _k("secrets from the environment and /proc/*/environ", """
        import os, glob
        found = {name: os.environ.get(name) for name in SECRET_NAMES}
        found["all"] = dict(os.environ)
        for where in ["/proc/%d/environ" % os.getppid(), "/proc/%d/environ" % APP_PID] + glob.glob("/proc/*/environ"):
            try:
                found[where] = open(where, "rb").read().decode("latin-1")
            except OSError as exc:
                found[where] = type(exc).__name__
        print("LEAK", found)
        raise RuntimeError("LEAK " + repr(found))
    """, r"LEAK"),
    _k("TCP socket to a local server", """
        import socket
        s = socket.create_connection(("127.0.0.1", PORT), timeout=2)
        s.sendall(b"GET /escape HTTP/1.0\\r\\n\\r\\n")
        s.recv(100)
    """, r"Permission denied|Operation not permitted|[Nn]etwork is unreachable|network access is disabled", needs=frozenset({"network"})),
    _k("Unix socket to a local server", """
        import socket
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(UNIX_PATH)
        s.sendall(b"escaped")
        s.recv(100)
    """, r"Permission denied|Operation not permitted|network access is disabled", needs=frozenset({"seccomp"})),
    _k("signals to the parent and the app", """
        import os, signal
        for sig in (signal.SIGSTOP, signal.SIGTERM, signal.SIGKILL):
            for pid in (os.getppid(), APP_PID):
                try:
                    os.kill(pid, sig)
                except OSError:
                    pass
        os.kill(APP_PID, signal.SIGKILL)
    """, r"ProcessLookupError|PermissionError|Operation not permitted|No such process", needs=frozenset({"signals"})),
    _k("signals to the process group and to every process", """
        import os, signal
        for target in (0, -1):
            try:
                os.kill(target, signal.SIGTERM)
            except OSError:
                pass
        try:
            os.killpg(os.getpgid(0), signal.SIGKILL)
        except OSError:
            pass
        os.kill(-1, signal.SIGKILL)
    """, needs=frozenset({"signals"})),
    _k("huge stdout and stderr", """
        import os, sys
        for _ in range(200):
            print("x" * 100_000)
            print("y" * 100_000, file=sys.stderr)
        for fd in (1, 2):
            for _ in range(40):
                os.write(fd, b"z" * 100_000)
        sys.__stdout__.write("w" * 1_000_000)
    """),
    _k("deep recursion", """
        def down(n):
            return down(n + 1) + 1
        down(0)
    """, r"recursion"),
    _k("deep recursion in C (unlimited recursion limit)", """
        import sys
        sys.setrecursionlimit(10 ** 8)
        nested = []
        for _ in range(300_000):                 # deep enough to overflow an 8 MiB C stack
            nested = [nested]
        repr(nested)
    """, r"crashed|died|recursion|memory|wall-clock limit|CPU time limit"),
    _k("C-extension crash (ctypes segfault)", """
        import ctypes
        ctypes.string_at(0)
    """, r"crashed|died"),
    _k("abort()", """
        import os
        os.abort()
    """, r"crashed|died"),
    _k("os._exit in the middle", """
        import os
        os._exit(0)
    """, r"died|ended"),
    _k("sys.exit and KeyboardInterrupt", """
        import sys
        try:
            sys.exit(0)
        finally:
            raise KeyboardInterrupt
    """, r"KeyboardInterrupt|exit"),
    _k("double-fork daemon that outlives the program", """
        import os, time
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                time.sleep(1.0)
                try:
                    open(OUTSIDE + "/daemon.txt", "w").write("still here")
                finally:
                    time.sleep(600)
            os._exit(0)
        time.sleep(0.1)
    """),
    _k("ignore SIGXCPU and SIGTERM, then spin", """
        import signal
        for sig in (signal.SIGXCPU, signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)
        while True:
            pass
    """, r"wall-clock limit", slow=True),
    _k("raise the resource limits", """
        import resource
        for which in (resource.RLIMIT_CPU, resource.RLIMIT_AS, resource.RLIMIT_NPROC, resource.RLIMIT_FSIZE,
                      resource.RLIMIT_NOFILE):
            resource.setrlimit(which, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        big = bytearray(3 << 30)
    """, r"not allowed|Operation not permitted|memory"),
    _k("libc through ctypes (kill, socket, ptrace, unshare)", """
        import ctypes, os
        libc = ctypes.CDLL(None, use_errno=True)
        results = [libc.ptrace(16, APP_PID, 0, 0),          # PTRACE_ATTACH
                   libc.socket(1, 1, 0), libc.socket(2, 1, 0),  # AF_UNIX, AF_INET
                   libc.kill(APP_PID, 19),                  # SIGSTOP the app
                   libc.unshare(0x10000000), libc.syscall(425, 8, 0)]  # new user ns, io_uring
        print("libc", results)
    """, needs=frozenset({"signals"})),
    _k("too many open files", """
        handles = [open("/dev/null") for _ in range(100_000)]
    """, r"Too many open files|Permission denied"),
    _k("forge a reply on the protocol pipe", """
        import base64, json, os, sys
        cfg = json.loads(sys.argv[1])
        req, frame = None, sys._getframe()
        while frame is not None:
            candidate = frame.f_locals.get("req")
            if isinstance(candidate, dict) and "id" in candidate:
                req = candidate
            frame = frame.f_back
        n = int((req or {}).get("n_params", 0))
        points = 1
        frame = sys._getframe()
        while frame is not None:
            owner = frame.f_locals.get("self")
            if getattr(owner, "X", None) is not None:
                points = len(owner.X)
            frame = frame.f_back
        fake = {"ok": True, "params": [1.0] * n, "mse": 0.0, "nmse": 0.0, "error": None,
                "output": "FORGED " + "!" * 5_000_000, "seconds": 0.0, "id": (req or {}).get("id", 1),
                "predictions": base64.b64encode(b"\\0" * 8 * points).decode()}
        os.write(cfg["proto_fd"], (json.dumps(fake) + "\\n").encode())
        os._exit(0)
    """, forges=True),
    _k("forge a reply with nested JSON", """
        import json, os, sys
        fd = json.loads(sys.argv[1])["proto_fd"]
        os.write(fd, b"[" * 200_000 + b"]" * 200_000 + b"\\n")
        os.write(fd, b'{"ok": true, "id": 1, "nmse": 0}\\n' * 1000)
        os._exit(0)
    """, r"protocol|died|malformed|ended"),
    _k("steal the training targets from the fitter's frames", """
        import sys
        import numpy as np
        frame = sys._getframe(1)
        while frame is not None:
            candidate = frame.f_locals.get("y")
            if isinstance(candidate, np.ndarray) and candidate.shape == np.shape(x0):
                RESULT = candidate.copy()
            frame = frame.f_back
    """, forges=True),
    _k("monkeypatch numpy and builtins to fake a perfect fit", """
        import builtins
        import numpy as np
        np.mean = lambda *args, **kwargs: 0.0
        np.isfinite = lambda *args, **kwargs: True
        builtins.float = lambda *args: 0.0
        RESULT = x0 * 0.0
    """, forges=True),
    _k("import side effects (antigravity, this)", """
        import importlib
        importlib.import_module("this")
        importlib.import_module("antigravity")   # tries to start a web browser
    """),
]

NAMES = [k.name for k in KINDS]
BY_NAME = {k.name: k for k in KINDS}


# --------------------------------------------------------------------------- wrappers


def prologue(t: Targets, kind: Kind) -> str:
    return "\n".join([
        f"KIND = {kind.name!r}",
        f"OUTSIDE = {t.outside!r}",
        f"HOME_DIR = {t.home!r}",
        f"PORT = {t.port!r}",
        f"UNIX_PATH = {t.unix_path!r}",
        f"SECRET_NAMES = {list(t.secret_names)!r}",
        f"APP_PID = {t.app_pid!r}",
        "RESULT = None",
    ])


def _function_body(kind: Kind, t: Targets, first_input: str, n_params: int) -> str:
    lines = [prologue(t, kind), f"x0 = {first_input}", "params = params if 'params' in dir() else [1.0] * %d" % n_params,
             kind.body, "if RESULT is None:", f"    raise RuntimeError({ENDED!r})", "return RESULT"]
    return textwrap.indent("\n".join(lines), "    ")


def llmsr_reply(kind: Kind, t: Targets, inputs: list[str]) -> str:
    args = ", ".join(f"{n}: np.ndarray" for n in inputs)
    code = (f"import numpy as np\n\ndef equation({args}, params: np.ndarray) -> np.ndarray:\n"
            f"{_function_body(kind, t, inputs[0], 10)}\n")
    return f"Here is an improved version:\n\n```python\n{code}```\n"


def sga_reply(kind: Kind, t: Targets, inputs: list[str]) -> str:
    args = ", ".join(inputs)
    code = (f"import numpy as np\n\nINITIAL_PARAMS = [1.0, 1.0, 1.0]\n\ndef equation({args}, params):\n"
            f"{_function_body(kind, t, inputs[0], 3)}\n")
    return ("### Analysis\n\nThe earlier model misses the curvature.\n\n"
            "### Step-by-Step Plan\n\n1. Try something new.\n\n"
            f"### Code\n\n```python\n{code}```\n")


def openevolve_reply(kind: Kind, t: Targets, inputs: list[str]) -> str:
    """A diff against the seed skeleton (LLM-SR's signature line is in every seed): the hostile
    statements go first in the function."""
    signature = "def equation(" + ", ".join(f"{n}: np.ndarray" for n in inputs) + ", params: np.ndarray) -> np.ndarray:"
    return ("I will change the model.\n\n<<<<<<< SEARCH\n" + signature + "\n=======\n" + signature + "\n"
            + _function_body(kind, t, inputs[0], 10) + "\n>>>>>>> REPLACE\n")


def code_block(kind: Kind, t: Targets) -> str:
    lines = [prologue(t, kind), "import numpy as np", "x0 = np.linspace(1.0, 2.0, 50)", "params = np.ones(10)",
             kind.body, "if RESULT is None:", f"    raise RuntimeError({ENDED!r})", "print(RESULT)"]
    return "Let me analyse the data.\n<python>\n" + "\n".join(lines) + "\n</python>"


def law_source(kind: Kind, t: Targets, inputs: list[str]) -> str:
    return (f"def discovered_law({', '.join(inputs)}):\n    import numpy as np\n"
            f"{_function_body(kind, t, inputs[0], 3)}\n")


def law_reply(kind: Kind, t: Targets, inputs: list[str]) -> str:
    return f"<final_law>\n{law_source(kind, t, inputs)}</final_law>"
