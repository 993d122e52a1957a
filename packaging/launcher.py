"""The frozen app's entry script (PyInstaller runs this file as ``__main__``).

An installed Kepler Lab starts at ``app.__main__:main``; a frozen one starts here and then
goes to the same function. Before that, this script lets the bundle's one executable stand
in for the Python interpreter in the two places where Kepler Lab starts a child process with
``sys.executable`` (which is this executable when frozen):

* multiprocessing *spawn* (sweeps' local pool, Dask's worker processes): the child is started
  as ``keplerlab --multiprocessing-fork ...`` (or ``-c "from multiprocessing.resource_tracker
  import main..."``); ``multiprocessing.freeze_support()`` — patched by PyInstaller's runtime
  hook — recognises those command lines, runs the child's work and exits. It must run before
  anything else, or each child would open a window or parse the CLI.
* the LLM program sandbox (``engine/sandbox/pool.py``) runs
  ``sys.executable -I -S -B .../engine/sandbox/_worker.py CONFIG``. The bundle carries that
  script as a file; this launcher runs it as the interpreter would. Only a script inside the
  bundle is run this way: the frozen app is not a general Python interpreter.
"""

from __future__ import annotations

import multiprocessing
import os
import sys

#: The interpreter flags engine/sandbox/pool.py starts its worker with.
SANDBOX_FLAGS = ["-I", "-S", "-B"]


def bundled_script(argv: list[str], bundle_dir: str | None) -> str | None:
    """The script to run when ``argv`` is an interpreter command line for a ``.py`` file inside
    the bundle (``exe -I -S -B script.py ARGS``), else None."""
    if bundle_dir is None or len(argv) < 5 or argv[1:4] != SANDBOX_FLAGS:
        return None
    script = os.path.realpath(argv[4])
    root = os.path.realpath(bundle_dir)
    if not script.endswith(".py") or os.path.commonpath([script, root]) != root or not os.path.isfile(script):
        return None
    return script


def main() -> int:
    multiprocessing.freeze_support()  # returns only in the main process
    script = bundled_script(sys.argv, getattr(sys, "_MEIPASS", None))
    if script is not None:
        import runpy

        sys.argv = [script, *sys.argv[5:]]
        sys.dont_write_bytecode = True  # what -B asks for
        runpy.run_path(script, run_name="__main__")
        return 0
    from app.__main__ import main as app_main

    return app_main()


if __name__ == "__main__":
    sys.exit(main())
