"""Storage faults (issue 10): a read-only or full disk, a locked or damaged database give a clear
error that names the file and says what to do; no earlier run is lost; a damaged file is never
written, moved or deleted unless the user asks (then it is renamed, never deleted); the store is
copied before any schema upgrade (docs/guarantees.md, "Storage faults").

How each fault is made, so that the tests also hold when they run as root (CI containers):

* read-only file or folder: ``chmod``, with the scenario in a subprocess; as root that
  subprocess drops CAP_DAC_OVERRIDE from its capability bounding set first (``prctl``), so the
  kernel refuses the write exactly as it does for a user without permission. The window's
  read-only case opens the store with SQLite's ``mode=ro`` (what SQLite does by itself when the
  OS refuses to open the file for writing);
* full disk: ``PRAGMA max_page_count`` caps the database, and SQLite answers SQLITE_FULL as on a
  full disk; a full disk for plain files is RLIMIT_FSIZE in a subprocess (EFBIG);
* locked: another process holds a write transaction (``BEGIN EXCLUSIVE``), or the whole file
  (``locking_mode=EXCLUSIVE``), while the store is used; the busy timeout is shortened;
* damaged: bytes overwritten or cut off in the file itself.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from engine import methods as m
from engine.lab.study import SessionStore, StudyError, StudySession, study_from_dict
from engine.runner import RunStarted, execute
from engine.store import RunStore, StoreError
from engine.store import db as store_db
from engine.store.db import set_aside

REPO = Path(__file__).resolve().parents[2]
LINUX = sys.platform.startswith("linux")


# ------------------------------------------------------------------------------ helpers


def fill(db: Path, runs: int = 3, events: int = 4) -> list[str]:
    """A store with finished runs, each with events and a Pareto front."""
    ids = []
    with RunStore(db) as store:
        for i in range(runs):
            run_id = store.create_run(f"suite/T{i}", "gp", {"seed": i}, i)
            for k in range(events):
                store.add_event(run_id, "progress", {"iteration": k + 1, "best_loss": 1.0 / (k + 1)})
            store.add_pareto(run_id, events, [{"expression": f"x + {i}", "complexity": 3, "loss": 0.1}])
            store.finish_run(run_id, "finished", seconds=1.0, expression=f"x + {i}", complexity=3)
            ids.append(run_id)
    return ids


def rows(db: Path) -> dict[str, list]:
    """Every row of every table and the schema, read without writing (SQLite's ``mode=ro``)."""
    conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")]
        out = {t: sorted(map(repr, conn.execute(f"SELECT * FROM {t}"))) for t in tables}
        out["<schema>"] = sorted(map(repr, conn.execute("SELECT type, name, sql FROM sqlite_master")))
        return out
    finally:
        conn.close()


def assert_clear(exc: BaseException, path: Path, kind: str, *phrases: str) -> None:
    """A message a user can act on: the file, then what happened and what to do; no newline (a
    failed run shows the first line)."""
    text = str(exc)
    assert str(path) in text, text
    assert "\n" not in text and "Traceback" not in text, text
    for phrase in phrases:
        assert phrase in text, text
    if isinstance(exc, StoreError):
        assert exc.kind == kind, (exc.kind, text)


def capped_connections(monkeypatch, extra_pages: int = 0) -> None:
    """Every store connection opened from now on finds the disk full once the file has grown by
    ``extra_pages`` pages (PRAGMA max_page_count; SQLite then answers SQLITE_FULL)."""
    real = store_db._connect

    def connect(target, timeout, uri=False):
        conn = real(target, timeout, uri)
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count={max(pages, 1) + extra_pages}")
        return conn

    monkeypatch.setattr(store_db, "_connect", connect)


def brim(db: Path) -> int:
    """Fill the free room left in the pages of ``runs`` with small finished runs, so that the
    next run needs a new page; returns how many were added. With :func:`capped_connections`
    starting a run then meets a full disk at once."""
    conn = sqlite3.connect(db, isolation_level=None)
    cap(conn)
    added = 0
    try:
        while True:
            conn.execute("INSERT INTO runs(id, task_id, method, config, status, started_at) "
                         "VALUES (?, 't', 'gp', '{}', 'finished', 0)", (f"filler{added:04d}",))
            added += 1
    except sqlite3.OperationalError as exc:
        assert "full" in str(exc)
    finally:
        conn.close()
    return added


def cap(conn: sqlite3.Connection, extra_pages: int = 0) -> None:
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count={pages + extra_pages}")


def _without_dac_override() -> None:  # pragma: no cover - runs in the child before exec
    """Root loses the right to ignore file permissions (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH)
    for this process and what it runs, so chmod bites as it does for any user."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    for cap_number in (1, 2):
        if libc.prctl(24, cap_number, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
            os._exit(97)


def run_unprivileged(code: str, *args: str) -> dict:
    """Run ``code`` (which prints one JSON line) where file permissions are enforced."""
    preexec = _without_dac_override if os.geteuid() == 0 else None
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args], cwd=REPO, capture_output=True,
                          text=True, timeout=60, preexec_fn=preexec)
    if done.returncode == 97:
        pytest.skip("running as root without CAP_SETPCAP: cannot drop CAP_DAC_OVERRIDE, so chmod cannot "
                    "make a file read-only here")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


READ_ONLY_SCENARIO = """
    import json, sys
    from engine.store import RunStore, StoreError
    out = {}
    try:
        store = RunStore(sys.argv[1])
    except StoreError as exc:
        out.update(open_error=str(exc), open_kind=exc.kind)
    else:
        out.update(read_only=store.read_only, runs=sorted(r.id for r in store.list_runs()),
                   events=len(store.events(sys.argv[2])) if len(sys.argv) > 2 else None)
        try:
            store.create_run("suite/new", "gp", {}, 0)
            out["wrote"] = True
        except StoreError as exc:
            out.update(write_error=str(exc), write_kind=exc.kind)
        store.close()
    print(json.dumps(out))
"""


# ------------------------------------------------------------------------------ read-only


@pytest.mark.skipif(not LINUX, reason="file permissions and capabilities as on Linux")
@pytest.mark.parametrize("what", ["file", "folder"])
def test_a_store_that_cannot_be_written_shows_every_earlier_run_and_refuses_new_ones(tmp_path, what):
    folder = tmp_path / "data"
    folder.mkdir()
    db = folder / "runs.sqlite3"
    ids = fill(db)
    before = db.read_bytes()
    os.chmod(db if what == "file" else folder, 0o444 if what == "file" else 0o555)
    try:
        out = run_unprivileged(READ_ONLY_SCENARIO, str(db), ids[0])
    finally:
        os.chmod(db, 0o644)
        os.chmod(folder, 0o755)
    assert "open_error" not in out, out
    assert out["runs"] == sorted(ids) and out["events"] == 4  # every earlier run can be viewed
    assert str(db) in out["read_only"] and "cannot be written" in out["read_only"]
    assert out["write_kind"] == "read-only" and str(db) in out["write_error"]
    assert "Make them writable" in out["write_error"]
    assert db.read_bytes() == before


@pytest.mark.skipif(not LINUX, reason="file permissions and capabilities as on Linux")
def test_a_new_store_in_a_folder_that_cannot_be_written_says_so(tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    os.chmod(folder, 0o555)
    try:
        out = run_unprivileged(READ_ONLY_SCENARIO, str(folder / "runs.sqlite3"))
    finally:
        os.chmod(folder, 0o755)
    assert out["open_kind"] == "cantopen", out
    assert str(folder / "runs.sqlite3") in out["open_error"] and "can be written" in out["open_error"]
    assert list(folder.iterdir()) == []


def test_a_data_folder_that_cannot_be_made_or_a_folder_in_place_of_the_file(tmp_path):
    (tmp_path / "data").write_text("a file where the data folder should be")
    with pytest.raises(StoreError) as info:
        RunStore(tmp_path / "data" / "runs.sqlite3")
    assert_clear(info.value, tmp_path / "data", "cantopen", "KEPLERLAB_HOME")
    (tmp_path / "store").mkdir()
    with pytest.raises(StoreError) as info:
        RunStore(tmp_path / "store")
    assert_clear(info.value, tmp_path / "store", "cantopen", "not a folder")


def test_a_store_sqlite_opens_for_reading_only_is_shown_read_only(tmp_path, monkeypatch):
    """What SQLite does by itself for a file the OS will not open for writing (mode=ro)."""
    db = tmp_path / "runs.sqlite3"
    ids = fill(db)
    real = store_db._connect
    monkeypatch.setattr(store_db, "_connect",
                        lambda target, timeout, uri=False: real(f"{Path(target).resolve().as_uri()}?mode=ro",
                                                                timeout, True))
    with RunStore(db) as store:
        assert store.read_only and str(db) in store.read_only
        assert sorted(r.id for r in store.list_runs()) == sorted(ids)
        with pytest.raises(StoreError) as info:
            store.create_run("suite/new", "gp", {}, 0)
    assert_clear(info.value, db, "read-only", "cannot be written")


# ------------------------------------------------------------------------------ full disk


def test_a_full_disk_while_recording_keeps_every_event_before_it(tmp_path):
    db = tmp_path / "runs.sqlite3"
    earlier = fill(db)
    store = RunStore(db)
    run_id = store.create_run("suite/full", "gp", {}, 0)
    cap(store.conn)
    written = 0
    with pytest.raises(StoreError) as info:
        for k in range(10_000):
            store.add_event(run_id, "log", {"message": f"event {k} " + "x" * 400})
            written += 1
    assert_clear(info.value, db, "full", "disk is full", "Free some space", "everything recorded before")
    assert written > 0
    cap(store.conn, 1000)  # space is back: the same store goes on
    store.add_event(run_id, "log", {"message": "after"})
    store.close()
    with RunStore(db) as store:
        messages = [e["message"] for e in store.events(run_id)]
        assert messages[:written] == [f"event {k} " + "x" * 400 for k in range(written)]
        assert messages[-1] == "after"
        for run in earlier:
            assert store.get_run(run).status == "finished" and len(store.events(run)) == 4


def test_a_full_disk_stops_a_run_with_a_readable_reason_and_keeps_its_events(tmp_path):
    """A GP run meets a full disk after it started: the run stops (no hang, no crash) with a
    message a user can act on; what it recorded before is in the store."""
    db = tmp_path / "runs.sqlite3"
    fill(db, runs=1)
    store = RunStore(db)
    context = m.RunContext()
    gen = execute(_line_task(), "gp", {"seconds": 20, "population_size": 100, "generations": 10_000,
                                       "threads": 1}, context, store)
    started = next(gen)
    assert isinstance(started, RunStarted)
    seen = 0
    t0 = time.monotonic()
    with pytest.raises(StoreError) as info:
        for event in gen:
            seen += 1
            if seen == 3:
                cap(store.conn)  # the disk fills up now
    assert time.monotonic() - t0 < 20  # it stopped at the fault, not at the end of its budget
    assert_clear(info.value, db, "full", "disk is full")
    store.close()
    with RunStore(db) as again:
        assert len(again.events(started.run_id)) >= 3  # the events before the fault are kept
        assert len(again.list_runs()) == 2
        # Ended as interrupted (a status fits in its page even on a full disk): resumable later.
        record = again.get_run(started.run_id)
        assert record.status == "interrupted" and "disk is full" in record.error


def test_a_full_disk_for_plain_files_leaves_the_old_file_and_no_temporary(tmp_path):
    """engine.atomic (projects, exports, caches, the session draft) on a disk that fills up."""
    if not hasattr(os, "fork"):
        pytest.skip("RLIMIT_FSIZE needs a POSIX system")
    target = tmp_path / "project.klab"
    target.write_bytes(b"the old project")
    code = """
        import resource, sys
        from engine.atomic import write_atomically
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, resource.RLIM_INFINITY))
        try:
            write_atomically(sys.argv[1], lambda fh: fh.write(b"n" * 100_000), binary=True)
        except OSError as exc:
            print("refused:", exc.strerror)
        else:
            print("written")
    """
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code), str(target)], cwd=REPO,
                          capture_output=True, text=True, timeout=60)
    assert done.stdout.startswith("refused: File too large"), (done.stdout, done.stderr)
    assert target.read_bytes() == b"the old project"
    assert [p.name for p in tmp_path.iterdir()] == ["project.klab"]


def test_a_full_disk_in_a_study_keeps_the_participant_s_events(tmp_path):
    study = _study(tmp_path)
    path = tmp_path / "s.sessions.sqlite3"
    session = StudySession.open(study, "p1", path)
    cap(session.store.conn)
    recorded = 0
    with pytest.raises(StudyError) as info:
        for k in range(10_000):
            session.record({"kind": "note", "t": 1000.0 + k, "text": "n" * 400})
            recorded += 1
    assert_clear(info.value, path, None, "disk is full", "study's session store")
    session.close()
    again = StudySession.open(study, "p1", path)
    try:
        notes = [e for e in again.events(again.current_task) if e["kind"] == "note"]
        assert len(notes) == recorded and again.resumed
    finally:
        again.close()


# ------------------------------------------------------------------------------ locked


LOCKER = """
    import sqlite3, sys
    conn = sqlite3.connect(sys.argv[1], isolation_level=None)
    if sys.argv[2] == "file":
        conn.execute("PRAGMA locking_mode=EXCLUSIVE")  # nobody else may even read
    conn.execute("BEGIN EXCLUSIVE")
    conn.execute("CREATE TABLE IF NOT EXISTS locker_was_here (x)")
    print("locked", flush=True)
    sys.stdin.readline()  # hold the lock until told
    conn.execute("ROLLBACK")
    conn.close()
"""


class Locker:
    """Another program that holds a lock on a database until :meth:`release`."""

    def __init__(self, db: Path, scope: str):
        self.proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(LOCKER), str(db), scope],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout.readline().strip() == "locked"

    def release(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.write("\n")
            self.proc.stdin.flush()
            self.proc.wait(timeout=30)


@pytest.fixture
def short_busy_timeout(monkeypatch):
    monkeypatch.setattr(store_db, "BUSY_TIMEOUT", 0.5)
    monkeypatch.setattr("engine.lab.study.BUSY_TIMEOUT", 0.5)


def test_a_locked_store_gives_a_clear_error_after_the_timeout_then_goes_on(tmp_path, short_busy_timeout):
    db = tmp_path / "runs.sqlite3"
    ids = fill(db)
    locker = Locker(db, "write")
    try:
        with RunStore(db) as store:
            assert sorted(r.id for r in store.list_runs()) == sorted(ids)  # readers are not blocked
            t0 = time.monotonic()
            with pytest.raises(StoreError) as info:
                store.create_run("suite/new", "gp", {}, 0)
            assert time.monotonic() - t0 < 20  # the busy timeout, not a hang
            assert_clear(info.value, db, "locked", "Another program", "nothing was lost")
            locker.release()
            run_id = store.create_run("suite/new", "gp", {}, 0)  # the lock is gone: work goes on
            store.add_event(run_id, "log", {"message": "after the lock"})
    finally:
        locker.release()
    with RunStore(db) as store:
        assert len(store.list_runs()) == len(ids) + 1


def test_a_store_locked_whole_by_another_program_cannot_be_opened_until_it_lets_go(tmp_path, short_busy_timeout):
    db = tmp_path / "runs.sqlite3"
    ids = fill(db)
    locker = Locker(db, "file")
    try:
        t0 = time.monotonic()
        with pytest.raises(StoreError) as info:
            RunStore(db)
        assert time.monotonic() - t0 < 20
        assert_clear(info.value, db, "locked", "Close that program")
        with pytest.raises(StudyError) as study_info:
            SessionStore(db)  # the study's store says the same
        assert_clear(study_info.value, db, None, "locked", "Close that program")
    finally:
        locker.release()
    with RunStore(db) as store:
        assert sorted(r.id for r in store.list_runs()) == sorted(ids)


def test_a_locked_study_store_keeps_the_participant_and_goes_on(tmp_path, short_busy_timeout):
    study = _study(tmp_path)
    path = tmp_path / "s.sessions.sqlite3"
    session = StudySession.open(study, "p1", path)
    try:
        session.record({"kind": "note", "t": 1.0, "text": "before"})
        locker = Locker(path, "write")
        try:
            with pytest.raises(StudyError) as info:
                session.record({"kind": "note", "t": 2.0, "text": "while locked"})
            assert_clear(info.value, path, None, "locked")
        finally:
            locker.release()
        session.record({"kind": "note", "t": 3.0, "text": "after"})
        texts = [e["payload"]["text"] for e in session.events(session.current_task) if e["kind"] == "note"]
        assert texts == ["before", "after"]
    finally:
        session.close()


# ------------------------------------------------------------------------------ damaged files


def _damage(db: Path, how: str) -> None:
    size = db.stat().st_size
    with open(db, "r+b") as fh:
        if how == "header":
            fh.write(b"\x00garbage" * 8)
        elif how == "truncated":
            fh.truncate(size // 2)
        elif how == "middle page":
            fh.seek((size // 4096 // 2) * 4096)
            fh.write(bytes(range(256)) * 16)
        elif how == "not sqlite":
            fh.truncate(0)
            fh.write(b"name,value\nthis is a CSV file, not a database\n" * 50)


@pytest.mark.parametrize("how", ["header", "truncated", "middle page", "not sqlite"])
def test_a_damaged_store_gives_a_clear_error_and_is_left_as_it_is(tmp_path, how):
    db = tmp_path / "runs.sqlite3"
    fill(db, runs=60, events=20)
    _damage(db, how)
    before = db.read_bytes()
    with pytest.raises(StoreError) as info:
        # A damaged page may only be met when a query reaches it: read everything.
        with RunStore(db) as store:
            for run in store.list_runs():
                store.events(run.id)
                store.last_front(run.id)
    assert_clear(info.value, db, "corrupt", "damaged", "left exactly as it is", "rename")
    assert db.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runs.sqlite3"]


def test_a_damaged_store_set_aside_keeps_every_byte_and_a_new_store_starts(tmp_path):
    db = tmp_path / "runs.sqlite3"
    fill(db)
    _damage(db, "header")
    before = db.read_bytes()
    kept = set_aside(db)
    assert kept.read_bytes() == before and kept.name.startswith("runs.sqlite3.damaged-")
    with RunStore(db) as store:
        assert store.list_runs() == []
        store.create_run("suite/new", "gp", {}, 0)
    assert set_aside(db) != kept and kept.read_bytes() == before  # a second one overwrites nothing


def test_a_garbage_write_ahead_log_is_set_aside_and_every_run_is_kept(tmp_path):
    db = tmp_path / "runs.sqlite3"
    ids = fill(db)
    wal = tmp_path / "runs.sqlite3-wal"
    garbage = b"\x13\x37 not a write-ahead log " * 400
    wal.write_bytes(garbage)
    with RunStore(db) as store:
        assert sorted(r.id for r in store.list_runs()) == sorted(ids)
        assert len(store.notices) == 1
        kept = [p for p in tmp_path.iterdir() if p.name.startswith("runs.sqlite3-wal.damaged-")]
        assert len(kept) == 1 and kept[0].read_bytes() == garbage
        assert str(kept[0]) in store.notices[0]
        store.create_run("suite/new", "gp", {}, 0)
    assert kept[0].read_bytes() == garbage


@pytest.mark.parametrize("how", ["header", "not sqlite"])
def test_a_damaged_study_store_gives_a_clear_error_and_is_left_as_it_is(tmp_path, how):
    study = _study(tmp_path)
    path = tmp_path / "s.sessions.sqlite3"
    StudySession.open(study, "p1", path).close()
    _damage(path, how)
    before = path.read_bytes()
    with pytest.raises(StudyError) as info:
        StudySession.open(study, "p1", path)
    assert_clear(info.value, path, None, "damaged", "left exactly as it is")
    assert path.read_bytes() == before


# ------------------------------------------------------------------------------ schema upgrades


def _old_schema(db: Path, version: int) -> None:
    """Turn a schema-3 store into a file as schema ``version`` wrote it."""
    drop = {1: "DROP TABLE llm_calls; DROP TABLE sweep_units; DROP TABLE sweeps;",
            2: "DROP TABLE sweep_units; DROP TABLE sweeps;"}[version]
    conn = sqlite3.connect(db)
    conn.executescript(drop + f"UPDATE meta SET value='{version}' WHERE key='schema_version';")
    conn.commit()
    conn.close()


@pytest.mark.parametrize("version", [1, 2])
def test_an_old_store_is_copied_whole_before_its_schema_is_upgraded(tmp_path, version):
    db = tmp_path / "runs.sqlite3"
    ids = fill(db)
    _old_schema(db, version)
    original = rows(db)
    with RunStore(db) as store:
        backup = store.migration_backup
        assert sorted(r.id for r in store.list_runs()) == sorted(ids)
    assert backup == tmp_path / f"runs.sqlite3.v{version}-backup"
    assert rows(backup) == original  # every row and the old schema, as they were
    upgraded = rows(db)
    for table, content in original.items():
        if table != "<schema>" and table != "meta":
            assert upgraded[table] == content


def test_an_earlier_backup_is_never_overwritten(tmp_path):
    db = tmp_path / "runs.sqlite3"
    fill(db)
    _old_schema(db, 2)
    earlier = tmp_path / "runs.sqlite3.v2-backup"
    earlier.write_bytes(b"the backup of another store")
    with RunStore(db) as store:
        backup = store.migration_backup
    assert earlier.read_bytes() == b"the backup of another store"
    assert backup != earlier and rows(backup)["meta"] == [repr(("schema_version", "2"))]


def test_a_failed_upgrade_leaves_the_store_as_it_was(tmp_path, monkeypatch):
    db = tmp_path / "runs.sqlite3"
    fill(db)
    _old_schema(db, 2)
    original = rows(db)
    # The upgrade breaks half-way: its second statement cannot run.
    monkeypatch.setitem(store_db._UPGRADES, 3, store_db._SCHEMA_V3 + "; CREATE TABLE runs (x)")
    with pytest.raises(StoreError) as info:
        RunStore(db)
    assert_clear(info.value, db, None, "keeps its schema 2 and all its runs", "v2-backup")
    assert rows(db) == original
    assert rows(tmp_path / "runs.sqlite3.v2-backup") == original


def test_an_upgrade_whose_backup_cannot_be_made_changes_nothing(tmp_path):
    db = tmp_path / "runs.sqlite3"
    fill(db)
    _old_schema(db, 1)
    original = rows(db)
    (tmp_path / "runs.sqlite3.v1-backup.partial").mkdir()  # the copy cannot be written
    with pytest.raises(StoreError) as info:
        RunStore(db)
    assert_clear(info.value, db, "cantopen", "cannot back up", "The store was not changed")
    assert rows(db) == original


# ------------------------------------------------------------------------------ the window


@pytest.fixture
def told(monkeypatch):
    """What the window's message boxes said; questions are answered No unless a test says."""
    from PySide6.QtWidgets import QMessageBox

    got = {"warning": [], "information": [], "question": [], "reply": QMessageBox.StandardButton.No}

    def tell(kind):
        return staticmethod(lambda _parent, _title, text, *_a, **_k: got[kind].append(text))

    monkeypatch.setattr(QMessageBox, "warning", tell("warning"))
    monkeypatch.setattr(QMessageBox, "information", tell("information"))
    monkeypatch.setattr(QMessageBox, "question", staticmethod(
        lambda _parent, _title, text, *_a, **_k: got["question"].append(text) or got["reply"]))
    return got


def _window(qtbot, home: Path):
    pytest.importorskip("pytestqt")
    from app.application import create_app
    from app.main_window import MainWindow

    create_app()
    win = MainWindow()
    qtbot.addWidget(win)
    win.show()
    qtbot.waitUntil(lambda: len(win.tasks) > 0, timeout=20000)
    return win


def _close(win) -> None:
    win.controller.shutdown()
    win.loader.wait_all()
    win.close()


def _start_gp(qtbot, win) -> None:
    """Pick a task and start a short GP run with the Start button, as a user does."""
    from PySide6.QtCore import Qt

    win.browser.select_task("llmsrbench/lsr-synth/chemistry/CKR1")
    qtbot.waitUntil(lambda: win.run_panel.start_button.isEnabled(), timeout=20000)
    win.run_panel.select_method("gp")
    win.run_panel.set_value("seconds", 3)
    qtbot.mouseClick(win.run_panel.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not win.controller.is_running() and win.run_panel.start_button.isEnabled(),
                    timeout=60000)


@pytest.mark.slow
def test_the_window_opens_on_a_damaged_store_says_so_and_can_set_it_aside(qtbot, isolated_home, told):
    db = isolated_home / "data" / "runs.sqlite3"
    db.parent.mkdir(parents=True)
    fill(db)
    _damage(db, "header")
    before = db.read_bytes()
    win = _window(qtbot, isolated_home)
    try:
        qtbot.waitUntil(lambda: bool(told["question"]), timeout=5000)
        assert str(db) in told["question"][0] and "damaged" in told["question"][0]
        assert win.store is None and db.read_bytes() == before  # answered No: nothing touched
        _start_gp(qtbot, win)  # a run without a store ends with the same message, no crash
        assert "damaged" in win.run_panel.status.text() and str(db) in win.run_panel.status.text()
        # Asked again (next start) and answered Yes: the file is renamed, a new store starts.
        told["reply"] = type(told["reply"]).Yes
        win._store_unavailable(str(StoreError("x")), "corrupt")
        assert win.store is not None and win.store.list_runs() == []
        kept = [p for p in db.parent.iterdir() if p.name.startswith("runs.sqlite3.damaged-")]
        assert len(kept) == 1 and kept[0].read_bytes() == before
        assert str(kept[0]) in told["information"][-1]
    finally:
        _close(win)


def test_the_window_opens_on_a_locked_store_and_says_so(qtbot, isolated_home, told, short_busy_timeout):
    db = isolated_home / "data" / "runs.sqlite3"
    db.parent.mkdir(parents=True)
    fill(db)
    locker = Locker(db, "file")
    try:
        win = _window(qtbot, isolated_home)
        try:
            qtbot.waitUntil(lambda: bool(told["warning"]), timeout=5000)
            assert str(db) in told["warning"][0] and "locked" in told["warning"][0]
            assert win.store is None and len(win.tasks) > 0  # the window works without it
        finally:
            _close(win)
    finally:
        locker.release()


@pytest.mark.slow
def test_the_window_on_a_read_only_store_shows_its_runs_and_a_run_says_why_it_cannot_start(
        qtbot, isolated_home, told, monkeypatch):
    db = isolated_home / "data" / "runs.sqlite3"
    db.parent.mkdir(parents=True)
    ids = fill(db)
    before = rows(db)
    real = store_db._connect
    monkeypatch.setattr(store_db, "_connect",
                        lambda target, timeout, uri=False: real(f"{Path(target).resolve().as_uri()}?mode=ro",
                                                                timeout, True))
    # The fault is simulated in this process (root writes read-only files), so the run must run
    # here too, not in an engine host (engine.host).
    monkeypatch.setenv("KEPLERLAB_IN_PROCESS", "1")
    win = _window(qtbot, isolated_home)
    try:
        qtbot.waitUntil(lambda: bool(told["warning"]), timeout=5000)
        assert str(db) in told["warning"][0] and "cannot be written" in told["warning"][0]
        assert sorted(win.history.run_ids()) == sorted(ids)  # earlier runs are all shown
        _start_gp(qtbot, win)
        status = win.run_panel.status.text()
        assert "cannot be written" in status and str(db) in status
        assert sorted(win.history.run_ids()) == sorted(ids)
    finally:
        _close(win)
    assert rows(db) == before


@pytest.mark.slow
def test_a_run_started_on_a_full_disk_shows_the_reason_and_the_window_goes_on(
        qtbot, isolated_home, told, monkeypatch):
    db = isolated_home / "data" / "runs.sqlite3"
    db.parent.mkdir(parents=True)
    ids = fill(db)
    brim(db)
    monkeypatch.setenv("KEPLERLAB_IN_PROCESS", "1")  # the full disk is simulated in this process
    win = _window(qtbot, isolated_home)
    try:
        capped_connections(monkeypatch)  # from now on (the run's own connection) the disk is full
        _start_gp(qtbot, win)
        status = win.run_panel.status.text()
        assert "disk is full" in status and str(db) in status and "Free some space" in status
        assert told["warning"] == [] and told["question"] == []
        monkeypatch.undo()  # space is freed: the next run works
        win.run_panel.set_value("seconds", 1)
        _start_gp(qtbot, win)
        qtbot.waitUntil(lambda: len(win.history.run_ids()) >= len(ids) + 2, timeout=10000)
        assert set(ids) <= set(win.history.run_ids())
    finally:
        _close(win)


# ------------------------------------------------------------------------------ fixtures' data


def _line_task():
    import numpy as np

    from engine.tasks.model import GroundTruth, Split, Task, TaskData, Variable

    def build(_task):
        x = np.linspace(0.5, 3.0, 40)
        y = x * x + 1.0
        return TaskData({"train": Split("train", x[::2, None], y[::2]),
                         "test_id": Split("test_id", x[1::2, None], y[1::2]),
                         "test_ood": Split("test_ood", x[:10, None] + 3.0, (x[:10] + 3.0) ** 2 + 1.0)})

    return Task(id="tests/inline/square", suite="tests/inline", kind="function", name="square", group="inline",
                title="y = x^2 + 1", variables=[Variable("x", "input", "x"), Variable("y", "target", "y")],
                ground_truth=GroundTruth("x**2 + 1"), context="A test task.", builder=build)


def _study(tmp_path: Path):
    return study_from_dict({"title": "Storage", "tasks": ["newtonbench/m0_gravity/v0/easy/vanilla"]},
                           tmp_path / "s.toml")


def test_the_window_opens_when_its_data_folder_cannot_be_made(qtbot, tmp_path, monkeypatch, told):
    """KEPLERLAB_HOME's data folder is blocked by a file: the window still opens, works without
    a store and says where and why."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "data").write_text("a file where the data folder should be", encoding="utf-8")
    monkeypatch.setenv("KEPLERLAB_HOME", str(home))
    win = _window(qtbot, home)
    try:
        qtbot.waitUntil(lambda: bool(told["warning"]), timeout=5000)
        assert str(home / "data") in told["warning"][0] and "Traceback" not in told["warning"][0]
        assert win.store is None and len(win.tasks) > 0
    finally:
        _close(win)
