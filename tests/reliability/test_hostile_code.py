"""Hostile generated code through every path that runs it: contained, reported, and the run goes on.

Every kind of :mod:`tests.reliability.hostile_corpus` goes through each of the five paths that
execute generated code (LLM-SR, SGA and OpenEvolve runs against the scripted LLM server, the lab
code agent's ``<python>`` tool, a submitted ``discovered_law``), one batch per path, with small
sandbox limits (1 s of CPU, 3 s of wall clock). After each batch:

* contained: the planted directory outside the sandbox and the fake home are unchanged, no file
  appeared in /tmp or /var/tmp, the TCP and Unix-socket servers were never reached, a canary
  process of the test's own (which a signal to every process or to the group would kill) and the
  test process are alive, and once the run ends no sandbox process or directory is left;
* no secret (API key in the app's environment, planted files in the home) is in the run store,
  in any event, or in any request sent to the LLM server;
* every kind is a failed candidate with a short, readable reason (the expected one where the
  corpus names it), no forged score is accepted, and the candidate after the last hostile one
  still succeeds.

A GUI test runs LLM-SR from the main window against hostile replies while a timer measures the
event loop.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest

from engine.sandbox import SandboxLimits, SandboxPool
from tests.reliability import hostile_corpus as corpus
from tests.llm_server import FakeLLMServer

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="Linux only (the sandbox's kernel walls)")

LIMITS = SandboxLimits(cpu_seconds=1.0, wall_seconds=3.0, memory_bytes=1 << 30, file_bytes=8 << 20,
                       disk_bytes=16 << 20, max_processes=64, output_chars=2000)
SECRETS = {"OPENAI_API_KEY": "sk-hostile-do-not-leak-7781", "KEPLER_TEST_SECRET": "kepler-do-not-leak-7781"}
HOME_SECRET = "home-secret-do-not-leak-7781"
SSH_KEY = "-----BEGIN OPENSSH PRIVATE KEY----- do-not-leak-7781"
LEAKS = [*SECRETS.values(), HOME_SECRET, SSH_KEY, "do-not-leak-7781"]
TASK = "llmsrbench/lsr-synth/chemistry/CKR2"  # inputs t, A
GRAVITY = "newtonbench/m0_gravity/v0/easy/vanilla"  # discovered_law(mass1, mass2, distance)
SENSIBLE = "```python\nimport numpy as np\n\ndef equation(t, A, params):\n    return params[0] * A + params[1]\n```\n"


# --------------------------------------------------------------------------- the targets


class Listener:
    """A server socket (TCP on 127.0.0.1 or Unix) that records every connection it accepts."""

    def __init__(self, family, address):
        self.sock = socket.socket(family, socket.SOCK_STREAM)
        self.sock.bind(address)
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.hits: list[bytes] = []
        self._stop = False
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self):
        while not self._stop:
            try:
                conn, _ = self.sock.accept()
            except (socket.timeout, OSError):
                continue
            conn.settimeout(0.5)
            try:
                self.hits.append(conn.recv(1000) or b"(connected)")
            except OSError:
                self.hits.append(b"(connected)")
            finally:
                conn.close()

    def close(self):
        self._stop = True
        self._thread.join(2)
        self.sock.close()


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): (p.read_bytes() if p.is_file() else b"<dir>") for p in sorted(root.rglob("*"))}


class Arena:
    """Everything the hostile programs aim at, and the checks that they missed."""

    def __init__(self, root: Path):
        self.root = root
        self.outside = root / "outside"
        self.outside.mkdir()
        (self.outside / "planted.txt").write_text("must stay as it is")
        self.home = root / "home"
        (self.home / ".keplerlab").mkdir(parents=True)
        (self.home / ".keplerlab" / "secret").write_text(HOME_SECRET)
        (self.home / ".ssh").mkdir()
        (self.home / ".ssh" / "id_rsa").write_text(SSH_KEY)
        self.sandboxes = root / "sandboxes"  # every worker's private directory is made here
        self.sandboxes.mkdir()
        self.tcp = Listener(socket.AF_INET, ("127.0.0.1", 0))
        self.unix_path = str(root / "agent.sock")
        self.unix = Listener(socket.AF_UNIX, self.unix_path)
        self.canary = subprocess.Popen(["sleep", "600"])  # in our process group: kill(0) / kill(-1) would end it
        self.before = {"outside": snapshot(self.outside), "home": snapshot(self.home)}
        self.tmp_before = self._tmp_litter()
        self.targets = corpus.Targets(str(self.outside), str(self.home), self.tcp.sock.getsockname()[1],
                                      self.unix_path, tuple(SECRETS), os.getpid())

    @staticmethod
    def _tmp_litter() -> set[str]:
        return {p for d in ("/tmp", "/var/tmp") for p in map(str, Path(d).glob("keplerlab-hostile-*"))}

    def sandbox_processes(self) -> list[int]:
        """Live processes whose command line names one of our sandbox directories (a worker
        carries its directory in its argv, and so does everything it forks)."""
        marker = str(self.sandboxes).encode()
        found = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                cmd = Path(f"/proc/{entry}/cmdline").read_bytes()
                state = Path(f"/proc/{entry}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
            except OSError:
                continue
            if marker in cmd and state != b"Z":
                found.append(int(entry))
        return found

    def assert_contained(self, texts: list[str] = ()):
        assert snapshot(self.outside) == self.before["outside"], "a file outside the sandbox changed"
        assert snapshot(self.home) == self.before["home"], "the home directory changed"
        assert self._tmp_litter() == self.tmp_before, "a file appeared in /tmp or /var/tmp"
        assert self.tcp.hits == [], f"the TCP server was reached: {self.tcp.hits[:3]}"
        assert self.unix.hits == [], f"the Unix-socket server was reached: {self.unix.hits[:3]}"
        assert self.canary.poll() is None, "a signal reached a process outside the sandbox"
        for text in texts:
            for leak in LEAKS:
                assert leak not in text, f"a secret leaked: {leak}"

    def assert_nothing_left(self):
        deadline = time.monotonic() + 10
        while (left := self.sandbox_processes()) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not left, f"sandbox processes outlived their run: {left}"
        assert list(self.sandboxes.iterdir()) == [], "a sandbox directory was left behind"

    def close(self):
        self.tcp.close()
        self.unix.close()
        self.canary.kill()
        self.canary.wait()


@pytest.fixture(scope="module")
def arena(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile")
    mp = pytest.MonkeyPatch()
    a = Arena(root)
    for name, value in SECRETS.items():
        mp.setenv(name, value)
    mp.setenv("HOME", str(a.home))
    mp.setenv("KEPLERLAB_HOME", str(root / "data"))
    mp.setattr(tempfile, "tempdir", str(a.sandboxes))
    # Small limits on every path: the methods build theirs from program_seconds, lab scoring from
    # its own; both come through these names.
    mp.setattr("engine.methods.llm_support.SandboxLimits", lambda *args, **kwargs: LIMITS)
    mp.setattr("engine.sandbox.SandboxLimits", lambda *args, **kwargs: LIMITS)
    with SandboxPool(1, LIMITS) as pool:
        a.protections = pool.protections()
    try:
        yield a
    finally:
        mp.undo()
        a.close()


def runnable(arena) -> list[corpus.Kind]:
    """The kinds whose walls are up on this machine (all of them on a current Linux)."""
    prot = arena.protections
    have = {
        "landlock": prot.get("filesystem") == "landlock",
        "network": prot.get("network") == "namespace" or bool(prot.get("landlock_net")),
        "seccomp": prot.get("seccomp") == "filter",
        "tmpfs": prot.get("disk") == "tmpfs",
        "signals": bool(prot.get("pid_namespace") or prot.get("landlock_signal_scope")
                        or "kill" in prot.get("seccomp_denied", [])),
    }
    missing = {k.name: sorted(n for n in k.needs if not have[n]) for k in corpus.KINDS}
    skipped = {name: why for name, why in missing.items() if why}
    if skipped:
        import warnings

        warnings.warn(f"hostile kinds left out, their wall is missing here: {skipped}")
    return [k for k in corpus.KINDS if not skipped.get(k.name)]


def kind_of(text: str) -> corpus.Kind | None:
    m = re.search(r"KIND = '([^']*)'", text or "") or re.search(r'KIND = "([^"]*)"', text or "")
    return corpus.BY_NAME.get(m.group(1)) if m else None


def assert_readable_failure(kind: corpus.Kind, ok: bool, error: str | None):
    assert not ok, f"{kind.name}: reported as a success"
    assert error and error.strip(), f"{kind.name}: no reason"
    assert "Traceback" not in error and len(error) <= 2100, f"{kind.name}: unreadable reason {error[:300]!r}"
    if kind.reason:
        assert re.search(kind.reason, error), f"{kind.name}: {error!r} does not match {kind.reason!r}"


def store_text(root: Path) -> str:
    return "".join(p.read_bytes().decode("latin-1") for p in root.rglob("*.sqlite3*") if p.is_file())


# --------------------------------------------------------------------------- the method paths


def llm_config(server, calls: int, **extra) -> dict:
    return {"llm": {"base_url": server.base_url, "model": "fake-model", "retry_base_delay": 0.01, "max_retries": 1,
                    "timeout": 20}, "max_llm_calls": calls, "llm_cache": "off", "program_seconds": 1.0,
            "evaluators": 2, **extra}


def wrap(path: str, kind, targets) -> str:
    if path == "llmsr":
        return corpus.llmsr_reply(kind, targets, ["t", "A"])
    if path == "sga":
        return corpus.sga_reply(kind, targets, ["t", "A"])
    return corpus.openevolve_reply(kind, targets, ["t", "A"])


METHOD_CONFIG = {
    "llmsr": dict(samples_per_prompt=2, islands=1),
    "sga": dict(iterations=100, num_exploit=1, num_explore=1),
    "openevolve": dict(islands=1, parallel_iterations=2, diff_mode=True),
}


@pytest.mark.slow
@pytest.mark.parametrize("path", ["llmsr", "sga", "openevolve"])
def test_every_hostile_kind_through_a_method_run(arena, path, tmp_path):
    from engine import methods as m
    from engine.runner import RunFinished, execute
    from engine.store import RunStore
    from engine.tasks import registry

    if path == "openevolve":
        m.METHODS.setdefault("openevolve", "engine.methods.openevolve:OpenEvolve")
    kinds = runnable(arena)
    sensible = SENSIBLE if path != "sga" else f"### Analysis\n\nA line.\n\n### Code\n\n{SENSIBLE}"
    script = [{"text": wrap(path, k, arena.targets)} for k in kinds]
    script += [{"text": sensible}, {"text": sensible}]
    with FakeLLMServer(script, default={"text": sensible}) as server, \
            RunStore(tmp_path / "runs.sqlite3") as store:
        task = registry.get_task(TASK)
        events = list(execute(task, path, llm_config(server, len(script), **METHOD_CONFIG[path]),
                              m.RunContext(), store))
        requests = [str(r.get("body")) for r in server.requests]
    finished = events[-1]
    assert isinstance(finished, RunFinished) and finished.status == "finished", getattr(finished, "error", finished)
    assert finished.stop_reason == "budget"  # every reply was evaluated: nothing stopped the run early
    hyps = [e for e in events if isinstance(e, m.Hypothesis)]
    seen = {}
    for h in hyps:
        kind = kind_of(h.program)
        if kind is not None:
            seen[kind.name] = h
            assert_readable_failure(kind, h.ok, h.error)
    assert set(seen) == {k.name for k in kinds}, f"not evaluated: {sorted({k.name for k in kinds} - set(seen))}"
    # The run went on: the sensible program after the hostile ones fitted.
    others = [(h.ok, h.error, h.program[-200:]) for h in hyps if kind_of(h.program) is None]
    assert any(h.ok and "params[0] * A + params[1]" in h.program for h in hyps), others
    assert min(h.loss for h in hyps if h.ok) > 1e-6  # no forged perfect score made it
    arena.assert_contained([store_text(tmp_path), *map(str, events), *requests])
    arena.assert_nothing_left()


# --------------------------------------------------------------------------- the lab paths


@pytest.mark.slow
def test_every_hostile_kind_through_the_lab_code_tool(arena):
    from engine.lab.agents import AgentCode, AgentResult, run_agent
    from engine.methods.base import RunContext

    kinds = runnable(arena)
    script = [{"text": corpus.code_block(k, arena.targets)} for k in kinds]
    script += [{"text": "<python>\nprint(float(6) * 7, sum([1, 2]))\n</python>"},
               {"text": "<final_law>\ndef discovered_law(mass1, mass2, distance):\n"
                        "    return 6.674e-5 * mass1 * mass2 / distance ** 1.5\n</final_law>"}]
    with FakeLLMServer(script) as server:
        events = list(run_agent(GRAVITY, "code", llm_config(server, len(script) + 2, max_rounds=len(kinds) + 1,
                                                              evaluators=1), RunContext()))
        requests = [str(r.get("body")) for r in server.requests]
    codes = [e for e in events if isinstance(e, AgentCode)]
    assert len(codes) == len(kinds) + 1
    problems = []
    for kind, code in zip(kinds, codes):
        assert kind_of(code.source) is kind
        assert len(code.output) <= LIMITS.output_chars + 200
        if kind.name == "forge a reply on the protocol pipe":
            # A block can only lie about its own output, which goes back to the LLM that wrote it.
            assert code.ok or code.error
            continue
        if kind.name == "monkeypatch numpy and builtins to fake a perfect fit":
            assert code.ok  # it prints its array of zeros; what it patched dies with its worker
            continue
        try:
            assert_readable_failure(kind, code.ok, code.error)
        except AssertionError as exc:
            problems.append(str(exc).splitlines()[0])
    assert not problems, problems
    last = codes[-1]
    assert last.ok and last.output.strip() == "42.0 3", "the block after the hostile ones ran in a clean worker"
    result = events[-1]
    assert isinstance(result, AgentResult) and result.evaluation["symbolic"]["equivalent"] is True
    arena.assert_contained([*map(str, events), *requests])
    arena.assert_nothing_left()


@pytest.mark.slow
def test_every_hostile_kind_as_a_submitted_law(arena):
    from engine.lab import get_task
    from engine.lab.evaluate import evaluate_law

    kinds = runnable(arena)
    task = get_task(GRAVITY)
    zero = evaluate_law(task, "def discovered_law(mass1, mass2, distance):\n    return 0.0\n", n=200,
                        sa_seconds=1.0)["rmsle"]  # the score of knowing nothing
    outcomes = []
    for kind in kinds:  # each law is scored in a sandbox pool of its own, as the lab does
        result = evaluate_law(task, corpus.law_source(kind, arena.targets, ["mass1", "mass2", "distance"]),
                              n=200, sa_seconds=1.0)
        outcomes.append(result)
        if kind.forges or kind.name == "import side effects (antigravity, this)":
            # Whatever it returns is scored by the app against the hidden law it cannot see.
            assert result["error"] or result["rmsle"] is None or result["rmsle"] >= 0.99 * zero, kind.name
            assert result["exact_accuracy"] != 1.0
            continue
        assert_readable_failure(kind, False, result["error"])
        assert result["rmsle"] is None
    # The next law is still scored properly.
    good = evaluate_law(task, "def discovered_law(mass1, mass2, distance):\n"
                              "    return 6.674e-5 * mass1 * mass2 / distance ** 1.5\n", n=200, sa_seconds=1.0)
    assert good["error"] is None and good["rmsle"] < 1e-9
    arena.assert_contained([str(o) for o in outcomes])
    arena.assert_nothing_left()


def test_a_hostile_law_submitted_by_the_agent_is_scored_in_its_own_sandbox(arena):
    """End to end without stand-ins: the code agent submits a law that crashes its worker."""
    from engine.lab.agents import AgentResult, run_agent
    from engine.methods.base import RunContext

    law = corpus.law_reply(corpus.BY_NAME["C-extension crash (ctypes segfault)"], arena.targets,
                           ["mass1", "mass2", "distance"])
    with FakeLLMServer([{"text": law}]) as server:
        events = list(run_agent(GRAVITY, "code", llm_config(server, 3, evaluators=1), RunContext()))
    result = events[-1]
    assert isinstance(result, AgentResult) and result.stop_reason == "submitted"
    assert "crashed the worker process (SIGSEGV" in result.evaluation["error"]
    assert result.evaluation["rmsle"] is None
    arena.assert_contained([str(e) for e in events])
    arena.assert_nothing_left()


# --------------------------------------------------------------------------- the app stays responsive


@pytest.mark.slow
def test_the_window_stays_responsive_while_llmsr_meets_hostile_code(arena, qtbot, tmp_path, monkeypatch):
    pytest.importorskip("pytestqt")
    from PySide6.QtCore import QElapsedTimer, Qt, QTimer

    from app import settings
    from app.application import create_app
    from app.main_window import MainWindow

    monkeypatch.setenv("KEPLERLAB_HOME", str(tmp_path))
    # The arena's small limits and its sandbox folder are patched into this process, so the run
    # stays here rather than in an engine host (engine.host): the sandbox is the same code either
    # way, and this is the harder case for the window's responsiveness.
    monkeypatch.setenv("KEPLERLAB_IN_PROCESS", "1")
    names = ["infinite loop", "sleep forever (wall clock, no CPU)", "memory bomb", "fork storm",
             "C-extension crash (ctypes segfault)", "huge stdout and stderr", "forge a reply on the protocol pipe",
             "steal the training targets from the fitter's frames"]
    feynman_inputs = ["mu", "Nn"]
    script = [{"text": corpus.llmsr_reply(corpus.BY_NAME[n], arena.targets, feynman_inputs)} for n in names]
    good = "```python\ndef equation(mu, Nn, params):\n    return params[0] * mu * Nn\n```"
    with FakeLLMServer(script, default={"text": good}, models=("fake-model",)) as server:
        settings.save_llm_settings({"llm": {"base_url": server.base_url, "model": "fake-model", "max_retries": 0,
                                            "timeout": 20}, "llm_cache": "off", "max_llm_calls": len(names) + 1})
        create_app()
        win = MainWindow(restore_layout=False)
        qtbot.addWidget(win)
        win.show()
        clock = QElapsedTimer()
        gaps: list[int] = []
        ticker = QTimer()
        ticker.setInterval(50)

        def tick():
            gaps.append(clock.restart())

        ticker.timeout.connect(tick)
        try:
            qtbot.waitUntil(lambda: len(win.tasks) > 0, timeout=15000)
            win.browser.select_task("feynman/I.12.1")
            win.run_panel.method_box.setCurrentIndex(win.run_panel.method_box.findData("llmsr"))
            for name, value in (("samples_per_prompt", 2), ("islands", 1), ("evaluators", 2),
                                ("program_seconds", 1.0)):
                if name in win.run_panel.editors:
                    win.run_panel.set_value(name, value)
            qtbot.waitUntil(lambda: win.run_panel.start_button.isEnabled(), timeout=5000)
            clock.start()
            ticker.start()
            with qtbot.waitSignal(win.controller.idle, timeout=120000):
                qtbot.mouseClick(win.run_panel.start_button, Qt.MouseButton.LeftButton)
                # Usable meanwhile: another task can be browsed while the run goes on.
                qtbot.wait(300)
                win.browser.select_task("feynman/I.12.1")
            ticker.stop()
            assert gaps and max(gaps[1:] or gaps) < 1500, f"the event loop stalled for {max(gaps)} ms"
            qtbot.waitUntil(lambda: win.llm_panel.pending() == 0, timeout=5000)
            run = win.store.get_run(win.displayed_run)
            assert run.status == "finished"
            hyps = win.store.events(run.id, "hypothesis")
            assert sum(1 for h in hyps if not h.get("ok", h.get("payload", {}).get("ok", True))) >= 1
        finally:
            ticker.stop()
            win.controller.shutdown()
            win.loader.wait_all()
            win.close()
    arena.assert_contained([store_text(tmp_path)])
    arena.assert_nothing_left()


def test_a_program_that_patches_builtins_or_numpy_cannot_fail_the_next_one_in_its_worker():
    """``builtins.float = …`` and ``np.mean = …`` are undone after the program, so the next
    program in the same (reused) worker fits normally. Seen in CI: OpenEvolve's sensible program
    failed "Cannot interpret '<lambda>' as a data type" after the monkeypatching kind."""
    import numpy as np

    from engine.sandbox.pool import SandboxLimits, SandboxPool

    X = np.linspace(1.0, 2.0, 50)[:, None]
    y = 3.0 * X[:, 0] + 1.0
    with SandboxPool(1, SandboxLimits(cpu_seconds=5.0)) as pool:
        pool.load_data(X, y)
        poison = ("import builtins\nimport math\nimport numpy as np\nnp.mean = lambda *a, **k: 0.0\n"
                  "math.sqrt = None\nbuiltins.float = lambda *a: 0.0\n"
                  "def equation(x, params):\n    return params[0] * x\n")
        assert not pool.evaluate(poison, "equation", 2).ok
        good = pool.evaluate("import math\ndef equation(x, params):\n    return params[0] * x + params[1] * math.sqrt(4) / 2\n",
                             "equation", 2)
        assert good.ok and good.mse < 1e-10, good.error
        assert pool.replaced == 0  # the same worker: the patches were undone, not the worker replaced
