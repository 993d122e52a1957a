"""The SQLite run store: round trips, crash recovery, concurrent access, refusal of bad files."""

from __future__ import annotations

import math
import sqlite3
import subprocess
import sys

import pytest

from engine.store import RunStore, StoreError


@pytest.fixture
def db(tmp_path):
    return tmp_path / "runs.sqlite3"


def dead_pid() -> int:
    """The pid of a process that has already exited (and been reaped)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_round_trip_of_a_run_with_events_and_pareto_reports(db):
    with RunStore(db) as store:
        run_id = store.create_run("suite/group/T1", "gp", {"seed": 3, "population": 100}, 3)
        assert store.get_run(run_id).status == "running"
        store.add_event(run_id, "progress", {"iteration": 1, "best_loss": 0.5})
        store.add_event(run_id, "log", {"message": "hello", "level": "info"})
        store.add_event(run_id, "progress", {"iteration": 2, "best_loss": 0.25})
        store.add_pareto(
            run_id,
            1,
            [{"expression": "x", "complexity": 1, "loss": 0.5}, {"expression": "2*x", "complexity": 3, "loss": 0.3}],
        )
        store.add_pareto(
            run_id,
            2,
            [
                {"expression": "x*y + 1", "complexity": 5, "loss": 0.01},
                {"expression": "x", "complexity": 1, "loss": 0.5},
                {"expression": "log(x)", "complexity": 2, "loss": math.inf},
            ],
        )
        metrics = {"id": {"nmse": 0.01, "acc_0.1": 1.0, "r2": 0.99}, "ood": {"nmse": 0.2, "acc_0.1": 0.0, "r2": 0.8}}
        store.finish_run(
            run_id, "finished", seconds=1.5, expression="x*y + 1", complexity=5, train_loss=0.01, metrics=metrics,
            stop_reason="budget",
        )

    with RunStore(db) as store:  # reopened: everything was committed
        run = store.get_run(run_id)
        assert run.task_id == "suite/group/T1" and run.method == "gp"
        assert run.config == {"seed": 3, "population": 100} and run.seed == 3
        assert run.status == "finished" and run.stop_reason == "budget" and run.error is None
        assert run.expression == "x*y + 1" and run.complexity == 5
        assert run.seconds == 1.5 and run.train_loss == 0.01
        assert run.metrics == metrics
        assert run.finished_at >= run.started_at

        events = store.events(run_id)
        assert [e["seq"] for e in events] == [1, 2, 3]
        assert [e["kind"] for e in events] == ["progress", "log", "progress"]
        assert events[1]["message"] == "hello"
        assert [p["best_loss"] for p in store.progress(run_id)] == [0.5, 0.25]

        front = store.last_front(run_id)  # the latest report only, simplest first
        assert [c["expression"] for c in front] == ["x", "log(x)", "x*y + 1"]
        assert all(c["iteration"] == 2 for c in front)
        assert front[1]["loss"] is None  # an infinite loss is stored as NULL
        assert store.candidate_count(run_id) == 5

        d = run.to_dict()
        assert d["run_id"] == run_id and d["task"] == "suite/group/T1" and d["metrics"] == metrics


def test_events_continue_their_sequence_after_the_store_is_reopened(db):
    with RunStore(db) as store:
        run_id = store.create_run("t", "gp", {}, None)
        store.add_event(run_id, "progress", {"iteration": 1})
    # A resumed run appends through a new store; sequence numbers must not collide.
    with RunStore(db) as store:
        store.add_event(run_id, "progress", {"iteration": 2})
        assert [e["iteration"] for e in store.events(run_id)] == [1, 2]


def test_list_and_get(db):
    with RunStore(db) as store:
        a = store.create_run("suite/A", "gp", {}, 0)
        b = store.create_run("suite/B", "gp", {}, 1)
        c = store.create_run("suite/A", "gp", {}, 2)
        assert [r.id for r in store.list_runs()] == [c, b, a]  # newest first
        assert [r.id for r in store.list_runs(task_id="suite/A")] == [c, a]
        assert [r.id for r in store.list_runs(limit=1)] == [c]
        assert store.get_run("no-such-run") is None
        assert store.list_runs(task_id="suite/none") == []


def test_finish_with_non_finite_metrics(db):
    with RunStore(db) as store:
        run_id = store.create_run("t", "gp", {}, None)
        metrics = {"id": {"nmse": math.inf, "r2": -math.inf, "acc_0.1": 0.0}, "ood": {"nmse": math.nan}}
        store.finish_run(run_id, "finished", metrics=metrics, train_loss=math.inf)
        run = store.get_run(run_id)
    assert run.metrics["id"]["nmse"] == math.inf
    assert run.metrics["id"]["r2"] == -math.inf
    assert run.metrics["id"]["acc_0.1"] == 0.0
    assert math.isnan(run.metrics["ood"]["nmse"])
    assert run.train_loss is None


def test_finish_refuses_a_live_status(db):
    with RunStore(db) as store:
        run_id = store.create_run("t", "gp", {}, None)
        with pytest.raises(ValueError, match="not a final status"):
            store.finish_run(run_id, "running")


def test_running_run_of_a_dead_process_becomes_interrupted(db):
    with RunStore(db) as store:
        orphan = store.create_run("t", "gp", {}, None)
        alive = store.create_run("t", "gp", {}, None)  # belongs to this (living) process
        store.conn.execute("UPDATE runs SET pid=? WHERE id=?", (dead_pid(), orphan))
    with RunStore(db) as store:
        run = store.get_run(orphan)
        assert run.status == "interrupted"
        assert "ended unexpectedly" in run.error
        assert store.get_run(alive).status == "running"


def test_two_stores_on_one_file_see_each_others_writes(db):
    first, second = RunStore(db), RunStore(db)
    try:
        mode = first.conn.execute("PRAGMA journal_mode").fetchone()[0]
        assert mode.lower() == "wal"
        run_id = first.create_run("t", "gp", {}, 7)
        assert second.get_run(run_id).seed == 7
        second.add_event(run_id, "log", {"message": "from the second store"})
        assert first.events(run_id)[0]["message"] == "from the second store"
        second.finish_run(run_id, "cancelled", seconds=0.1)
        assert first.get_run(run_id).status == "cancelled"
    finally:
        first.close()
        second.close()


def test_corrupt_file_gives_a_clear_store_error(db):
    db.write_bytes(b"this is not an SQLite database, just some text " * 100)
    with pytest.raises(StoreError) as info:
        RunStore(db)
    message = str(info.value)
    assert str(db) in message
    assert "not a database" in message


def test_newer_schema_is_refused(db):
    with RunStore(db):
        pass
    conn = sqlite3.connect(db)
    conn.execute("UPDATE meta SET value='999' WHERE key='schema_version'")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="newer Kepler Lab"):
        RunStore(db)


def test_default_location_follows_keplerlab_home(isolated_home):
    with RunStore() as store:
        assert store.path.parent == isolated_home / "data"
        store.create_run("t", "gp", {}, None)
    assert (isolated_home / "data" / "runs.sqlite3").exists()


# ---------------------------------------------------------------------- schema 2: LLM calls, migration

# The schema-1 tables exactly as Kepler Lab wrote them before the llm_calls table existed.
V1_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE runs (
    id TEXT PRIMARY KEY, task_id TEXT NOT NULL, method TEXT NOT NULL, config TEXT NOT NULL, seed INTEGER,
    status TEXT NOT NULL, started_at REAL NOT NULL, finished_at REAL, seconds REAL, expression TEXT,
    complexity INTEGER, train_loss REAL, metrics TEXT, stop_reason TEXT, error TEXT, pid INTEGER, host TEXT,
    app_version TEXT
);
CREATE INDEX runs_task ON runs(task_id);
CREATE INDEX runs_started ON runs(started_at);
CREATE TABLE events (
    run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE, seq INTEGER NOT NULL, kind TEXT NOT NULL,
    t REAL NOT NULL, payload TEXT NOT NULL, PRIMARY KEY (run_id, seq)
);
CREATE TABLE candidates (
    run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE, report INTEGER NOT NULL,
    iteration INTEGER NOT NULL, expression TEXT NOT NULL, complexity INTEGER NOT NULL, loss REAL
);
CREATE INDEX candidates_run ON candidates(run_id, report);
INSERT INTO meta VALUES ('schema_version', '1');
INSERT INTO runs(id, task_id, method, config, seed, status, started_at, finished_at, seconds, expression,
                 complexity, metrics)
    VALUES ('abc123def456', 'suite/T1', 'gp', '{"seed": 1}', 1, 'finished', 1.0, 2.0, 1.0, 'x + 1', 3, '{}');
INSERT INTO events VALUES ('abc123def456', 1, 'log', 1.5, '{"message": "old"}');
"""


def write_v1(db):
    conn = sqlite3.connect(db)
    conn.executescript(V1_SCHEMA)
    conn.commit()
    conn.close()


def schema_version(db) -> str:
    conn = sqlite3.connect(db)
    try:
        return conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0]
    finally:
        conn.close()


def test_new_store_has_schema_3_and_llm_calls(db):
    with RunStore(db) as store:
        run_id = store.create_run("t", "llmsr", {}, 0)
        record = {"model": "m", "messages": [{"role": "user", "content": "nan"}], "replies": ["x*2", "inf"],
                  "prompt_tokens": 12, "completion_tokens": 3, "latency": 0.25, "status": "ok", "error": None,
                  "cost": 0.001, "attempts": 2}
        assert store.add_llm_call(run_id, record) == 1
        assert store.add_llm_call(run_id, {**record, "status": "error", "error": "HTTP 500", "replies": []}) == 2
    assert schema_version(db) == "3"
    assert not (db.parent / (db.name + ".v1-backup")).exists()  # nothing to migrate, no backup
    with RunStore(db) as store:
        first, second = store.llm_calls(run_id)
        assert first["messages"] == [{"role": "user", "content": "nan"}]  # message text stays text
        assert first["replies"] == ["x*2", "inf"] and first["prompt_tokens"] == 12 and first["attempts"] == 2
        assert first["cost"] == 0.001 and first["latency"] == 0.25 and first["seq"] == 1
        assert second["status"] == "error" and second["error"] == "HTTP 500" and second["replies"] == []
        assert store.add_llm_call(run_id, record) == 3  # numbering continues after reopening


def test_v1_store_is_backed_up_and_migrated(db):
    write_v1(db)
    with RunStore(db) as store:
        run = store.get_run("abc123def456")
        assert run.expression == "x + 1" and run.status == "finished"
        assert store.events("abc123def456")[0]["message"] == "old"
        store.add_llm_call("abc123def456", {"model": "m", "messages": [], "replies": ["r"], "status": "ok"})
        assert store.llm_calls("abc123def456")[0]["replies"] == ["r"]
    assert schema_version(db) == "3"
    backup = db.parent / (db.name + ".v1-backup")
    assert backup.exists()
    assert schema_version(backup) == "1"
    conn = sqlite3.connect(backup)
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        assert "llm_calls" not in tables
        assert conn.execute("SELECT expression FROM runs").fetchall() == [("x + 1",)]
    finally:
        conn.close()
    with RunStore(db) as store:  # a second opening migrates nothing
        assert len(store.llm_calls("abc123def456")) == 1


def test_schema_4_is_refused_and_left_untouched(db):
    with RunStore(db):
        pass
    conn = sqlite3.connect(db)
    conn.execute("UPDATE meta SET value='4' WHERE key='schema_version'")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match=r"newer Kepler Lab \(schema 4, this version reads 3\)"):
        RunStore(db)
    assert schema_version(db) == "4"
    assert not list(db.parent.glob("*-backup"))


def test_v2_store_gains_the_sweep_tables_after_a_backup(db):
    with RunStore(db) as store:
        run_id = store.create_run("suite/T1", "gp", {"seed": 0}, 0)
        store.finish_run(run_id, "finished", expression="x")
    conn = sqlite3.connect(db)  # make it a schema-2 file: no sweep tables
    conn.executescript("DROP TABLE sweep_units; DROP TABLE sweeps; UPDATE meta SET value='2' WHERE key='schema_version';")
    conn.commit()
    conn.close()
    with RunStore(db) as store:
        assert store.get_run(run_id).expression == "x"
        sweep_id = store.create_sweep({"suites": ["suite"]}, "k", "local", [{"task_id": "suite/T1", "method": "gp"}])
        assert store.sweep_units(sweep_id)[0]["status"] == "pending"
    assert schema_version(db) == "3"
    assert schema_version(db.parent / (db.name + ".v2-backup")) == "2"


def test_a_run_exported_from_one_store_imports_whole_into_another(tmp_path):
    with RunStore(tmp_path / "worker.db") as worker:
        run_id = worker.create_run("suite/T1", "gp", {"seed": 3}, 3)
        worker.add_event(run_id, "progress", {"iteration": 1, "best_loss": 0.5})
        worker.add_pareto(run_id, 1, [{"expression": "x", "complexity": 1, "loss": 0.5}])
        worker.add_llm_call(run_id, {"model": "m", "messages": [], "replies": ["r"], "status": "ok"})
        worker.finish_run(run_id, "finished", expression="x", metrics={"id": {"nmse": 0.5}})
        bundle = worker.export_run(run_id)
    with RunStore(tmp_path / "main.db") as main:
        main.import_run(bundle)
        main.import_run(bundle)  # a retried hand-over keeps one copy
        assert main.get_run(run_id).metrics == {"id": {"nmse": 0.5}}
        assert [e["kind"] for e in main.events(run_id)] == ["progress"]
        assert main.last_front(run_id)[0]["expression"] == "x"
        assert main.llm_calls(run_id)[0]["replies"] == ["r"]
        assert main.add_event(run_id, "log", {"message": "more"}) == 2  # numbering continues
        assert len(main.list_runs()) == 1


def test_sweep_units_record_attempts_and_a_dead_sweep_is_marked_interrupted(db):
    with RunStore(db) as store:
        sweep_id = store.create_sweep({}, "k", "local", [{"task_id": "a", "method": "gp", "seed": 0},
                                                          {"task_id": "b", "method": "gp", "seed": 0}])
        store.update_unit(sweep_id, 0, status="running", worker="w1")
        store.update_unit(sweep_id, 0, status="pending", error="worker lost", attempt={"worker": "w1", "outcome": "lost"})
        store.update_unit(sweep_id, 1, status="running", worker="w2")
        unit = store.sweep_units(sweep_id)[0]
        assert unit["attempts"] == 1 and unit["history"][0]["outcome"] == "lost" and unit["worker"] == "w1"
        assert store.latest_sweep("k") == sweep_id and store.latest_sweep("other") is None
        store.conn.execute("UPDATE sweeps SET pid=999999999")  # as if its process had died
    with RunStore(db) as store:
        sweep = store.get_sweep(sweep_id)
        assert sweep["status"] == "interrupted"
        assert sweep["units"] == {"pending": 1, "interrupted": 1}
