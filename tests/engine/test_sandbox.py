"""The sandbox for untrusted programs (architecture rule 5): fits, failures and hostile programs.

Every pool here runs in the test process itself, so a program that kills its parent, or a
leaked process, would show up as a dead or polluted test run. Limits are short to keep the file
fast: 1 s of CPU, 3 s of wall clock per evaluation.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import textwrap
import time

import numpy as np
import pytest

from engine.sandbox import EvalResult, SandboxLimits, SandboxPool

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="Linux only")

FAST = SandboxLimits(cpu_seconds=1.0, wall_seconds=3.0, memory_bytes=1 << 30, output_chars=2000)
LINE = "def equation(x, params):\n    return params[0] * x + params[1]\n"


def program(text: str) -> str:
    return textwrap.dedent(text).strip() + "\n"


@pytest.fixture(scope="module")
def pool():
    p = SandboxPool(size=1, limits=FAST)
    x = np.linspace(-2.0, 3.0, 64)
    p.load_data(x, 2.0 * x + 3.0)
    yield p
    p.close()


def fresh_pool(**kwargs) -> SandboxPool:
    p = SandboxPool(size=1, limits=FAST, **kwargs)
    x = np.linspace(-2.0, 3.0, 64)
    p.load_data(x, 2.0 * x + 3.0)
    return p


def assert_works(p: SandboxPool) -> None:
    good = p.evaluate(LINE, "equation", n_params=2)
    assert good.ok, good.error
    assert np.allclose(good.params, [2.0, 3.0], atol=1e-4)


def processes_mentioning(marker: str) -> list[int]:
    """Pids whose command line contains ``marker`` (the worker's directory is in its argv)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmd = f.read()
            with open(f"/proc/{entry}/stat", "rb") as f:
                state = f.read().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in cmd and state != b"Z":
            found.append(int(entry))
    return found


def wait_until_gone(marker: str, seconds: float = 5.0) -> list[int]:
    deadline = time.monotonic() + seconds
    while (left := processes_mentioning(marker)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def workdir_of(p: SandboxPool) -> str:
    """The current worker's private directory, as the program itself sees it."""
    r = p.evaluate(program("""
        import os
        print(os.getcwd())
        def equation(x, params):
            return params[0] * x
    """), n_params=1)
    assert r.ok, r.error
    return r.output.strip().splitlines()[0]


# --- fitting ----------------------------------------------------------------------------------

def test_a_good_skeleton_fits_known_data(pool):
    skeleton = program("""
        import numpy as np

        def equation(x: np.ndarray, params: np.ndarray) -> np.ndarray:
            \"\"\"LLM-SR style: a linear law with up to ten parameters.\"\"\"
            return params[0] * x + params[1]
    """)
    r = pool.evaluate(skeleton, "equation", n_params=10)
    assert r.ok, r.error
    assert np.allclose(r.params[:2], [2.0, 3.0], atol=1e-4)
    assert r.mse < 1e-8 and r.nmse < 1e-8
    assert len(r.params) == 10


def test_matrix_calling_style_and_several_columns():
    with SandboxPool(size=2, limits=FAST) as p:
        rng = np.random.default_rng(0)
        X = rng.uniform(1, 2, size=(80, 2))
        p.load_data(X, 1.5 * X[:, 0] * X[:, 1] - 0.5)
        results = p.evaluate_many([
            "def f(X, params):\n    return params[0] * X[:, 0] * X[:, 1] + params[1]\n",
            "def f(X, params):\n    return params[0] * X[:, 0] + params[1]\n",
        ], "f", n_params=2, call="matrix")
        assert results[0].ok and np.allclose(results[0].params, [1.5, -0.5], atol=1e-4)
        assert results[1].ok and results[1].nmse > 1e-3
        cols = p.evaluate("def g(a, b, params):\n    return params[0] * a * b + params[1]\n", "g", n_params=2)
        assert cols.ok and np.allclose(cols.params, [1.5, -0.5], atol=1e-4)


@pytest.mark.parametrize("source, reason", [
    ("def equation(x, params)\n    return x\n", "SyntaxError"),
    ("def equation(x, params):\n    raise ValueError('no law here')\n", "ValueError: no law here"),
    ("def equation(x, params):\n    return 'a string'\n", "not an array of numbers"),
    ("def equation(x, params):\n    return None\n", "NoneType"),
    ("def equation(x, params):\n    return x[:3]\n", "shape"),
    ("import numpy as np\ndef equation(x, params):\n    return x * np.nan\n", "NaN"),
    ("def other(x, params):\n    return x\n", "no function 'equation'"),
    ("import sys\nsys.exit(3)\n", "exit(3)"),
    ("def equation(x, params):\n    return equation(x, params)\n", "recursion"),
])
def test_bad_programs_fail_with_a_reason_and_the_worker_survives(pool, source, reason):
    before = pool.replaced
    r = pool.evaluate(source, "equation", n_params=2)
    assert not r.ok
    assert reason in r.error
    assert pool.replaced == before  # failed in the worker, no restart needed
    assert_works(pool)


def test_prints_are_captured_and_capped_without_breaking_the_protocol(pool):
    r = pool.evaluate(program("""
        import os, sys
        print("x" * 10_000_000)
        for i in range(20_000):
            print("line", i, file=sys.stderr)
        os.write(1, b"{\\"ok\\": true, \\"mse\\": 0}\\n" * 100_000)
        os.write(2, b"raw stderr\\n" * 1000)
        def equation(x, params):
            print('{"ok": true}')
            return params[0] * x + params[1]
    """), n_params=2)
    assert r.ok, r.error
    assert np.allclose(r.params, [2.0, 3.0], atol=1e-4)
    assert r.output.startswith("xxxx")
    assert len(r.output) < FAST.output_chars + 100
    assert "more characters dropped" in r.output
    assert_works(pool)


# --- hostile programs ---------------------------------------------------------------------------

def test_an_endless_loop_hits_the_cpu_limit():
    with fresh_pool() as p:
        t0 = time.monotonic()
        r = p.evaluate("def equation(x, params):\n    while True:\n        pass\n", n_params=1)
        assert not r.ok and "limit" in r.error
        assert time.monotonic() - t0 < FAST.wall + 2
        assert_works(p)


def test_a_program_that_blocks_is_killed_at_the_wall_clock_limit_and_replaced():
    with fresh_pool() as p:
        old = workdir_of(p)
        assert processes_mentioning(old)
        t0 = time.monotonic()
        r = p.evaluate("import time\ntime.sleep(1000)\n", n_params=1)
        assert not r.ok and "wall-clock" in r.error
        assert FAST.wall - 0.1 <= time.monotonic() - t0 < FAST.wall + 3
        assert p.replaced == 1
        assert not wait_until_gone(old)
        assert not os.path.exists(old)  # its temporary directory is gone too
        assert_works(p)
        assert workdir_of(p) != old


def test_a_memory_bomb_fails_and_the_pool_goes_on():
    with fresh_pool() as p:
        r = p.evaluate("blob = bytearray(3 * 2**30)\n", n_params=1)
        assert not r.ok and "memory" in r.error.lower()
        r = p.evaluate(program("""
            chunks = []
            while True:
                chunks.append(bytearray(50 * 2**20))
        """), n_params=1)
        assert not r.ok
        assert_works(p)


def test_forked_processes_do_not_survive_the_worker():
    forker = program("""
        import os, time
        for _ in range(5):
            if os.fork() == 0:
                os.setsid()          # try to leave the worker's process group
                if os.fork() == 0:   # and orphan a grandchild
                    time.sleep(1000)
                time.sleep(1000)
        def equation(x, params):
            return params[0] * x
    """)
    p = fresh_pool()
    try:
        marker = workdir_of(p)
        r = p.evaluate(forker, n_params=1)
        assert r.ok, r.error
        deadline = time.monotonic() + 3
        while len(processes_mentioning(marker)) < 12 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(processes_mentioning(marker)) >= 12  # the worker pair and 10 descendants
    finally:
        p.close()
    assert not wait_until_gone(marker), "processes outlived the closed pool"

    # The same through a timeout: the killed worker takes its descendants with it.
    with fresh_pool() as p:
        marker = workdir_of(p)
        r = p.evaluate(forker.replace("def equation", "time.sleep(1000)\ndef equation"), n_params=1)
        assert not r.ok and "wall-clock" in r.error
        assert not wait_until_gone(marker), "processes outlived the killed worker"
        assert_works(p)


def test_a_fork_bomb_is_contained():
    with fresh_pool() as p:
        marker = workdir_of(p)
        r = p.evaluate(program("""
            import os, time
            t0 = time.time()
            while time.time() - t0 < 1.5:    # a bounded bomb: this machine is shared
                try:
                    if os.fork() == 0:
                        time.sleep(1000)
                        os._exit(0)
                except OSError:
                    time.sleep(0.01)
            time.sleep(1000)
        """), n_params=1)
        assert not r.ok
        assert not wait_until_gone(marker, 10.0), "fork bomb children survived"
        assert_works(p)


def test_writes_outside_the_private_directory_are_refused(pool, tmp_path):
    if pool.protections().get("filesystem") != "landlock":
        pytest.skip("Landlock is not available on this kernel")
    target = tmp_path / "escaped.txt"
    r = pool.evaluate(program(f"""
        with open({str(target)!r}, "w") as f:
            f.write("out")
        def equation(x, params):
            return params[0] * x
    """), n_params=1)
    assert not r.ok and "Permission" in r.error
    assert not target.exists()
    inside = pool.evaluate(program("""
        import os
        with open("scratch.txt", "w") as f:
            f.write("fine")
        os.mkdir("sub")
        def equation(x, params):
            return params[0] * x + params[1]
    """), n_params=2)
    assert inside.ok, inside.error


def test_reading_outside_the_python_installation_is_refused(pool, tmp_path):
    if pool.protections().get("filesystem") != "landlock":
        pytest.skip("Landlock is not available on this kernel")
    secret = tmp_path / "secret.txt"
    secret.write_text("hunter2")
    r = pool.evaluate(f"data = open({str(secret)!r}).read()\n", n_params=1)
    assert not r.ok and "Permission" in r.error


def test_the_environment_has_no_secrets(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-do-not-leak-4242")
    monkeypatch.setenv("MY_SECRET_TOKEN", "tok-do-not-leak-4242")
    with fresh_pool() as p:
        r = p.evaluate(program("""
            import os, glob
            print(sorted(os.environ))
            print("".join(f"{k}={v}" for k, v in os.environ.items()))
            # Other processes' environments (the app's) through /proc:
            for path in glob.glob("/proc/*/environ"):
                try:
                    print(open(path, "rb").read().decode("latin-1"))
                except OSError:
                    pass
            def equation(x, params):
                return params[0] * x + params[1]
        """), n_params=2)
    assert r.ok, r.error
    assert "do-not-leak-4242" not in r.output
    names = set(eval(r.output.splitlines()[0]))  # a list of names printed by the test program
    assert not {n for n in names if any(s in n for s in ("KEY", "TOKEN", "SECRET"))}
    assert names <= {"PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                     "MKL_NUM_THREADS", "LC_CTYPE"}


def test_no_network_connection_reaches_the_host(pool):
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(0.2)
    port = server.getsockname()[1]
    try:
        r = pool.evaluate(program(f"""
            import socket
            s = socket.create_connection(("127.0.0.1", {port}), timeout=1)
            s.sendall(b"stolen")
        """), n_params=1)
        assert not r.ok
        with pytest.raises(socket.timeout):
            server.accept()
        udp = pool.evaluate(program(f"""
            import socket
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.sendto(b"stolen", ("127.0.0.1", {port}))
        """), n_params=1)
        assert not udp.ok
    finally:
        server.close()
    assert_works(pool)


def test_killing_the_parent_does_not_reach_the_app():
    me = os.getpid()
    with fresh_pool() as p:
        for attack in ("os.kill(os.getppid(), signal.SIGKILL)", f"os.kill({me}, signal.SIGKILL)",
                       "os.killpg(os.getpgid(0), signal.SIGKILL)", "os.kill(0, signal.SIGKILL)"):
            r = p.evaluate(f"import os, signal\n{attack}\ntime = 1\n", n_params=1)
            assert not r.ok
            assert_works(p)
    assert os.getpid() == me  # still here


def test_protections_are_reported_and_fallback_is_loud(caplog):
    with fresh_pool() as p:
        prot = p.protections()
    for key in ("network", "filesystem", "pid_namespace", "rlimit_as", "rlimit_cpu", "rlimit_fsize", "rlimit_core"):
        assert key in prot
    assert prot["rlimit_as"] and prot["rlimit_cpu"] and prot["rlimit_core"]

    caplog.set_level(logging.WARNING, logger="engine.sandbox")
    with fresh_pool(namespaces=False, landlock=False) as weak:
        prot = weak.protections()
        assert prot["network"] == "socket-module-blocked" and prot["filesystem"] == "none"
        r = weak.evaluate("import socket\ns = socket.socket()\n", n_params=1)
        assert not r.ok and "network access is disabled" in r.error
        assert_works(weak)
    text = caplog.text
    assert "SANDBOX FALLBACK" in text and "no network namespace" in text and "no Landlock" in text


def test_results_from_the_child_are_validated():
    assert not EvalResult.from_reply({"ok": True, "params": ["x"], "mse": 0.0, "nmse": 0.0}).ok
    assert not EvalResult.from_reply({"ok": True, "params": [1.0]}).ok
    bad = EvalResult.from_reply({"ok": "yes", "error": None})
    assert not bad.ok and bad.error


def test_a_closed_pool_refuses_work():
    p = fresh_pool()
    assert_works(p)
    p.close()
    with pytest.raises(RuntimeError):
        p.evaluate(LINE)


def test_initial_parameters_start_the_fit_and_bad_ones_fail(pool):
    # From all ones the loss is flat (the switch is off), so BFGS cannot move; from 6 it is on.
    switch = program("""
        import numpy as np
        def equation(x, params):
            return np.where(params[0] > 5.0, 2.0 * x + 3.0, 0.0 * x)
    """)
    from_ones = pool.evaluate(switch, n_params=1)
    assert from_ones.ok and from_ones.params == [1.0] and from_ones.mse > 1.0
    started = pool.evaluate(switch, n_params=1, init=[6.0])
    assert started.ok and started.params == [6.0] and started.mse == pytest.approx(0.0, abs=1e-12)
    many = pool.evaluate_many([LINE, LINE], n_params=2, init=[2.0, 3.0])
    assert all(r.ok and np.allclose(r.params, [2.0, 3.0], atol=1e-6) for r in many)
    for init, reason in [([1.0], "1 initial parameter values given for 2"),
                         ([1.0, float("nan")], "not finite"), ([1.0, "2"], "not a number"),
                         ([True, 1.0], "not a number"), ("12", "must be a list")]:
        r = pool.evaluate(LINE, n_params=2, init=init)
        assert not r.ok and reason in r.error
    assert_works(pool)  # the default (no init) is unchanged


# --- run_code: a code-assisted agent's <python> blocks -------------------------------------------


def test_run_code_returns_prints_and_needs_no_data(tmp_path, monkeypatch):
    monkeypatch.setenv("MY_SECRET_TOKEN", "tok-do-not-leak-4242")
    with SandboxPool(size=1, limits=FAST) as p:  # no load_data()
        r = p.run_code("import numpy as np\nx = np.log10([1e3, 1e6])\nprint(x.tolist(), np.polyfit(x, 2 * x, 1)[0])\n")
        assert r.ok, r.error
        assert r.output.startswith("[3.0, 6.0] 2.0") or r.output.startswith("[3.0, 6.0] 1.99")
        failed = p.run_code("print('before')\ny = 1\nz = y / 0\n")
        assert not failed.ok and "ZeroDivisionError" in failed.error and "line 3" in failed.error
        assert failed.output == "before\n"
        syntax = p.run_code("def (:\n")
        assert not syntax.ok and "SyntaxError" in syntax.error
        spin = p.run_code("while True:\n    pass\n")
        assert not spin.ok and "CPU time limit" in spin.error
        fresh = p.run_code("print('y' in globals())\n")  # nothing persists between blocks
        assert fresh.ok and fresh.output.strip() == "False"
        leak = p.run_code("import os\nprint(dict(os.environ))\n")
        assert leak.ok and "do-not-leak-4242" not in leak.output
        if p.protections().get("filesystem") == "landlock":
            target = tmp_path / "escaped.txt"
            w = p.run_code(f"open({str(target)!r}, 'w').write('out')\n")
            assert not w.ok and "Permission" in w.error
            assert not target.exists()
        capped = p.run_code("print('x' * 5000)\n", output_chars=100)
        assert capped.ok and len(capped.output) < 200 and "dropped" in capped.output
        # The fitting ops still work on the same pool once data arrive.
        x = np.linspace(-2.0, 3.0, 64)
        p.load_data(x, 2.0 * x + 3.0)
        assert_works(p)
        assert p.run_code("print(1)\n").output == "1\n"


@pytest.mark.skipif(not hasattr(os, "getpriority"), reason="Unix priorities")
def test_generated_code_runs_at_low_priority():
    """A worker is niced, and so is its scheduling group: its session of its own is one under
    Linux autogroups, where a niced process in a group of its own competes with the window's
    whole session as an equal."""
    with fresh_pool() as p:
        assert_works(p)  # a fitting worker and the one that re-scores its fit
        workers = list(p._workers)
        assert workers

        def niced(pid: int) -> bool:
            if os.getpriority(os.PRIO_PROCESS, pid) < 10:
                return False
            try:
                with open(f"/proc/{pid}/autogroup") as group:
                    text = group.read()
            except OSError:
                return True  # no autogroups here
            fields = text.split()  # "/autogroup-17756 nice 10"; empty in the kernel's default group
            return len(fields) < 3 or int(fields[2]) >= 10

        # The group's niceness is set from a thread (the kernel takes one write per 100 ms).
        deadline = time.monotonic() + 5
        while not all(niced(w.proc.pid) for w in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert all(niced(w.proc.pid) for w in workers)
