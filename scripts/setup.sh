#!/usr/bin/env bash
# Set up Kepler Lab in a virtual environment next to the repository: .venv/
#
#   bash scripts/setup.sh          the application
#   bash scripts/setup.sh --test   the application and the test tools (pytest, pytest-qt, pytest-xdist)
#
# Safe to run again: it only installs what is missing. Works from any directory.
# On Debian/Ubuntu, when run as root or with passwordless sudo, it also installs the system
# libraries Qt needs to open a window and the X virtual framebuffer the 3-D view tests use.
# Those are optional: without them the offscreen tests still run.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
PYTHON="${PYTHON:-python3}"
WANT_TEST=0

usage() { sed -n '2,10p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

for arg in "$@"; do
    case "$arg" in
        --test) WANT_TEST=1 ;;
        -h|--help) usage; exit 0 ;;
        *) echo "setup: unknown option '$arg' (use --test or --help)" >&2; exit 2 ;;
    esac
done

say() { echo "setup: $*"; }
warn() { echo "setup: warning: $*" >&2; }
die() { echo "setup: error: $*" >&2; exit 1; }

# ----------------------------------------------------------------------------- Python

command -v "$PYTHON" >/dev/null 2>&1 \
    || die "'$PYTHON' was not found. Kepler Lab needs Python 3.11 or newer (Debian 12: apt-get install python3 python3-venv)."
if ! "$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)'; then
    found="$("$PYTHON" -c 'import sys; print(".".join(map(str, sys.version_info[:3])))' 2>/dev/null)" || found="of unknown version"
    die "Kepler Lab needs Python 3.11 or newer; '$PYTHON' is $found. Set PYTHON=/path/to/python3.11 and run again."
fi

# ----------------------------------------------------------------------------- system packages

# Qt's xcb platform plugin (a real window, or Xvfb for the 3-D view tests) and its GL stack.
APT_PACKAGES=(
    xvfb xauth
    libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-image0 libxcb-render-util0
    libxcb-shape0 libxcb-xinerama0 libxkbcommon-x11-0
    libegl1 libgl1 libfontconfig1 libdbus-1-3 libglib2.0-0
    # Validators of the Linux desktop entry and AppStream metadata (tests/packaging).
    desktop-file-utils appstream
)

venv_works() {
    # Debian's python3 needs python3-venv (ensurepip) before `python3 -m venv` works.
    local tmp rc
    tmp="$(mktemp -d)"
    if "$PYTHON" -m venv "$tmp/v" >/dev/null 2>&1; then rc=0; else rc=1; fi
    rm -rf "$tmp"
    return "$rc"
}

installed() { dpkg -s "$1" 2>/dev/null | grep -q '^Status: install ok installed'; }

install_system_packages() {
    command -v apt-get >/dev/null 2>&1 && command -v dpkg >/dev/null 2>&1 || return 0

    local wanted=("${APT_PACKAGES[@]}") missing=() p
    if [ ! -x "$VENV/bin/python" ] && ! venv_works; then
        wanted+=(python3-venv)
    fi
    for p in "${wanted[@]}"; do
        installed "$p" || missing+=("$p")
    done
    [ "${#missing[@]}" -eq 0 ] && return 0

    local sudo=()
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
            sudo=(sudo -n)
        else
            warn "not root and no passwordless sudo; skipping system packages: ${missing[*]}"
            warn "install them with: sudo apt-get install --no-install-recommends ${missing[*]}"
            return 0
        fi
    fi

    local apt=("${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=120)
    say "installing system packages: ${missing[*]}"
    if ! "${apt[@]}" update -qq >/dev/null; then
        warn "apt-get update failed; trying to install from the current package lists"
    fi
    # Skip names this distribution does not have (e.g. renamed in a later release).
    local available=()
    for p in "${missing[@]}"; do
        if apt-cache show "$p" >/dev/null 2>&1; then
            available+=("$p")
        else
            warn "no package '$p' here; skipping it"
        fi
    done
    [ "${#available[@]}" -eq 0 ] && return 0
    if ! "${apt[@]}" install -y -qq --no-install-recommends "${available[@]}" >/dev/null; then
        warn "apt-get install failed for: ${available[*]} (Qt windows under Xvfb may not work; offscreen tests still run)"
    fi
}

install_system_packages

# ----------------------------------------------------------------------------- virtual environment

if [ ! -x "$VENV/bin/python" ]; then
    say "creating $VENV"
    "$PYTHON" -m venv "$VENV" \
        || die "could not create the virtual environment. On Debian/Ubuntu: apt-get install python3-venv, then run this again."
fi
"$VENV/bin/python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' \
    || die "$VENV uses a Python older than 3.11; delete it (rm -rf '$VENV') and run this again."

if [ "$WANT_TEST" -eq 1 ]; then
    TARGET="$ROOT[test]"
    CHECK='import engine, app, pytest, pytestqt, xdist'
else
    TARGET="$ROOT"
    CHECK='import engine, app'
fi

# Skip pip when pyproject.toml has not changed since the last successful install into this
# venv and the packages import from this checkout (the install is editable, so code changes
# need no reinstall).
STAMP="$VENV/.keplerlab-setup"
stamp_value() {
    local sum
    sum="$( (sha256sum "$ROOT/pyproject.toml" 2>/dev/null || shasum -a 256 "$ROOT/pyproject.toml") | cut -d' ' -f1)"
    echo "$sum $1 $ROOT"
}
up_to_date() {
    [ -f "$STAMP" ] || return 1
    # A test install also satisfies a plain one.
    grep -qxF "$(stamp_value "$WANT_TEST")" "$STAMP" || { [ "$WANT_TEST" -eq 0 ] && grep -qxF "$(stamp_value 1)" "$STAMP"; } || return 1
    (cd / && "$VENV/bin/python" - "$ROOT" <<PY
import sys
from pathlib import Path
$CHECK
root = Path(sys.argv[1]).resolve()
sys.exit(0 if Path(engine.__file__).resolve().is_relative_to(root) else 1)
PY
    ) >/dev/null 2>&1
}

if up_to_date; then
    say "the environment in $VENV is up to date"
else
    say "installing Kepler Lab into $VENV$([ "$WANT_TEST" -eq 1 ] && echo ' (with test tools)')"
    (cd "$ROOT" && "$VENV/bin/python" -m pip install -qq --disable-pip-version-check -e "$TARGET") \
        || die "pip install failed (see the messages above)"
    stamp_value "$WANT_TEST" > "$STAMP"
fi

say "done. Start the app with: $VENV/bin/keplerlab"
if [ "$WANT_TEST" -eq 1 ]; then
    say "run the tests with: $VENV/bin/python -m pytest -n 2 --dist loadfile  (from $ROOT)"
fi
