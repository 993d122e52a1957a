"""packaging/build.py: its options, environment and commands (no build is run here)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_defaults_and_options(build):
    args = build.parse_args([])
    assert args.dist == REPO / "dist" and args.work == REPO / "build" / "pyinstaller"
    assert not args.clean and not args.skip_self_test and not args.dry_run
    args = build.parse_args(["--clean", "--skip-self-test", "--dist", "/tmp/d"])
    assert args.clean and args.skip_self_test and args.dist == Path("/tmp/d")


def test_pyinstaller_command(build):
    cmd = build.pyinstaller_command("/py", Path("/d"), Path("/w"), clean=False)
    assert cmd[:4] == ["/py", "-m", "PyInstaller", str(REPO / "packaging" / "keplerlab.spec")]
    assert "--noconfirm" in cmd
    assert cmd[cmd.index("--distpath") + 1] == "/d" and cmd[cmd.index("--workpath") + 1] == "/w"
    assert "--clean" not in cmd
    assert "--clean" in build.pyinstaller_command("/py", Path("/d"), Path("/w"), clean=True)


def test_build_environment_is_fixed(build):
    env = build.build_env({"PATH": "/bin", "PYTHONPATH": "/elsewhere", "PYTHONHASHSEED": "random"}, "1700000000")
    assert env["SOURCE_DATE_EPOCH"] == "1700000000" and env["PYTHONHASHSEED"] == "0"
    assert "PYTHONPATH" not in env and env["PATH"] == "/bin"


def test_self_test_runs_without_a_display(build):
    env = build.self_test_env({"DISPLAY": ":0", "WAYLAND_DISPLAY": "w", "QT_QPA_PLATFORM": "xcb", "HOME": "/h"})
    assert env == {"HOME": "/h"}


def test_source_date_epoch_is_the_last_commit(build):
    out = subprocess.run(["git", "-C", str(REPO), "log", "-1", "--format=%ct"], capture_output=True, text=True)
    if out.returncode == 0 and out.stdout.strip():
        assert build.source_date_epoch({}) == out.stdout.strip()
    assert build.source_date_epoch({"SOURCE_DATE_EPOCH": "42"}) == "42"


def test_build_tools_are_pinned_in_pyproject(build):
    tools = build.pinned_tools()
    assert any(t.startswith("pyinstaller==") for t in tools)
    assert all("==" in t for t in tools)
    missing = build.missing_tools(["surely-not-installed-dist==1.0", f"pytest=={__import__('pytest').__version__}"])
    assert missing == ["surely-not-installed-dist==1.0"]


def test_dry_run_prints_the_plan_and_builds_nothing(build, tmp_path, capsys):
    code = build.main(["--dry-run", "--no-venv", "--dist", str(tmp_path / "d"), "--work", str(tmp_path / "w")])
    out = capsys.readouterr().out
    assert code == 0
    assert "-m PyInstaller" in out and "SOURCE_DATE_EPOCH=" in out and "--self-test" in out
    assert not (tmp_path / "d").exists() and not (tmp_path / "w").exists()


def test_outside_the_venv_it_reruns_itself_with_the_venv_python(build):
    cmd = build.reexec_command(["--skip-self-test"])
    assert cmd == [str(REPO / ".venv" / "bin" / "python"), str(REPO / "packaging" / "build.py"), "--skip-self-test"]


def test_help_runs_with_any_python():
    out = subprocess.run([sys.executable, str(REPO / "packaging" / "build.py"), "--help"], capture_output=True, text=True)
    assert out.returncode == 0 and "--skip-self-test" in out.stdout


def test_desktop_files_and_notices_go_into_the_bundle(build, tmp_path, monkeypatch):
    bundle = tmp_path / "keplerlab"
    (bundle / "_internal").mkdir(parents=True)
    (bundle / "_internal" / "THIRD-PARTY-NOTICES.txt").write_text("notices\n")
    monkeypatch.setattr(build, "HERE", tmp_path)  # not packaging/: keep the repository's copy
    copied = build.install_desktop_files(bundle)
    rel = {p.relative_to(bundle).as_posix() for p in copied}
    assert "share/applications/io.github.keplerlab.KeplerLab.desktop" in rel
    assert "share/metainfo/io.github.keplerlab.KeplerLab.metainfo.xml" in rel
    assert "share/icons/hicolor/512x512/apps/io.github.keplerlab.KeplerLab.png" in rel
    assert "share/icons/hicolor/scalable/apps/io.github.keplerlab.KeplerLab.svg" in rel
    assert (bundle / "install.sh").stat().st_mode & 0o111
    assert build.publish_notices(bundle).read_text() == "notices\n"
    assert (tmp_path / "THIRD-PARTY-NOTICES.txt").read_text() == "notices\n"
    build.set_mtimes(bundle, 1_000_000_000)
    assert {int(p.stat().st_mtime) for p in bundle.rglob("*")} == {1_000_000_000}
