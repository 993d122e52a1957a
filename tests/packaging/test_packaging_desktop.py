"""The Linux desktop integration: .desktop entry, AppStream metadata, install.sh."""

from __future__ import annotations

import configparser
import os
import shutil
import stat
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LINUX = REPO / "packaging" / "linux"
APP_ID = "io.github.keplerlab.KeplerLab"
DESKTOP = LINUX / f"{APP_ID}.desktop"
METAINFO = LINUX / f"{APP_ID}.metainfo.xml"


def desktop_entry() -> dict[str, str]:
    parser = configparser.ConfigParser(interpolation=None, strict=True)
    parser.optionxform = str  # keys are case-sensitive in desktop entries
    parser.read(DESKTOP, encoding="utf-8")
    assert parser.sections() == ["Desktop Entry"]
    return dict(parser["Desktop Entry"])


def test_desktop_entry_has_the_required_keys_and_matches_the_app_id():
    entry = desktop_entry()
    assert entry["Type"] == "Application"
    assert entry["Name"] == "Kepler Lab"
    assert entry["Exec"].split()[0] == "keplerlab"
    assert entry["TryExec"] == "keplerlab"
    assert entry["Icon"] == APP_ID == DESKTOP.stem
    assert entry["Terminal"] == "false"
    categories = entry["Categories"].split(";")
    assert categories[-1] == "", "the list must end with a semicolon"
    assert {"Science", "Math"} <= set(categories)
    assert entry["Comment"]


def test_desktop_file_name_of_the_app_matches_the_entry(qapp):
    from app.application import DESKTOP_ID, create_app

    app = create_app()
    assert DESKTOP_ID == APP_ID
    assert app.desktopFileName() == APP_ID
    sizes = {(s.width(), s.height()) for s in app.windowIcon().availableSizes()}
    assert {(n, n) for n in (16, 32, 48, 64, 128, 256, 512)} <= sizes


@pytest.mark.skipif(shutil.which("desktop-file-validate") is None, reason="desktop-file-utils is not installed")
def test_desktop_entry_passes_desktop_file_validate():
    out = subprocess.run(["desktop-file-validate", str(DESKTOP)], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "error" not in out.stdout.lower()


def test_metainfo_has_id_name_summary_licences_and_this_release(pyproject):
    root = ET.parse(METAINFO).getroot()
    assert root.tag == "component" and root.get("type") == "desktop-application"
    assert root.findtext("id") == APP_ID
    assert root.findtext("name") == "Kepler Lab"
    assert root.findtext("summary")
    assert root.findtext("metadata_license") == "CC0-1.0"
    assert root.findtext("project_license") == pyproject["project"]["license"]["text"] == "MIT"
    launchable = root.find("launchable")
    assert launchable.get("type") == "desktop-id" and launchable.text == DESKTOP.name
    assert root.find("provides/binary").text == "keplerlab"
    versions = [r.get("version") for r in root.findall("releases/release")]
    assert versions and versions[0] == pyproject["project"]["version"]
    assert root.find("content_rating").get("type").startswith("oars-")
    # No made-up web addresses: the project has no public home yet.
    assert root.find("url") is None and root.find("screenshots") is None
    description = root.find("description")
    assert description is not None and len(description.findall("p")) >= 1


@pytest.mark.skipif(shutil.which("appstreamcli") is None, reason="appstream is not installed")
def test_metainfo_passes_appstreamcli_validate():
    out = subprocess.run(["appstreamcli", "validate", "--no-net", str(METAINFO)], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def _fake_bundle(tmp_path: Path, build) -> Path:
    """A bundle folder laid out as build.py leaves it, with a stand-in executable."""
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    exe = bundle / "keplerlab"
    exe.write_text("#!/bin/sh\necho keplerlab 0.1.0\n")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    build.install_desktop_files(bundle)
    return bundle


def test_install_sh_installs_into_xdg_dirs_and_uninstalls(tmp_path, build):
    bundle = _fake_bundle(tmp_path, build)
    data, bin_dir = tmp_path / "data", tmp_path / "bin"
    env = {**os.environ, "XDG_DATA_HOME": str(data), "KEPLERLAB_BIN_DIR": str(bin_dir), "HOME": str(tmp_path)}
    out = subprocess.run(["sh", str(bundle / "install.sh")], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr

    installed = data / "applications" / f"{APP_ID}.desktop"
    text = installed.read_text()
    assert f"Exec={bundle}/keplerlab" in text and f"TryExec={bundle}/keplerlab" in text
    assert f"Icon={APP_ID}" in text
    assert (data / "metainfo" / f"{APP_ID}.metainfo.xml").read_bytes() == METAINFO.read_bytes()
    for size in (16, 32, 48, 64, 128, 256, 512):
        icon = data / "icons" / "hicolor" / f"{size}x{size}" / "apps" / f"{APP_ID}.png"
        assert icon.read_bytes() == (REPO / "assets" / "icons" / f"keplerlab-{size}.png").read_bytes()
    assert (data / "icons" / "hicolor" / "scalable" / "apps" / f"{APP_ID}.svg").is_file()
    assert os.readlink(bin_dir / "keplerlab") == str(bundle / "keplerlab")

    out = subprocess.run(["sh", str(bundle / "install.sh"), "--uninstall"], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert not installed.exists()
    assert not (bin_dir / "keplerlab").exists()
    assert not list(data.rglob(f"{APP_ID}*"))
    assert (bundle / "keplerlab").exists(), "uninstall leaves the bundle alone"


def test_install_sh_refuses_a_folder_without_the_app(tmp_path):
    lonely = tmp_path / "x"
    lonely.mkdir()
    shutil.copy2(LINUX / "install.sh", lonely / "install.sh")
    out = subprocess.run(["sh", str(lonely / "install.sh")], capture_output=True, text=True,
                         env={**os.environ, "XDG_DATA_HOME": str(tmp_path / "d"), "HOME": str(tmp_path)})
    assert out.returncode != 0
    assert "no keplerlab executable" in out.stderr
    assert not (tmp_path / "d").exists()
