"""Build Kepler Lab's one-folder bundle (dist/keplerlab/) with PyInstaller, then check it.

    .venv/bin/python packaging/build.py                 build, then run the frozen app's
                                                        --version and --self-test
    python packaging/build.py --skip-self-test          build only (still runs --version)
    python packaging/build.py --clean                   also empty PyInstaller's cache first
    python packaging/build.py --dry-run                 print what would run, change nothing

Run with plain ``python``, the script goes to the project's virtual environment
(``.venv/bin/python``, made by ``scripts/setup.sh``, which it runs when ``.venv`` is missing) and
re-runs itself there: the bundle is built from the Python that has Kepler Lab's dependencies.
The pinned PyInstaller (pyproject's ``package`` extra) is installed into that environment when
it is missing or has another version.

Every build starts from empty work and output folders (build/pyinstaller/, dist/keplerlab/),
with SOURCE_DATE_EPOCH set to the last git commit's time and PYTHONHASHSEED=0; see
packaging/README.md for what is and is not byte-for-byte reproducible. The exit status is 0
only when the build, ``keplerlab --version`` and (unless skipped) ``keplerlab --self-test``
all succeed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SPEC = HERE / "keplerlab.spec"
LINUX = HERE / "linux"
ICONS = ROOT / "assets" / "icons"
APP_NAME = "keplerlab"
APP_ID = "io.github.keplerlab.KeplerLab"
ICON_SIZES = (16, 32, 48, 64, 128, 256, 512)
VENV_PYTHON = ROOT / ".venv" / "bin" / "python"
#: Longest time the frozen self-test may take (it opens the window, runs GP for 2 s, renders).
SELF_TEST_TIMEOUT = 600


def say(message: str) -> None:
    print(f"build: {message}", flush=True)


def fail(message: str, code: int = 1) -> int:
    print(f"build: error: {message}", file=sys.stderr, flush=True)
    return code


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="packaging/build.py",
        description="Build the one-folder Kepler Lab bundle with PyInstaller and check it.",
    )
    parser.add_argument("--dist", type=Path, default=ROOT / "dist",
                        help="folder that receives keplerlab/ (default: %(default)s)")
    parser.add_argument("--work", type=Path, default=ROOT / "build" / "pyinstaller",
                        help="PyInstaller's work folder, emptied first (default: %(default)s)")
    parser.add_argument("--clean", action="store_true",
                        help="also empty PyInstaller's cache of analysed binaries (slower; use after a library upgrade)")
    parser.add_argument("--skip-self-test", action="store_true",
                        help="do not run the frozen app's --self-test after the build")
    parser.add_argument("--dry-run", action="store_true", help="print the commands and settings, build nothing")
    parser.add_argument("--no-venv", action="store_true",
                        help="build with this Python even if it is not the project's .venv")
    return parser.parse_args(argv)


# ----------------------------------------------------------------------------- environment

def project_config() -> dict:
    import tomllib

    with open(ROOT / "pyproject.toml", "rb") as fh:
        return tomllib.load(fh)


def project_version() -> str:
    return project_config()["project"]["version"]


def pinned_tools() -> list[str]:
    """The pinned build requirements: pyproject's ``package`` extra (``name==version``)."""
    extra = project_config()["project"].get("optional-dependencies", {}).get("package", [])
    if not extra:
        raise SystemExit("build: error: pyproject.toml has no [project.optional-dependencies] package extra")
    return list(extra)


def missing_tools(requirements: list[str]) -> list[str]:
    """The requirements that are not installed at exactly the pinned version."""
    import importlib.metadata as metadata

    missing = []
    for req in requirements:
        name, _, version = req.partition("==")
        try:
            if version and metadata.version(name.strip()) != version.strip():
                missing.append(req)
        except metadata.PackageNotFoundError:
            missing.append(req)
    return missing


def in_project_venv() -> bool:
    return Path(sys.prefix).resolve() == (ROOT / ".venv").resolve()


def reexec_command(argv: list[str]) -> list[str]:
    """The command that re-runs this script with the project's venv Python."""
    return [str(VENV_PYTHON), str(Path(__file__).resolve()), *argv]


def source_date_epoch(env: dict | None = None) -> str:
    """SOURCE_DATE_EPOCH: the caller's if set, else the last commit's time, else a fixed
    date (2000-01-01) so that the build still has one."""
    env = os.environ if env is None else env
    if env.get("SOURCE_DATE_EPOCH", "").strip().isdigit():
        return env["SOURCE_DATE_EPOCH"].strip()
    try:
        out = subprocess.run(["git", "-C", str(ROOT), "log", "-1", "--format=%ct"],
                             capture_output=True, text=True, timeout=30)
        if out.returncode == 0 and out.stdout.strip().isdigit():
            return out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    return "946684800"


def build_env(base: dict, epoch: str) -> dict:
    """The environment PyInstaller runs in: fixed hash seed and timestamps, no user site,
    no PYTHONPATH that could put other copies of packages into the bundle."""
    env = {k: v for k, v in base.items() if k not in ("PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME")}
    env.update(SOURCE_DATE_EPOCH=epoch, PYTHONHASHSEED="0", PYTHONNOUSERSITE="1", LC_ALL="C.UTF-8",
               TZ="UTC", QT_QPA_PLATFORM="offscreen")  # the analysis imports Qt modules
    return env


def pyinstaller_command(python: str, dist: Path, work: Path, clean: bool) -> list[str]:
    cmd = [python, "-m", "PyInstaller", str(SPEC), "--noconfirm", "--log-level", "WARN",
           "--distpath", str(dist), "--workpath", str(work)]
    if clean:
        cmd.append("--clean")
    return cmd


def self_test_env(base: dict) -> dict:
    """A display-less environment: the self-test must pick the offscreen platform itself."""
    env = {k: v for k, v in base.items()
           if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM", "PYTHONPATH", "PYTHONHOME")}
    return env


# ----------------------------------------------------------------------------- after the build

def install_desktop_files(bundle: Path) -> list[Path]:
    """Put the desktop entry, AppStream metadata, icons and install.sh into the bundle, laid
    out as under a prefix (share/applications, share/metainfo, share/icons/hicolor)."""
    copies = [
        (LINUX / f"{APP_ID}.desktop", bundle / "share" / "applications" / f"{APP_ID}.desktop"),
        (LINUX / f"{APP_ID}.metainfo.xml", bundle / "share" / "metainfo" / f"{APP_ID}.metainfo.xml"),
        (ICONS / "keplerlab.svg", bundle / "share" / "icons" / "hicolor" / "scalable" / "apps" / f"{APP_ID}.svg"),
        (LINUX / "install.sh", bundle / "install.sh"),
        (ROOT / "LICENSE", bundle / "LICENSE"),  # Kepler Lab's own code; the rest: THIRD-PARTY-NOTICES
    ]
    for size in ICON_SIZES:
        copies.append((ICONS / f"keplerlab-{size}.png",
                       bundle / "share" / "icons" / "hicolor" / f"{size}x{size}" / "apps" / f"{APP_ID}.png"))
    done = []
    for src, dest in copies:
        if not src.is_file():
            raise FileNotFoundError(f"{src} is missing")
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest)
        done.append(dest)
    (bundle / "install.sh").chmod(0o755)
    return done


def publish_notices(bundle: Path) -> Path:
    """The notices the spec wrote into _internal/: also at the bundle's top and in packaging/."""
    inner = bundle / "_internal" / "THIRD-PARTY-NOTICES.txt"
    if not inner.is_file():
        raise FileNotFoundError(f"{inner} is missing (the spec writes it)")
    shutil.copy2(inner, bundle / "THIRD-PARTY-NOTICES.txt")
    shutil.copy2(inner, HERE / "THIRD-PARTY-NOTICES.txt")
    return bundle / "THIRD-PARTY-NOTICES.txt"


def set_mtimes(folder: Path, epoch: int) -> None:
    """Every file and folder of the bundle dated SOURCE_DATE_EPOCH (for archives made of it)."""
    for path in sorted(folder.rglob("*"), reverse=True):
        os.utime(path, (epoch, epoch), follow_symlinks=False)
    os.utime(folder, (epoch, epoch))


def folder_size(folder: Path) -> int:
    return sum(p.lstat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


def run_frozen(exe: Path, args: list[str], env: dict, timeout: float) -> tuple[int, str]:
    try:
        out = subprocess.run([str(exe), *args], env=env, capture_output=True, text=True, timeout=timeout,
                             stdin=subprocess.DEVNULL, cwd=str(exe.parent.parent))
    except subprocess.TimeoutExpired as exc:
        text = (exc.stdout or b"").decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        return 124, text + f"\n(timed out after {timeout:g} s)"
    return out.returncode, out.stdout + out.stderr


# ----------------------------------------------------------------------------- main

def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    started = time.monotonic()

    if not args.no_venv and not in_project_venv():
        if not VENV_PYTHON.exists():
            say(f"no project environment at {VENV_PYTHON.parent.parent}; creating it with scripts/setup.sh")
            if args.dry_run:
                say(f"would run: bash {ROOT / 'scripts' / 'setup.sh'}")
            elif subprocess.run(["bash", str(ROOT / "scripts" / "setup.sh")]).returncode != 0:
                return fail("scripts/setup.sh failed; fix that first (see its messages)")
        say(f"re-running with the project's Python: {VENV_PYTHON}")
        if args.dry_run:
            say("would run: " + " ".join(reexec_command(argv)))
            return 0
        return subprocess.run(reexec_command(argv)).returncode

    tools = pinned_tools()
    missing = missing_tools(tools)
    if missing:
        say(f"installing the pinned build tools into {sys.prefix}: {' '.join(missing)}")
        cmd = [sys.executable, "-m", "pip", "install", "--disable-pip-version-check", "-q", *missing]
        if args.dry_run:
            say("would run: " + " ".join(cmd))
        elif subprocess.run(cmd).returncode != 0:
            return fail("pip could not install " + " ".join(missing))

    dist = args.dist.resolve()
    work = args.work.resolve()
    bundle = dist / APP_NAME
    exe = bundle / APP_NAME
    epoch = source_date_epoch()
    env = build_env(dict(os.environ), epoch)
    cmd = pyinstaller_command(sys.executable, dist, work, args.clean)
    say(f"Kepler Lab {project_version()}, SOURCE_DATE_EPOCH={epoch}, PYTHONHASHSEED=0")
    say("running: " + " ".join(cmd))
    if args.dry_run:
        say(f"would empty {work} and {bundle}, build, then run {exe} --version"
            + ("" if args.skip_self_test else " and --self-test"))
        return 0

    for folder in (work, bundle):
        if folder.exists():
            shutil.rmtree(folder)
    t = time.monotonic()
    if subprocess.run(cmd, env=env, cwd=str(ROOT)).returncode != 0:
        return fail("PyInstaller failed (see its messages above)")
    build_seconds = time.monotonic() - t
    try:
        install_desktop_files(bundle)
        notices = publish_notices(bundle)
    except FileNotFoundError as exc:
        return fail(str(exc))
    set_mtimes(bundle, int(epoch))
    size = folder_size(bundle)
    say(f"built {bundle} in {build_seconds / 60:.1f} min: {size / 2**20:.0f} MiB, "
        f"{sum(1 for _ in bundle.rglob('*'))} files; notices in {notices.relative_to(ROOT) if notices.is_relative_to(ROOT) else notices}")

    code, out = run_frozen(exe, ["--version"], self_test_env(dict(os.environ)), 120)
    say(f"{exe.name} --version → {out.strip()!r} (exit {code})")
    if code != 0 or project_version() not in out:
        return fail(f"the frozen app's --version failed or did not print {project_version()}")

    if not args.skip_self_test:
        say(f"running {exe.name} --self-test (no display; it picks the offscreen platform)")
        t = time.monotonic()
        code, out = run_frozen(exe, ["--self-test"], self_test_env(dict(os.environ)), SELF_TEST_TIMEOUT)
        print(out.rstrip(), flush=True)
        say(f"self-test exit {code} after {time.monotonic() - t:.1f} s")
        if code != 0:
            return fail("the frozen app's --self-test failed")

    say(f"done in {(time.monotonic() - started) / 60:.1f} min; bundle {size / 2**20:.0f} MiB at {bundle}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
