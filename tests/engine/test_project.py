"""Project files (.klab): a round trip between two installations, and refusal of bad files."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

from engine import methods as m
from engine import project as pj
from engine.runner import RunFinished, execute
from engine.store import RunStore
from engine.tasks import registry
from engine.tasks import user_data as ud

GP_FAST = {"population_size": 100, "generations": 6, "seconds": 20, "threads": 1}


def _write_csv(path: Path, n: int = 40, seed: int = 1, scale: float = 2.0) -> Path:
    rng = np.random.default_rng(seed)
    x = np.linspace(0.1, 1.0, n)
    v = rng.uniform(-1, 1, n)
    rows = np.column_stack([x, v, scale * x + v**2])
    path.write_text("x,v,a\n" + "\n".join(",".join(f"{c:.17g}" for c in r) for r in rows) + "\n", encoding="utf-8")
    return path


def _use_home(monkeypatch, home: Path) -> Path:
    """Point KEPLERLAB_HOME at ``home`` (user tasks and the store follow it)."""
    monkeypatch.setenv("KEPLERLAB_HOME", str(home))
    registry.invalidate()
    return home


def _gp_run(task, store, seed: int) -> str:
    finished = [e for e in execute(task, "gp", {**GP_FAST, "seed": seed}, m.RunContext(), store)
                if isinstance(e, RunFinished)]
    assert finished and finished[0].status == "finished", finished
    return finished[0].run_id


@pytest.fixture
def two_homes(tmp_path, monkeypatch):
    yield tmp_path / "home-a", tmp_path / "home-b"
    registry.invalidate()


def test_a_project_carries_runs_notes_and_imported_data_to_another_home(two_homes, tmp_path, monkeypatch):
    home_a, home_b = two_homes
    _use_home(monkeypatch, home_a)
    ud.import_table(_write_csv(tmp_path / "springs.csv"), "class/springs", target="a")
    task = registry.get_task("user/class/springs")
    notes = "Week 3: which law fits?\nTry GP with two seeds — compare the fronts.\nÜmlauts stay."
    with RunStore(home_a / "runs.sqlite3") as store_a:
        runs = [_gp_run(task, store_a, seed) for seed in (1, 2)]
        saved = pj.save_project(tmp_path / "out" / "week3.klab", store_a, [task.id, "feynman/I.6.2a"], runs, notes,
                                title="Week 3", current_task=task.id)
        bundles_a = {r: store_a.export_run(r) for r in runs}
        fronts_a = {r: store_a.last_front(r) for r in runs}
        events_a = {r: len(store_a.events(r)) for r in runs}
    path = saved.path
    assert path.exists() and saved.bytes == path.stat().st_size
    assert saved.runs == runs and saved.user_tasks == [task.id] and saved.missing_user_tasks == []
    data_a = task.load_data()

    _use_home(monkeypatch, home_b)
    assert not ud.task_exists("class/springs")
    project = pj.read_project(path)
    assert project.title == "Week 3" and project.name == "Week 3" and project.notes == notes
    assert project.tasks == [task.id, "feynman/I.6.2a"] and project.current_task == task.id
    assert project.runs == runs and project.format_version == pj.FORMAT_VERSION
    with RunStore(home_b / "runs.sqlite3") as store_b:
        report = pj.open_into(project, store_b)
        assert report.imported_runs == runs and report.installed_tasks == [task.id] and not report.conflicts
        for run_id in runs:
            # Row for row: the run, its events, its Pareto reports, its LLM calls.
            assert store_b.export_run(run_id) == bundles_a[run_id]
            assert len(store_b.events(run_id)) == events_a[run_id] > 0
            assert store_b.last_front(run_id) == fronts_a[run_id] != []
        assert {r.id for r in store_b.list_runs()} == set(runs)

        again = pj.open_into(pj.read_project(path), store_b)  # opening twice adds nothing
        assert again.imported_runs == [] and again.present_runs == runs
        assert again.present_tasks == [task.id] and again.installed_tasks == []
        assert len(store_b.list_runs()) == 2
    # The imported data arrived and are the same numbers.
    carried = registry.get_task("user/class/springs")
    data_b = carried.load_data()
    for split in ("train", "test_id"):
        np.testing.assert_array_equal(data_b[split].X, data_a[split].X)
        np.testing.assert_array_equal(data_b[split].y, data_a[split].y)
    assert report.summary() == "2 runs added, 1 imported task added"


def test_a_different_task_of_the_same_name_is_kept_and_reported(two_homes, tmp_path, monkeypatch):
    home_a, home_b = two_homes
    _use_home(monkeypatch, home_a)
    ud.import_table(_write_csv(tmp_path / "a.csv"), "springs")
    with RunStore(home_a / "runs.sqlite3") as store:
        path = pj.save_project(tmp_path / "p.klab", store, ["user/springs"], [], "").path
    _use_home(monkeypatch, home_b)
    ud.import_table(_write_csv(tmp_path / "b.csv", scale=5.0), "springs")  # same name, other data
    mine = (ud.tasks_dir() / "springs" / "data.npz").read_bytes()
    with RunStore(home_b / "runs.sqlite3") as store:
        report = pj.open_into(pj.read_project(path), store)
    assert report.installed_tasks == [] and len(report.conflicts) == 1
    assert "user/springs" in report.conflicts[0] and "different task" in report.conflicts[0]
    assert (ud.tasks_dir() / "springs" / "data.npz").read_bytes() == mine  # never overwritten
    assert [p.name for p in ud.tasks_dir().iterdir()] == ["springs"]  # no staging left behind


def _stored_run(store: RunStore, status: str = "finished") -> str:
    run_id = store.create_run("feynman/I.6.2a", "gp", {"seconds": 1, "seed": 1}, 1)
    store.add_event(run_id, "progress", {"iteration": 1, "best_loss": float("inf")})
    store.add_pareto(run_id, 1, [{"expression": "theta", "complexity": 1, "loss": 0.5}])
    if status != "running":
        store.finish_run(run_id, status, seconds=1.0, expression="theta", complexity=1, train_loss=0.5,
                         metrics={"id": {"nmse": 0.5}, "ood": {"nmse": float("inf")}})
    return run_id


@pytest.fixture
def good(tmp_path, isolated_home):
    """A valid project file with one run, and that run's id."""
    with RunStore(tmp_path / "runs.sqlite3") as store:
        run_id = _stored_run(store)
        path = pj.save_project(tmp_path / "good.klab", store, ["feynman/I.6.2a"], [run_id], "notes").path
    return path, run_id


def _rewrite(src: Path, dst: Path, replace: dict | None = None, add: dict | None = None) -> Path:
    """A copy of a project with some members replaced (None drops one) or added."""
    replace, add = replace or {}, add or {}
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            if info.filename in replace:
                if replace[info.filename] is not None:
                    zout.writestr(info.filename, replace[info.filename])
            else:
                zout.writestr(info.filename, zin.read(info.filename))
        for name, content in add.items():
            zout.writestr(name, content)
    return dst


def _manifest(path: Path) -> dict:
    with zipfile.ZipFile(path) as zf:
        return json.loads(zf.read("project.json"))


def test_a_good_file_reads_and_its_running_runs_are_refused_at_saving(good, tmp_path):
    path, run_id = good
    project = pj.read_project(path)
    assert project.runs == [run_id] and project.bundles[run_id]["run"]["status"] == "finished"
    manifest = _manifest(path)
    assert manifest["format"] == "keplerlab-project" and manifest["format_version"] == 1
    assert manifest["app_version"] and manifest["created"] and manifest["user_tasks"] == []
    with RunStore(tmp_path / "runs.sqlite3") as store:
        running = _stored_run(store, status="running")
        with pytest.raises(pj.ProjectError, match="still running"):
            pj.save_project(tmp_path / "x.klab", store, [], [running])
        with pytest.raises(pj.ProjectError, match="not in the run store"):
            pj.save_project(tmp_path / "x.klab", store, [], ["0123456789ab"])
    assert not (tmp_path / "x.klab").exists()  # nothing half-written


def _bad_files(path: Path, run_id: str, tmp: Path):
    member = f"runs/{run_id}.json"
    manifest = _manifest(path)
    with zipfile.ZipFile(path) as zf:
        run_json = zf.read(member)
    bundle = json.loads(run_json)
    injected = json.loads(run_json)
    injected["run"]["id) VALUES ('x'); DROP TABLE runs; --"] = 1
    not_zip = tmp / "notzip.klab"
    not_zip.write_text("just text, not an archive")
    truncated = tmp / "truncated.klab"
    truncated.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    running = json.loads(run_json)
    running["run"]["status"] = "running"
    return {
        "not a zip": (not_zip, "not a zip archive"),
        "cut short": (truncated, "cut short"),
        "no manifest": (_rewrite(path, tmp / "nomanifest.klab", {"project.json": None}), "no project.json"),
        "foreign": (_rewrite(path, tmp / "foreign.klab",
                             {"project.json": json.dumps({**manifest, "format": "someone-else"})}),
                    "'someone-else', not 'keplerlab-project'"),
        "newer": (_rewrite(path, tmp / "newer.klab", {"project.json": json.dumps({**manifest, "format_version": 7})}),
                  "newer Kepler Lab"),
        "truncated run": (_rewrite(path, tmp / "cut.klab", {member: run_json[: len(run_json) // 2]}),
                          f"{member} is damaged or cut short"),
        "missing run": (_rewrite(path, tmp / "missing.klab", {member: None}), "its file runs/"),
        "traversal": (_rewrite(path, tmp / "traversal.klab", add={"../x": b"evil"}), "unsafe path '../x'"),
        "absolute": (_rewrite(path, tmp / "absolute.klab", add={"/etc/x": b"evil"}), "unsafe path '/etc/x'"),
        "injected column": (_rewrite(path, tmp / "inject.klab", {member: json.dumps(injected)}),
                            "does not know"),
        "wrong type": (_rewrite(path, tmp / "type.klab",
                                {member: json.dumps({**bundle, "events": [{**bundle["events"][0], "seq": "one"}]})}),
                       "'seq' holds str"),
        "running run": (_rewrite(path, tmp / "running.klab", {member: json.dumps(running)}), "only runs that"),
        "not a list": (_rewrite(path, tmp / "list.klab", {"project.json": json.dumps({**manifest, "runs": "abc"})}),
                       "must be a list"),
    }


@pytest.mark.parametrize("case", ["not a zip", "cut short", "no manifest", "foreign", "newer", "truncated run",
                                  "missing run", "traversal", "absolute", "injected column", "wrong type",
                                  "running run", "not a list"])
def test_malformed_files_are_refused_with_a_message_naming_the_fault(good, tmp_path, case):
    path, run_id = good
    bad, expected = _bad_files(path, run_id, tmp_path)[case]
    with pytest.raises(pj.ProjectError) as caught:
        pj.read_project(bad)
    assert expected in str(caught.value)
    assert str(bad) in str(caught.value)


def test_an_oversized_member_or_a_zip_bomb_stops_at_the_limit(good, tmp_path, monkeypatch):
    path, run_id = good
    monkeypatch.setattr(pj, "MAX_RUN_BYTES", 100_000)
    member = f"runs/{run_id}.json"
    with zipfile.ZipFile(path) as zf:
        bundle = json.loads(zf.read(member))
    bundle["run"]["error"] = " " * 2_000_000  # 2 MB of spaces: a few kB compressed
    bomb = _rewrite(path, tmp_path / "bomb.klab", {member: json.dumps(bundle)})
    assert bomb.stat().st_size < 50_000
    with pytest.raises(pj.ProjectError, match=r"runs/\w+\.json is too large"):
        pj.read_project(bomb)

    # A header that understates the size: reading still stops at the limit.
    liar = tmp_path / "liar.klab"
    data = bytearray(bomb.read_bytes())
    with zipfile.ZipFile(bomb) as zf:
        info = zf.getinfo(member)
    real = info.file_size.to_bytes(4, "little")
    fake = (1000).to_bytes(4, "little")
    assert data.count(real) >= 2  # local header and central directory
    liar.write_bytes(bytes(data).replace(real, fake))
    with pytest.raises(pj.ProjectError) as caught:
        pj.read_project(liar)
    assert str(liar) in str(caught.value)


def test_imported_data_with_pickled_objects_are_refused(two_homes, tmp_path, monkeypatch):
    home_a, _ = two_homes
    _use_home(monkeypatch, home_a)
    ud.import_table(_write_csv(tmp_path / "a.csv"), "springs")
    with RunStore(home_a / "runs.sqlite3") as store:
        path = pj.save_project(tmp_path / "p.klab", store, ["user/springs"], [], "").path
    buffer = io.BytesIO()
    np.savez(buffer, split_names=np.array(["train"]), train__X=np.array([[object()]], dtype=object),
             train__y=np.zeros(1))
    bad = _rewrite(path, tmp_path / "pickle.klab", {"user_tasks/0/data.npz": buffer.getvalue()})
    with pytest.raises(pj.ProjectError, match="Python objects"):
        pj.read_project(bad)
    other = json.loads((ud.tasks_dir() / "springs" / "task.json").read_text())
    other["id"] = "user/elsewhere"
    lying = _rewrite(path, tmp_path / "lying.klab", {"user_tasks/0/task.json": json.dumps(other)})
    with pytest.raises(pj.ProjectError, match="describe 'user/elsewhere'"):
        pj.read_project(lying)
