"""Engine hosts (engine.host): calls in warm child processes, streamed back, cancellable,
and never taking the caller down with them."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from engine import host
from engine.host import CallFailed, Host, HostLost, HostPool

LIGHT = ("numpy",)  # what these hosts warm up: the tests' functions need no more


# The functions below run in the host; they are found there by module and name.

def numbers(n, *, cancelled):
    for i in range(n):
        yield i * i


def pid_and_env(*, cancelled):
    return os.getpid(), os.environ.get("KEPLERLAB_HOME"), os.environ.get("KEPLERLAB_TEST_GONE")


def _autogroup() -> str | None:
    """This process's autogroup, e.g. ``/autogroup-17756``. None without autogroups, and also in
    the kernel's default group (a process whose session never called setsid, as in many
    containers), for which the file reads empty."""
    try:
        with open("/proc/self/autogroup") as f:
            fields = f.read().split()
    except OSError:
        return None
    return fields[0] if fields else None


def placement(*, cancelled):
    """The host's scheduling: its session, process group, niceness and autogroup (Linux)."""
    autogroup = _autogroup()
    ignored = all(signal.getsignal(getattr(signal, n)) == signal.SIG_IGN for n in ("SIGTTIN", "SIGTTOU", "SIGTSTP"))
    try:
        stdin = os.readlink("/proc/self/fd/0")
    except OSError:
        stdin = None  # no /proc here
    return os.getpid(), os.getsid(0), os.getpgid(0), os.nice(0), autogroup, ignored, stdin


def fails(*, cancelled):
    raise ValueError("no such model: sin(")


def until_cancelled(*, cancelled):
    yield "started"
    while not cancelled.wait(0.05):
        pass
    yield f"stopped after {cancelled.times} cancel(s)"


def until_cancelled_twice(*, cancelled):
    yield "started"
    while cancelled.times < 2:
        time.sleep(0.02)
    yield "stopped after 2 cancel(s)"


def stuck(*, cancelled):
    yield "started"
    time.sleep(60)  # one C call that no cancel reaches
    yield "never"


def unpicklable(*, cancelled):
    yield threading.Lock()


def dies(*, cancelled):
    yield "started"
    os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(5)


def _keep(hosts: list):
    """An ``on_host`` that keeps the hosts handed out (it is told None when the call ends)."""
    return lambda h: h is not None and hosts.append(h)


@pytest.fixture
def pool():
    p = HostPool(keep=1, warm=LIGHT)
    yield p
    p.close()


def test_a_host_streams_a_generators_items_and_returns_a_plain_value(pool):
    assert list(pool.stream(numbers, 5)) == [0, 1, 4, 9, 16]
    ((pid, _, _),) = list(pool.stream(pid_and_env))
    assert pid != os.getpid()
    # The idle host is kept warm and used again.
    assert list(pool.stream(pid_and_env))[0][0] == pid
    assert [h.calls for h in pool.hosts()] == [3]


@pytest.mark.skipif(not hasattr(os, "getsid"), reason="Unix sessions")
def test_a_host_runs_at_low_priority_in_the_windows_scheduling_group(pool):
    """A host leads a process group of its own (Host.kill takes a sweep's workers with it) but
    stays in the window's session. A session of its own is also a scheduling group of its own
    under Linux autogroups (on by default in the common desktop kernels), where the niceness
    counts only inside the group: three busy hosts then took most of the CPU from the window.
    As a background group of a terminal's session, it ignores the terminal's stop signals."""
    ((pid, sid, pgid, nice, autogroup, ignored, stdin),) = list(pool.stream(placement))
    assert pgid == pid and sid == os.getsid(0)
    # Not the terminal's foreground group: the terminal must not be able to stop it.
    assert ignored and stdin in (os.devnull, None)
    assert nice >= host.HOST_NICE
    assert autogroup == _autogroup()


def test_a_failing_call_reports_its_type_and_message_and_the_host_goes_on(pool):
    with pytest.raises(CallFailed) as failed:
        list(pool.stream(fails))
    assert str(failed.value) == "ValueError: no such model: sin("
    assert "fails" in failed.value.remote_traceback
    assert list(pool.stream(numbers, 2)) == [0, 1]
    assert len(pool.hosts()) == 1


def test_an_item_that_cannot_be_sent_is_a_failure_not_a_hang(pool):
    with pytest.raises(CallFailed, match="pickle"):
        list(pool.stream(unpicklable))
    assert list(pool.stream(numbers, 1)) == [0]


def test_cancel_reaches_the_function_every_time_it_is_asked(pool):
    hosts = []
    stream = pool.stream(until_cancelled_twice, on_host=_keep(hosts))
    assert next(stream) == "started"
    hosts[0].cancel()
    hosts[0].cancel()  # a sweep's second Stop: abandon the running units
    assert list(stream) == ["stopped after 2 cancel(s)"]
    # The next call starts with a fresh cancel: it is not stopped by the old one.
    stream = pool.stream(until_cancelled, on_host=_keep(hosts))
    assert next(stream) == "started"
    assert hosts[1] is hosts[0]
    time.sleep(0.3)
    assert hosts[1].busy()
    hosts[1].cancel()
    assert list(stream) == ["stopped after 1 cancel(s)"]


def test_a_cancel_that_comes_before_the_call_starts_is_kept():
    """A Stop pressed while the host is still starting (importing) must reach the call."""
    cold = HostPool(keep=1, warm=("sympy",))  # the call waits in the pipe while this imports
    try:
        box = {}

        def consume():
            box["items"] = list(cold.stream(until_cancelled, on_host=lambda h: h is not None and h.cancel()))

        worker = threading.Thread(target=consume, daemon=True)
        worker.start()
        worker.join(30)
        assert not worker.is_alive(), "the cancel was lost: the call still waits for it"
        assert box["items"] == ["started", "stopped after 1 cancel(s)"]
    finally:
        cold.close()


def test_a_consumer_that_leaves_a_cancelled_call_gives_its_host_back_warm(pool):
    hosts = []
    stream = pool.stream(until_cancelled, on_host=_keep(hosts))
    assert next(stream) == "started"
    hosts[0].cancel()
    stream.close()  # as the window does with a superseded request: the call ends, its host serves on
    assert hosts[0].alive() and hosts[0].clean
    assert list(pool.stream(numbers, 2, on_host=_keep(hosts))) == [0, 1]
    assert hosts[1] is hosts[0]


def test_a_call_deaf_to_cancel_is_killed_and_its_host_replaced(pool):
    hosts = []
    stream = pool.stream(stuck, on_host=_keep(hosts))
    assert next(stream) == "started"
    started = time.monotonic()
    hosts[0].cancel(kill_after=0.3)
    assert list(stream) == []  # ends quietly: the kill was asked for
    assert time.monotonic() - started < 5
    assert not hosts[0].alive()
    replacements = pool.hosts()  # a warm one is started at once, for the next call
    assert len(replacements) == 1 and replacements[0] is not hosts[0]
    assert list(pool.stream(numbers, 3, on_host=_keep(hosts))) == [0, 1, 4]
    assert hosts[1] is replacements[0]


def test_a_host_killed_from_outside_is_reported_with_its_exit_code(pool):
    with pytest.raises(HostLost, match=r"ended unexpectedly \(killed by SIGKILL\)"):
        list(pool.stream(dies))
    assert list(pool.stream(numbers, 2)) == [0, 1]


def test_a_stream_closed_early_does_not_leave_its_host_to_the_next_call(pool):
    hosts = []
    stream = pool.stream(until_cancelled, on_host=_keep(hosts))
    assert next(stream) == "started"
    stream.close()
    assert not hosts[0].alive()
    assert list(pool.stream(numbers, 2)) == [0, 1]
    assert pool.hosts()[0] is not hosts[0]


def test_every_call_gets_the_windows_environment_of_the_moment(pool, monkeypatch, tmp_path):
    monkeypatch.setenv("KEPLERLAB_HOME", str(tmp_path / "one"))
    monkeypatch.setenv("KEPLERLAB_TEST_GONE", "x")
    assert list(pool.stream(pid_and_env))[0][1:] == (str(tmp_path / "one"), "x")
    monkeypatch.setenv("KEPLERLAB_HOME", str(tmp_path / "two"))
    monkeypatch.delenv("KEPLERLAB_TEST_GONE")
    assert list(pool.stream(pid_and_env))[0][1:] == (str(tmp_path / "two"), None)


def test_call_cancelled_before_it_reaches_a_host_does_not_run():
    call = host.Call(numbers, 3)
    call.cancel()
    assert list(call) == []


def test_in_process_mode_runs_the_call_in_the_callers_process(monkeypatch):
    monkeypatch.setenv(host.IN_PROCESS_ENV, "1")
    assert host.Call(pid_and_env).result()[0] == os.getpid()
    call = host.Call(until_cancelled)
    items = iter(call)
    assert next(items) == "started"
    call.cancel()
    assert list(items) == ["stopped after 1 cancel(s)"]


def _running(pid: int) -> bool:
    """Alive and not a zombie (an orphan's exit status waits for a reaper that a container's
    first process may never be)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False


def test_a_host_ends_when_the_process_that_started_it_is_killed(tmp_path):
    """A ``kill -9`` of the window must not leave its engine processes running."""
    script = tmp_path / "parent.py"
    script.write_text(textwrap.dedent(f"""
        import sys, time
        sys.path[:0] = {sys.path!r}
        from engine.host import Host
        if __name__ == "__main__":
            h = Host(("numpy",))
            print(h.pid, flush=True)
            time.sleep(60)
    """))
    parent = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        child = int(parent.stdout.readline())
        time.sleep(1.0)  # the host is up and waiting for calls
        os.kill(child, 0)
        parent.kill()
        parent.wait(10)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and _running(child):
            time.sleep(0.1)
        if _running(child):
            os.kill(child, signal.SIGKILL)
            pytest.fail("the host outlived the process that started it")
    finally:
        parent.kill()


def test_a_host_started_on_one_thread_serves_calls_from_another():
    h = Host(LIGHT)
    try:
        box = {}
        worker = threading.Thread(target=lambda: box.setdefault("items", list(h.stream(numbers, 3))))
        worker.start()
        worker.join(30)
        assert box["items"] == [0, 1, 4]
    finally:
        h.close()
    assert not h.alive()


def test_a_program_that_used_hosts_exits_promptly(tmp_path):
    """multiprocessing joins every live child at exit; idle hosts wait for calls, so without
    the pool's own exit handler running first, the app would never exit."""
    script = tmp_path / "user.py"
    script.write_text(textwrap.dedent(f"""
        import sys
        sys.path[:0] = {sys.path!r}
        from engine import host, host_calls
        if __name__ == "__main__":
            host.pool().prestart(2)
            print(host.Call(host_calls.apply, sum, [1, 2, 3]).result(), flush=True)
    """))
    started = time.monotonic()
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "6", done.stderr
    assert time.monotonic() - started < 30
