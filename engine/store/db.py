"""The run store: one SQLite database (WAL mode) keeping everything a run produces
(architecture rule 6).

Tables
------
``runs``        one row per run: task, method, configuration, status, chosen model, metrics.
``events``      every event a method yielded, in order (progress, Pareto reports, logs, final).
``candidates``  every model on the Pareto front at every report.
``llm_calls``   every LLM request a run made: messages, replies, tokens, latency, status, cost
                (schema 2; never the API key).
``sweeps``      one row per benchmark sweep: its plan (suites, methods, seeds, budget), where it
                ran and how it ended (schema 3).
``sweep_units`` every task × method × seed of a sweep: its status, the run it produced, the
                worker, and every attempt (a lost worker is an attempt) (schema 3).

A :class:`RunStore` holds one connection and must be used from one thread; each thread
(the GUI, a run's worker) opens its own store on the same file, which WAL mode allows.
Every event is committed as it arrives, so a crash loses nothing recorded before it; runs
left in the ``running`` state by a dead process are marked ``interrupted`` when a store is
opened.

Storage faults (a full or read-only disk, a store locked by another program, a damaged file)
raise :class:`StoreError` with a message naming the file and saying what to do; its ``kind``
tells which fault it was. A damaged file is never written, moved or deleted by the store
(:func:`set_aside` moves it out of the way when the user asks); a store that can be read but not
written opens read-only (``RunStore.read_only`` says why), so earlier runs stay visible.
"""

from __future__ import annotations

import functools
import json
import math
import os
import socket
import sqlite3
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from .. import __version__, paths

SCHEMA_VERSION = 3

_SCHEMA_V1 = """
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS runs (
    id           TEXT PRIMARY KEY,
    task_id      TEXT NOT NULL,
    method       TEXT NOT NULL,
    config       TEXT NOT NULL,
    seed         INTEGER,
    status       TEXT NOT NULL,
    started_at   REAL NOT NULL,
    finished_at  REAL,
    seconds      REAL,
    expression   TEXT,
    complexity   INTEGER,
    train_loss   REAL,
    metrics      TEXT,
    stop_reason  TEXT,
    error        TEXT,
    pid          INTEGER,
    host         TEXT,
    app_version  TEXT
);
CREATE INDEX IF NOT EXISTS runs_task ON runs(task_id);
CREATE INDEX IF NOT EXISTS runs_started ON runs(started_at);
CREATE TABLE IF NOT EXISTS events (
    run_id   TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    seq      INTEGER NOT NULL,
    kind     TEXT NOT NULL,
    t        REAL NOT NULL,
    payload  TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
);
CREATE TABLE IF NOT EXISTS candidates (
    run_id      TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    report      INTEGER NOT NULL,
    iteration   INTEGER NOT NULL,
    expression  TEXT NOT NULL,
    complexity  INTEGER NOT NULL,
    loss        REAL
);
CREATE INDEX IF NOT EXISTS candidates_run ON candidates(run_id, report);
"""

# Added in schema 2. Applied to new files and, by _migrate, to schema-1 files.
_SCHEMA_V2 = """
CREATE TABLE IF NOT EXISTS llm_calls (
    run_id             TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    seq                INTEGER NOT NULL,
    t                  REAL NOT NULL,
    model              TEXT,
    messages           TEXT NOT NULL,
    reply              TEXT NOT NULL,
    prompt_tokens      INTEGER,
    completion_tokens  INTEGER,
    latency            REAL,
    status             TEXT NOT NULL,
    error              TEXT,
    cost               REAL,
    attempts           INTEGER,
    purpose            TEXT,
    PRIMARY KEY (run_id, seq)
);
"""

# Added in schema 3 (issue 8: sweeps). A unit's run is an ordinary row of ``runs``.
_SCHEMA_V3 = """
CREATE TABLE IF NOT EXISTS sweeps (
    id           TEXT PRIMARY KEY,
    created_at   REAL NOT NULL,
    finished_at  REAL,
    spec         TEXT NOT NULL,
    spec_key     TEXT NOT NULL,
    status       TEXT NOT NULL,
    backend      TEXT,
    pid          INTEGER,
    host         TEXT,
    note         TEXT
);
CREATE INDEX IF NOT EXISTS sweeps_key ON sweeps(spec_key, created_at);
CREATE TABLE IF NOT EXISTS sweep_units (
    sweep_id   TEXT NOT NULL REFERENCES sweeps(id) ON DELETE CASCADE,
    seq        INTEGER NOT NULL,
    task_id    TEXT NOT NULL,
    method     TEXT NOT NULL,
    seed       INTEGER,
    config     TEXT NOT NULL,
    status     TEXT NOT NULL,
    run_id     TEXT,
    attempts   INTEGER NOT NULL DEFAULT 0,
    worker     TEXT,
    error      TEXT,
    history    TEXT,
    PRIMARY KEY (sweep_id, seq)
);
CREATE INDEX IF NOT EXISTS sweep_units_run ON sweep_units(run_id);
"""

_SCHEMA = _SCHEMA_V1 + _SCHEMA_V2 + _SCHEMA_V3

#: The statements each schema version adds to the one before it (for _migrate).
_UPGRADES = {2: _SCHEMA_V2, 3: _SCHEMA_V3}

#: Statuses a run can end in; "running" is the only live one.
FINAL_STATUSES = ("finished", "cancelled", "failed", "interrupted")


#: How long a write waits for another program's write to end before it gives up (seconds): a
#: store locked for longer gives a StoreError instead of a hang.
BUSY_TIMEOUT = 10.0


class StoreError(RuntimeError):
    """The run store cannot be opened, read or written; the message says what to do.

    ``kind`` names the fault for callers that offer a way out: ``"corrupt"`` (damaged, or not
    an SQLite file), ``"full"``, ``"read-only"``, ``"locked"``, ``"io"``, ``"cantopen"`` (a
    folder missing or not writable, a path that is not a file), ``"newer"`` (written by a
    newer Kepler Lab) or None."""

    def __init__(self, message: str, kind: str | None = None):
        super().__init__(message)
        self.kind = kind


#: SQLite's primary result codes (https://www.sqlite.org/rescode.html) that are storage faults.
_FAULTS = {3: "read-only", 5: "locked", 6: "locked", 8: "read-only", 10: "io", 11: "corrupt", 13: "full",
           14: "cantopen", 26: "corrupt"}


def fault_kind(exc: BaseException) -> str | None:
    """Which storage fault an ``sqlite3`` error is (a ``StoreError`` kind), or None."""
    code = getattr(exc, "sqlite_errorcode", None)
    return _FAULTS.get(code & 0xFF) if isinstance(code, int) else None


def fault_advice(kind: str | None, timeout: float = BUSY_TIMEOUT) -> str:
    """What a user can do about a storage fault of this kind (one sentence or two, no newline:
    the window shows a failed run's first line)."""
    if kind == "corrupt":
        return ("The file is damaged, or is not a Kepler Lab store; it has been left exactly as it is. "
                "Move it out of the way (rename it) to start with a new, empty store; the sqlite3 tool's "
                "'.recover' command may rescue what it holds.")
    if kind == "full":
        return ("The disk is full. Free some space and try again; everything recorded before this point "
                "is kept.")
    if kind == "read-only":
        return ("The file or its folder cannot be written (a read-only disk, or no permission). Make them "
                "writable, or set KEPLERLAB_HOME to a folder that can be written.")
    if kind == "locked":
        return (f"Another program (another Kepler Lab, a sweep, a database browser) kept it locked for more "
                f"than {timeout:g} s. Close that program or wait for it, then try again; nothing was lost.")
    if kind == "io":
        return "The disk reported an error: check that it is still connected and has free space, then try again."
    if kind == "cantopen":
        return ("Check that its folder exists and can be written, and that the path names a file, not a folder; "
                "or set KEPLERLAB_HOME to a folder that can be written.")
    return ""


def store_fault(doing: str, path: Path, exc: BaseException, timeout: float = BUSY_TIMEOUT,
                what: str = "the run store") -> StoreError:
    """A StoreError for ``exc`` met while ``doing`` (open, read, write) the store at ``path``."""
    kind = fault_kind(exc)
    advice = fault_advice(kind, timeout)
    return StoreError(f"cannot {doing} {what} at {path}: {exc}." + (f" {advice}" if advice else ""), kind)


#: The first four bytes of an SQLite WAL file (https://www.sqlite.org/fileformat.html#the_write_ahead_log).
_WAL_MAGIC = (b"\x37\x7f\x06\x82", b"\x37\x7f\x06\x83")


def _aside_name(path: Path, label: str) -> Path:
    """``<name>.<label>-<time>``, numbered if that exists: a name that overwrites nothing."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = path.with_name(f"{path.name}.{label}-{stamp}")
    n = 1
    while target.exists():
        n += 1
        target = path.with_name(f"{path.name}.{label}-{stamp}-{n}")
    return target


def set_aside(path: str | os.PathLike, label: str = "damaged") -> Path:
    """Move a store that cannot be used (and its ``-wal`` / ``-shm`` files) out of the way, to
    ``<name>.damaged-<time>``: nothing is deleted, and a new store can be made at ``path``.
    Returns where the main file went. Raises OSError when the files cannot be renamed."""
    path = Path(path)
    target = _aside_name(path, label)
    os.replace(path, target)
    for suffix in ("-wal", "-shm"):
        extra = path.with_name(path.name + suffix)
        if extra.exists():
            os.replace(extra, target.with_name(target.name + suffix))
    return target


def _reading(method):
    """An SQLite error inside a reading method becomes a StoreError that says what to do: a
    damaged page is often found only when a query reaches it, long after the store opened."""

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except sqlite3.DatabaseError as exc:
            raise store_fault("read", self.path, exc, self.timeout) from exc

    return wrapper


@dataclass
class RunRecord:
    id: str
    task_id: str
    method: str
    config: dict
    seed: int | None
    status: str
    started_at: float
    finished_at: float | None
    seconds: float | None
    expression: str | None
    complexity: int | None
    train_loss: float | None
    metrics: dict = field(default_factory=dict)
    stop_reason: str | None = None
    error: str | None = None

    def to_dict(self) -> dict:
        return {
            "run_id": self.id,
            "task": self.task_id,
            "method": self.method,
            "config": self.config,
            "seed": self.seed,
            "status": self.status,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "seconds": self.seconds,
            "expression": self.expression,
            "complexity": self.complexity,
            "train_loss": self.train_loss,
            "metrics": self.metrics,
            "stop_reason": self.stop_reason,
            "error": self.error,
        }


def _json(value: Any) -> str:
    """JSON that keeps inf/nan readable (as strings) instead of emitting invalid JSON."""

    def clean(v):
        if isinstance(v, float) and not math.isfinite(v):
            return "inf" if v > 0 else "-inf" if v < 0 else "nan"
        if isinstance(v, dict):
            return {str(k): clean(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [clean(x) for x in v]
        return v

    return json.dumps(clean(value))


_NON_FINITE = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}


def _restore_list(values: list) -> list:
    return [_NON_FINITE[v] if v.__class__ is str and v in _NON_FINITE
            else _restore_list(v) if v.__class__ is list else v for v in values]


def _restore_dict(values: dict) -> dict:
    """The decoder's hook for each object (inner ones first): "inf", "-inf" and "nan" become
    floats again. Done as the text is decoded, not by walking the result afterwards: reading a
    500-run history on the window's thread spent most of its time in that walk."""
    for key, v in values.items():
        if v.__class__ is str and v in _NON_FINITE:
            values[key] = _NON_FINITE[v]
        elif v.__class__ is list:
            values[key] = _restore_list(v)
    return values


def _unjson(text: str | None) -> Any:
    """Undo :func:`_json`."""
    if not text:
        return {}
    if '"inf"' not in text and '"-inf"' not in text and '"nan"' not in text:
        return json.loads(text)  # nothing to restore (the common case)
    value = json.loads(text, object_hook=_restore_dict)
    if value.__class__ is list:
        return _restore_list(value)
    return _NON_FINITE.get(value, value) if value.__class__ is str else value


def _connect(target: str, timeout: float, uri: bool = False) -> sqlite3.Connection:
    """Every connection of the store is made here (one place for tests to reach, e.g. to cap a
    store's size with ``PRAGMA max_page_count`` and so make a full disk on demand)."""
    return sqlite3.connect(target, timeout=timeout, isolation_level=None, uri=uri)


#: For runs without a liveness lock (recorded by an older version): a live process that started
#: more than this many seconds after the run recorded its pid is another program that got the
#: same pid (after a reboot, say), not the run's.
PID_REUSE_SLACK = 30.0

#: Liveness locks of the runs this process is running: (lock file, open file). The kernel drops
#: a flock when its process dies, however it dies, so "its lock can be taken" means "its process
#: is gone"; unlike a pid it cannot be reused by another program after a reboot, and unlike a
#: start time it does not move when the clock is set. Process-wide, because several stores (the
#: window's and a run thread's) may be open on one file.
_LIVE_LOCKS: dict[str, Any] = {}
_LIVE_GUARD = threading.Lock()


def _lock_dir(db: Path) -> Path:
    return db.with_name(db.name + ".live")


def _hold_live_lock(db: Path, run_id: str) -> None:
    """Take run ``run_id``'s liveness lock for this process (silently nothing where the folder
    cannot be written or flock is missing: the pid check is the fallback)."""
    try:
        import fcntl

        folder = _lock_dir(db)
        path = folder / run_id
        for attempt in range(3):  # another process may remove the emptied folder in between
            folder.mkdir(exist_ok=True)
            try:
                handle = open(path, "a+b")
                break
            except FileNotFoundError:
                if attempt == 2:
                    raise
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except Exception:  # noqa: BLE001 -- no fcntl (Windows), read-only folder, held elsewhere
        return
    with _LIVE_GUARD:
        old = _LIVE_LOCKS.pop(str(path), None)
        _LIVE_LOCKS[str(path)] = handle
    if old is not None:
        old.close()


def _drop_live_lock(db: Path, run_id: str) -> None:
    path = _lock_dir(db) / run_id
    with _LIVE_GUARD:
        handle = _LIVE_LOCKS.pop(str(path), None)
    if handle is not None:
        try:
            path.unlink()
            path.parent.rmdir()  # only when no other run is live: no folder left beside the store
        except OSError:
            pass
        handle.close()


def _live_lock_state(db: Path, run_id: str) -> bool | None:
    """True: some process holds run ``run_id``'s liveness lock; False: its lock file is there
    and free (the process that held it is gone); None: no lock file (an older version's run)."""
    path = _lock_dir(db) / run_id
    if not path.exists():
        return None
    try:
        import fcntl

        with open(path, "a+b") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            fcntl.flock(handle, fcntl.LOCK_UN)
    except Exception:  # noqa: BLE001 -- cannot tell: leave it to the pid check
        return None
    return False


def _drop_stale_lock_file(db: Path, run_id: str) -> None:
    try:
        (_lock_dir(db) / run_id).unlink()
        _lock_dir(db).rmdir()
    except OSError:
        pass


def _pid_alive(pid: int | None, since: float | None = None) -> bool:
    """Whether process ``pid`` is alive, and, given ``since`` (when the pid was recorded), the
    same process: after a power cut the dead run's pid often belongs to something else, and the
    run would otherwise look alive for ever and could never be resumed. Only for runs without a
    liveness lock: a clock set forward by more than the slack fools this check."""
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    if since is not None:
        try:
            import psutil  # installed with dask[distributed]; it knows every OS's process start time

            if psutil.Process(pid).create_time() > since + PID_REUSE_SLACK:
                return False
        except Exception:  # noqa: BLE001 -- no psutil, or the process just went: trust kill(0)
            pass
    return True


class RunStore:
    def __init__(self, path: str | os.PathLike | None = None, timeout: float | None = None,
                 reading: bool = False):
        """Open (or create) the store at ``path``. ``reading``: open an existing store for
        reading only (see :meth:`_open_for_reading`)."""
        self.path = Path(path) if path else paths.default_db_path()
        #: Seconds a write waits for another program's write before a "locked" StoreError.
        self.timeout = BUSY_TIMEOUT if timeout is None else float(timeout)
        #: None, or why this store could only be opened for reading (its runs can be shown;
        #: nothing new can be recorded).
        self.read_only: str | None = None
        #: What the user should be told although the store opened (a damaged WAL file set aside).
        self.notices: list[str] = []
        #: The copy made before this opening upgraded the file's schema, if it did.
        self.migration_backup: Path | None = None
        self.conn: sqlite3.Connection | None = None
        self._seq: dict[str, int] = {}
        self._report: dict[str, int] = {}
        self._llm_seq: dict[str, int] = {}
        if reading:
            self._open_for_reading()
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create the folder {self.path.parent} for the run store: "
                             f"{exc.strerror or exc}. {fault_advice('cantopen')}", "cantopen") from exc
        self._set_aside_bad_wal()
        try:
            self.conn = _connect(str(self.path), self.timeout)
            self.conn.row_factory = sqlite3.Row
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=NORMAL")
            self.conn.execute("PRAGMA foreign_keys=ON")
            self._open_schema()
            if not self._can_write():  # SQLite itself fell back to reading only
                self.read_only = (f"the run store at {self.path} cannot be written: earlier runs can be viewed, "
                                  f"new ones cannot be recorded. {fault_advice('read-only')}")
            self.mark_interrupted()
        except sqlite3.DatabaseError as exc:
            self.close()
            if fault_kind(exc) in ("read-only", "cantopen") and self.path.is_file() and self.path.stat().st_size:
                self._open_read_only(exc)
            else:
                raise store_fault("open", self.path, exc, self.timeout) from exc
        except BaseException:
            self.close()
            raise

    def _can_write(self) -> bool:
        """Whether SQLite may write the file: it opens a file it may not write (a read-only disk,
        no permission) for reading without a word. A write that changes nothing, rolled back,
        tells, without waiting for another program's write (that one answers "busy": writable)."""
        self.conn.execute("PRAGMA busy_timeout=0")
        try:
            self.conn.execute("BEGIN IMMEDIATE")
            self.conn.execute("DELETE FROM meta WHERE 0")
        except sqlite3.OperationalError as exc:
            if fault_kind(exc) == "read-only":
                return False
        finally:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            self.conn.execute(f"PRAGMA busy_timeout={int(self.timeout * 1000)}")
        return True

    def _open_read_only(self, cause: sqlite3.DatabaseError) -> None:
        """Open an existing store that cannot be written for reading only, so that its runs can
        still be shown. ``immutable`` is the last resort for a WAL file in a folder that cannot
        be written (SQLite cannot make its shared-memory file there)."""
        for query in ("mode=ro", "mode=ro&immutable=1"):
            try:
                self.conn = _connect(f"{self.path.resolve().as_uri()}?{query}", self.timeout, uri=True)
                self.conn.row_factory = sqlite3.Row
                version = self._schema_version()
                break
            except sqlite3.DatabaseError as exc:
                self.close()
                last = exc
        else:
            raise store_fault("open", self.path, last, self.timeout) from cause
        if version != SCHEMA_VERSION:
            self.close()
            kind = "newer" if (version or 0) > SCHEMA_VERSION else "read-only"
            raise StoreError(f"cannot open the run store at {self.path}: it cannot be written ({cause}), and its "
                             f"schema {version} would need an upgrade to {SCHEMA_VERSION} first. "
                             f"{fault_advice('read-only')}", kind) from cause
        self.read_only = (f"the run store at {self.path} cannot be written ({cause}): earlier runs can be viewed, "
                          f"new ones cannot be recorded. {fault_advice('read-only')}")

    def _open_for_reading(self) -> None:
        """A second connection, for reading only, to a store another connection of this process
        keeps open for writing: an SQLite connection must not be used by two threads at once,
        so a thread that reads beside the window's (the run history, read off the window's
        thread) opens its own. It neither creates, upgrades nor repairs the file, and
        marks no run interrupted: the writing connection did all of that when it opened."""
        if not self.path.is_file():  # (a plain open would make an empty one)
            raise StoreError(f"cannot read the run store at {self.path}: there is no such file. "
                             f"{fault_advice('cantopen')}", "cantopen")
        try:
            # The plain path and query_only, not a "mode=ro" URI: SQLite refuses the URI of a
            # Windows network path (file://server/share/...).
            self.conn = _connect(str(self.path), self.timeout)
            self.conn.row_factory = sqlite3.Row
            self.conn.execute("PRAGMA query_only=ON")
            version = self._schema_version()
        except sqlite3.DatabaseError as exc:
            self.close()
            raise store_fault("open", self.path, exc, self.timeout) from exc
        if version != SCHEMA_VERSION:
            self.close()
            raise StoreError(f"cannot read the run store at {self.path}: its schema is {version}, this version "
                             f"reads {SCHEMA_VERSION}. Open it with the app first (it upgrades the file).",
                             "newer" if (version or 0) > SCHEMA_VERSION else None)
        self.read_only = f"the run store at {self.path} was opened for reading only"

    def _set_aside_bad_wal(self) -> None:
        """A ``-wal`` file that does not start with SQLite's magic number is not a WAL at all:
        SQLite would ignore it and overwrite it at the next write. It is renamed aside first
        (nothing of it is lost) and the user is told where it went."""
        wal = self.path.with_name(self.path.name + "-wal")
        try:
            with open(wal, "rb") as fh:
                head = fh.read(4)
        except OSError:
            return  # no WAL (the usual case), or one that cannot be read: SQLite will say so
        if not head or head in _WAL_MAGIC:
            return
        try:
            target = _aside_name(wal, "damaged")
            os.replace(wal, target)
        except OSError as exc:
            raise StoreError(f"the write-ahead log {wal} of the run store is damaged (not an SQLite WAL file) and "
                             f"could not be moved aside: {exc.strerror or exc}. Move it out of the way yourself, "
                             "then start again.", "corrupt") from exc
        self.notices.append(f"The write-ahead log of the run store ({wal.name}) was damaged: it is not an SQLite "
                            f"WAL file. It was kept as {target} and the store opened without it; runs recorded "
                            "before its last checkpoint are all there.")

    # ------------------------------------------------------------------ housekeeping

    def _schema_version(self) -> int | None:
        """The file's schema version, or None for a new (empty) database."""
        has_meta = self.conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type='table' AND name='meta'"
        ).fetchone()
        if not has_meta:
            return None
        row = self.conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        return int(row["value"]) if row is not None else None

    def _open_schema(self) -> None:
        """Create the schema in a new file, migrate an older one, refuse a newer one.

        The version is read before anything is written, so a file from a newer Kepler Lab is
        left exactly as it was."""
        version = self._schema_version()
        if version is not None and version > SCHEMA_VERSION:
            raise StoreError(
                f"the run store at {self.path} was written by a newer Kepler Lab "
                f"(schema {version}, this version reads {SCHEMA_VERSION}); it was left as it is. "
                "Open it with that Kepler Lab, or set KEPLERLAB_HOME to another folder.",
                "newer",
            )
        if version is None:
            self.conn.executescript(_SCHEMA)
            self.conn.execute(
                "INSERT OR IGNORE INTO meta(key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),)
            )
        elif version < SCHEMA_VERSION:
            self._migrate(version)
        else:
            self._add_late_columns()
        # The window asks for interrupted runs after every change of its history; a partial
        # index keeps that a lookup, not a scan of every run (no schema change: an index).
        exists = self.conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type='index' AND name='runs_interrupted'").fetchone()
        if not exists:
            try:
                self.conn.execute("CREATE INDEX IF NOT EXISTS runs_interrupted ON runs(started_at) "
                                  "WHERE status='interrupted'")
            except sqlite3.OperationalError:  # read-only or busy: only slower without it
                pass

    def _add_late_columns(self) -> None:
        """Columns added to schema 2 while it was still unreleased (development files only)."""
        columns = {r[1] for r in self.conn.execute("PRAGMA table_info(llm_calls)")}
        if columns and "purpose" not in columns:
            self.conn.execute("ALTER TABLE llm_calls ADD COLUMN purpose TEXT")

    def backup_path(self, version: int) -> Path:
        return self.path.with_name(f"{self.path.name}.v{version}-backup")

    def _migrate(self, version: int) -> None:
        """Bring a schema-``version`` file up to SCHEMA_VERSION, after copying it to
        ``<name>.v<version>-backup`` (SQLite's online backup, so WAL contents are included).
        An older backup of that name is never overwritten (the new one gets a dated name), and
        the upgrade is one transaction: if it fails the file keeps its old schema and rows."""
        backup = self.backup_path(version)
        if backup.exists():
            backup = _aside_name(backup, "new")
        partial = backup.with_name(backup.name + ".partial")
        try:
            target = sqlite3.connect(str(partial))
            try:
                self.conn.backup(target)
            finally:
                target.close()
            os.replace(partial, backup)
        except (OSError, sqlite3.DatabaseError) as exc:
            if partial.is_file():
                partial.unlink()  # our own half-made copy, not the user's file
            kind = fault_kind(exc) or ("full" if getattr(exc, "errno", None) == 28 else None)
            raise StoreError(
                f"cannot back up the run store at {self.path} to {backup} before upgrading its schema "
                f"from {version} to {SCHEMA_VERSION}: {exc}. The store was not changed. {fault_advice(kind)}".rstrip(),
                kind,
            ) from exc
        self.migration_backup = backup
        try:
            self.conn.execute("BEGIN IMMEDIATE")
        except sqlite3.DatabaseError as exc:
            raise store_fault("upgrade", self.path, exc, self.timeout) from exc
        try:
            current = self._schema_version()  # another process may have migrated meanwhile
            for target in sorted(_UPGRADES):
                if current is not None and current < target:
                    if target == 3:
                        self._add_late_columns()  # schema-2 development files lacked llm_calls.purpose
                    for statement in _UPGRADES[target].split(";"):
                        if statement.strip():
                            self.conn.execute(statement)
            self.conn.execute(
                "UPDATE meta SET value=? WHERE key='schema_version' AND CAST(value AS INTEGER) < ?",
                (str(SCHEMA_VERSION), SCHEMA_VERSION),
            )
            self.conn.execute("COMMIT")
        except BaseException as exc:
            self.conn.execute("ROLLBACK")
            if isinstance(exc, sqlite3.DatabaseError):
                fault = store_fault("upgrade", self.path, exc, self.timeout)
                raise StoreError(f"{fault} The store keeps its schema {version} and all its runs; a copy is at "
                                 f"{backup}.", fault.kind) from exc
            raise

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def __enter__(self) -> "RunStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _write(self, sql: str, params: Iterable = ()) -> None:
        try:
            self.conn.execute(sql, tuple(params))
        except sqlite3.DatabaseError as exc:
            raise store_fault("write to", self.path, exc, self.timeout) from exc

    @_reading
    def mark_interrupted(self) -> int:
        """Runs still 'running' whose process on this host has died become 'interrupted'
        (not in a store opened read-only: they are marked when it can be written again)."""
        if self.read_only:
            return 0
        host = socket.gethostname()
        rows = self.conn.execute(
            "SELECT id, pid, host, MAX(started_at, COALESCE((SELECT MAX(t) FROM events e WHERE e.run_id=runs.id "
            "AND e.kind='resumed'), 0)) AS since FROM runs WHERE status='running'").fetchall()
        # ``since``: when the pid was recorded (the run's start, or its latest resume).
        stale = [r["id"] for r in rows if r["host"] == host and not self._run_alive(r)]
        for run_id in stale:
            self._write(
                "UPDATE runs SET status='interrupted', stop_reason='interrupted', "
                "error='the process running it ended unexpectedly' WHERE id=?",
                (run_id,),
            )
        sweeps = self.conn.execute("SELECT id, pid, host FROM sweeps WHERE status='running'").fetchall()
        for row in sweeps:
            if row["host"] == host and not _pid_alive(row["pid"]):
                self._write("UPDATE sweeps SET status='interrupted' WHERE id=?", (row["id"],))
                self._write("UPDATE sweep_units SET status='interrupted', "
                            "error='the sweep ended unexpectedly' WHERE sweep_id=? AND status='running'",
                            (row["id"],))
        return len(stale)

    @_reading
    def running_on_this_host(self) -> list[str]:
        """Ids of the runs recorded as 'running' by a process of this host (alive or not: see
        :meth:`mark_interrupted`)."""
        rows = self.conn.execute("SELECT id FROM runs WHERE status='running' AND host=?",
                                 (socket.gethostname(),)).fetchall()
        return [r["id"] for r in rows]

    def _run_alive(self, row) -> bool:
        """A 'running' run of this host is alive while its pid is and its liveness lock is held
        (runs recorded before liveness locks: the pid and its start time)."""
        if not _pid_alive(row["pid"]):
            return False
        held = _live_lock_state(self.path, row["id"])
        if held is None:
            return _pid_alive(row["pid"], row["since"])
        if not held:
            _drop_stale_lock_file(self.path, row["id"])
        return held

    # ------------------------------------------------------------------ writing

    def create_run(self, task_id: str, method: str, config: dict, seed: int | None) -> str:
        run_id = uuid.uuid4().hex[:12]
        self._write(
            "INSERT INTO runs(id, task_id, method, config, seed, status, started_at, pid, host, app_version) "
            "VALUES (?, ?, ?, ?, ?, 'running', ?, ?, ?, ?)",
            (run_id, task_id, method, _json(config), seed, time.time(), os.getpid(), socket.gethostname(), __version__),
        )
        _hold_live_lock(self.path, run_id)
        self._seq[run_id] = 0
        self._report[run_id] = 0
        return run_id

    def _next(self, counters: dict[str, int], run_id: str, sql: str) -> int:
        """Next number in a per-run sequence; continues from the database for runs this
        store did not create (a resumed run, or events appended by another process). The
        caller stores it in ``counters`` once its write succeeded, so a failed write (a full
        disk) leaves no gap in the numbering."""
        if run_id not in counters:
            try:
                row = self.conn.execute(sql, (run_id,)).fetchone()
            except sqlite3.DatabaseError as exc:
                raise store_fault("read", self.path, exc, self.timeout) from exc
            counters[run_id] = int(row[0] or 0)
        return counters[run_id] + 1

    def add_event(self, run_id: str, kind: str, payload: dict) -> int:
        seq = self._next(self._seq, run_id, "SELECT MAX(seq) FROM events WHERE run_id=?")
        self._write(
            "INSERT INTO events(run_id, seq, kind, t, payload) VALUES (?, ?, ?, ?, ?)",
            (run_id, seq, kind, time.time(), _json(payload)),
        )
        self._seq[run_id] = seq
        return seq

    def add_pareto(self, run_id: str, iteration: int, candidates: list[dict]) -> None:
        report = self._next(self._report, run_id, "SELECT MAX(report) FROM candidates WHERE run_id=?")
        try:
            with self.conn:  # one transaction for the whole front
                self.conn.execute("BEGIN")
                self.conn.executemany(
                    "INSERT INTO candidates(run_id, report, iteration, expression, complexity, loss) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    [
                        (run_id, report, iteration, c["expression"], int(c["complexity"]), _finite(c["loss"]))
                        for c in candidates
                    ],
                )
        except sqlite3.DatabaseError as exc:
            raise store_fault("write to", self.path, exc, self.timeout) from exc
        self._report[run_id] = report

    def add_llm_call(self, run_id: str, record: Any) -> int:
        """Store one LLM call of a run. ``record`` is an ``engine.llm.CallRecord`` (anything with
        ``to_dict()``) or a mapping with the same keys. Only the listed fields are written; the
        record carries no API key."""
        data = record.to_dict() if hasattr(record, "to_dict") else dict(record)
        seq = self._next(self._llm_seq, run_id, "SELECT MAX(seq) FROM llm_calls WHERE run_id=?")
        self._write(
            "INSERT INTO llm_calls(run_id, seq, t, model, messages, reply, prompt_tokens, completion_tokens, "
            "latency, status, error, cost, attempts, purpose) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                run_id,
                seq,
                float(data.get("t") or time.time()),
                data.get("model"),
                _json(data.get("messages") or []),
                _json(data.get("replies") or []),
                data.get("prompt_tokens"),
                data.get("completion_tokens"),
                data.get("latency"),
                data.get("status") or "ok",
                data.get("error"),
                _finite(data.get("cost")),
                data.get("attempts"),
                data.get("purpose") or None,
            ),
        )
        self._llm_seq[run_id] = seq
        return seq

    def finish_run(
        self,
        run_id: str,
        status: str,
        *,
        seconds: float | None = None,
        expression: str | None = None,
        complexity: int | None = None,
        train_loss: float | None = None,
        metrics: dict | None = None,
        stop_reason: str | None = None,
        error: str | None = None,
    ) -> None:
        if status not in FINAL_STATUSES:
            raise ValueError(f"not a final status: {status}")
        self._write(
            "UPDATE runs SET status=?, finished_at=?, seconds=?, expression=?, complexity=?, train_loss=?, "
            "metrics=?, stop_reason=?, error=? WHERE id=?",
            (
                status,
                time.time(),
                seconds,
                expression,
                complexity,
                _finite(train_loss),
                _json(metrics or {}),
                stop_reason,
                error,
                run_id,
            ),
        )
        _drop_live_lock(self.path, run_id)

    def abandon_run(self, run_id: str, seconds: float | None, error: str) -> None:
        """End this process's run as interrupted after a store fault, so it can be resumed once
        the fault is fixed; only while it is still this process's (never another's resumed run)."""
        try:
            self._write("UPDATE runs SET status='interrupted', finished_at=?, seconds=?, stop_reason='interrupted', "
                        "error=? WHERE id=? AND status='running' AND pid=? AND host=?",
                        (time.time(), seconds, error, run_id, os.getpid(), socket.gethostname()))
        finally:
            # Even if that could not be written, the next store to look sees its lock free and
            # marks it interrupted, though this process lives on.
            _drop_live_lock(self.path, run_id)

    def reopen_run(self, run_id: str, resumed: dict) -> None:
        """An interrupted run goes on in this process (engine.resume): in one transaction it
        becomes ``running`` again, owned by this pid, its end (time, model, reason) cleared,
        and a ``resumed`` event with payload ``resumed`` follows its last event. Only an
        interrupted run can be reopened, and only by one process: two resuming it at once (the
        window and ``keplerlab resume``) race for the same row, and the second is refused."""
        row = self.conn.execute("SELECT status FROM runs WHERE id=?", (run_id,)).fetchone()
        if row is None:
            raise KeyError(run_id)
        if row["status"] != "interrupted":
            raise ValueError(f"run {run_id} is {row['status']}; only an interrupted run can be resumed")
        _hold_live_lock(self.path, run_id)  # before the row says running: never a live row without it
        try:
            with self.conn:
                self.conn.execute("BEGIN IMMEDIATE")
                changed = self.conn.execute(
                    "UPDATE runs SET status='running', finished_at=NULL, stop_reason=NULL, error=NULL, pid=?, "
                    "host=?, app_version=? WHERE id=? AND status='interrupted'",
                    (os.getpid(), socket.gethostname(), __version__, run_id)).rowcount
                if changed != 1:
                    raise ValueError(f"run {run_id} is no longer interrupted: it was resumed elsewhere")
                seq = 1 + int(self.conn.execute("SELECT COALESCE(MAX(seq), 0) FROM events WHERE run_id=?",
                                                (run_id,)).fetchone()[0])
                self.conn.execute("INSERT INTO events(run_id, seq, kind, t, payload) VALUES (?, ?, 'resumed', ?, ?)",
                                  (run_id, seq, time.time(), _json(resumed)))
        except sqlite3.DatabaseError as exc:
            _drop_live_lock(self.path, run_id)
            raise store_fault("write to", self.path, exc, self.timeout) from exc
        except ValueError:
            _drop_live_lock(self.path, run_id)
            raise
        for counters in (self._seq, self._report, self._llm_seq):
            counters.pop(run_id, None)  # continue the numbering from the file

    @_reading
    def interrupted_runs(self, limit: int = 100) -> list[RunRecord]:
        """Runs whose process died (newest first): what the window offers to resume."""
        rows = self.conn.execute(
            "SELECT * FROM runs WHERE status='interrupted' ORDER BY started_at DESC LIMIT ?", (limit,)
        ).fetchall()
        return [self._record(r) for r in rows]

    # ------------------------------------------------------------------ runs made elsewhere

    @_reading
    def export_run(self, run_id: str) -> dict:
        """Everything recorded of one run (its row, events, candidates and LLM calls) as plain
        data: how a sweep's worker, which writes to a store of its own, hands a run back."""
        row = self.conn.execute("SELECT * FROM runs WHERE id=?", (run_id,)).fetchone()
        if row is None:
            raise KeyError(run_id)

        def rows(sql: str) -> list[dict]:
            return [dict(r) for r in self.conn.execute(sql, (run_id,)).fetchall()]

        return {
            "run": dict(row),
            "events": rows("SELECT * FROM events WHERE run_id=? ORDER BY seq"),
            "candidates": rows("SELECT * FROM candidates WHERE run_id=? ORDER BY report, complexity"),
            "llm_calls": rows("SELECT * FROM llm_calls WHERE run_id=? ORDER BY seq"),
        }

    def import_run(self, bundle: dict) -> str:
        """Add a run exported by :meth:`export_run` (from another process or machine), in one
        transaction: all of it or nothing. A run id already present is replaced, so importing
        the same result twice (a retried hand-over) leaves one copy."""
        return self.import_runs([bundle])[0]

    def import_runs(self, bundles: Iterable[dict]) -> list[str]:
        """Add several exported runs in ONE transaction: all of them or none. ``bundles`` may be
        a generator that reads each run only when it is needed (a project file's runs), so only
        one is in memory at a time; an exception it raises undoes every run added before and
        is raised again. A run id already present is replaced (as :meth:`import_run`)."""

        def insert(table: str, row: dict) -> None:
            columns = ", ".join(row)
            marks = ", ".join("?" for _ in row)
            self.conn.execute(f"INSERT INTO {table}({columns}) VALUES ({marks})", tuple(row.values()))

        run_ids: list[str] = []
        try:
            with self.conn:  # commits at the end, rolls back on any exception
                self.conn.execute("BEGIN")
                for bundle in bundles:
                    run = dict(bundle["run"])
                    run_id = run["id"]
                    self.conn.execute("DELETE FROM runs WHERE id=?", (run_id,))  # cascades to its rows
                    insert("runs", run)
                    for table in ("events", "candidates", "llm_calls"):
                        for item in bundle.get(table, ()):
                            insert(table, {**item, "run_id": run_id})
                    run_ids.append(run_id)
        except sqlite3.DatabaseError as exc:
            raise store_fault("write to", self.path, exc, self.timeout) from exc
        for run_id in run_ids:
            for counters in (self._seq, self._report, self._llm_seq):
                counters.pop(run_id, None)
        return run_ids

    # ------------------------------------------------------------------ sweeps

    def create_sweep(self, spec: dict, spec_key: str, backend: str, units: list[dict]) -> str:
        """Record a planned sweep and its units (dicts with task_id, method, seed, config)."""
        sweep_id = uuid.uuid4().hex[:12]
        try:
            with self.conn:
                self.conn.execute("BEGIN")
                self.conn.execute(
                    "INSERT INTO sweeps(id, created_at, spec, spec_key, status, backend, pid, host) "
                    "VALUES (?, ?, ?, ?, 'running', ?, ?, ?)",
                    (sweep_id, time.time(), _json(spec), spec_key, backend, os.getpid(), socket.gethostname()),
                )
                self.conn.executemany(
                    "INSERT INTO sweep_units(sweep_id, seq, task_id, method, seed, config, status, history) "
                    "VALUES (?, ?, ?, ?, ?, ?, 'pending', '[]')",
                    [(sweep_id, i, u["task_id"], u["method"], u.get("seed"), _json(u.get("config") or {}))
                     for i, u in enumerate(units)],
                )
        except sqlite3.DatabaseError as exc:
            raise store_fault("write to", self.path, exc, self.timeout) from exc
        return sweep_id

    def reopen_sweep(self, sweep_id: str, backend: str) -> None:
        """A resumed sweep runs again in this process."""
        self._write("UPDATE sweeps SET status='running', finished_at=NULL, backend=?, pid=?, host=? WHERE id=?",
                    (backend, os.getpid(), socket.gethostname(), sweep_id))

    @_reading
    def latest_sweep(self, spec_key: str) -> str | None:
        """The most recent sweep with this plan (for ``--resume``)."""
        row = self.conn.execute(
            "SELECT id FROM sweeps WHERE spec_key=? ORDER BY created_at DESC LIMIT 1", (spec_key,)
        ).fetchone()
        return row["id"] if row else None

    @_reading
    def get_sweep(self, sweep_id: str) -> dict | None:
        row = self.conn.execute("SELECT * FROM sweeps WHERE id=?", (sweep_id,)).fetchone()
        if row is None:
            return None
        out = dict(row)
        out["spec"] = _unjson(row["spec"])
        counts = self.conn.execute(
            "SELECT status, COUNT(*) AS n FROM sweep_units WHERE sweep_id=? GROUP BY status", (sweep_id,)
        ).fetchall()
        out["units"] = {r["status"]: r["n"] for r in counts}
        return out

    @_reading
    def list_sweeps(self, limit: int = 100) -> list[dict]:
        rows = self.conn.execute("SELECT id FROM sweeps ORDER BY created_at DESC LIMIT ?", (limit,)).fetchall()
        return [self.get_sweep(r["id"]) for r in rows]

    @_reading
    def sweep_units(self, sweep_id: str) -> list[dict]:
        rows = self.conn.execute("SELECT * FROM sweep_units WHERE sweep_id=? ORDER BY seq", (sweep_id,)).fetchall()
        units = []
        for r in rows:
            unit = dict(r)
            unit["config"] = _unjson(r["config"])
            unit["history"] = json.loads(r["history"]) if r["history"] else []
            units.append(unit)
        return units

    @_reading
    def update_unit(self, sweep_id: str, seq: int, *, status: str, run_id: str | None = None,
                    worker: str | None = None, error: str | None = None, attempt: dict | None = None) -> None:
        """Set a unit's status (pending, running, finished, failed, cancelled, interrupted, lost);
        ``attempt`` (what happened to one try: worker, outcome, error, time) is appended to its
        history and counts as an attempt."""
        row = self.conn.execute("SELECT attempts, history FROM sweep_units WHERE sweep_id=? AND seq=?",
                                (sweep_id, seq)).fetchone()
        if row is None:
            raise KeyError(f"sweep {sweep_id} has no unit {seq}")
        history = json.loads(row["history"]) if row["history"] else []
        attempts = row["attempts"]
        if attempt is not None:
            history.append({"t": time.time(), **attempt})
            attempts += 1
        self._write(
            "UPDATE sweep_units SET status=?, run_id=COALESCE(?, run_id), worker=COALESCE(?, worker), error=?, "
            "attempts=?, history=? WHERE sweep_id=? AND seq=?",
            (status, run_id, worker, error, attempts, _json(history), sweep_id, seq),
        )

    def finish_sweep(self, sweep_id: str, status: str, note: str | None = None) -> None:
        self._write("UPDATE sweeps SET status=?, finished_at=?, note=? WHERE id=?",
                    (status, time.time(), note, sweep_id))

    # ------------------------------------------------------------------ reading

    def _record(self, row: sqlite3.Row) -> RunRecord:
        return RunRecord(
            id=row["id"],
            task_id=row["task_id"],
            method=row["method"],
            config=_unjson(row["config"]),
            seed=row["seed"],
            status=row["status"],
            started_at=row["started_at"],
            finished_at=row["finished_at"],
            seconds=row["seconds"],
            expression=row["expression"],
            complexity=row["complexity"],
            train_loss=row["train_loss"],
            metrics=_unjson(row["metrics"]),
            stop_reason=row["stop_reason"],
            error=row["error"],
        )

    @_reading
    def get_run(self, run_id: str) -> RunRecord | None:
        row = self.conn.execute("SELECT * FROM runs WHERE id=?", (run_id,)).fetchone()
        return self._record(row) if row else None

    @_reading
    def count_runs(self, task_id: str | None = None) -> int:
        """How many runs the store holds (of ``task_id`` only, if given)."""
        if task_id:
            return self.conn.execute("SELECT COUNT(*) FROM runs WHERE task_id=?", (task_id,)).fetchone()[0]
        return self.conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0]

    @_reading
    def list_runs(self, task_id: str | None = None, limit: int = 500) -> list[RunRecord]:
        if task_id:
            rows = self.conn.execute(
                "SELECT * FROM runs WHERE task_id=? ORDER BY started_at DESC LIMIT ?", (task_id, limit)
            )
        else:
            rows = self.conn.execute("SELECT * FROM runs ORDER BY started_at DESC LIMIT ?", (limit,))
        return [self._record(r) for r in rows.fetchall()]

    @_reading
    def events(self, run_id: str, kind: str | None = None) -> list[dict]:
        sql = "SELECT seq, kind, t, payload FROM events WHERE run_id=?"
        params: tuple = (run_id,)
        if kind:
            sql += " AND kind=?"
            params += (kind,)
        rows = self.conn.execute(sql + " ORDER BY seq", params).fetchall()
        return [{"seq": r["seq"], "kind": r["kind"], "t": r["t"], **_unjson(r["payload"])} for r in rows]

    def progress(self, run_id: str) -> list[dict]:
        return self.events(run_id, "progress")

    @_reading
    def last_front(self, run_id: str) -> list[dict]:
        row = self.conn.execute("SELECT MAX(report) AS r FROM candidates WHERE run_id=?", (run_id,)).fetchone()
        if row is None or row["r"] is None:
            return []
        rows = self.conn.execute(
            "SELECT iteration, expression, complexity, loss FROM candidates WHERE run_id=? AND report=? "
            "ORDER BY complexity",
            (run_id, row["r"]),
        ).fetchall()
        return [dict(r) for r in rows]

    @_reading
    def llm_calls(self, run_id: str) -> list[dict]:
        rows = self.conn.execute("SELECT * FROM llm_calls WHERE run_id=? ORDER BY seq", (run_id,)).fetchall()
        calls = []
        for r in rows:
            call = dict(r)
            call["messages"] = json.loads(r["messages"]) if r["messages"] else []
            call["replies"] = json.loads(r["reply"]) if r["reply"] else []
            del call["reply"]
            calls.append(call)
        return calls

    @_reading
    def candidate_count(self, run_id: str) -> int:
        return self.conn.execute("SELECT COUNT(*) FROM candidates WHERE run_id=?", (run_id,)).fetchone()[0]


def _finite(value):
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None
