"""scripts/docs_screenshots.py and the pictures the documentation shows.

Fast: no screenshot is taken. ``--list`` is run as a user runs it (it needs neither Qt nor a
display), and every picture README.md and docs/user-guide.md show must exist in docs/images and
be made by a registered shot, so a picture can never go stale without the script knowing it.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "docs_screenshots.py"
IMAGES = REPO / "docs" / "images"
DOCUMENTS = (REPO / "README.md", REPO / "docs" / "user-guide.md")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

# Markdown images ![alt](path "title") and HTML <img src="path">.
_MD_IMAGE = re.compile(r"!\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_HTML_IMAGE = re.compile(r"<img\b[^>]*\bsrc=[\"']([^\"']+)[\"']", re.IGNORECASE)


def load_script():
    spec = importlib.util.spec_from_file_location("docs_screenshots_under_test", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


def run_script(*args: str) -> subprocess.CompletedProcess:
    """The script in a fresh interpreter without a display; reports whether Qt was imported."""
    code = (
        "import runpy, sys\n"
        f"sys.argv = [{str(SCRIPT)!r}, *{list(args)!r}]\n"
        "try:\n"
        f"    runpy.run_path({str(SCRIPT)!r}, run_name='__main__')\n"
        "except SystemExit as exc:\n"
        "    status = exc.code\n"
        "else:\n"
        "    status = 0\n"
        "print('QT-IMPORTED' if 'PySide6' in sys.modules else 'NO-QT', file=sys.stderr)\n"
        "sys.exit(status)\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    return subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=60)


def referenced_images(document: Path) -> list[Path]:
    """The local pictures a Markdown file shows, resolved against its folder."""
    text = document.read_text(encoding="utf-8")
    found = _MD_IMAGE.findall(text) + _HTML_IMAGE.findall(text)
    return [(document.parent / ref.split("#")[0]).resolve() for ref in found if "://" not in ref]


@pytest.fixture(scope="module")
def script():
    return load_script()


def test_list_prints_every_registered_shot_without_qt_or_a_display(script):
    done = run_script("--list")
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().splitlines()[-1] == "NO-QT"
    lines = [line.split() for line in done.stdout.splitlines() if line.strip()]
    assert [parts[0] for parts in lines] == list(script.SHOTS)
    assert [parts[1] for parts in lines] == [f"{name}.png" for name in script.SHOTS]
    for parts, item in zip(lines, script.SHOTS.values()):
        assert " ".join(parts[2:]) == item.summary and item.summary


def test_the_shots_the_guide_needs_are_registered(script):
    required = {"main-window", "task-detail", "pareto-candidates", "fit", "compare", "lab", "study-results",
                "surface", "time-series", "sweep", "leaderboard", "llm-settings", "llm-panel", "import",
                "shortcuts"}
    assert required <= set(script.SHOTS)
    for name, item in script.SHOTS.items():
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", name), name  # a file name on every system
        assert item.name == name and item.filename == f"{name}.png" and callable(item.take)


def test_a_second_shot_of_the_same_name_is_refused(script):
    with pytest.raises(ValueError, match="two shots named 'main-window'"):
        script.shot("main-window", "again")(lambda studio: None)


def test_unknown_shot_names_are_a_usage_error_before_anything_starts():
    done = run_script("--only", "main-window", "no-such-shot")
    assert done.returncode == 2
    assert "unknown shot(s): no-such-shot" in done.stderr
    assert done.stderr.strip().splitlines()[-1] == "NO-QT"  # refused before opening a window
    assert done.stdout == ""


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.name)
def test_every_picture_the_docs_show_exists_and_is_made_by_a_shot(script, document):
    pictures = referenced_images(document)
    if document.name == "user-guide.md":
        assert len(pictures) >= 10
    for picture in pictures:
        assert picture.parent == IMAGES.resolve(), f"{document.name} shows {picture}, not from docs/images"
        assert picture.is_file(), f"{document.name} shows {picture.name}, which does not exist"
        assert picture.stem in script.SHOTS, (f"{document.name} shows {picture.name}, which no shot in "
                                              "scripts/docs_screenshots.py makes")


def test_every_shot_has_its_picture_in_docs_images(script):
    for item in script.SHOTS.values():
        path = IMAGES / item.filename
        assert path.is_file(), f"{item.filename} is missing: run scripts/docs_screenshots.py --only {item.name}"
        assert path.read_bytes()[:8] == PNG_SIGNATURE, f"{item.filename} is not a PNG"
