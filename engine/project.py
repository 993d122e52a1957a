"""Project files (``.klab``): a set of tasks, runs and notes to hand to a colleague or a class.

A project file is a zip archive (the standard library's :mod:`zipfile`, so any zip tool can
look inside) holding

``project.json``
    the manifest: ``format`` (``"keplerlab-project"``), ``format_version`` (1), ``app_version``,
    ``created`` and ``saved`` (ISO 8601, UTC), ``title``, ``notes`` (plain text), ``tasks`` (task
    ids), ``current_task`` (a task id or null), ``runs`` (run ids) and ``user_tasks``
    (``[{"id": "user/<name>", "folder": "user_tasks/<i>"}]``: imported tables the project carries).
``runs/<run id>.json``
    one run as :meth:`engine.store.RunStore.export_run` gives it: its row, events, Pareto reports
    and LLM calls, column for column.
``user_tasks/<i>/task.json`` and ``user_tasks/<i>/data.npz``
    an imported task's two files exactly as :mod:`engine.tasks.user_data` stores them, so the
    colleague sees the same data (a run on ``user/...`` is useless without them).

Reading is defensive, because a project file comes from someone else: nothing is ever extracted
to disk by its member names (members are read into memory, by the names the manifest gives and
that this module checks), every member has a size limit that is checked against both the size
the archive declares and the bytes actually decompressed (a zip bomb stops at the limit), a
member name that could point outside a folder (``../x``, ``/etc/x``, ``C:x``) makes the whole
file refused, and every run row is checked column by column against this version's run store
before anything is written: its columns and types, that its JSON texts (config, metrics, event
payloads, LLM messages and replies) decode to what the window reads (objects or lists, a
progress point's iteration and loss, a Pareto report's candidates), that integers fit SQLite's
64 bits and times are dates. Every problem raises :class:`ProjectError` with a message naming
the file, the run and the fault.

Memory: a run's JSON becomes several times its size as Python objects, so runs are never all
held at once. :func:`read_project` reads and checks each run, then lets it go;
:func:`open_into` reads each again from the file (checking it again: the file may have changed
in between) while adding it to the run store, inside one transaction, so at most one run
(at most ``MAX_RUN_BYTES`` of JSON) is in memory at a time. The imported tasks' files are kept
as bytes (no blow-up; at most ``MAX_TOTAL_BYTES`` in all, the limit on the whole file). Opening
is all or nothing: a run that fails rolls the transaction back and removes the tasks just
installed.

Writing goes through :func:`engine.atomic.write_atomically`: an existing project file is
replaced only by a complete new one.
"""

from __future__ import annotations

import io
import json
import math
import re
import sqlite3
import zipfile
import zlib
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import cache
from pathlib import Path
from typing import Any, Iterable, Iterator

import numpy as np

from . import __version__
from .atomic import write_atomically
from .store.db import FINAL_STATUSES, StoreError

FORMAT = "keplerlab-project"
FORMAT_VERSION = 1
SUFFIX = ".klab"
MANIFEST = "project.json"

#: Size limits (bytes, uncompressed). A project of a few dozen runs is a few megabytes; the
#: limits only stop files that would exhaust memory.
MAX_MANIFEST_BYTES = 4 << 20
MAX_RUN_BYTES = 64 << 20
MAX_TASK_JSON_BYTES = 4 << 20
MAX_TASK_DATA_BYTES = 256 << 20
MAX_TOTAL_BYTES = 1 << 30
MAX_MEMBERS = 20_000
MAX_NOTES_CHARS = 1_000_000
#: The longest title a project may have (the Project dock's title field stops there too).
MAX_TITLE_CHARS = 500
MAX_ID_CHARS = 300

_RUN_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
_TASK_FOLDER = re.compile(r"user_tasks/[0-9]{1,6}")
_USER_TASK_FORMAT = "keplerlab-user-task"
_USER_TASK_VERSION = 1
#: The arrays an imported task's data.npz may hold (engine.tasks.user_data._store writes them).
_SPLITS = ("train", "test_id", "test_ood")


class ProjectError(ValueError):
    """A project file that cannot be written, read or opened; the message says which and why."""


@dataclass
class UserTaskFiles:
    """An imported task carried by a project: its ``task.json`` and ``data.npz``, byte for byte."""

    task_id: str
    task_json: bytes
    data: bytes


@dataclass
class Project:
    """A project file's content, checked and held in memory."""

    title: str = ""
    notes: str = ""
    tasks: list[str] = field(default_factory=list)
    current_task: str | None = None
    runs: list[str] = field(default_factory=list)
    created: str = ""
    saved: str = ""
    app_version: str = ""
    format_version: int = FORMAT_VERSION
    #: task id → its files, for the imported tasks the project carries
    user_tasks: dict[str, UserTaskFiles] = field(default_factory=dict)
    path: Path | None = None

    def iter_bundles(self, run_ids: Iterable[str] | None = None) -> Iterator[dict]:
        """The runs' bundles (RunStore.export_run's dicts), read from the file and checked one at
        a time, so only one is in memory at once (see the module notes). ``run_ids`` defaults to
        all the project's runs. Raises :class:`ProjectError`."""
        if self.path is None:
            raise ProjectError("the project has no file to read its runs from")
        label = str(self.path)
        zf, by_name = _open_archive(self.path)
        with zf:
            for run_id in (self.runs if run_ids is None else run_ids):
                if run_id not in self.runs:
                    raise ProjectError(f"{label}: the project has no run {run_id}")
                yield _read_bundle(zf, by_name, run_id, label)

    def bundle(self, run_id: str) -> dict:
        """One run's bundle, read from the file and checked."""
        return next(self.iter_bundles([run_id]))

    @property
    def name(self) -> str:
        """What the window calls the project: its title, else the file's name."""
        if self.title.strip():
            return self.title.strip()
        return self.path.stem if self.path is not None else "Untitled project"


@dataclass
class SaveResult:
    path: Path
    runs: list[str]
    user_tasks: list[str]
    #: imported tasks named by the project (or by its runs) whose files are not here to carry
    missing_user_tasks: list[str]
    bytes: int
    created: str = ""


@dataclass
class OpenReport:
    """What :func:`open_into` did."""

    imported_runs: list[str] = field(default_factory=list)
    #: runs whose id the store already had: left as they were
    present_runs: list[str] = field(default_factory=list)
    installed_tasks: list[str] = field(default_factory=list)
    #: imported tasks already here with the same data
    present_tasks: list[str] = field(default_factory=list)
    #: one message per imported task that differs from the one of the same name already here
    conflicts: list[str] = field(default_factory=list)

    def summary(self) -> str:
        parts = [f"{len(self.imported_runs)} run{'s' if len(self.imported_runs) != 1 else ''} added"]
        if self.present_runs:
            parts.append(f"{len(self.present_runs)} already in your run store")
        if self.installed_tasks:
            parts.append(f"{len(self.installed_tasks)} imported task{'s' if len(self.installed_tasks) != 1 else ''} "
                         "added")
        if self.conflicts:
            parts.append(f"{len(self.conflicts)} task conflict{'s' if len(self.conflicts) != 1 else ''}")
        return ", ".join(parts)


# --------------------------------------------------------------------------- run store columns


@cache
def _columns() -> dict[str, dict[str, tuple[str, bool]]]:
    """table → column → (declared type, required) of this version's run store, read from an
    empty in-memory store, so the check follows the schema without repeating it here."""
    from .store import RunStore

    with RunStore(":memory:") as store:
        out = {}
        for table in ("runs", "events", "candidates", "llm_calls"):
            rows = store.conn.execute(f"PRAGMA table_info({table})").fetchall()
            out[table] = {r["name"]: (str(r["type"]).upper(), bool(r["notnull"]) or bool(r["pk"])) for r in rows}
        return out


#: SQLite stores integers in 64 bits; a larger one cannot be bound (OverflowError).
_INT_LIMIT = 2**63 - 1
#: Times (seconds since 1970) the window can turn into a date: years 1 to 9999.
_TIME_LIMIT = 253_402_300_799.0
#: How the store writes a non-finite float inside a JSON column (engine.store.db._json).
_NONFINITE_TEXT = ("inf", "-inf", "nan")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _int_fits(value: Any) -> bool:
    return not isinstance(value, int) or isinstance(value, bool) or -_INT_LIMIT <= value <= _INT_LIMIT


def _loss_like(value: Any) -> bool:
    """A loss as the store keeps it in JSON: a number, null, or "inf" / "-inf" / "nan"."""
    return value is None or (_is_number(value) and _int_fits(value)) or value in _NONFINITE_TEXT


def _short_number(value: int) -> str:
    text = str(value)
    return text if len(text) <= 40 else f"{text[:20]}… ({len(text)} digits)"


def _check_value(where: str, column: str, kind: str, value: Any) -> None:
    if value is None:
        return
    ok = {
        "TEXT": isinstance(value, str),
        "INTEGER": isinstance(value, int) and not isinstance(value, bool),
        "REAL": _is_number(value),
    }.get(kind, isinstance(value, (str, int, float)) and not isinstance(value, bool))
    if not ok:
        raise ProjectError(f"{where}: the column '{column}' holds {type(value).__name__} {str(value)[:40]!r}, "
                           f"not {kind.lower()}")
    if not _int_fits(value):
        raise ProjectError(f"{where}: the column '{column}' holds the number {_short_number(value)}, which is too large "
                           "for the run store (at most 2**63 - 1)")


def _check_row(where: str, table: str, row: Any, run_id: str) -> dict:
    if not isinstance(row, dict):
        raise ProjectError(f"{where}: a row of {table} is {type(row).__name__}, not an object")
    columns = _columns()[table]
    unknown = [k for k in row if k not in columns]
    if unknown:
        raise ProjectError(f"{where}: {table} has the column '{unknown[0]}', which this version of Kepler Lab "
                           "does not know (was the project saved by a newer version?)")
    for name, (kind, required) in columns.items():
        if name == "run_id" and table != "runs":
            continue  # set from the run on import
        if required and row.get(name) is None:
            raise ProjectError(f"{where}: {table} lacks the required column '{name}'")
        _check_value(where, name, kind, row.get(name))
        if kind == "REAL" and required and not math.isfinite(row[name]):
            raise ProjectError(f"{where}: the column '{name}' of {table} holds {row[name]}, not a number")
        if name in ("t", "started_at", "finished_at") and row.get(name) is not None and \
                not abs(row[name]) <= _TIME_LIMIT:
            raise ProjectError(f"{where}: the time '{name}' of {table} is {row[name]}, which is not a date")
    if table != "runs" and row.get("run_id", run_id) != run_id:
        raise ProjectError(f"{where}: a row of {table} belongs to run {row.get('run_id')!r}, not {run_id}")
    return row


def check_bundle(bundle: Any, run_id: str, where: str) -> dict:
    """A run bundle checked against this version's run store (so importing it cannot fail on a
    column name or a type); raises :class:`ProjectError`."""
    if not isinstance(bundle, dict):
        raise ProjectError(f"{where}: a run must be a JSON object, not {type(bundle).__name__}")
    unknown = set(bundle) - {"run", "events", "candidates", "llm_calls"}
    if unknown:
        raise ProjectError(f"{where}: unexpected part '{sorted(unknown)[0]}' in the run")
    run = _check_row(where, "runs", bundle.get("run"), run_id)
    if run["id"] != run_id:
        raise ProjectError(f"{where}: the file holds run {run['id']!r}, but the manifest lists it as {run_id}")
    if run["status"] not in FINAL_STATUSES:
        raise ProjectError(f"{where}: the run's status is {run['status']!r}; a project holds only runs that "
                           f"have ended ({', '.join(FINAL_STATUSES)})")
    _check_run_json(where, run)
    for table, key in (("events", "seq"), ("candidates", None), ("llm_calls", "seq")):
        rows = bundle.get(table, [])
        if not isinstance(rows, list):
            raise ProjectError(f"{where}: {table} must be a list, not {type(rows).__name__}")
        seen: set = set()
        for row in rows:
            _check_row(where, table, row, run_id)
            if key is not None:
                if row[key] in seen:
                    raise ProjectError(f"{where}: {table} has two rows numbered {row[key]}")
                seen.add(row[key])
            if table == "events":
                _check_event(where, row)
            elif table == "llm_calls":
                for column in ("messages", "reply"):
                    if row[column]:  # RunStore.llm_calls reads an empty one as []
                        _decoded(where, f"LLM call {row['seq']}'s {column}", row[column], list)
    return bundle


def _decoded(where: str, what: str, text: str, kind: type) -> Any:
    """``text`` decoded from JSON, which must give a ``kind`` (dict or list)."""
    try:
        value = json.loads(text)
    except ValueError:
        raise ProjectError(f"{where}: the {what} is not valid JSON") from None
    except RecursionError:
        raise ProjectError(f"{where}: the {what} is nested too deeply") from None
    if not isinstance(value, kind):
        raise ProjectError(f"{where}: the {what} must be a JSON {'object' if kind is dict else 'list'}, "
                           f"not {type(value).__name__}")
    return value


#: Parts of a run's metrics that the window reads as objects (per split, checks, the judge).
_METRIC_OBJECTS = ("train", "id", "ood", "symbolic", "structure", "judge", "llm")


def _check_run_json(where: str, run: dict) -> None:
    """The run's config and metrics: JSON objects (the store reads an empty text as {})."""
    if run["config"]:
        _decoded(where, "run's config", run["config"], dict)
    if run.get("metrics"):
        metrics = _decoded(where, "run's metrics", run["metrics"], dict)
        for key in _METRIC_OBJECTS:
            part = metrics.get(key)
            if part is not None and not isinstance(part, dict):
                raise ProjectError(f"{where}: the run's metrics '{key}' must be an object, not {type(part).__name__}")
            if key in ("train", "id", "ood") and part is not None and not _loss_like(part.get("nmse")):
                raise ProjectError(f"{where}: the run's metric {key}.nmse is {str(part.get('nmse'))[:40]!r}, "
                                   "not a number")


def _check_event(where: str, row: dict) -> None:
    """An event's payload: a JSON object, with the fields the window reads for its kind."""
    kind, seq = row["kind"], row["seq"]
    payload = _decoded(where, f"payload of event {seq} ({kind})", row["payload"], dict)
    if kind == "progress":
        if not (_is_number(payload.get("iteration")) and _int_fits(payload["iteration"])):
            raise ProjectError(f"{where}: the progress event {seq} has no iteration number")
        if "best_loss" not in payload or not _loss_like(payload["best_loss"]):
            raise ProjectError(f"{where}: the progress event {seq} has no best loss (a number or null)")
    elif kind == "pareto":
        candidates = payload.get("candidates")
        if not isinstance(candidates, list):
            raise ProjectError(f"{where}: the Pareto event {seq} has no list of candidates")
        for c in candidates:
            if not (isinstance(c, dict) and isinstance(c.get("expression"), str)
                    and isinstance(c.get("complexity"), int) and not isinstance(c["complexity"], bool)
                    and _int_fits(c["complexity"]) and _loss_like(c.get("loss"))):
                raise ProjectError(f"{where}: the Pareto event {seq} has a candidate that is not an expression "
                                   f"(text), a complexity (an integer) and a loss (a number or null): {str(c)[:80]}")


# --------------------------------------------------------------------------- writing


def _finite(value: Any) -> Any:
    """JSON-safe copy: a non-finite float (which the store keeps as NULL anyway) becomes None."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def _dedupe(items: Iterable[str]) -> list[str]:
    out: list[str] = []
    for item in items:
        if item and item not in out:
            out.append(item)
    return out


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def user_task_folder(task_id: str) -> Path:
    """Where an imported task lives in this installation (``KEPLERLAB_HOME`` respected)."""
    from .tasks import user_data

    try:
        name = user_data.check_name(task_id)
    except user_data.DataImportError as exc:
        raise ProjectError(str(exc)) from None
    return user_data.tasks_dir() / name.replace("/", "~")


def _is_user_task(task_id: str) -> bool:
    return task_id.startswith("user/")


def save_project(path: str | Path, store, task_ids: Iterable[str], run_ids: Iterable[str], notes: str = "",
                 title: str = "", current_task: str | None = None, created: str | None = None) -> SaveResult:
    """Write a project file: the given tasks (ids), runs (read from ``store``, a RunStore) and
    notes, plus the files of every imported task named in ``task_ids`` or by one of the runs.
    The file is replaced only once the new one is complete. Raises :class:`ProjectError`."""
    path = Path(path)
    task_ids, run_ids = _dedupe(task_ids), _dedupe(run_ids)
    if len(notes) > MAX_NOTES_CHARS:
        raise ProjectError(f"the notes are too long ({len(notes):,} characters; at most {MAX_NOTES_CHARS:,})")
    if len(title) > MAX_TITLE_CHARS:
        raise ProjectError(f"the title is too long ({len(title):,} characters; at most {MAX_TITLE_CHARS:,})")
    members: list[tuple[str, bytes, int]] = []  # (name, content, compression)
    run_tasks: list[str] = []  # each run's task (the bundles themselves are let go once written out)
    for run_id in run_ids:
        if not _RUN_ID.fullmatch(run_id):
            raise ProjectError(f"'{run_id}' is not a run id")
        try:
            bundle = store.export_run(run_id)
        except KeyError:
            raise ProjectError(f"run {run_id} is not in the run store at {store.path}; remove it from the project"
                               ) from None
        except (StoreError, sqlite3.DatabaseError) as exc:  # the store wraps its faults in StoreError
            raise ProjectError(f"cannot read run {run_id} from the run store at {store.path}: {exc}") from None
        if bundle["run"]["status"] not in FINAL_STATUSES:
            raise ProjectError(f"run {run_id} is still {bundle['run']['status']}; save the project when it has ended")
        run_tasks.append(bundle["run"]["task_id"])
        content = json.dumps(_finite(bundle), allow_nan=False, separators=(",", ":")).encode("utf-8")
        if len(content) > MAX_RUN_BYTES:
            raise ProjectError(f"run {run_id} is too large for a project ({len(content) / 1e6:.0f} MB; "
                               f"at most {MAX_RUN_BYTES / 1e6:.0f} MB)")
        members.append((f"runs/{run_id}.json", content, zipfile.ZIP_DEFLATED))

    carried: list[dict] = []
    missing: list[str] = []
    wanted = _dedupe([t for t in task_ids if _is_user_task(t)]
                     + [t for t in run_tasks if _is_user_task(t)])
    for task_id in wanted:
        folder = user_task_folder(task_id)
        try:
            task_json = (folder / "task.json").read_bytes()
            data = (folder / "data.npz").read_bytes()
        except FileNotFoundError:
            missing.append(task_id)
            continue
        except OSError as exc:
            raise ProjectError(f"cannot read the imported task {task_id} in {folder}: {exc.strerror or exc}") from None
        if len(task_json) > MAX_TASK_JSON_BYTES or len(data) > MAX_TASK_DATA_BYTES:
            raise ProjectError(f"the data of {task_id} are too large for a project ({len(data) / 1e6:.0f} MB; "
                               f"at most {MAX_TASK_DATA_BYTES / 1e6:.0f} MB)")
        where = f"user_tasks/{len(carried)}"
        carried.append({"id": task_id, "folder": where})
        members.append((f"{where}/task.json", task_json, zipfile.ZIP_DEFLATED))
        members.append((f"{where}/data.npz", data, zipfile.ZIP_STORED))  # already compressed

    now = _now()
    manifest = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "app_version": __version__,
        "created": created or now,
        "saved": now,
        "title": title,
        "notes": notes,
        "tasks": task_ids,
        "current_task": current_task,
        "runs": run_ids,
        "user_tasks": carried,
    }
    members.insert(0, (MANIFEST, json.dumps(manifest, indent=2, ensure_ascii=False).encode("utf-8"),
                       zipfile.ZIP_DEFLATED))
    total = sum(len(content) for _, content, _ in members)
    if total > MAX_TOTAL_BYTES:
        raise ProjectError(f"the project is too large ({total / 1e6:.0f} MB; at most {MAX_TOTAL_BYTES / 1e6:.0f} MB)")

    def write(fh) -> None:
        with zipfile.ZipFile(fh, "w") as zf:
            for name, content, compression in members:
                zf.writestr(name, content, compress_type=compression)

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(path, write, binary=True)
    except OSError as exc:
        raise ProjectError(f"cannot write the project to {path}: {exc.strerror or exc}") from None
    return SaveResult(path, run_ids, [c["id"] for c in carried], missing, path.stat().st_size, manifest["created"])


# --------------------------------------------------------------------------- reading


def _unsafe_name(name: str) -> bool:
    """A member name that could point outside a folder if someone extracted it."""
    if not name or "\\" in name or "\x00" in name or name.startswith("/"):
        return True
    parts = name.split("/")
    return ".." in parts or ":" in parts[0]


def _read_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, limit: int, label: str) -> bytes:
    """A member's bytes, never more than ``limit`` (whatever its header claims)."""
    if info.file_size > limit:
        raise ProjectError(f"{label}: the member {info.filename} is too large ({info.file_size:,} bytes "
                           f"uncompressed; at most {limit:,})")
    if info.flag_bits & 0x1:
        raise ProjectError(f"{label}: the member {info.filename} is encrypted")
    try:
        with zf.open(info) as fh:
            data = fh.read(limit + 1)
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError) as exc:
        # OSError: a damaged directory entry points before the start of the file.
        raise ProjectError(f"{label}: the member {info.filename} is damaged ({exc})") from None
    except (NotImplementedError, RuntimeError) as exc:
        raise ProjectError(f"{label}: the member {info.filename} cannot be read ({exc})") from None
    if len(data) > limit:
        raise ProjectError(f"{label}: the member {info.filename} is too large (more than {limit:,} bytes "
                           "uncompressed)")
    return data


def _json_member(zf, info, limit, label) -> Any:
    data = _read_member(zf, info, limit, label)
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise ProjectError(f"{label}: {info.filename} is not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise ProjectError(f"{label}: {info.filename} is damaged or cut short: not valid JSON "
                           f"(line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    except RecursionError:
        raise ProjectError(f"{label}: {info.filename} is nested too deeply to be read") from None


def _check_id(label: str, what: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_ID_CHARS or any(
            ord(c) < 32 for c in value):
        raise ProjectError(f"{label}: {what} {str(value)[:60]!r} is not a valid id")
    return value


def _check_npz(label: str, task_id: str, data: bytes) -> None:
    """An imported task's data.npz: only float arrays of the expected names (no pickles), whose
    declared shapes fit in the bytes they occupy, so loading them cannot blow up."""
    where = f"{label}: the data of {task_id}"
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as inner:
            infos = inner.infolist()
            allowed = {"split_names.npy"} | {f"{s}__{a}.npy" for s in _SPLITS for a in ("X", "y")}
            for info in infos:
                if info.filename not in allowed:
                    raise ProjectError(f"{where} hold an unexpected array {info.filename!r}")
                if info.file_size > MAX_TASK_DATA_BYTES:
                    raise ProjectError(f"{where} are too large")
            if sum(i.file_size for i in infos) > MAX_TASK_DATA_BYTES:
                raise ProjectError(f"{where} are too large")
            for info in infos:
                with inner.open(info) as fh:
                    version = np.lib.format.read_magic(fh)
                    readers = {(1, 0): np.lib.format.read_array_header_1_0,
                               (2, 0): np.lib.format.read_array_header_2_0}
                    if version not in readers:
                        raise ProjectError(f"{where} use the array format {version}, which is not read here")
                    shape, _fortran, dtype = readers[version](fh)
                if dtype.hasobject:
                    raise ProjectError(f"{where} hold Python objects; only numbers are accepted")
                if int(np.prod(shape, dtype=np.int64)) * dtype.itemsize > info.file_size:
                    raise ProjectError(f"{where} are damaged ({info.filename} declares more values than it holds)")
        with np.load(io.BytesIO(data), allow_pickle=False) as archive:
            names = [str(n) for n in archive["split_names"]]
            if "train" not in names or set(names) - set(_SPLITS):
                raise ProjectError(f"{where} name the splits {names}; a training split is required")
            for n in names:
                X, y = archive[f"{n}__X"], archive[f"{n}__y"]
                if X.ndim != 2 or y.shape != (X.shape[0],):
                    raise ProjectError(f"{where} are damaged (split {n} has shapes {X.shape} and {y.shape})")
    except ProjectError:
        raise
    except Exception as exc:  # numpy and zipfile raise many kinds on a damaged archive
        raise ProjectError(f"{where} are damaged ({type(exc).__name__}: {exc})") from None


def _check_user_task(label: str, task_id: str, task_json: bytes, data: bytes) -> None:
    try:
        record = json.loads(task_json.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ProjectError(f"{label}: the description of {task_id} is not valid JSON ({exc})") from None
    if not isinstance(record, dict) or record.get("format") != _USER_TASK_FORMAT:
        raise ProjectError(f"{label}: {task_id} is not a Kepler Lab imported task")
    if record.get("version") != _USER_TASK_VERSION:
        raise ProjectError(f"{label}: {task_id} has task format version {record.get('version')!r}; "
                           f"this version reads {_USER_TASK_VERSION}")
    if record.get("id") != task_id:
        raise ProjectError(f"{label}: the files listed as {task_id} describe {record.get('id')!r}")
    user_task_folder(task_id)  # the name is checked
    _check_npz(label, task_id, data)


def _open_archive(path: Path) -> tuple[zipfile.ZipFile, dict[str, zipfile.ZipInfo]]:
    """The project file opened as a zip, and its members by name, after the checks every
    reading makes: the member count, no unsafe or repeated names, the total size."""
    label = str(path)
    try:
        zf = zipfile.ZipFile(path)
    except FileNotFoundError:
        raise ProjectError(f"{label}: no such file") from None
    except IsADirectoryError:
        raise ProjectError(f"{label} is a folder, not a project file") from None
    except (zipfile.BadZipFile, EOFError):
        raise ProjectError(f"{label} is not a Kepler Lab project: it is not a zip archive, or it was cut short "
                           "(an incomplete download or copy)") from None
    except (NotImplementedError, ValueError) as exc:  # a damaged directory entry ("zip file version 14.7")
        raise ProjectError(f"{label} is damaged: its zip directory cannot be read ({exc})") from None
    except OSError as exc:
        raise ProjectError(f"cannot read {label}: {exc.strerror or exc}") from None
    try:
        infos = zf.infolist()
        if len(infos) > MAX_MEMBERS:
            raise ProjectError(f"{label} holds {len(infos):,} members; a project holds at most {MAX_MEMBERS:,}")
        by_name: dict[str, zipfile.ZipInfo] = {}
        for info in infos:
            if _unsafe_name(info.filename):
                raise ProjectError(f"{label} holds a member with an unsafe path {info.filename!r} (it points "
                                   "outside the project); the file is refused")
            if info.filename in by_name:
                raise ProjectError(f"{label} holds two members named {info.filename!r}")
            by_name[info.filename] = info
        total = sum(i.file_size for i in infos)
        if total > MAX_TOTAL_BYTES:
            raise ProjectError(f"{label} is too large: {total:,} bytes uncompressed (at most {MAX_TOTAL_BYTES:,})")
    except BaseException:
        zf.close()
        raise
    return zf, by_name


def _read_bundle(zf: zipfile.ZipFile, by_name: dict[str, zipfile.ZipInfo], run_id: str, label: str) -> dict:
    member = f"runs/{run_id}.json"
    if member not in by_name:
        raise ProjectError(f"{label}: run {run_id} is listed but its file {member} is missing")
    bundle = _json_member(zf, by_name[member], MAX_RUN_BYTES, label)
    return check_bundle(bundle, run_id, f"{label}: {member}")


def read_project(path: str | Path) -> Project:
    """Read and check a project file: its manifest, every run (each checked, then let go: see
    :meth:`Project.iter_bundles`) and the imported tasks' files. Raises :class:`ProjectError`
    naming the fault."""
    path = Path(path)
    label = str(path)
    zf, by_name = _open_archive(path)
    with zf:
        if MANIFEST not in by_name:
            raise ProjectError(f"{label} is not a Kepler Lab project: it has no {MANIFEST} manifest")
        manifest = _json_member(zf, by_name[MANIFEST], MAX_MANIFEST_BYTES, label)
        project = _check_manifest(label, manifest)
        project.path = path

        for run_id in project.runs:
            _read_bundle(zf, by_name, run_id, label)  # checked now; read again when imported

        for entry in manifest.get("user_tasks", []):
            task_id, folder = entry["id"], entry["folder"]
            files = []
            for name, limit in (("task.json", MAX_TASK_JSON_BYTES), ("data.npz", MAX_TASK_DATA_BYTES)):
                member = f"{folder}/{name}"
                if member not in by_name:
                    raise ProjectError(f"{label}: the imported task {task_id} is listed but {member} is missing")
                files.append(_read_member(zf, by_name[member], limit, label))
            _check_user_task(label, task_id, *files)
            project.user_tasks[task_id] = UserTaskFiles(task_id, *files)
    return project


def _check_manifest(label: str, manifest: Any) -> Project:
    if not isinstance(manifest, dict):
        raise ProjectError(f"{label}: {MANIFEST} is not a JSON object")
    if manifest.get("format") != FORMAT:
        raise ProjectError(f"{label} is not a Kepler Lab project: its manifest's format is "
                           f"{str(manifest.get('format'))[:60]!r}, not '{FORMAT}'")
    version = manifest.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise ProjectError(f"{label}: the manifest's format_version {version!r} is not a version number")
    if version > FORMAT_VERSION:
        raise ProjectError(f"{label} was saved by a newer Kepler Lab ({manifest.get('app_version', '?')}, project "
                           f"format {version}); this version reads format {FORMAT_VERSION}. Update Kepler Lab to "
                           "open it.")

    def text(key: str, limit: int = 10_000) -> str:
        value = manifest.get(key, "")
        if value is None:
            value = ""
        if not isinstance(value, str):
            raise ProjectError(f"{label}: the manifest's {key} must be text, not {type(value).__name__}")
        if len(value) > limit:
            raise ProjectError(f"{label}: the manifest's {key} is too long ({len(value):,} characters)")
        return value

    def id_list(key: str) -> list[str]:
        value = manifest.get(key, [])
        if not isinstance(value, list):
            raise ProjectError(f"{label}: the manifest's {key} must be a list of ids")
        ids = [_check_id(label, f"the manifest's {key} entry", v) for v in value]
        if len(set(ids)) != len(ids):
            raise ProjectError(f"{label}: the manifest's {key} lists an id twice")
        return ids

    runs = id_list("runs")
    bad = [r for r in runs if not _RUN_ID.fullmatch(r)]
    if bad:
        raise ProjectError(f"{label}: {bad[0]!r} is not a run id")
    current = manifest.get("current_task")
    if current is not None:
        _check_id(label, "the current task", current)
    user_tasks = manifest.get("user_tasks", [])
    if not isinstance(user_tasks, list):
        raise ProjectError(f"{label}: the manifest's user_tasks must be a list")
    seen_ids, seen_folders = set(), set()
    for entry in user_tasks:
        if not isinstance(entry, dict) or set(entry) != {"id", "folder"}:
            raise ProjectError(f"{label}: an entry of user_tasks must be {{\"id\": ..., \"folder\": ...}}")
        task_id = _check_id(label, "the imported task", entry["id"])
        if not _is_user_task(task_id):
            raise ProjectError(f"{label}: the imported task {task_id!r} must have an id starting with user/")
        if not isinstance(entry["folder"], str) or not _TASK_FOLDER.fullmatch(entry["folder"]):
            raise ProjectError(f"{label}: the imported task {task_id} has an invalid folder {entry['folder']!r}")
        if task_id in seen_ids or entry["folder"] in seen_folders:
            raise ProjectError(f"{label}: user_tasks lists {task_id} or its folder twice")
        seen_ids.add(task_id)
        seen_folders.add(entry["folder"])
    return Project(
        title=text("title", MAX_TITLE_CHARS),
        notes=text("notes", MAX_NOTES_CHARS),
        tasks=id_list("tasks"),
        current_task=current,
        runs=runs,
        created=text("created", 100),
        saved=text("saved", 100),
        app_version=text("app_version", 100),
        format_version=version,
    )


# --------------------------------------------------------------------------- opening


def _same_task_data(folder: Path, files: UserTaskFiles) -> bool:
    """Whether the imported task in ``folder`` holds what ``files`` hold (byte for byte, or the
    same description and the same arrays)."""
    try:
        here_json = (folder / "task.json").read_bytes()
        here_data = (folder / "data.npz").read_bytes()
    except OSError:
        return False
    if here_json == files.task_json and here_data == files.data:
        return True
    try:
        if json.loads(here_json) != json.loads(files.task_json):
            return False
        with np.load(io.BytesIO(here_data), allow_pickle=False) as a, \
                np.load(io.BytesIO(files.data), allow_pickle=False) as b:
            return set(a.files) == set(b.files) and all(np.array_equal(a[k], b[k]) for k in a.files)
    except Exception:
        return False


def _install_user_tasks(items: list[UserTaskFiles]) -> list[Path]:
    """Write imported tasks' files into one staging folder beside the others, then rename each
    into place: all of them or none (a failure undoes the renames done). The staging name
    starts with ``.import-``, so engine.tasks.user_data cleans up after a crash. Returns the
    new task folders."""
    import os
    import shutil
    import tempfile

    from .tasks import user_data

    if not items:
        return []
    root = user_data.tasks_dir()
    try:
        root.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".import-project-", dir=root))
    except OSError as exc:
        raise ProjectError(f"cannot write the imported tasks under {root}: {exc.strerror or exc}") from None
    moved: list[Path] = []
    files = items[0]
    try:
        for i, files in enumerate(items):
            folder = staging / str(i)
            folder.mkdir()
            (folder / "data.npz").write_bytes(files.data)
            (folder / "task.json").write_bytes(files.task_json)
        for i, files in enumerate(items):
            target = user_task_folder(files.task_id)
            if target.exists():  # appeared meanwhile: never replaced
                raise FileExistsError(str(target))
            os.rename(staging / str(i), target)
            moved.append(target)
    except OSError as exc:
        _remove_folders(moved)
        raise ProjectError(f"cannot write the imported task {files.task_id} to {user_task_folder(files.task_id)}: "
                           f"{exc.strerror or exc}") from None
    except BaseException:
        _remove_folders(moved)
        raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return moved


def _remove_folders(folders: list[Path]) -> None:
    import shutil

    for folder in reversed(folders):
        shutil.rmtree(folder, ignore_errors=True)


def open_into(project: Project, store) -> OpenReport:
    """Add a project's content to this installation: its imported tasks (an existing task of
    the same name is never overwritten: same data counts as present, different data as a
    conflict) and its runs (a run id the store already has is left alone).

    All or nothing: the new tasks are installed first, then the runs are read from the file
    and added in one transaction of the run store; if any run cannot be read or added, the
    transaction is rolled back and the tasks installed here are removed again, so a
    :class:`ProjectError` means that nothing was changed."""
    report = OpenReport()
    to_install: list[UserTaskFiles] = []
    for task_id, files in project.user_tasks.items():
        folder = user_task_folder(task_id)
        if folder.exists():
            if _same_task_data(folder, files):
                report.present_tasks.append(task_id)
            else:
                report.conflicts.append(
                    f"{task_id}: a different task of that name is already here; yours was kept and the project's "
                    "copy was not installed, so the project's runs on it are shown against your data")
            continue
        to_install.append(files)
    try:
        for run_id in project.runs:
            (report.present_runs if store.get_run(run_id) is not None else report.imported_runs).append(run_id)
    except (StoreError, sqlite3.DatabaseError) as exc:
        raise ProjectError(f"cannot read the run store at {store.path}: {exc}") from None

    installed = _install_user_tasks(to_install)
    try:
        if report.imported_runs:
            store.import_runs(project.iter_bundles(report.imported_runs))
    except BaseException as exc:
        _remove_folders(installed)
        if isinstance(exc, ProjectError):
            raise
        if isinstance(exc, (StoreError, sqlite3.DatabaseError, OverflowError, ValueError, TypeError, KeyError)):
            raise ProjectError(f"cannot add the project's runs to the run store ({type(exc).__name__}: {exc}); "
                               "nothing was changed") from None
        raise
    report.installed_tasks = [files.task_id for files in to_install]
    if installed:
        from .tasks import registry

        registry.invalidate()
    return report


__all__ = [
    "FORMAT", "FORMAT_VERSION", "MAX_TITLE_CHARS", "SUFFIX", "Project", "ProjectError", "OpenReport", "SaveResult", "UserTaskFiles",
    "check_bundle", "open_into", "read_project", "save_project", "user_task_folder",
]
