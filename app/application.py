"""Creating the QApplication and the main window."""

from __future__ import annotations

import gc
import os
import sys

from PySide6.QtCore import QSize, QTimer
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication

from viewers.style import configure_pyqtgraph


#: Qt 6 splits large raster fills (widget backgrounds, Fusion's scroll-bar gradients) across a
#: "QtGui" thread pool and the GUI thread waits for the pieces. With the cores busy with engine
#: work (a run, a sweep's workers, the engine hosts) those pool threads wait to be scheduled and
#: the GUI thread waits with them: a scroll bar's repaint took 10–40 ms in the window against
#: 0.1 ms without the pool, and scroll bars were 40 % of the window's paint time on a click
#: (py-spy --native). Qt reads this variable when it first makes the pool; a user's own setting
#: wins.
NO_GUI_THREADPOOL = "QT_NO_GUI_THREADPOOL"


def create_app(argv: list[str] | None = None) -> QApplication:
    os.environ.setdefault(NO_GUI_THREADPOOL, "1")
    app = QApplication.instance() or QApplication(argv if argv is not None else sys.argv[:1])
    app.setApplicationName("Kepler Lab")
    app.setOrganizationName("KeplerLab")
    app.setApplicationDisplayName("Kepler Lab")
    # Wayland compositors and X11 task bars match the window to the desktop entry
    # (packaging/linux/io.github.keplerlab.KeplerLab.desktop) by this name, for its icon.
    app.setDesktopFileName(DESKTOP_ID)
    if not getattr(app, "_keplerlab_icon_set", False):
        app.setWindowIcon(app_icon())
        app._keplerlab_icon_set = True
    configure_pyqtgraph()
    collect_garbage_on_gui_thread(app)
    # The GUI thread re-takes the GIL for every Python paint and slot Qt calls; while a run's
    # thread is busy in Python (scoring a final model with SymPy) each of those waits up to the
    # switch interval. 1 ms instead of Python's 5 ms halved the p99 main-thread stall of a GP
    # run in benchmarks/bench_ui.py (11 → 6 ms over three runs each).
    sys.setswitchinterval(0.001)
    return app


#: The desktop entry's id (its file name without ``.desktop``), also the AppStream id.
DESKTOP_ID = "io.github.keplerlab.KeplerLab"
ICON_SIZES = (16, 32, 48, 64, 128, 256, 512)


def app_icon() -> QIcon:
    """The application icon from assets/icons: the PNG renderings of keplerlab.svg at each size
    (PNGs, so it needs no SVG image plugin), for the window, the task bar and dialogs."""
    from engine.paths import assets_dir

    icon = QIcon()
    folder = assets_dir() / "icons"
    for size in ICON_SIZES:
        path = folder / f"keplerlab-{size}.png"
        if path.is_file():
            icon.addFile(str(path), QSize(size, size))
    return icon


def collect_if_due() -> None:
    """One step of Python's cyclic garbage collection, when its thresholds say so."""
    counts, thresholds = gc.get_count(), gc.get_threshold()
    if counts[0] <= thresholds[0]:
        return
    generation = 0
    if counts[1] > thresholds[1]:
        generation = 1
        if counts[2] > thresholds[2]:
            generation = 2
    gc.collect(generation)


def freeze_long_lived(app: QApplication | None = None) -> None:
    """Collect once, then move every object alive now (modules, the task catalog, the window)
    into the collector's permanent generation (``gc.freeze``). Later full collections then
    walk only what was made since: about 10 ms instead of 100–160 ms of GUI-thread pause with
    SymPy, NumPy and Qt loaded. Called once the task catalog is in; idempotent."""
    app = app or QApplication.instance()
    if app is None or getattr(app, "_keplerlab_gc_frozen", False):
        return
    gc.collect()
    gc.freeze()
    app._keplerlab_gc_frozen = True


def collect_garbage_on_gui_thread(app: QApplication, interval_ms: int = 500) -> None:
    """Run Python's cyclic garbage collector only on the GUI thread.

    Left automatic, the collector runs in whichever thread happens to allocate, so a worker
    thread (scoring, fitting) can end up destroying Qt objects of the window that were part of
    a reference cycle. Their destructors take Qt's locks while that thread holds the GIL, and
    the GUI thread, holding a Qt lock and waiting for the GIL, deadlocks with it (seen in CI:
    the window froze in QObject::~QObject). So automatic collection is switched off and a timer
    on the GUI thread collects with the same thresholds instead (the approach PyQt applications
    such as calibre use). Idempotent.
    """
    if getattr(app, "_keplerlab_gc_timer", None) is not None:
        return
    gc.disable()
    timer = QTimer(app)
    timer.setObjectName("keplerlabGarbageCollector")
    timer.timeout.connect(collect_if_due)
    timer.start(interval_ms)
    app._keplerlab_gc_timer = timer


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
    try:
        return app.exec()
    finally:
        from engine import host

        host.shutdown()  # the engine processes quit with the window
