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
# The first-run welcome (widgets/welcome.py) would open in every fresh test home; its own tests
# switch it back on.
os.environ.setdefault("KEPLERLAB_NO_WELCOME", "1")
# pytest-xdist's workers inherit the environment of the process that started them, so a home made
# here by that process is marked, and each worker makes a home of its own in its place; a home the
# caller set gets one folder per worker inside it (two workers never share a store).
_MADE_HERE = "KEPLERLAB_TEST_HOME_MADE_BY_CONFTEST"
_WORKER = os.environ.get("PYTEST_XDIST_WORKER")
if "KEPLERLAB_HOME" not in os.environ or (_WORKER and os.environ.get(_MADE_HERE) == os.environ["KEPLERLAB_HOME"]):
    _HOME = tempfile.mkdtemp(prefix="keplerlab-tests-")
    os.environ["KEPLERLAB_HOME"] = _HOME
    os.environ[_MADE_HERE] = _HOME
    atexit.register(shutil.rmtree, _HOME, ignore_errors=True)  # leave no test data behind
elif _WORKER and not os.environ.get("KEPLERLAB_TEST_WORKER_HOME"):
    os.environ["KEPLERLAB_HOME"] = os.path.join(os.environ["KEPLERLAB_HOME"], f"xdist-{_WORKER}")
    os.environ["KEPLERLAB_TEST_WORKER_HOME"] = os.environ["KEPLERLAB_HOME"]
    os.makedirs(os.environ["KEPLERLAB_HOME"], exist_ok=True)

REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = REPO.parent / "shared" / "data"


@pytest.fixture
def isolated_home(tmp_path, monkeypatch):
    """A private KEPLERLAB_HOME for tests that write to the store or the cache."""
    monkeypatch.setenv("KEPLERLAB_HOME", str(tmp_path))
    return tmp_path


@pytest.fixture(autouse=True)
def _garbage_on_the_gui_thread():
    """Once a QApplication exists, cyclic garbage is collected on the GUI thread only (as the
    app does, see app.application.collect_garbage_on_gui_thread); between tests too."""
    yield
    import sys

    widgets = sys.modules.get("PySide6.QtWidgets")
    if widgets is None or widgets.QApplication.instance() is None:
        return
    from app.application import collect_garbage_on_gui_thread, collect_if_due

    collect_garbage_on_gui_thread(widgets.QApplication.instance())
    collect_if_due()
