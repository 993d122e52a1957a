"""Architecture rule 1: the engine and the command line never import Qt.

Each check runs in a fresh interpreter in which a meta-path finder makes every Qt binding and
Qt-based plotting package unimportable, so an accidental ``import pyqtgraph`` anywhere under
``engine/`` (or on the CLI's path) fails the test even if another test already imported Qt.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

BLOCKED = ("PySide6", "PySide2", "PyQt5", "PyQt6", "shiboken6", "shiboken2", "pyqtgraph", "pyvistaqt", "qtpy")

# Prepended to every child script: installs the blocker before anything else is imported.
BLOCKER = textwrap.dedent(
    f"""
    import sys

    BLOCKED = {BLOCKED!r}

    class QtBlocker:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in BLOCKED:
                raise ImportError(f"Qt is not allowed here: import of {{name!r}}")
            return None

    for _name in list(sys.modules):
        if _name.split(".")[0] in BLOCKED:
            del sys.modules[_name]
    sys.meta_path.insert(0, QtBlocker())

    # The blocker itself must work, or this test proves nothing.
    try:
        import PySide6.QtCore
    except ImportError:
        pass
    else:
        raise SystemExit("the Qt blocker did not block PySide6")
    """
)


def run_blocked(body: str, *args: str, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    code = BLOCKER + textwrap.dedent(body)
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


def test_every_engine_module_imports_without_qt():
    done = run_blocked(
        """
        import importlib
        import pkgutil

        import engine

        failures = []
        names = ["engine"]

        def onerror(name):
            failures.append(f"{name}: {sys.exc_info()[1]!r}")

        for info in pkgutil.walk_packages(engine.__path__, "engine.", onerror=onerror):
            names.append(info.name)
        for name in names:
            try:
                importlib.import_module(name)
            except Exception as exc:
                failures.append(f"{name}: {exc!r}")
        leaked = sorted(n for n in sys.modules if n.split(".")[0] in BLOCKED)
        print("\\n".join(names))
        if failures or leaked:
            raise SystemExit("\\n".join(failures + [f"Qt module loaded: {n}" for n in leaked]))
        """
    )
    assert done.returncode == 0, f"engine imports Qt or fails to import:\n{done.stderr}{done.stdout}"
    imported = set(done.stdout.split())
    # The walk must really have covered the package, not an empty or shadowed one.
    for module in ("engine.cli", "engine.runner", "engine.store.db", "engine.expr.parse", "engine.metrics.regression",
                   "engine.tasks.registry", "engine.methods.base"):
        assert module in imported, f"{module} was not visited"
    on_disk = {
        ".".join(p.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")
        for p in (REPO / "engine").rglob("*.py")
    }
    assert on_disk <= imported, f"modules not imported: {sorted(on_disk - imported)}"


def test_command_line_task_listing_works_without_qt(tmp_path):
    import os

    env = dict(os.environ, KEPLERLAB_HOME=str(tmp_path))
    done = run_blocked(
        """
        import runpy
        sys.argv = ["keplerlab", "tasks", "list", "--json"]
        runpy.run_module("app", run_name="__main__", alter_sys=True)
        """,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    tasks = json.loads(done.stdout)
    assert isinstance(tasks, list) and len(tasks) > 0
    assert all("id" in t for t in tasks)
