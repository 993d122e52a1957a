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
    assert project.runs == [run_id] and project.bundle(run_id)["run"]["status"] == "finished"
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


# ------------------------------------------------------------------------------ what a run may hold


def _bundle(run_id: str = "r1", **over) -> dict:
    """A small valid run bundle, with parts replaced (``run`` updates the row)."""
    bundle = {"run": {"id": run_id, "task_id": "feynman/I.6.2a", "method": "gp", "config": "{}",
                      "status": "finished", "started_at": 1_700_000_000.0, "finished_at": 1_700_000_005.0,
                      "seconds": 5.0, "expression": "x", "complexity": 1, "train_loss": 0.1,
                      "metrics": '{"id": {"nmse": 0.1}, "ood": {"nmse": "inf"}}'},
              "events": [{"seq": 1, "kind": "progress", "t": 1_700_000_001.0,
                          "payload": '{"iteration": 1, "best_loss": "inf"}'},
                         {"seq": 2, "kind": "progress", "t": 1_700_000_002.0,
                          "payload": '{"iteration": 2, "best_loss": null}'},
                         {"seq": 3, "kind": "pareto", "t": 1_700_000_003.0,
                          "payload": '{"iteration": 2, "candidates": [{"expression": "x", "complexity": 1, '
                                     '"loss": 0.1}, {"expression": "x*x", "complexity": 3, "loss": "nan"}]}'},
                         {"seq": 4, "kind": "final", "t": 1_700_000_004.0,
                          "payload": '{"expression": "x", "complexity": 1, "loss": 0.1}'}],
              "candidates": [{"report": 1, "iteration": 2, "expression": "x", "complexity": 1, "loss": 0.1}],
              "llm_calls": [{"seq": 1, "t": 1_700_000_002.5, "model": "m", "messages": '[{"role": "user"}]',
                             "reply": '["x"]', "status": "ok"}]}
    for key, value in over.items():
        if key == "run":
            bundle["run"].update(value)
        else:
            bundle[key] = value
    return bundle


def _event(kind: str, payload: str) -> list[dict]:
    return [{"seq": 1, "kind": kind, "t": 1_700_000_001.0, "payload": payload}]


def test_a_valid_bundle_passes_and_reads_back_through_the_store(tmp_path):
    bundle = _bundle()
    assert pj.check_bundle(bundle, "r1", "here") is bundle
    with RunStore(tmp_path / "s.sqlite3") as store:
        store.import_run(bundle)
        record = store.get_run("r1")
        assert record.metrics["id"]["nmse"] == 0.1 and record.config == {}
        assert [(p["iteration"], p["best_loss"]) for p in store.progress("r1")][1] == (2, None)
        assert store.llm_calls("r1")[0]["replies"] == ["x"]


BAD_BUNDLES = {
    "payload a list": (dict(events=_event("progress", "[1, 2]")), "payload of event 1 (progress) must be a JSON object"),
    "payload not JSON": (dict(events=_event("log", "oops")), "payload of event 1 (log) is not valid JSON"),
    "progress without fields": (dict(events=_event("progress", "{}")), "progress event 1 has no iteration"),
    "progress loss is text": (dict(events=_event("progress", '{"iteration": 1, "best_loss": "low"}')),
                              "progress event 1 has no best loss"),
    "pareto without candidates": (dict(events=_event("pareto", '{"iteration": 1}')), "no list of candidates"),
    "pareto candidate complexity text": (
        dict(events=_event("pareto", '{"candidates": [{"expression": "x", "complexity": "3", "loss": 1}]}')),
        "Pareto event 1 has a candidate"),
    "pareto candidate huge": (
        dict(events=_event("pareto", '{"candidates": [{"expression": "x", "complexity": %d, "loss": 1}]}' % 10**30)),
        "Pareto event 1 has a candidate"),
    "final a list": (dict(events=_event("final", "[]")), "payload of event 1 (final) must be a JSON object"),
    "config a list": (dict(run={"config": "[1]"}), "run's config must be a JSON object"),
    "metrics a list": (dict(run={"metrics": "[1]"}), "run's metrics must be a JSON object"),
    "metrics split a list": (dict(run={"metrics": '{"id": [1]}'}), "metrics 'id' must be an object"),
    "metrics nmse text": (dict(run={"metrics": '{"ood": {"nmse": "good"}}'}), "metric ood.nmse"),
    "huge complexity": (dict(run={"complexity": 10**30}), "'complexity' holds the number"),
    "huge seed": (dict(run={"seed": -(2**63)}), "'seed' holds the number"),
    "huge time": (dict(run={"started_at": 1e20}), "not a date"),
    "messages an object": (dict(llm_calls=[{"seq": 1, "t": 1.0, "messages": "{}", "reply": "[]", "status": "ok"}]),
                           "LLM call 1's messages must be a JSON list"),
    "reply not JSON": (dict(llm_calls=[{"seq": 1, "t": 1.0, "messages": "[]", "reply": "[", "status": "ok"}]),
                       "LLM call 1's reply is not valid JSON"),
    "config nested deeply": (dict(run={"config": "[" * 100_000 + "]" * 100_000}), "config is nested too deeply"),
}


@pytest.mark.parametrize("case", sorted(BAD_BUNDLES))
def test_a_run_the_window_could_not_read_is_refused_naming_the_run_and_the_fault(case, tmp_path):
    over, expected = BAD_BUNDLES[case]
    bundle = json.loads(json.dumps(_bundle("r7", **over)))  # as it comes out of a file
    with pytest.raises(pj.ProjectError) as caught:
        pj.check_bundle(bundle, "r7", "p.klab: runs/r7.json")
    assert expected in str(caught.value)
    assert "runs/r7.json" in str(caught.value)


def test_a_bad_run_in_a_file_is_refused_before_anything_is_added(good, tmp_path):
    path, run_id = good
    member = f"runs/{run_id}.json"
    with zipfile.ZipFile(path) as zf:
        bundle = json.loads(zf.read(member))
    bundle["run"]["metrics"] = "[1]"  # once imported, the run history could not show it
    bad = _rewrite(path, tmp_path / "metrics.klab", {member: json.dumps(bundle)})
    with pytest.raises(pj.ProjectError, match=f"{member}: the run's metrics must be a JSON object"):
        pj.read_project(bad)


def test_a_deeply_nested_manifest_is_refused(tmp_path):
    path = tmp_path / "deep.klab"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("project.json", "[" * 200_000 + "]" * 200_000)
    with pytest.raises(pj.ProjectError, match="project.json is nested too deeply"):
        pj.read_project(path)


# ------------------------------------------------------------------------------ all or nothing


@pytest.fixture
def carried(two_homes, tmp_path, monkeypatch):
    """A project (path) with an imported task and two runs, saved in home A; home B is in use."""
    home_a, home_b = two_homes
    _use_home(monkeypatch, home_a)
    ud.import_table(_write_csv(tmp_path / "a.csv"), "springs")
    with RunStore(home_a / "runs.sqlite3") as store:
        runs = [_stored_run(store), _stored_run(store)]
        path = pj.save_project(tmp_path / "p.klab", store, ["user/springs"], runs, "").path
    _use_home(monkeypatch, home_b)
    return path, runs


def _damage_second_run(path: Path, runs: list[str], tmp: Path, **run_over) -> None:
    """Replace ``path`` by a copy whose second run differs (as if the file changed after it was read)."""
    member = f"runs/{runs[1]}.json"
    with zipfile.ZipFile(path) as zf:
        bundle = json.loads(zf.read(member))
    bundle["run"].update(run_over)
    _rewrite(path, tmp / "changed.klab", {member: json.dumps(bundle)}).replace(path)


def test_a_run_that_fails_while_opening_leaves_no_run_and_no_task(carried, tmp_path):
    path, runs = carried
    project = pj.read_project(path)
    _damage_second_run(path, runs, tmp_path, status="running")  # changed behind our back
    with RunStore(ud.tasks_dir().parent / "runs.sqlite3") as store:
        with pytest.raises(pj.ProjectError, match="only runs that have ended"):
            pj.open_into(project, store)
        assert store.list_runs() == []  # the first run went in and was rolled back
    assert not ud.task_exists("springs")  # the task installed first was taken out again
    assert [p.name for p in ud.tasks_dir().iterdir()] == []  # no staging left behind


def test_a_fault_the_checks_missed_still_changes_nothing(carried, tmp_path, monkeypatch):
    path, runs = carried
    project = pj.read_project(path)
    _damage_second_run(path, runs, tmp_path, complexity=10**30)
    monkeypatch.setattr(pj, "check_bundle", lambda bundle, *_a: bundle)  # as if a check were missing
    with RunStore(ud.tasks_dir().parent / "runs.sqlite3") as store:
        with pytest.raises(pj.ProjectError, match="OverflowError.*nothing was changed"):
            pj.open_into(project, store)
        assert store.list_runs() == []
    assert not ud.task_exists("springs")


def test_import_runs_adds_all_runs_in_one_transaction(tmp_path):
    def bundles():
        yield _bundle("ok1")
        yield _bundle("ok2")
        raise RuntimeError("the third could not be read")

    with RunStore(tmp_path / "s.sqlite3") as store:
        with pytest.raises(RuntimeError):
            store.import_runs(bundles())
        assert store.list_runs() == []
        assert store.import_runs([_bundle("ok1"), _bundle("ok2")]) == ["ok1", "ok2"]
        assert {r.id for r in store.list_runs()} == {"ok1", "ok2"}


def test_runs_are_read_from_the_file_when_opened_not_held_in_memory(carried):
    path, runs = carried
    project = pj.read_project(path)
    assert not hasattr(project, "bundles")
    assert project.bundle(runs[0])["run"]["id"] == runs[0]
    path.unlink()  # the runs were checked and let go: opening reads them again
    with RunStore(ud.tasks_dir().parent / "runs.sqlite3") as store:
        with pytest.raises(pj.ProjectError, match="no such file"):
            pj.open_into(project, store)
        assert store.list_runs() == []
    assert not ud.task_exists("springs")


# ------------------------------------------------------------------------------ the title


def test_the_title_limit_is_the_same_for_saving_and_reading(good, tmp_path):
    path, _run_id = good
    with RunStore(tmp_path / "runs.sqlite3") as store:
        with pytest.raises(pj.ProjectError, match="title is too long"):
            pj.save_project(tmp_path / "long.klab", store, [], [], title="T" * (pj.MAX_TITLE_CHARS + 1))
        longest = pj.save_project(tmp_path / "ok.klab", store, [], [], title="T" * pj.MAX_TITLE_CHARS).path
    assert not (tmp_path / "long.klab").exists()
    assert pj.read_project(longest).title == "T" * pj.MAX_TITLE_CHARS
    manifest = _manifest(path)
    manifest["title"] = "T" * (pj.MAX_TITLE_CHARS + 1)
    with pytest.raises(pj.ProjectError, match="title is too long"):
        pj.read_project(_rewrite(path, tmp_path / "t.klab", {"project.json": json.dumps(manifest)}))
