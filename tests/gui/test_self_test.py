"""``keplerlab --self-test``: the installed app checks itself off-screen."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_self_test_passes_without_a_display_and_leaves_the_users_files_alone(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    env["KEPLERLAB_HOME"] = str(tmp_path / "user")  # where the user's runs would be
    done = subprocess.run([sys.executable, "-m", "app", "--self-test"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=400)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert "Qt platform offscreen" in lines[0]
    for step in ("open the window", "load the task catalog", "run GP for 2 s", "draw the fit", "render the window"):
        assert any(line.startswith("  ok   " + step) for line in lines), step
    assert lines[-1].startswith("self-test passed: 6 steps")
    assert not (tmp_path / "user").exists()  # it worked in a throw-away folder


def test_a_failing_step_is_named_and_the_exit_status_is_1(qtbot, monkeypatch, tmp_path, capsys):
    from app import self_test

    monkeypatch.setenv("KEPLERLAB_HOME", str(tmp_path))  # restored after the test
    monkeypatch.setattr(self_test, "TASK", "llmsrbench/lsr-synth/chemistry/NOSUCH")
    assert self_test.run_self_test() == 1
    out = capsys.readouterr().out
    assert "  ok   load the task catalog" in out
    assert "  FAIL task llmsrbench/lsr-synth/chemistry/NOSUCH is not in the browser" in out
