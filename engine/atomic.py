"""Writing a file so that a reader never sees half of it.

The content goes to a temporary file in the same directory, which is then renamed over the
target (``os.replace`` is atomic on one file system). If writing fails (full disk, no permission,
an exception in ``write``), the temporary file is removed and the error is raised; the target is
left as it was. The content is flushed to the disk (``fsync``) before the rename, so that after a
power cut the target holds the old content or the new, never an empty file. Used by the data
cache, the LLM response cache, run exports, project files and the session draft.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import IO, Any, Callable


def write_atomically(path: str | os.PathLike, write: Callable[[IO[Any]], object], binary: bool = False) -> None:
    """Call ``write(fh)`` on a temporary file beside ``path``, then rename it to ``path``."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    try:
        if binary:
            with os.fdopen(fd, "wb") as fh:
                write(fh)
                _sync(fh)
        else:
            with os.fdopen(fd, "w", newline="", encoding="utf-8") as fh:
                write(fh)
                _sync(fh)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _sync(fh: IO[Any]) -> None:
    """Flush Python's buffer and the OS cache: a full disk is reported here at the latest (not
    after the rename), and the rename never publishes data that is still only in memory."""
    fh.flush()
    os.fsync(fh.fileno())
