"""Test-wide settings: Qt renders offscreen and nothing touches the user's real data.

Every test session gets its own ``KEPLERLAB_HOME`` (run store and data cache) unless the
caller set one; tests that need isolation from each other use ``tmp_path`` themselves.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
if "KEPLERLAB_HOME" not in os.environ:
    _HOME = tempfile.mkdtemp(prefix="keplerlab-tests-")
    os.environ["KEPLERLAB_HOME"] = _HOME
    atexit.register(shutil.rmtree, _HOME, ignore_errors=True)  # leave no test data behind

REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = REPO.parent / "shared" / "data"


@pytest.fixture
def isolated_home(tmp_path, monkeypatch):
    """A private KEPLERLAB_HOME for tests that write to the store or the cache."""
    monkeypatch.setenv("KEPLERLAB_HOME", str(tmp_path))
    return tmp_path
