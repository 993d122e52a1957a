"""Study mode (issue 5): human-baseline studies on the lab's tasks.

An instructor writes a *study file* (TOML or JSON)::

    title = "Week 3: hidden laws"
    tasks = ["newtonbench/m0_gravity/v0/easy/vanilla", "newtonbench/m7_malus_law/v1/easy/vanilla"]
    order = "shuffled"          # "fixed" (default) | "shuffled" (per participant, seeded)
    seed = 7                    # shuffle seed; with the participant id it fixes each order
    noise = 0.01                # one of engine.lab.NOISE_LEVELS (default 0)
    round_limit = 10            # rounds per task (default 10)
    max_sets_per_round = 20     # parameter sets per round (default 20, NewtonBench's cap)
    time_limit_minutes = 15     # per task (optional)
    show_scores = "end"         # "end" (default) | "never" | "immediately"

:func:`load_study` reads and validates it (errors name the file and the key). A participant's
work is kept in a *session store*, its own SQLite file (default ``<study file>.sessions.sqlite3``
beside the study, or under the data directory when that folder cannot be written), with tables
``meta``, ``participants`` and ``events``. Every event is committed as it is recorded (WAL,
``synchronous=FULL``), so a crash loses nothing; :meth:`StudySession.open` resumes a participant
where they stopped (same task order, same task, its experiments rebuilt from the events).

Exports (:func:`export_csv`, :func:`export_json`) and the instructor's :func:`aggregate` never
contain a task's ground truth: the only trace of it is the boolean verdict of the symbolic check
that scored a submission. No Qt here.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import random
import re
import sqlite3
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from .. import paths
from ..atomic import write_atomically
from ..store.db import BUSY_TIMEOUT, store_fault
from . import NOISE_LEVELS, get_task

SCHEMA_VERSION = 1
FORMAT = "keplerlab-study-sessions"
EXPORT_FORMAT = "keplerlab-study-export"
ORDERS = ("fixed", "shuffled")
SHOW_SCORES = ("end", "never", "immediately")
MAX_SETS = 20  # NewtonBench's cap on parameter sets per round
KEYS = ("title", "tasks", "order", "seed", "noise", "round_limit", "max_sets_per_round", "time_limit_minutes",
        "show_scores")
#: Keys that never leave the engine in an event payload or an export.
SECRET_KEYS = frozenset({"ground_truth", "truth", "truths"})
PARTICIPANT_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$")

#: Event kinds written by the study itself (the lab panel's own kinds pass through unchanged).
STUDY_KINDS = ("study_start", "study_resume", "study_leave", "task_start", "task_end", "study_finish")
#: Kinds that end a participant's sitting in order; any other last event means the program died.
ORDERLY_ENDS = ("study_leave", "study_finish")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS participants (
    participant   TEXT PRIMARY KEY,
    study_hash    TEXT NOT NULL,
    task_order    TEXT NOT NULL,
    started       REAL NOT NULL,
    current_task  INTEGER NOT NULL,
    finished      REAL
);
CREATE TABLE IF NOT EXISTS events (
    participant  TEXT NOT NULL REFERENCES participants(participant),
    task         TEXT,
    seq          INTEGER NOT NULL,
    t            REAL NOT NULL,
    kind         TEXT NOT NULL,
    payload      TEXT NOT NULL,
    PRIMARY KEY (participant, seq)
);
CREATE INDEX IF NOT EXISTS events_task ON events(participant, task);
"""


class StudyError(ValueError):
    """A study file or session store that cannot be used; the message names the file and key."""


# ====================================================================== the study file


@dataclass(frozen=True)
class Study:
    path: Path
    title: str
    tasks: tuple[str, ...]
    order: str = "fixed"
    seed: int = 0
    noise: float = 0.0
    round_limit: int = 10
    max_sets_per_round: int = MAX_SETS
    time_limit_minutes: float | None = None
    show_scores: str = "end"

    def settings(self) -> dict:
        """Everything but the path, as JSON (never a ground truth: tasks are ids)."""
        return {"title": self.title, "tasks": list(self.tasks), "order": self.order, "seed": self.seed,
                "noise": self.noise, "round_limit": self.round_limit,
                "max_sets_per_round": self.max_sets_per_round, "time_limit_minutes": self.time_limit_minutes,
                "show_scores": self.show_scores}

    @property
    def hash(self) -> str:
        """Digest of what fixes a participant's work (not the title): a study changed under a
        running participant is detected when they resume."""
        s = self.settings()
        s.pop("title")
        return hashlib.sha256(json.dumps(s, sort_keys=True).encode()).hexdigest()[:16]

    def task_order(self, participant: str) -> list[str]:
        """The participant's task order: the file's order, or a shuffle seeded by the study seed
        and the participant id (the same every time, different between participants)."""
        order = list(self.tasks)
        if self.order == "shuffled":
            digest = hashlib.sha256(f"{self.seed}\x00{participant}".encode()).digest()
            random.Random(int.from_bytes(digest[:8], "big")).shuffle(order)
        return order

    @property
    def time_limit_seconds(self) -> float | None:
        return None if self.time_limit_minutes is None else float(self.time_limit_minutes) * 60.0

    def default_store_path(self) -> Path:
        """``<study file>.sessions.sqlite3`` beside the study when that folder is writable,
        otherwise ``<data dir>/studies/<name>-<digest>.sessions.sqlite3``."""
        beside = self.path.with_name(self.path.name + ".sessions.sqlite3")
        if beside.exists() or _writable(beside.parent):
            return beside
        digest = hashlib.sha256(str(self.path.resolve()).encode()).hexdigest()[:8]
        folder = paths.data_dir() / "studies"
        folder.mkdir(parents=True, exist_ok=True)
        return folder / f"{self.path.stem}-{digest}.sessions.sqlite3"


def _writable(folder: Path) -> bool:
    import os

    return folder.is_dir() and os.access(folder, os.W_OK)


def load_study(path: str | Path) -> Study:
    """Read and check a study file (``.json`` is JSON, anything else TOML). Raises StudyError
    naming the file and the offending key."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise StudyError(f"{path}: cannot read the study file: {exc.strerror or exc}") from None
    if len(raw) > MAX_STUDY_BYTES:
        raise StudyError(f"{path}: the study file is {len(raw):,} bytes; a study file is at most "
                         f"{MAX_STUDY_BYTES:,} (is this the right file?)")
    try:
        text = raw.decode("utf-8-sig")  # Notepad writes a byte-order mark
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise StudyError(f"{path}, line {line}: byte 0x{raw[exc.start]:02x} is not UTF-8 text; "
                         "save the study file as UTF-8") from None
    kind = "JSON" if path.suffix.lower() == ".json" else "TOML"
    try:
        if kind == "JSON":
            data = json.loads(text, object_pairs_hook=_no_repeated_keys)
        else:
            data = tomllib.loads(text)
    except RecursionError:
        raise StudyError(f"{path}: not valid {kind}: nested too deeply") from None
    except _RepeatedKey as exc:
        raise StudyError(f"{path}: `{exc}` is given twice; give each setting once") from None
    except ValueError as exc:  # json.JSONDecodeError and tomllib.TOMLDecodeError name line and column
        raise StudyError(f"{path}: not valid {kind}: {exc}") from None
    return study_from_dict(data, path)


#: A study file is a few lines; anything larger is the wrong file.
MAX_STUDY_BYTES = 1 << 20
MAX_TITLE_CHARS = 200


class _RepeatedKey(Exception):
    pass


def _no_repeated_keys(pairs: list[tuple[str, Any]]) -> dict:
    """A JSON object whose keys are unique (TOML refuses repeated keys itself; JSON would
    silently keep the last one)."""
    out: dict = {}
    for key, value in pairs:
        if key in out:
            raise _RepeatedKey(key)
        out[key] = value
    return out


def study_from_dict(data: Any, path: str | Path = "<study>") -> Study:
    path = Path(path)

    def bad(key: str, why: str) -> StudyError:
        return StudyError(f"{path}: `{key}` {why}")

    if not isinstance(data, dict):
        raise StudyError(f"{path}: the study must be a table / object of settings")
    unknown = sorted(set(data) - set(KEYS))
    if unknown:
        raise bad(unknown[0], f"is not a study setting; the settings are {', '.join(KEYS)}")
    title = data.get("title")
    if not isinstance(title, str) or not title.strip():
        raise bad("title", "is missing or empty: give the study a title")
    if len(title) > MAX_TITLE_CHARS:
        raise bad("title", f"is {len(title):,} characters long; at most {MAX_TITLE_CHARS} (it is shown in the window)")
    if any(not ch.isprintable() for ch in title):
        raise bad("title", "contains a control character (a line break, tab or NUL); write it on one line")
    tasks = data.get("tasks")
    if not isinstance(tasks, list) or not tasks:
        raise bad("tasks", "must be a non-empty list of lab task ids")
    ids: list[str] = []
    for i, entry in enumerate(tasks):
        if not isinstance(entry, str):
            raise bad(f"tasks[{i}]", f"must be a task id (text), not {entry!r}")
        try:
            task = get_task(entry)
        except KeyError as exc:
            raise bad(f"tasks[{i}]", f"= {entry!r}: {str(exc).strip(chr(34))}") from None
        if task.id in ids:
            raise bad(f"tasks[{i}]", f"= {entry!r} is listed twice")
        ids.append(task.id)
    order = data.get("order", "fixed")
    if order not in ORDERS:
        raise bad("order", f"must be one of {', '.join(map(repr, ORDERS))}, not {order!r}")
    seed = data.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise bad("seed", f"must be a whole number, not {seed!r}")
    noise = data.get("noise", 0.0)
    if isinstance(noise, bool) or not isinstance(noise, (int, float)) or float(noise) not in NOISE_LEVELS:
        raise bad("noise", f"must be one of {', '.join(f'{v:g}' for v in NOISE_LEVELS)}, not {noise!r}")
    round_limit = _whole(data.get("round_limit", 10), 1, 1000, bad, "round_limit")
    max_sets = _whole(data.get("max_sets_per_round", MAX_SETS), 1, MAX_SETS, bad, "max_sets_per_round")
    limit = data.get("time_limit_minutes")
    if limit is not None:
        if isinstance(limit, bool) or not isinstance(limit, (int, float)) or not math.isfinite(limit) or limit <= 0:
            raise bad("time_limit_minutes", f"must be a positive number of minutes, not {limit!r}")
        limit = float(limit)
    show = data.get("show_scores", "end")
    if show not in SHOW_SCORES:
        raise bad("show_scores", f"must be one of {', '.join(map(repr, SHOW_SCORES))}, not {show!r}")
    return Study(path=path, title=title.strip(), tasks=tuple(ids), order=order, seed=seed, noise=float(noise),
                 round_limit=round_limit, max_sets_per_round=max_sets, time_limit_minutes=limit, show_scores=show)


def _whole(value: Any, low: int, high: int, bad, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise bad(key, f"must be a whole number from {low} to {high}, not {value!r}")
    return value


# ====================================================================== JSON helpers


def _clean(value: Any) -> Any:
    """JSON-safe copy: secrets dropped, non-finite floats as "nan" / "inf" / "-inf", arrays as lists."""
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items() if str(k) not in SECRET_KEYS}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        return _clean(value.tolist())
    if isinstance(value, bool) or value is None or isinstance(value, (str, int)):
        return value
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return value
    try:
        return _clean(float(value))
    except (TypeError, ValueError):
        return str(value)


def _restore(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _restore(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_restore(v) for v in value]
    if value in ("nan", "inf", "-inf"):
        return float(value)
    return value


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


# ====================================================================== the session store


class SessionStore:
    """One connection to a study's session file (one thread). WAL, ``synchronous=FULL``; every
    write is its own committed transaction."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.conn = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StudyError(f"{self.path}: cannot create the folder of the session store: {exc.strerror or exc}; "
                             "choose a study folder that can be written") from None
        try:
            self.conn = sqlite3.connect(str(self.path), timeout=BUSY_TIMEOUT, isolation_level=None)
            self.conn.row_factory = sqlite3.Row
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=FULL")
            self.conn.execute("PRAGMA foreign_keys=ON")
            row = None
            try:
                row = self.conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
            except sqlite3.OperationalError:
                pass
            if row is not None and int(row[0]) > SCHEMA_VERSION:
                raise StudyError(f"{self.path}: written by a newer Kepler Lab (session schema {row[0]}); "
                                 f"this one reads schema {SCHEMA_VERSION}")
            self.conn.executescript(_SCHEMA)
            self.conn.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
            self.conn.execute("INSERT OR IGNORE INTO meta VALUES ('format', ?)", (FORMAT,))
        except sqlite3.DatabaseError as exc:
            self.close()
            raise self._fault("open", exc) from None
        except BaseException:
            self.close()
            raise

    def _fault(self, doing: str, exc: sqlite3.DatabaseError) -> StudyError:
        """A StudyError naming the file, the fault and what to do (engine.store's wording)."""
        return StudyError(str(store_fault(doing, self.path, exc, BUSY_TIMEOUT, what="the study's session store")))

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -------------------------------------------------------------- participants

    def participant(self, participant: str) -> dict | None:
        try:
            row = self.conn.execute("SELECT * FROM participants WHERE participant=?", (participant,)).fetchone()
        except sqlite3.DatabaseError as exc:  # a damaged page is found when a query reaches it
            raise self._fault("read", exc) from None
        if row is None:
            return None
        out = dict(row)
        out["task_order"] = json.loads(out["task_order"])
        return out

    def participants(self) -> list[dict]:
        rows = self.conn.execute("SELECT participant FROM participants ORDER BY started, participant").fetchall()
        return [self.participant(r[0]) for r in rows]

    def add_participant(self, participant: str, study_hash: str, order: list[str], started: float) -> None:
        try:
            self.conn.execute("INSERT INTO participants VALUES (?, ?, ?, ?, 0, NULL)",
                              (participant, study_hash, json.dumps(order), started))
        except sqlite3.DatabaseError as exc:
            raise self._fault("write to", exc) from None

    def set_position(self, participant: str, index: int, finished: float | None) -> None:
        try:
            self.conn.execute("UPDATE participants SET current_task=?, finished=? WHERE participant=?",
                              (index, finished, participant))
        except sqlite3.DatabaseError as exc:
            raise self._fault("write to", exc) from None

    # -------------------------------------------------------------- events

    def append(self, participant: str, task: str | None, kind: str, t: float, payload: dict) -> int:
        text = json.dumps(_clean(payload), allow_nan=False, sort_keys=True)
        try:
            self.conn.execute("BEGIN IMMEDIATE")
        except sqlite3.DatabaseError as exc:
            raise self._fault("write to", exc) from None
        try:
            seq = self.conn.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM events WHERE participant=?",
                                    (participant,)).fetchone()[0]
            self.conn.execute("INSERT INTO events VALUES (?, ?, ?, ?, ?, ?)",
                              (participant, task, seq, float(t), str(kind), text))
            self.conn.execute("COMMIT")
        except BaseException as exc:
            if self.conn.in_transaction:  # a failed COMMIT (full disk) may have ended it already
                self.conn.execute("ROLLBACK")
            if isinstance(exc, sqlite3.DatabaseError):
                raise self._fault("write to", exc) from None
            raise
        return seq

    def events(self, participant: str | None = None, task: str | None = None) -> list[dict]:
        sql, args = "SELECT * FROM events", []
        where = []
        if participant is not None:
            where.append("participant=?")
            args.append(participant)
        if task is not None:
            where.append("task=?")
            args.append(task)
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY participant, seq"
        out = []
        try:
            rows = self.conn.execute(sql, args).fetchall()
        except sqlite3.DatabaseError as exc:
            raise self._fault("read", exc) from None
        for row in rows:
            out.append({"participant": row["participant"], "task": row["task"], "seq": row["seq"], "t": row["t"],
                        "kind": row["kind"], "payload": _restore(json.loads(row["payload"]))})
        return out


def check_participant(participant: str) -> str:
    text = (participant or "").strip()
    if not PARTICIPANT_RE.match(text):
        raise StudyError(f"participant id {participant!r} is not valid: use 1–64 letters, digits, "
                         "'_', '-', '.' or '@', starting with a letter or digit")
    return text


class StudySession:
    """One participant's progress through a study, backed by the session store."""

    def __init__(self, study: Study, participant: str, store: SessionStore, row: dict, resumed: bool):
        self.study = study
        self.participant = participant
        self.store = store
        # Events read back per task, kept until the next write: the study bar asks for time
        # left every second and rounds after every event, and need not re-read the store.
        self._read: dict[str | None, list[dict]] = {}
        self.order: list[str] = list(row["task_order"])
        self.index: int = int(row["current_task"])
        self.finished_at: float | None = row["finished"]
        self.resumed = resumed
        self.interrupted = False  # resumed after the program died (no "Leave study" before)

    @classmethod
    def open(cls, study: Study, participant: str, store_path: str | Path | None = None,
             now: float | None = None) -> "StudySession":
        """Start a participant, or resume one (same order, same task). StudyError for a bad id
        or a participant who started a different version of the study."""
        participant = check_participant(participant)
        store = SessionStore(store_path or study.default_store_path())
        now = time.time() if now is None else now
        try:
            row = store.participant(participant)
            if row is None:
                order = study.task_order(participant)
                store.add_participant(participant, study.hash, order, now)
                row = store.participant(participant)
                session = cls(study, participant, store, row, resumed=False)
                session.record({"kind": "study_start", "t": now, "task": None, "order": order,
                                "study": study.settings()})
                session.record({"kind": "task_start", "t": now, "task": session.current_task, "index": 0})
                return session
            if row["study_hash"] != study.hash:
                raise StudyError(f"{store.path}: participant {participant!r} started a different version of this "
                                 f"study (settings digest {row['study_hash']}, the file now gives {study.hash}); "
                                 "use a new participant id or restore the study file")
            session = cls(study, participant, store, row, resumed=True)
            last = store.events(participant)[-1:]
            session.interrupted = bool(last) and last[0]["kind"] not in ORDERLY_ENDS
            session.record({"kind": "study_resume", "t": now, "task": session.current_task, "index": session.index,
                            "after": "interrupted" if session.interrupted else "leave"})
            return session
        except BaseException:
            store.close()
            raise

    def close(self) -> None:
        self.store.close()

    def leave(self, now: float | None = None) -> None:
        """The participant stops for now in order ("Leave study"): recorded, then closed. A
        sitting that ends without this (a crash, kill -9) is marked interrupted on resume."""
        if not self.finished:
            self.record({"kind": "study_leave", "t": time.time() if now is None else now,
                         "task": self.current_task, "index": self.index})
        self.close()

    # -------------------------------------------------------------- position

    @property
    def n_tasks(self) -> int:
        return len(self.order)

    @property
    def finished(self) -> bool:
        return self.finished_at is not None

    @property
    def current_task(self) -> str | None:
        return None if self.finished or self.index >= len(self.order) else self.order[self.index]

    def record(self, event: dict) -> int:
        """Store one event (a lab panel ``event`` dict: kind, t, task, ...) at once; its seq."""
        event = dict(event)
        kind = str(event.pop("kind", "event"))
        t = _number(event.pop("t", None))
        t = time.time() if t is None else t
        task = event.pop("task", None)
        if task is None and kind not in ("study_start", "study_finish"):
            task = self.current_task
        self._read.clear()
        return self.store.append(self.participant, task, kind, t, event)

    def next_task(self, reason: str = "next", now: float | None = None) -> str | None:
        """End the current task and start the next; the new task id, or None when finished."""
        if self.finished:
            return None
        now = time.time() if now is None else now
        self.record({"kind": "task_end", "t": now, "task": self.current_task, "index": self.index, "reason": reason})
        self.index += 1
        if self.index >= len(self.order):
            self.finished_at = now
            self.store.set_position(self.participant, self.index, now)
            self.record({"kind": "study_finish", "t": now, "task": None})
            return None
        self.store.set_position(self.participant, self.index, None)
        self.record({"kind": "task_start", "t": now, "task": self.current_task, "index": self.index})
        return self.current_task

    # -------------------------------------------------------------- reading back

    def events(self, task: str | None = None) -> list[dict]:
        if task not in self._read:
            self._read[task] = self.store.events(self.participant, task)
        return list(self._read[task])

    def experiments(self, task: str | None = None) -> list[dict]:
        """The experiments in the task's table, rebuilt from the events (undo and reset
        applied): dicts with inputs, result, noise, round, t."""
        return table_from_events(self.events(task or self.current_task))

    def rounds_used(self, task: str | None = None) -> int:
        return task_summary(self.events(task or self.current_task))["rounds"]

    def time_on_task(self, task: str | None = None, now: float | None = None) -> float:
        task = task or self.current_task
        open_now = (time.time() if now is None else now) if task == self.current_task else None
        return active_seconds(self.events(task), open_now)

    def time_left(self, now: float | None = None) -> float | None:
        limit = self.study.time_limit_seconds
        if limit is None or self.current_task is None:
            return None
        return max(0.0, limit - self.time_on_task(now=now))

    def last_submission(self, task: str | None = None) -> dict | None:
        return task_summary(self.events(task or self.current_task))["submission"]


# ====================================================================== event analysis


def table_from_events(events: Iterable[dict]) -> list[dict]:
    table: list[dict] = []
    for e in events:
        kind, p = e["kind"], e["payload"]
        if kind == "experiment" and p.get("ok"):
            table.append({"inputs": p.get("inputs"), "result": p.get("result"), "noise": p.get("noise"),
                          "round": p.get("round"), "t": e["t"]})
        elif kind == "undo" and table:
            table.pop()
        elif kind == "reset":
            table.clear()
    return table


def active_seconds(events: list[dict], now: float | None = None) -> float:
    """Time on a task: from each (re)start to the last event before the next resume, so the time
    the program was not running is not counted; ``now`` extends the last stretch (an open task)."""
    total = 0.0
    start = last = None
    for e in events:
        if e["kind"] in ("task_start", "study_resume") or start is None:
            if start is not None:
                total += last - start
            start = last = e["t"]
        else:
            last = e["t"]
        if e["kind"] == "task_end":
            total += last - start
            start = last = None
    if start is not None:
        total += (max(last, now) if now is not None else last) - start
    return max(0.0, total)


def task_summary(events: list[dict]) -> dict:
    experiments = [e for e in events if e["kind"] == "experiment" and e["payload"].get("ok")]
    # A reset gives the panel's round counter back; the study still counts every round measured.
    rounds = last_round = 0
    for e in events:
        if e["kind"] == "experiment" and e["payload"].get("ok"):
            last_round = max(last_round, int(e["payload"].get("round") or 0))
        elif e["kind"] == "reset":
            rounds += last_round
            last_round = 0
    rounds += last_round
    submits = [e for e in events if e["kind"] == "submit"]
    final = submits[-1] if submits else None
    submission = None
    if final is not None:
        p = final["payload"]
        submission = {"law": p.get("law"), "rmsle": _number(p.get("rmsle")), "equivalent": p.get("equivalent"),
                      "error": p.get("error"), "t": final["t"]}
    return {"experiments": len(experiments), "rounds": rounds, "submissions": len(submits),
            "submission": submission, "seconds": active_seconds(events)}


# ====================================================================== instructor views


def open_store(study: Study, store_path: str | Path | None = None) -> SessionStore:
    return SessionStore(store_path or study.default_store_path())


def aggregate(study: Study, store_path: str | Path | None = None) -> dict:
    """Per task and participant: accuracy (1/0 from the symbolic verdict of the final
    submission, None when undecided or nothing submitted), RMSLE, experiments, rounds, seconds
    on task; and per task the means over participants (``None`` where nothing to average)."""
    with open_store(study, store_path) as store:
        people = store.participants()
        rows = []
        for person in people:
            pid = person["participant"]
            events = store.events(pid)
            for task in person["task_order"]:
                mine = [e for e in events if e["task"] == task]
                if not mine:
                    continue
                s = task_summary(mine)
                sub = s["submission"] or {}
                eq = sub.get("equivalent")
                rows.append({"participant": pid, "task": task, "submitted": s["submissions"] > 0,
                             "accuracy": None if eq is None else (1.0 if eq else 0.0),
                             "equivalent": eq, "rmsle": sub.get("rmsle"), "experiments": s["experiments"],
                             "rounds": s["rounds"], "seconds": round(s["seconds"], 3),
                             "finished": any(e["kind"] == "task_end" for e in mine)})
    tasks = []
    for task in study.tasks:
        mine = [r for r in rows if r["task"] == task]

        def mean(key: str, mine=mine) -> float | None:
            values = [r[key] for r in mine if r[key] is not None]
            return sum(values) / len(values) if values else None

        tasks.append({"task": task, "participants": len(mine), "submitted": sum(r["submitted"] for r in mine),
                      "accuracy": mean("accuracy"), "rmsle": mean("rmsle"), "experiments": mean("experiments"),
                      "rounds": mean("rounds"), "seconds": mean("seconds")})
    return {"study": study.title, "study_hash": study.hash, "participants": [p["participant"] for p in people],
            "rows": rows, "tasks": tasks}


CSV_COLUMNS = ("participant", "task", "seq", "t", "kind", "ok", "round", "noise", "inputs", "results", "hypothesis",
               "constants", "rmsle", "equivalent", "error", "payload")


def event_rows(events: Iterable[dict]) -> list[dict]:
    """Events flattened for CSV (JSON text in the nested columns)."""
    out = []
    for e in events:
        p = e["payload"]
        hyp = p.get("text") if e["kind"] in ("hypothesis", "fit_start") else None
        if e["kind"] == "fit":
            hyp = p.get("law") or p.get("hypothesis") or p.get("text")
        if e["kind"] in ("submit", "submit_start"):
            hyp = p.get("law")
        results = p.get("result") if "result" in p else p.get("results")
        row = {"participant": e["participant"], "task": e["task"] or "", "seq": e["seq"], "t": f"{e['t']:.3f}",
               "kind": e["kind"], "ok": _cell(p.get("ok")), "round": _cell(p.get("round")),
               "noise": _cell(p.get("noise")), "inputs": _json_cell(p.get("inputs")),
               "results": _json_cell(results), "hypothesis": hyp or "", "constants": _json_cell(p.get("constants")),
               "rmsle": _cell(p.get("rmsle")), "equivalent": _cell(p.get("equivalent")),
               "error": p.get("error") or "", "payload": json.dumps(_clean(p), sort_keys=True)}
        out.append(row)
    return out


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _json_cell(value: Any) -> str:
    return "" if value is None else json.dumps(_clean(value), sort_keys=True)


def _selected(store: SessionStore, participant: str | None) -> list[dict]:
    if participant is None:
        return store.participants()
    row = store.participant(participant)
    if row is None:
        raise StudyError(f"{store.path}: no participant {participant!r}")
    return [row]


def export_csv(study: Study, path: str | Path, participant: str | None = None,
               store_path: str | Path | None = None) -> int:
    """One row per event of one participant (or all); the number of rows written."""
    with open_store(study, store_path) as store:
        people = _selected(store, participant)
        events = [e for p in people for e in store.events(p["participant"])]
    rows = event_rows(events)

    def write(fh):
        w = csv.DictWriter(fh, fieldnames=CSV_COLUMNS)
        w.writeheader()
        w.writerows(rows)

    write_atomically(path, write)
    return len(rows)


def export_data(study: Study, participant: str | None = None, store_path: str | Path | None = None) -> dict:
    with open_store(study, store_path) as store:
        people = _selected(store, participant)
        participants = [{"participant": p["participant"], "study_hash": p["study_hash"],
                         "task_order": p["task_order"], "started": p["started"], "current_task": p["current_task"],
                         "finished": p["finished"], "events": store.events(p["participant"])} for p in people]
    agg = aggregate(study, store_path)
    if participant is not None:
        agg["rows"] = [r for r in agg["rows"] if r["participant"] == participant]
    return _clean({"format": EXPORT_FORMAT, "version": 1, "exported": time.time(), "study": study.settings(),
                   "study_file": str(study.path), "study_hash": study.hash, "participants": participants,
                   "aggregate": agg})


def export_json(study: Study, path: str | Path, participant: str | None = None,
                store_path: str | Path | None = None) -> dict:
    """Everything (settings, every participant's events, the aggregate) as one JSON file."""
    data = export_data(study, participant, store_path)
    text = json.dumps(data, indent=1, allow_nan=False)
    write_atomically(path, lambda fh: fh.write(text))
    return data


def aggregate_csv(agg: dict) -> str:
    """The aggregate's per-participant rows and per-task means as CSV text."""
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["participant", "task", "accuracy", "rmsle", "experiments", "rounds", "seconds", "submitted"])
    for r in agg["rows"]:
        w.writerow([r["participant"], r["task"], _cell(r["accuracy"]), _cell(r["rmsle"]), r["experiments"],
                    r["rounds"], r["seconds"], _cell(r["submitted"])])
    for t in agg["tasks"]:
        w.writerow(["(mean)", t["task"], _cell(t["accuracy"]), _cell(t["rmsle"]), _cell(t["experiments"]),
                    _cell(t["rounds"]), _cell(t["seconds"]), t["submitted"]])
    return buf.getvalue()


__all__ = ["Study", "StudyError", "StudySession", "SessionStore", "load_study", "study_from_dict", "aggregate",
           "aggregate_csv", "export_csv", "export_json", "export_data", "event_rows", "table_from_events",
           "active_seconds", "task_summary", "check_participant", "ORDERS", "SHOW_SCORES", "STUDY_KINDS"]
