"""Where Kepler Lab keeps its files.

By default the user data directory (run store) and the user cache directory (generated task
data) come from ``platformdirs``. ``KEPLERLAB_HOME`` overrides both, which tests and study
sessions use to keep everything in one folder: ``$KEPLERLAB_HOME/data`` and
``$KEPLERLAB_HOME/cache``.
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

APP_NAME = "keplerlab"
APP_AUTHOR = "KeplerLab"


def home_override() -> Path | None:
    value = os.environ.get("KEPLERLAB_HOME", "").strip()
    return Path(value).expanduser() if value else None


def data_dir() -> Path:
    home = home_override()
    path = home / "data" if home else Path(platformdirs.user_data_dir(APP_NAME, APP_AUTHOR))
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        pass  # whoever writes there reports it (the run store says what to do)
    return path


def cache_dir() -> Path:
    home = home_override()
    path = home / "cache" if home else Path(platformdirs.user_cache_dir(APP_NAME, APP_AUTHOR))
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        pass  # whoever writes there reports it (the run store says what to do)
    return path


def default_db_path() -> Path:
    return data_dir() / "runs.sqlite3"


def assets_dir() -> Path:
    return Path(__file__).resolve().parent.parent / "assets"
