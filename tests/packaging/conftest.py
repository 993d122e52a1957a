"""Helpers for the packaging tests: load the scripts in packaging/ as modules.

The folder is named like the PyPA ``packaging`` library, so its files are loaded by path under
their own names (``speclib`` and ``notices`` import each other by plain name, so the folder is
put on ``sys.path`` too; none of those names is taken by an installed library).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGING = REPO / "packaging"
APP_ID = "io.github.keplerlab.KeplerLab"


def load(name: str):
    if str(PACKAGING) not in sys.path:
        sys.path.append(str(PACKAGING))
    key = f"keplerlab_packaging_{name}"
    if key in sys.modules:
        return sys.modules[key]
    spec = importlib.util.spec_from_file_location(key, PACKAGING / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[key] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def speclib():
    return load("speclib")


@pytest.fixture(scope="session")
def notices():
    return load("notices")


@pytest.fixture(scope="session")
def build():
    return load("build")


@pytest.fixture(scope="session")
def launcher():
    return load("launcher")


@pytest.fixture(scope="session")
def render_icons():
    return load("render_icons")


@pytest.fixture(scope="session")
def pyproject() -> dict:
    import tomllib

    with open(REPO / "pyproject.toml", "rb") as fh:
        return tomllib.load(fh)
