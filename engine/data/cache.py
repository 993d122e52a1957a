"""On-disk cache of generated task data (architecture rule 7).

Arrays are stored as ``.npz`` files in the user cache directory, keyed by the task id, the
generator's version string and the seed. A missing or unreadable cache file is simply
rebuilt: generation is deterministic, so the rebuilt arrays are identical.
"""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path
from typing import Callable

import numpy as np

from .. import paths
from ..atomic import write_atomically
from ..tasks.model import Split, TaskData

_locks: dict[str, threading.Lock] = {}
_locks_guard = threading.Lock()


def _key_path(task_id: str, version: str, seed: int) -> Path:
    digest = hashlib.sha256(f"{task_id}|{version}|{seed}".encode()).hexdigest()[:16]
    safe = task_id.replace("/", "__")
    return paths.cache_dir() / "taskdata" / f"{safe}.{digest}.npz"


def _lock_for(key: str) -> threading.Lock:
    with _locks_guard:
        return _locks.setdefault(key, threading.Lock())


def cached_task_data(
    task_id: str, version: str, seed: int, build: Callable[[], TaskData]
) -> TaskData:
    """Return the task's data from the cache, building and storing it when absent."""
    path = _key_path(task_id, version, seed)
    with _lock_for(str(path)):
        if path.exists():
            try:
                return _read(path)
            except Exception:
                path.unlink(missing_ok=True)  # corrupt cache file: rebuild it
        data = build()
        _write(path, data)
        return data


def _read(path: Path) -> TaskData:
    with np.load(path, allow_pickle=False) as archive:
        names = [str(n) for n in archive["split_names"]]
        splits = {n: Split(n, archive[f"{n}__X"].copy(), archive[f"{n}__y"].copy()) for n in names}
    return TaskData(splits)


def _write(path: Path, data: TaskData) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    arrays: dict[str, np.ndarray] = {"split_names": np.array(list(data.splits))}
    for name, split in data.splits.items():
        arrays[f"{name}__X"] = split.X
        arrays[f"{name}__y"] = split.y
    # A crash never leaves half a cache file.
    try:
        write_atomically(path, lambda fh: np.savez_compressed(fh, **arrays), binary=True)
    except OSError:
        pass  # a read-only or full cache only costs a rebuild
