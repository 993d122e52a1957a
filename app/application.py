"""Creating the QApplication and the main window."""

from __future__ import annotations

import os
import sys

from PySide6.QtWidgets import QApplication

from viewers.style import configure_pyqtgraph


def create_app(argv: list[str] | None = None) -> QApplication:
    app = QApplication.instance() or QApplication(argv if argv is not None else sys.argv[:1])
    app.setApplicationName("Kepler Lab")
    app.setOrganizationName("KeplerLab")
    app.setApplicationDisplayName("Kepler Lab")
    configure_pyqtgraph()
    return app


def display_problem() -> str | None:
    """Why a window cannot open here, or None. Qt itself would abort the process with a core
    dump when it finds no display, so we check first and say what to do instead."""
    if not sys.platform.startswith("linux") or os.environ.get("QT_QPA_PLATFORM"):
        return None
    if os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"):
        return None
    return (
        "Kepler Lab needs a graphical display and none was found (DISPLAY and WAYLAND_DISPLAY are unset).\n"
        "Start it from a desktop session, or on a headless machine under a virtual display:\n"
        "    xvfb-run -a .venv/bin/keplerlab\n"
        "The command line works without a display: keplerlab --help"
    )


def run_app() -> int:
    problem = display_problem()
    if problem:
        print(problem, file=sys.stderr)
        return 1
    app = create_app()
    from app.main_window import MainWindow

    window = MainWindow()
    window.show()
    return app.exec()
