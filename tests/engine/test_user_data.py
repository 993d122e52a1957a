"""Your own data: tables and LLM-SRBench HDF5 files become ``user/<name>`` tasks.

Every malformed file must give a message naming the file, the line and the column, and leave
nothing on disk.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

from engine import expr as ex
from engine.tasks import registry
from engine.tasks import user_data as ud

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data" / "llmsr"


@pytest.fixture
def home(isolated_home):
    registry.invalidate()
    yield isolated_home
    registry.invalidate()


def law_rows(n: int = 40, seed: int = 1) -> np.ndarray:
    """x, v and a = 2x + v² (one row each)."""
    rng = np.random.default_rng(seed)
    x = np.linspace(0.0, 1.0, n)
    v = rng.uniform(-1, 1, n)
    return np.column_stack([x, v, 2 * x + v**2])


def write_table(path: Path, rows, header=("x", "v", "a"), delimiter=",", fmt="{:.17g}") -> Path:
    lines = [delimiter.join(header)] if header else []
    for row in rows:
        lines.append(delimiter.join(c if isinstance(c, str) else fmt.format(c) for c in row))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def stored() -> list[str]:
    """Everything under the user-task folder (staging leftovers included)."""
    root = ud.tasks_dir()
    return sorted(p.name for p in root.iterdir()) if root.exists() else []


# ------------------------------------------------------------------------------ good files


@pytest.mark.parametrize(
    ("delimiter", "suffix", "label"), [(",", "csv", "comma"), ("\t", "tsv", "tab"), (";", "csv", "semicolon")]
)
def test_good_table_is_inspected_and_imported(home, tmp_path, delimiter, suffix, label):
    rows = law_rows()
    path = write_table(tmp_path / f"data.{suffix}", rows, delimiter=delimiter)
    info = ud.inspect_csv(path)
    assert info.delimiter_name == label and info.has_header and info.rows == 40
    assert info.column_names == ["x", "v", "a"]
    assert all(c.numeric and c.missing == 0 for c in info.columns)
    assert info.preview[0] == [f"{v:.17g}" for v in rows[0]]

    result = ud.import_table(path, "law", target="a", inputs=["x", "v"], units={"x": "m"},
                             descriptions={"a": "acceleration"}, context="A bench test.")
    assert result.task_id == "user/law"
    assert result.rows == {"train": 36, "test_id": 4}
    task = registry.get_task("user/law")  # visible without a restart
    assert task.benchmark == "user" and registry.benchmark_label("user") == "Your data"
    assert task.input_names == ["x", "v"] and task.target.name == "a"
    assert task.inputs[0].unit == "m" and task.target.description == "acceleration"
    assert task.ground_truth.expression == ""
    assert "A bench test." in task.context
    data = task.load_data()
    X, y, _ = data.stacked()
    # Every row survives exactly once, with its target next to its inputs.
    assert sorted(map(tuple, np.column_stack([X, y]).round(12))) == sorted(map(tuple, rows.round(12)))
    assert np.allclose(y, 2 * X[:, 0] + X[:, 1] ** 2)
    assert stored() == ["law"]


def test_defaults_target_last_column_and_headerless_file(home, tmp_path):
    path = write_table(tmp_path / "plain.csv", law_rows(), header=None)
    info = ud.inspect_csv(path)
    assert not info.has_header and info.column_names == ["c1", "c2", "c3"]
    result = ud.import_table(path, "plain")
    task = registry.get_task(result.task_id)
    assert task.target.name == "c3" and task.input_names == ["c1", "c2"]


def test_split_is_reproducible_by_seed(home, tmp_path):
    path = write_table(tmp_path / "d.csv", law_rows(100))
    ud.import_table(path, "s1", seed=3, test_fraction=0.2)
    ud.import_table(path, "s2", seed=3, test_fraction=0.2)
    ud.import_table(path, "s3", seed=4, test_fraction=0.2)
    a, b, c = (registry.get_task(f"user/s{i}").load_data() for i in (1, 2, 3))
    assert len(a["test_id"]) == 20 and len(a["train"]) == 80
    assert np.array_equal(a["test_id"].X, b["test_id"].X)
    assert not np.array_equal(a["test_id"].X, c["test_id"].X)


def test_ood_by_threshold(home, tmp_path):
    path = write_table(tmp_path / "d.csv", law_rows(100))
    result = ud.import_table(path, "thr", ood={"column": "x", "op": ">", "value": 0.8})
    data = registry.get_task(result.task_id).load_data()
    assert (data["test_ood"].X[:, 0] > 0.8).all()
    assert (data["train"].X[:, 0] <= 0.8).all() and (data["test_id"].X[:, 0] <= 0.8).all()
    assert len(data["test_ood"]) == 20 and len(data["train"]) + len(data["test_id"]) == 80
    assert "x > 0.8" in registry.get_task(result.task_id).split_note

    below = ud.import_table(path, "thr_below", ood=ud.OOD(column="x", op="<", value=0.1))
    assert (registry.get_task(below.task_id).load_data()["test_ood"].X[:, 0] < 0.1).all()


def test_ood_by_last_rows_and_fraction(home, tmp_path):
    rows = law_rows(50)
    path = write_table(tmp_path / "d.csv", rows)
    result = ud.import_table(path, "last", ood={"last_rows": 7}, test_fraction=0.0)
    data = registry.get_task(result.task_id).load_data()
    assert np.allclose(data["test_ood"].X, rows[-7:, :2]) and np.allclose(data["test_ood"].y, rows[-7:, 2])
    assert len(data["train"]) == 43 and "test_id" not in data.splits
    frac = ud.import_table(path, "lastfrac", ood={"last_fraction": 0.2})
    assert frac.rows["test_ood"] == 10


def test_separate_split_files(home, tmp_path):
    rows = law_rows(60)
    train = write_table(tmp_path / "train.csv", rows[:40])
    test = write_table(tmp_path / "test_id.csv", rows[40:50][:, [2, 0, 1]], header=("a", "x", "v"))  # any column order
    ood = write_table(tmp_path / "test_ood.csv", rows[50:])
    result = ud.import_table(train, "split", test_file=test, ood_file=ood)
    assert result.rows == {"train": 40, "test_id": 10, "test_ood": 10}
    data = registry.get_task(result.task_id).load_data()
    assert np.allclose(data["test_id"].X, rows[40:50, :2]) and np.allclose(data["test_id"].y, rows[40:50, 2])
    assert np.allclose(data["train"].X, rows[:40, :2])


def test_llmsr_problem_with_its_own_split_files(home):
    folder = SHARED / "oscillator1"
    if not (folder / "train.csv").exists():
        pytest.skip(f"LLM-SR data not present at {folder}")
    result = ud.import_table(folder / "train.csv", "oscillator1",
                             test_file=folder / "test_id.csv", ood_file=folder / "test_ood.csv")
    task = registry.get_task("user/oscillator1")
    assert task.target.name == "a" and task.input_names == ["x", "v"]
    data = task.load_data()
    for split, file in (("train", "train.csv"), ("test_id", "test_id.csv"), ("test_ood", "test_ood.csv")):
        raw = np.loadtxt(folder / file, delimiter=",", skiprows=1)
        assert result.rows[split] == raw.shape[0]
        assert np.array_equal(data[split].X, raw[:, :2]) and np.array_equal(data[split].y, raw[:, 2])


def test_column_names_become_safe_variables(home, tmp_path):
    header = ("Temperature (K)", "2theta", "lambda", "exp", "label", "σ")
    rng = np.random.default_rng(0)
    rows = [[f"{v:.6g}" for v in rng.uniform(1, 2, 4)] + ["sample", f"{rng.uniform():.6g}"] for _ in range(20)]
    path = write_table(tmp_path / "odd names.csv", rows, header=header)
    info = ud.inspect_csv(path)
    assert [c.variable for c in info.columns] == ["Temperature_K", "c_2theta", "lambda_", "exp_", "label", "σ"]
    assert [c.numeric for c in info.columns] == [True, True, True, True, False, True]
    result = ud.import_table(path, "odd", target="σ", descriptions={"Temperature (K)": "bath temperature"})
    # The text column was skipped by default, with a warning naming it.
    assert any("label" in w for w in result.warnings)
    task = registry.get_task(result.task_id)
    assert task.input_names == ["Temperature_K", "c_2theta", "lambda_", "exp_"]
    assert "Temperature (K)" in task.inputs[0].description and "bath temperature" in task.inputs[0].description
    assert result.renamed["lambda"] == "lambda_"
    # Every variable name is usable in an expression, and a renamed column can be chosen by either name.
    parsed = ex.parse("exp(lambda_) + Temperature_K * c_2theta - exp_", task.input_names)
    assert ex.compile_numpy(parsed, task.input_names)(task.load_data()["train"].X).shape == (len(task.load_data()["train"]),)
    again = ud.import_table(path, "odd2", target="σ", inputs=["lambda_", "Temperature (K)"])
    assert registry.get_task(again.task_id).input_names == ["lambda_", "Temperature_K"]


def test_drop_invalid_reports_the_dropped_rows(home, tmp_path):
    rows = [list(map(str, r)) for r in law_rows(30)]
    rows[3][1] = "nan"
    rows[7][0] = ""
    rows[9][2] = "-inf"
    path = write_table(tmp_path / "holes.csv", rows)
    with pytest.raises(ud.DataImportError, match=r"holes\.csv, line 5, column 'v': 'nan' is not a number \(NaN\); 3 rows"):
        ud.import_table(path, "holes")
    result = ud.import_table(path, "holes", drop_invalid=True)
    assert result.dropped_rows == 3 and sum(result.rows.values()) == 27
    assert "3 rows with missing, NaN or infinite values dropped" in registry.get_task("user/holes").split_note


def test_utf8_bom_and_crlf_and_blank_lines_are_fine(home, tmp_path):
    text = "x,v,a\r\n" + "".join(f"{r[0]},{r[1]},{r[2]}\r\n" for r in law_rows(20)) + "\r\n\r\n"
    path = tmp_path / "bom.csv"
    path.write_bytes(b"\xef\xbb\xbf" + text.encode())
    info = ud.inspect_csv(path)
    assert info.column_names == ["x", "v", "a"] and info.rows == 20


def test_replace_swaps_the_task_atomically(home, tmp_path):
    path = write_table(tmp_path / "d.csv", law_rows(40))
    ud.import_table(path, "same")
    with pytest.raises(ud.DataImportError, match="a task named 'user/same' already exists"):
        ud.import_table(path, "same")
    ud.import_table(path, "same", replace=True, test_fraction=0.5)
    assert len(registry.get_task("user/same").load_data()["test_id"]) == 20
    assert stored() == ["same"]


def test_nested_names_group_tasks(home, tmp_path):
    path = write_table(tmp_path / "d.csv", law_rows())
    ud.import_table(path, "lab/pendulum")
    task = registry.get_task("user/lab/pendulum")
    assert task.group == "lab" and task.name == "pendulum"
    ud.remove_task("user/lab/pendulum")
    assert "user/lab/pendulum" not in {t.id for t in registry.all_tasks()}


# ------------------------------------------------------------------------------ malformed files


def _ragged(tmp_path):
    rows = [list(map(str, r)) for r in law_rows(30)]
    rows[15] = rows[15][:2]  # data row 16 = line 17
    return write_table(tmp_path / "data.csv", rows)


def _text_cell(tmp_path):
    rows = [list(map(str, r)) for r in law_rows(30)]
    rows[3][1] = "abc"  # line 5, column v
    return write_table(tmp_path / "data.csv", rows)


def _cell(value: str, row: int, col: int):
    def make(tmp_path):
        rows = [list(map(str, r)) for r in law_rows(30)]
        rows[row][col] = value
        return write_table(tmp_path / "data.csv", rows)

    return make


def _raw(content: bytes):
    def make(tmp_path):
        path = tmp_path / "data.csv"
        path.write_bytes(content)
        return path

    return make


def _table(header=("x", "v", "a"), n=30, delimiter=","):
    return lambda tmp_path: write_table(tmp_path / "data.csv", law_rows(n), header=header, delimiter=delimiter)


GOOD_BODY = "".join(f"{r[0]},{r[1]},{r[2]}\n" for r in law_rows(30)).encode()

MALFORMED = [
    # (id, make file, import options, exact message or fragments)
    ("empty", _raw(b""), {}, "data.csv: the file is empty"),
    ("blank", _raw(b"\n \n\t\n"), {}, "data.csv: the file is empty"),
    ("header only", _raw(b"x,v,a\n"), {}, "data.csv has a header but no data rows"),
    ("ragged row 17", _ragged, {}, "data.csv, line 17: 2 fields, expected 3 (x, v, a); every row needs one value per column"),
    ("text cell", _text_cell, {}, "data.csv, line 5, column 'v': 'abc' is not a number"),
    ("decimal comma", _cell("1,5", 4, 0), {"delimiter": ","}, None),  # ragged under comma: see below
    ("NaN", _cell("NaN", 8, 0), {}, "data.csv, line 10, column 'x': 'NaN' is not a number (NaN); 1 row has missing"),
    ("inf", _cell("inf", 11, 2), {}, "data.csv, line 13, column 'a': 'inf' is infinite"),
    ("empty cell", _cell("", 2, 1), {}, "data.csv, line 4, column 'v': the cell is empty"),
    ("duplicate header", _raw(b"x,x,a\n" + GOOD_BODY), {},
     "data.csv, line 1: the header names column 'x' twice (columns 1 and 2); column names must be unique"),
    ("unnamed column", _raw(b"x,,a\n" + GOOD_BODY), {}, "data.csv, line 1: column 2 has no name in the header"),
    ("target not found", _table(), {"target": "y"},
     "data.csv has no column 'y' (the target); its columns are x, v, a"),
    ("input not found", _table(), {"inputs": ["x", "vv"]},
     "data.csv has no column 'vv' (the input); its columns are x, v, a; did you mean 'v'?"),
    ("target is input", _table(), {"target": "a", "inputs": ["x", "a"]}, "'a' is the target; it cannot also be an input"),
    ("non-UTF8", _raw(b"x,v,a\n1,2,3\n4,\xff5,6\n" + GOOD_BODY), {},
     "data.csv, line 3: byte 0xff is not UTF-8 text; save the file as UTF-8 (or plain ASCII) and import it again"),
    ("one column", _raw(b"x\n" + b"".join(b"%d\n" % i for i in range(30))), {},
     "data.csv has a single column (no comma, tab or semicolon separates its values); "
     "a task needs a target column and at least one input column"),
    ("too few rows", _table(n=4), {}, "data.csv has 4 usable data rows; at least 10 are needed"),
    ("bad task name", _table(), {"name": "my data!"}, "'my data!' is not a valid task name"),
    ("ood selects nothing", _table(), {"ood": {"column": "x", "op": ">", "value": 5}},
     "no row of data.csv has x > 5 (x ranges from 0 to 1); the out-of-domain test set would be empty"),
    ("ood takes everything", _table(), {"ood": {"last_rows": 30}},
     "the last 30 rows are all of data.csv's 30 usable rows; none would be left for training"),
    ("hdf5 given as table", _raw(b"\x89HDF\r\n\x1a\n" + b"\0" * 100), {},
     "data.csv: this is an HDF5 file, not a text table; import it as HDF5"),
    ("units for unused column", _table(), {"inputs": ["x"], "units": {"v": "m/s"}},
     "units are given for 'v', which is neither the target nor an input"),
]


@pytest.mark.parametrize(("make", "options", "message"), [m[1:] for m in MALFORMED], ids=[m[0] for m in MALFORMED])
def test_malformed_file_gives_a_precise_message_and_stores_nothing(home, tmp_path, make, options, message):
    path = make(tmp_path)
    options = dict(options)
    name = options.pop("name", "t")
    with pytest.raises(ud.DataImportError) as caught:
        ud.import_table(path, name, **options)
    text = str(caught.value)
    if message is None:  # "1,5" in a comma file splits the row: the ragged line is named
        assert text.startswith("data.csv, line 6: 4 fields, expected 3"), text
    else:
        assert text.startswith(message), text
    assert stored() == []
    assert not any(t.id.startswith("user/") for t in registry.all_tasks())


def test_decimal_comma_in_a_semicolon_file_is_explained(home, tmp_path):
    rows = [[f"{v:.3f}" for v in r] for r in law_rows(30)]
    rows[4][0] = "1,5"
    path = write_table(tmp_path / "data.csv", rows, delimiter=";")
    with pytest.raises(ud.DataImportError, match=r"^data\.csv, line 6, column 'x': '1,5' is not a number \(a decimal comma\?"):
        ud.import_table(path, "t")
    assert stored() == []


def test_mismatched_test_file_columns(home, tmp_path):
    rows = law_rows(40)
    train = write_table(tmp_path / "train.csv", rows)
    test = write_table(tmp_path / "test.csv", rows[:, :2], header=("x", "w"))
    with pytest.raises(ud.DataImportError) as caught:
        ud.import_table(train, "t", test_file=test)
    assert str(caught.value) == (
        "test.csv (the in-domain test file) must have the columns of train.csv (x, v, a): missing v, a; unexpected w"
    )
    assert stored() == []


def test_name_collision_leaves_the_existing_task_untouched(home, tmp_path):
    first = write_table(tmp_path / "first.csv", law_rows(40))
    ud.import_table(first, "taken")
    before = (ud.tasks_dir() / "taken" / "task.json").read_text()
    other = write_table(tmp_path / "other.csv", law_rows(20, seed=5))
    with pytest.raises(ud.DataImportError, match="^a task named 'user/taken' already exists; choose another name or replace it$"):
        ud.import_table(other, "taken")
    assert (ud.tasks_dir() / "taken" / "task.json").read_text() == before
    assert stored() == ["taken"]


def test_a_failed_write_leaves_nothing_behind(home, tmp_path, monkeypatch):
    path = write_table(tmp_path / "d.csv", law_rows())

    def full_disk(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(ud.np, "savez_compressed", full_disk)
    with pytest.raises(ud.DataImportError, match="cannot write the imported task under .*: No space left on device"):
        ud.import_table(path, "t")
    assert stored() == []


def test_missing_file(home, tmp_path):
    with pytest.raises(ud.DataImportError, match=r"nope\.csv: no such file"):
        ud.inspect_csv(tmp_path / "nope.csv")


# ------------------------------------------------------------------------------ stored tasks


def test_damaged_stored_tasks_are_skipped_with_a_warning(home, tmp_path):
    path = write_table(tmp_path / "d.csv", law_rows())
    ud.import_table(path, "good")
    ud.import_table(path, "nodata")
    (ud.tasks_dir() / "nodata" / "data.npz").unlink()
    bad = ud.tasks_dir() / "badjson"
    bad.mkdir()
    (bad / "task.json").write_text("{not json", encoding="utf-8")
    wrong = ud.tasks_dir() / "wrongid"
    wrong.mkdir()
    record = json.loads((ud.tasks_dir() / "good" / "task.json").read_text())
    (wrong / "task.json").write_text(json.dumps(record), encoding="utf-8")  # claims to be user/good
    (ud.tasks_dir() / "empty").mkdir()
    registry.invalidate()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ids = [t.id for t in registry.all_tasks("user")]
    assert ids == ["user/good"]
    messages = "\n".join(str(w.message) for w in caught)
    for folder, reason in (("nodata", "data.npz is missing"), ("badjson", "task.json cannot be read"),
                           ("wrongid", "does not match the folder name"), ("empty", "task.json is missing")):
        assert folder in messages and reason in messages, messages


def test_damaged_data_file_gives_a_clear_error(home, tmp_path):
    path = write_table(tmp_path / "d.csv", law_rows())
    ud.import_table(path, "broken")
    (ud.tasks_dir() / "broken" / "data.npz").write_bytes(b"garbage")
    task = registry.get_task("user/broken")
    with pytest.raises(RuntimeError, match=r"the stored data of user/broken are damaged .*; import the file again"):
        task.load_data()


# ------------------------------------------------------------------------------ HDF5

h5py = pytest.importorskip("h5py")


def write_llmsrbench_hdf5(path: Path) -> dict[str, dict[str, np.ndarray]]:
    """A small file in LLM-SRBench's layout: column 0 is the target."""
    rng = np.random.default_rng(0)

    def arr(n, d):
        X = rng.uniform(1, 2, (n, d))
        return np.column_stack([X.sum(axis=1) ** 2, X])

    content = {
        "lsr_transform/I.10.7_1_0": {"train": arr(50, 2), "test": arr(10, 2)},
        "lsr_synth/matsci/MatSci0": {"train": arr(40, 2), "test": arr(8, 2), "ood_test": arr(6, 2)},
        "lsr_synth/phys_osc/PO0": {"train": arr(30, 3), "test": arr(5, 3), "ood_test": arr(5, 3)},
    }
    with h5py.File(path, "w") as fh:
        for group, splits in content.items():
            g = fh.create_group(group)
            for key, value in splits.items():
                g.create_dataset(key, data=value)
        fh["lsr_synth/phys_osc/PO0"].attrs["symbols"] = ["dv_dt", "x", "t", "v"]
    return content


def test_llmsrbench_hdf5_round_trip(home, tmp_path):
    path = tmp_path / "lsr_bench_data.hdf5"
    content = write_llmsrbench_hdf5(path)
    problems = ud.inspect_hdf5(path)
    assert [p.path for p in problems] == sorted(content)
    results = ud.import_llmsrbench_hdf5(path)
    ids = sorted(r.task_id for r in results)
    assert ids == [
        "user/llmsrbench/lsr_synth/matsci/MatSci0",
        "user/llmsrbench/lsr_synth/phys_osc/PO0",
        "user/llmsrbench/lsr_transform/I.10.7_1_0",
    ]
    for group, splits in content.items():
        task = registry.get_task(f"user/llmsrbench/{group}")
        assert task.suite == "user/llmsrbench" and task.ground_truth.expression == ""
        data = task.load_data()
        assert set(data.splits) == {{"train": "train", "test": "test_id", "ood_test": "test_ood"}[k] for k in splits}
        for key, array in splits.items():
            ours = data[{"train": "train", "test": "test_id", "ood_test": "test_ood"}[key]]
            assert np.array_equal(ours.y, array[:, 0]) and np.array_equal(ours.X, array[:, 1:])
    po = registry.get_task("user/llmsrbench/lsr_synth/phys_osc/PO0")
    assert po.target.name == "dv_dt" and po.input_names == ["x", "t", "v"]
    transform = registry.get_task("user/llmsrbench/lsr_transform/I.10.7_1_0")
    assert transform.target.name == "y" and transform.input_names == ["x1", "x2"]
    assert transform.group == "lsr_transform" and transform.name == "I.10.7_1_0"
    with pytest.raises(ud.DataImportError, match="already exists"):
        ud.import_llmsrbench_hdf5(path)
    assert len(ud.import_llmsrbench_hdf5(path, replace=True)) == 3


def _hdf5_with(tmp_path, build) -> Path:
    path = tmp_path / "bad.h5"
    with h5py.File(path, "w") as fh:
        good = fh.create_group("lsr_transform/good")
        good.create_dataset("train", data=np.ones((20, 3)))
        build(fh)
    return path


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda fh: fh.create_dataset("lsr_synth/matsci/M1/train", data=np.ones(20)),
         "bad.h5: /lsr_synth/matsci/M1/train has shape (20,), expected a 2-D array (rows, 1 + inputs)"),
        (lambda fh: fh.create_dataset("lsr_synth/matsci/M1/train", data=np.ones((20, 1))),
         "bad.h5: /lsr_synth/matsci/M1/train has shape (20, 1), expected a 2-D array"),
        (lambda fh: (fh.create_dataset("p/q/train", data=np.ones((20, 3))), fh.create_dataset("p/q/test", data=np.ones((5, 4)))),
         "bad.h5: /p/q/test has 4 columns but the other splits of /p/q have 3"),
        (lambda fh: fh.create_dataset("p/q/train", data=np.where(np.eye(20, 3) > 0, np.nan, 1.0)),
         "bad.h5: /p/q/train, row 0, column 0 (the target): the value is NaN"),
        (lambda fh: fh.create_dataset("p/q/train", data=np.array([["a", "b"]] * 20, dtype="S1")),
         "bad.h5: /p/q/train holds |S1 values, expected numbers"),
        (lambda fh: fh.create_dataset("p/q/train", data=np.ones((3, 3))),
         "bad.h5: /p/q/train has 3 rows; at least 5 are needed"),
    ],
    ids=["1-D", "one column", "column mismatch", "NaN", "text", "too few rows"],
)
def test_malformed_hdf5_gives_a_precise_message_and_stores_nothing(home, tmp_path, build, message):
    path = _hdf5_with(tmp_path, build)
    with pytest.raises(ud.DataImportError) as caught:
        ud.import_llmsrbench_hdf5(path)
    assert str(caught.value).startswith(message), str(caught.value)
    assert stored() == []  # the good group in the same file was not imported either


def test_hdf5_that_is_not_one(home, tmp_path):
    path = write_table(tmp_path / "table.h5", law_rows())
    with pytest.raises(ud.DataImportError, match=r"^table\.h5: not a readable HDF5 file"):
        ud.import_llmsrbench_hdf5(path)
    empty = tmp_path / "empty.h5"
    with h5py.File(empty, "w") as fh:
        fh.create_group("lsr_transform")
    with pytest.raises(ud.DataImportError, match=r"^empty\.h5: no problem found; expected groups such as /lsr_transform/<name>"):
        ud.import_llmsrbench_hdf5(empty)
    assert stored() == []


# ------------------------------------------------------------------------------ running


@pytest.mark.slow
def test_a_user_task_runs_through_the_runner_with_gp(home, tmp_path):
    from engine import methods as m
    from engine.runner import RunFinished, execute
    from engine.store import RunStore

    rows = law_rows(200)
    path = write_table(tmp_path / "d.csv", rows)
    ud.import_table(path, "runme", ood={"last_rows": 20})
    task = registry.get_task("user/runme")
    with RunStore(tmp_path / "runs.sqlite3") as store:
        events = list(execute(task, "gp", {"seconds": 2, "seed": 1}, m.RunContext(), store))
        record = store.get_run(events[0].run_id)
    final = events[-1]
    assert isinstance(final, RunFinished) and final.status == "finished", final
    assert final.task_id == "user/runme" and set(final.metrics) == {"train", "id", "ood"}
    assert final.metrics["id"]["nmse"] < 0.1
    assert record.task_id == "user/runme" and record.status == "finished"


def test_an_import_killed_while_replacing_a_task_is_repaired_on_the_next_load(home, tmp_path):
    # Simulate a process killed between "move the old task aside" and "rename the new one in":
    # the old task sits in a stale staging folder and its place is empty.
    import os
    import time

    ud.import_table(write_table(tmp_path / "a.csv", law_rows()), "kept")
    root = ud.tasks_dir()
    staging = root / ".import-dead"
    staging.mkdir()
    os.replace(ud._task_dir("kept"), staging / "replaced-0")
    (staging / "0").mkdir()  # the new task's half-written folder
    old = time.time() - 2 * ud.STALE_STAGING_SECONDS
    os.utime(staging, (old, old))
    registry.invalidate()
    ids = [t.id for t in ud.load_tasks()]
    assert ids == ["user/kept"]
    assert not staging.exists()
    # A fresh staging folder (an import still running elsewhere) is left alone.
    (root / ".import-live").mkdir()
    ud.load_tasks()
    assert (root / ".import-live").exists()
