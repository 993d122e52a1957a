"""Response cache: makes a recorded run replayable offline, step for step.

Key: sha256 of the full request -- base URL, model, messages, sampling parameters, ``n`` -- plus
a *replay index*: the number of times this cache object has already seen the same request. So
a prompt asked twice in one run gets its two recorded answers back in order, and a run replayed
from its start sees exactly the replies the recorded run saw.

Entries are JSON files ``<cache dir>/llm/<key[:2]>/<key>.json`` (written to a temporary file and
renamed into place) holding the request, the replies and the usage, or, for a request that failed
for good, the error, so replay fails at the same step. The API key is not part of a request and
never stored.

Modes: ``off`` (no cache), ``record`` (always ask the server, write every outcome), ``replay``
(never touch the network; a missing entry raises :class:`CacheMiss`).

Budget: a replayed reply is charged like the recorded call was (one call, its recorded tokens,
their cost at today's prices), so a replayed run stops where the recorded one stopped.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path

from .. import paths
from ..atomic import write_atomically

MODES = ("off", "record", "replay")


def request_digest(request: dict) -> str:
    text = json.dumps(request, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ResponseCache:
    def __init__(self, mode: str = "record", directory: str | os.PathLike | None = None):
        if mode not in MODES:
            raise ValueError(f"cache mode must be one of {MODES}, not {mode!r}")
        self.mode = mode
        self.directory = Path(directory) if directory else paths.cache_dir() / "llm"
        self._lock = threading.Lock()
        self._seen: dict[str, int] = {}

    @property
    def enabled(self) -> bool:
        return self.mode != "off"

    def reset(self) -> None:
        """Start a new run: replay indices count from 0 again."""
        with self._lock:
            self._seen.clear()

    def key(self, request: dict) -> tuple[str, int]:
        """The entry key of the next occurrence of ``request``, and its replay index."""
        base = request_digest(request)
        with self._lock:
            index = self._seen.get(base, 0)
            self._seen[base] = index + 1
        return request_digest({"request": base, "replay_index": index}), index

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict | None:
        try:
            return json.loads(self._path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def put(self, key: str, entry: dict) -> None:
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomically(path, lambda fh: json.dump(entry, fh, ensure_ascii=False))
        except OSError:
            pass  # a cache that cannot be written only loses the recording, never the run
