"""Entry point of the ``keplerlab`` command and of ``python -m app``.

With no arguments the window opens; with arguments the command line runs, and Qt is never
imported on that path. ``--self-test`` opens the window off-screen and checks this installation
(:mod:`app.self_test`).
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] == "--self-test":
        from app.self_test import main as self_test

        return self_test(args[1:])
    if args and args[0] not in ("--gui",):
        from engine.cli import main as cli_main

        return cli_main(args)
    from app.application import run_app

    return run_app()


if __name__ == "__main__":
    raise SystemExit(main())
