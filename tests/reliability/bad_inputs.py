"""A corpus of malformed files and values: what a user (or a colleague's broken export) may hand
to the importers, the study and project readers and the expression box.

Every entry builds its input in a folder (files) or is the text itself (expressions), and names
the fragment its message must contain: the place (line, column, key, member, character) and
what is wrong. :mod:`tests.reliability.test_bad_input` feeds each to the engine, the window
and the CLI and checks the message, that nothing crashed and that nothing was written.

Kinds and the call they go through:

``csv``
    :func:`engine.tasks.user_data.import_table` (``options`` are its keyword arguments).
``hdf5``
    :func:`engine.tasks.user_data.import_llmsrbench_hdf5`.
``study``
    :func:`engine.lab.study.load_study`.
``project``
    :func:`engine.project.read_project`, then :func:`engine.project.open_into` a run store.
``expression``
    :func:`engine.expr.parse` as the lab's hypothesis box calls it (free names are constants,
    parts must be finite), or with ``options={"strict": True}`` as the equivalence check and
    the CLI call it (only the task's variables are names).
"""

from __future__ import annotations

import json
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

#: The variables of the expressions: NewtonBench's gravity task, the lab panel's default.
VARIABLES = ("mass1", "mass2", "distance")
GRAVITY = "newtonbench/m0_gravity/v0/easy/vanilla"


@dataclass(frozen=True)
class Case:
    id: str
    kind: str  # csv | hdf5 | study | project | expression
    expect: str  # a fragment the message must contain
    make: Callable[[Path], Path] | None = None  # files: write the input under a folder
    text: str = ""  # expressions
    options: dict = field(default_factory=dict)
    names_file: bool = True  # the message names the file (not when the fault is a value typed with it)

    def build(self, folder: Path) -> Path | str:
        return self.text if self.kind == "expression" else self.make(folder)


# ------------------------------------------------------------------------------ CSV

def _rows(n: int = 30) -> list[list[str]]:
    """A table with columns x, v, a (a = 2x + v²)."""
    x = np.linspace(0.1, 3.0, n)
    v = np.cos(x)
    return [[f"{a:.6g}", f"{b:.6g}", f"{2 * a + b * b:.6g}"] for a, b in zip(x, v)]


def _table(rows: list[list[str]], header: str = "x,v,a", sep: str = ",") -> str:
    return "\n".join([header] + [sep.join(r) for r in rows]) + "\n"


def _csv(name: str, content: str | bytes | Callable[[], str | bytes]):
    def make(folder: Path) -> Path:
        data = content() if callable(content) else content
        path = folder / name
        path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
        return path
    return make


def _with_cell(line: int, column: int, cell: str, n: int = 30) -> str:
    """The table with one cell replaced (``line`` as an editor counts: the header is line 1)."""
    rows = _rows(n)
    rows[line - 2][column] = cell
    return _table(rows)


def _ragged() -> str:
    rows = _rows()
    rows[15] = rows[15][:2]
    return _table(rows)


def _unclosed_quote() -> str:
    rows = _rows()
    rows[4][0] = '"' + rows[4][0]  # line 6 opens a quote that never closes
    return _table(rows)


def _quoted_newline() -> str:
    rows = _rows()
    rows[4][0] = '"1\n2"'  # a quoted cell over lines 6-7 in a numeric column
    return _table(rows)


def _constant_target() -> str:
    rows = _rows()
    for r in rows:
        r[2] = "5"
    return _table(rows)


def _text_inputs() -> str:
    rows = _rows()
    for i, r in enumerate(rows):
        r[0], r[1] = f"label{i}", f"note{i}"
    return _table(rows)


def _cr_line_ends() -> bytes:
    return _with_cell(4, 1, "abc").replace("\n", "\r").encode()


CSV_CASES = [
    Case("csv-empty-file", "csv", "empty.csv: the file is empty", _csv("empty.csv", b"")),
    Case("csv-blank-lines-only", "csv", "blank.csv: the file is empty", _csv("blank.csv", " \n\n  \n")),
    Case("csv-header-only", "csv", "header.csv has a header but no data rows", _csv("header.csv", "x,v,a\n")),
    Case("csv-ragged-row", "csv", "ragged.csv, line 17: 2 fields, expected 3 (x, v, a)", _csv("ragged.csv", _ragged)),
    Case("csv-text-cell", "csv", "text.csv, line 6, column 'v': 'abc' is not a number",
         _csv("text.csv", lambda: _with_cell(6, 1, "abc"))),
    Case("csv-nan-cell", "csv", "nan.csv, line 6, column 'v': 'nan' is not a number (NaN)",
         _csv("nan.csv", lambda: _with_cell(6, 1, "nan"))),
    Case("csv-inf-cell", "csv", "inf.csv, line 9, column 'a': '-inf' is infinite",
         _csv("inf.csv", lambda: _with_cell(9, 2, "-inf"))),
    Case("csv-overflowing-number", "csv", "big.csv, line 9, column 'x': '1e999' is infinite",
         _csv("big.csv", lambda: _with_cell(9, 0, "1e999"))),
    Case("csv-empty-cell", "csv", "hole.csv, line 6, column 'v': the cell is empty",
         _csv("hole.csv", lambda: _with_cell(6, 1, ""))),
    Case("csv-duplicate-column-names", "csv", "dup.csv, line 1: the header names column 'x' twice (columns 1 and 2)",
         _csv("dup.csv", lambda: _table(_rows(), header="x,x,a"))),
    Case("csv-unnamed-column", "csv", "unnamed.csv, line 1: column 2 has no name in the header",
         _csv("unnamed.csv", lambda: _table(_rows(), header="x,,a"))),
    Case("csv-wrong-delimiter", "csv", "pipes.csv has a single column (no comma, tab or semicolon",
         _csv("pipes.csv", lambda: _table(_rows(), header="x|v|a", sep="|"))),
    Case("csv-decimal-comma", "csv",
         "comma.csv, line 6, column 'x': '0,5' is not a number (a decimal comma? use a point",
         _csv("comma.csv", lambda: _table([*_rows()[:4], ["0,5", "1", "2"], *_rows()[5:]], header="x;v;a", sep=";"))),
    Case("csv-binary-garbage", "csv", "garbage.csv, line 1: byte 0x80 is not UTF-8 text",
         _csv("garbage.csv", bytes(range(128, 256)) * 8)),
    Case("csv-latin-1", "csv", "latin.csv, line 3: byte 0xe9 is not UTF-8 text",
         _csv("latin.csv", lambda: _with_cell(3, 1, "caf\xe9").encode("latin-1"))),
    Case("csv-nul-byte", "csv", "nul.csv, line 6: contains a NUL character",
         _csv("nul.csv", lambda: _with_cell(6, 1, "1\x002"))),
    Case("csv-huge-cell", "csv", "huge.csv, line 5: a cell is longer than 131,072 characters",
         _csv("huge.csv", lambda: _with_cell(5, 1, "9" * 200_000))),
    Case("csv-one-row", "csv", "one.csv has 1 usable data row; at least 10 are needed",
         _csv("one.csv", "x,v,a\n1,2,3\n")),
    Case("csv-target-missing", "csv", "target.csv has no column 'force' (the target); its columns are x, v, a",
         _csv("target.csv", lambda: _table(_rows())), options={"target": "force"}),
    Case("csv-constant-target", "csv", "flat.csv, column 'a': the target has the same value (5) in every usable row",
         _csv("flat.csv", _constant_target)),
    Case("csv-no-numeric-input", "csv", "words.csv: choose at least one input column besides the target 'a'",
         _csv("words.csv", _text_inputs)),
    Case("csv-unclosed-quote", "csv",
         "quote.csv, line 6: a quoted cell starting on this line runs on to line 31; is a closing quotation mark",
         _csv("quote.csv", _unclosed_quote)),
    Case("csv-quoted-newline-in-a-number", "csv", r"multi.csv, line 6, column 'x': '1\n2' is not a number",
         _csv("multi.csv", _quoted_newline)),
    Case("csv-bom-and-a-text-cell", "csv", "bom.csv, line 4, column 'x': 'oops' is not a number",
         _csv("bom.csv", lambda: b"\xef\xbb\xbf" + _with_cell(4, 0, "oops").encode()), options={"target": "x"}),
    Case("csv-old-mac-line-ends", "csv", "mac.csv, line 4, column 'v': 'abc' is not a number",
         _csv("mac.csv", _cr_line_ends)),
    Case("csv-underscore-digits", "csv", "under.csv, line 7, column 'x': '1_000' is not a number",
         _csv("under.csv", lambda: _with_cell(7, 0, "1_000"))),
    Case("csv-a-spreadsheet", "csv", "sheet.csv: this looks like a spreadsheet or zip archive; save the sheet as CSV",
         _csv("sheet.csv", b"PK\x03\x04" + b"\x00" * 200)),
    Case("csv-bad-task-name", "csv", "'../escape' is not a valid task name",
         _csv("name.csv", lambda: _table(_rows())), options={"name": "../escape"}, names_file=False),
]


# ------------------------------------------------------------------------------ HDF5

def _h5(name: str, build: Callable) -> Callable[[Path], Path]:
    def make(folder: Path) -> Path:
        import h5py

        path = folder / name
        with h5py.File(path, "w") as fh:
            build(fh, np.random.default_rng(0))
        return path
    return make


def _h5_bytes(name: str, content: Callable[[Path], bytes]) -> Callable[[Path], Path]:
    def make(folder: Path) -> Path:
        path = folder / name
        path.write_bytes(content(folder))
        return path
    return make


def _good_h5(fh, rng) -> None:
    fh.create_dataset("lsr_synth/bio/BPG0/train", data=rng.uniform(size=(40, 3)))
    fh.create_dataset("lsr_synth/bio/BPG0/test", data=rng.uniform(size=(10, 3)))


def _truncated_h5(folder: Path) -> bytes:
    whole = _h5("whole.hdf5", _good_h5)(folder)
    data = whole.read_bytes()
    whole.unlink()
    return data[: len(data) // 2]


def _nan_h5(fh, rng) -> None:
    data = rng.uniform(size=(40, 3))
    data[7, 2] = np.nan
    fh.create_dataset("p/Q/train", data=data)


def _width_mismatch(fh, rng) -> None:
    fh.create_dataset("p/Q/train", data=rng.uniform(size=(40, 3)))
    fh.create_dataset("p/Q/test", data=rng.uniform(size=(10, 4)))


def _external_link(fh, rng) -> None:
    import h5py

    fh.create_dataset("p/Q/train", data=rng.uniform(size=(40, 3)))
    fh["p/R/train"] = h5py.ExternalLink("/etc/passwd", "/secret")


def _dangling_link(fh, rng) -> None:
    import h5py

    fh.create_dataset("p/Q/train", data=rng.uniform(size=(40, 3)))
    fh["p/R/train"] = h5py.SoftLink("/nowhere")


def _symbols(names) -> Callable:
    def build(fh, rng) -> None:
        fh.create_dataset("p/Q/train", data=rng.uniform(size=(40, 3)))
        fh["p/Q"].attrs["symbols"] = names
    return build


HDF5_CASES = [
    Case("hdf5-not-hdf5", "hdf5",
         "text.hdf5: not a readable HDF5 file (", _h5_bytes("text.hdf5", lambda _f: b"x,y\n1,2\n")),
    Case("hdf5-empty-file", "hdf5", "empty.h5: not a readable HDF5 file (", _h5_bytes("empty.h5", lambda _f: b"")),
    Case("hdf5-truncated", "hdf5",
         "cut.hdf5: not a readable HDF5 file (Unable to synchronously open file (truncated file",
         _h5_bytes("cut.hdf5", _truncated_h5)),
    Case("hdf5-no-problem", "hdf5", "notrain.h5: no problem found; expected groups such as /lsr_transform/<name>",
         _h5("notrain.h5", lambda fh, rng: fh.create_dataset("p/Q/test", data=rng.uniform(size=(10, 3))))),
    Case("hdf5-group-not-dataset", "hdf5", "group.h5: no problem found",
         _h5("group.h5", lambda fh, rng: fh.create_group("p/Q/train/inner"))),
    Case("hdf5-one-dimensional", "hdf5", "flat.h5: /p/Q/train has shape (40,), expected a 2-D array",
         _h5("flat.h5", lambda fh, rng: fh.create_dataset("p/Q/train", data=rng.uniform(size=40)))),
    Case("hdf5-one-column", "hdf5", "onecol.h5: /p/Q/train has shape (40, 1), expected a 2-D array",
         _h5("onecol.h5", lambda fh, rng: fh.create_dataset("p/Q/train", data=rng.uniform(size=(40, 1))))),
    Case("hdf5-strings", "hdf5", "strings.h5: /p/Q/train holds |S3 values, expected numbers",
         _h5("strings.h5", lambda fh, rng: fh.create_dataset("p/Q/train", data=np.array([["a", "b"]] * 40, "S3")))),
    Case("hdf5-complex", "hdf5", "complex.h5: /p/Q/train holds complex128 values, expected numbers",
         _h5("complex.h5", lambda fh, rng: fh.create_dataset("p/Q/train", data=rng.uniform(size=(40, 3)) + 1j))),
    Case("hdf5-empty-dataset", "hdf5", "none.h5: /p/Q/train has no rows",
         _h5("none.h5", lambda fh, rng: fh.create_dataset("p/Q/train", shape=(0, 3), dtype=float))),
    Case("hdf5-too-few-rows", "hdf5", "few.h5: /p/Q/train has 3 rows; at least 5 are needed",
         _h5("few.h5", lambda fh, rng: fh.create_dataset("p/Q/train", data=rng.uniform(size=(3, 3))))),
    Case("hdf5-nan", "hdf5", "nan.h5: /p/Q/train, row 7, column 2 (input 2): the value is NaN", _h5("nan.h5", _nan_h5)),
    Case("hdf5-width-mismatch", "hdf5", "mix.h5: /p/Q/test has 4 columns but the other splits of /p/Q have 3",
         _h5("mix.h5", _width_mismatch)),
    # A few kilobytes declaring 24 GB: read, it would exhaust memory.
    Case("hdf5-huge-declared-array", "hdf5",
         "huge.h5: /p/Q/train has shape (1000000000, 3): 3,000,000,000 values; at most 20,000,000",
         _h5("huge.h5", lambda fh, rng: fh.create_dataset("p/Q/train", shape=(10**9, 3), dtype=float,
                                                          chunks=(1000, 3), compression="gzip"))),
    Case("hdf5-external-link", "hdf5", "ext.h5: /p/R/train is an external link to /etc/passwd:/secret; only arrays",
         _h5("ext.h5", _external_link)),
    Case("hdf5-dangling-link", "hdf5", "soft.h5: /p/R/train is a link to /nowhere", _h5("soft.h5", _dangling_link)),
    Case("hdf5-symbols-count", "hdf5", "sym.h5: /p/Q: 2 symbol names (y, x) for 3 columns",
         _h5("sym.h5", _symbols(["y", "x"]))),
    Case("hdf5-symbols-not-utf8", "hdf5", "symb.h5: /p/Q: the 'symbols' attribute is not UTF-8 text",
         _h5("symb.h5", _symbols(np.array([b"\xff\xfe", b"x", b"z"])))),
]


# ------------------------------------------------------------------------------ study files

def _study(name: str, content: str | bytes | dict) -> Callable[[Path], Path]:
    def make(folder: Path) -> Path:
        path = folder / name
        data = json.dumps(content) if isinstance(content, dict) else content
        path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
        return path
    return make


_GOOD_STUDY = {"title": "Week 3", "tasks": [GRAVITY]}

STUDY_CASES = [
    Case("study-bad-json", "study", "bad.json: not valid JSON: Expecting ',' delimiter: line 1 column",
         _study("bad.json", '{"title": "W", "tasks": ["x"')),
    Case("study-bad-toml", "study", "bad.toml: not valid TOML: ", _study("bad.toml", 'title = "W"\ntasks = [\n')),
    Case("study-toml-repeated-key", "study", "twice.toml: not valid TOML: Cannot overwrite a value (at line 2",
         _study("twice.toml", f'title = "W"\ntitle = "X"\ntasks = ["{GRAVITY}"]\n')),
    Case("study-json-repeated-key", "study", "twice.json: `title` is given twice",
         _study("twice.json", f'{{"title": "W", "tasks": ["{GRAVITY}"], "title": "X"}}')),
    Case("study-unknown-task", "study",
         "unknown.json: `tasks[1]` = 'newtonbench/m99_nothing/v0/easy/vanilla': unknown lab task",
         _study("unknown.json", {**_GOOD_STUDY, "tasks": [GRAVITY, "newtonbench/m99_nothing/v0/easy/vanilla"]})),
    Case("study-task-not-text", "study", "types.json: `tasks[0]` must be a task id (text), not 3",
         _study("types.json", {**_GOOD_STUDY, "tasks": [3]})),
    Case("study-missing-title", "study", "notitle.toml: `title` is missing or empty",
         _study("notitle.toml", f'tasks = ["{GRAVITY}"]\n')),
    Case("study-missing-tasks", "study", "notasks.json: `tasks` must be a non-empty list of lab task ids",
         _study("notasks.json", {"title": "W"})),
    Case("study-duplicate-task", "study", f"dup.json: `tasks[1]` = '{GRAVITY}' is listed twice",
         _study("dup.json", {**_GOOD_STUDY, "tasks": [GRAVITY, GRAVITY]})),
    Case("study-negative-round-limit", "study", "neg.json: `round_limit` must be a whole number from 1 to 1000, not -1",
         _study("neg.json", {**_GOOD_STUDY, "round_limit": -1})),
    Case("study-nan-time-limit", "study",
         "nan.json: `time_limit_minutes` must be a positive number of minutes, not nan",
         _study("nan.json", f'{{"title": "W", "tasks": ["{GRAVITY}"], "time_limit_minutes": NaN}}')),
    Case("study-noise-as-text", "study", "noise.json: `noise` must be one of 0, 0.0001, 0.001, 0.01, 0.1, not '0.01'",
         _study("noise.json", {**_GOOD_STUDY, "noise": "0.01"})),
    Case("study-unknown-setting", "study", "extra.json: `rounds` is not a study setting",
         _study("extra.json", {**_GOOD_STUDY, "rounds": 3})),
    Case("study-not-an-object", "study", "list.json: the study must be a table / object of settings",
         _study("list.json", json.dumps([_GOOD_STUDY]))),
    Case("study-nested-too-deeply", "study", "deep.json: not valid JSON: nested too deeply",
         _study("deep.json", "[" * 100_000 + "]" * 100_000)),
    Case("study-not-utf8", "study", "latin.toml, line 1: byte 0xe9 is not UTF-8 text",
         _study("latin.toml", 'title = "Caf\xe9"\n'.encode("latin-1"))),
    Case("study-control-character-in-title", "study", "ctrl.json: `title` contains a control character",
         _study("ctrl.json", {**_GOOD_STUDY, "title": "Week\x003"})),
    Case("study-huge-file", "study", "huge.json: the study file is 2,000,0",
         _study("huge.json", {**_GOOD_STUDY, "title": "x" * 2_000_000})),
]


# ------------------------------------------------------------------------------ project files

def good_project(folder: Path) -> tuple[Path, str]:
    """A valid project file holding one finished run (made in a run store of its own)."""
    from engine import project as pj
    from engine.store import RunStore

    with RunStore(folder / "colleague.sqlite3") as store:
        run_id = store.create_run("feynman/I.6.2a", "gp", {"seconds": 1, "seed": 1}, 1)
        store.add_event(run_id, "progress", {"iteration": 1, "best_loss": 0.5})
        store.add_pareto(run_id, 1, [{"expression": "theta", "complexity": 1, "loss": 0.5}])
        store.finish_run(run_id, "finished", seconds=1.0, expression="theta", complexity=1, train_loss=0.5,
                         metrics={"id": {"nmse": 0.5}})
        path = pj.save_project(folder / "good.klab", store, ["feynman/I.6.2a"], [run_id], "notes").path
    return path, run_id


def _rewrite(src: Path, dst: Path, replace: dict | None = None, add: dict | None = None) -> Path:
    """A copy of a project with members replaced (None drops one) or added."""
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


def _project(name: str, tamper: Callable[[Path, str, Path], Path | bytes]) -> Callable[[Path], Path]:
    """``tamper(good project, its run id, destination)`` returns the bad file or its bytes."""
    def make(folder: Path) -> Path:
        good, run_id = good_project(folder)
        dst = folder / name
        out = tamper(good, run_id, dst)
        if isinstance(out, bytes):
            dst.write_bytes(out)
        good.unlink()
        return dst
    return make


def _manifest_with(**changes) -> Callable:
    return lambda good, _r, dst: _rewrite(good, dst, {"project.json": json.dumps({**_manifest(good), **changes})})


def _bomb(good: Path, _run: str, dst: Path) -> Path:
    """5 MB of spaces in the manifest (a few kB compressed) against its 4 MB limit."""
    return _rewrite(good, dst, {"project.json": json.dumps(_manifest(good)) + " " * (5 << 20)})


def _understated_bomb(good: Path, run: str, dst: Path) -> bytes:
    """The same bomb, its headers claiming the manifest is 1,000 bytes: reading must stop at
    the limit whatever the header says."""
    bomb = _bomb(good, run, dst)
    with zipfile.ZipFile(bomb) as zf:
        real = zf.getinfo("project.json").file_size.to_bytes(4, "little")
    return bomb.read_bytes().replace(real, (1000).to_bytes(4, "little"))


def _bad_zip_version(good: Path, _run: str, dst: Path) -> bytes:
    """The central directory claims the manifest needs zip version 14.7 to extract."""
    data = bytearray(good.read_bytes())
    at = data.index(b"PK\x01\x02")  # the first central directory entry
    data[at + 6] = 147  # "version needed to extract"
    return bytes(data)


def _corrupt_run(good: Path, run: str, dst: Path) -> Path:
    member = f"runs/{run}.json"
    with zipfile.ZipFile(good) as zf:
        text = zf.read(member)
    return _rewrite(good, dst, {member: text[: len(text) // 2]})


def _run_wrong_type(good: Path, run: str, dst: Path) -> Path:
    member = f"runs/{run}.json"
    with zipfile.ZipFile(good) as zf:
        bundle = json.loads(zf.read(member))
    bundle["events"][0]["seq"] = "one"
    return _rewrite(good, dst, {member: json.dumps(bundle)})


PROJECT_CASES = [
    Case("project-not-a-zip", "project", "text.klab is not a Kepler Lab project: it is not a zip archive",
         _project("text.klab", lambda *_: b"just text, not an archive")),
    Case("project-truncated", "project",
         "cut.klab is not a Kepler Lab project: it is not a zip archive, or it was cut short",
         _project("cut.klab", lambda good, _r, _d: good.read_bytes()[: good.stat().st_size // 2])),
    Case("project-no-manifest", "project",
         "nomanifest.klab is not a Kepler Lab project: it has no project.json manifest",
         _project("nomanifest.klab", lambda good, _r, dst: _rewrite(good, dst, {"project.json": None}))),
    Case("project-manifest-not-json", "project",
         "notjson.klab: project.json is damaged or cut short: not valid JSON (line 1, column",
         _project("notjson.klab", lambda good, _r, dst: _rewrite(good, dst, {"project.json": '{"format": '}))),
    Case("project-newer-version", "project", "newer.klab was saved by a newer Kepler Lab",
         _project("newer.klab", _manifest_with(format_version=7))),
    Case("project-wrong-format-version-type", "project",
         "vtype.klab: the manifest's format_version '1' is not a version",
         _project("vtype.klab", _manifest_with(format_version="1"))),
    Case("project-foreign-format", "project",
         "foreign.klab is not a Kepler Lab project: its manifest's format is 'zotero'",
         _project("foreign.klab", _manifest_with(format="zotero"))),
    Case("project-runs-not-a-list", "project", "runs.klab: the manifest's runs must be a list of ids",
         _project("runs.klab", _manifest_with(runs="abc"))),
    Case("project-path-traversal", "project", "traversal.klab holds a member with an unsafe path '../evil.sh'",
         _project("traversal.klab", lambda good, _r, dst: _rewrite(good, dst, add={"../evil.sh": b"rm -rf ~"}))),
    Case("project-absolute-path", "project", "absolute.klab holds a member with an unsafe path '/etc/cron.d/x'",
         _project("absolute.klab", lambda good, _r, dst: _rewrite(good, dst, add={"/etc/cron.d/x": b"evil"}))),
    Case("project-zip-bomb", "project", "bomb.klab: the member project.json is too large (5,",
         _project("bomb.klab", _bomb)),
    Case("project-zip-bomb-understated", "project", "liar.klab: the member project.json is",
         _project("liar.klab", _understated_bomb)),
    Case("project-damaged-directory", "project", "version.klab is damaged: its zip directory cannot be read",
         _project("version.klab", _bad_zip_version)),
    Case("project-run-json-corrupt", "project", "is damaged or cut short: not valid JSON (line 1, column",
         _project("runcut.klab", _corrupt_run)),
    Case("project-run-missing", "project", "is listed but its file runs/",
         _project("norun.klab", lambda good, run, dst: _rewrite(good, dst, {f"runs/{run}.json": None}))),
    Case("project-run-wrong-type", "project", "the column 'seq' holds str", _project("seq.klab", _run_wrong_type)),
]


# ------------------------------------------------------------------------------ expressions

def _expr(id_: str, text: str, expect: str, **options) -> Case:
    return Case(id_, "expression", expect, text=text, options=options)


EXPRESSION_CASES = [
    _expr("expr-unclosed-bracket", "C*mass1*(mass2/distance**2",
          "cannot parse the expression: unbalanced brackets (at character 9)"),
    _expr("expr-extra-bracket", "C*mass1)", "cannot parse the expression: unbalanced brackets (at character 8)"),
    _expr("expr-mismatched-brackets", "sqrt(mass1]",
          "cannot parse the expression: unbalanced brackets (at character 11)"),
    _expr("expr-unknown-function", "C*foo(mass1)", "unknown function 'foo' (known: Abs, abs"),
    _expr("expr-dunder-import", "__import__('os').system('ls')", "attribute access is not allowed (at character 1)"),
    _expr("expr-import-call", "__import__('os')", "unknown function '__import__'"),
    _expr("expr-dunder-attribute", "mass1.__class__.__bases__", "attribute access is not allowed (at character 1)"),
    _expr("expr-dunder-name", "__builtins__", "the name '__builtins__' is not allowed (at character 1)"),
    _expr("expr-exec", "exec('import os')", "unknown function 'exec'"),
    _expr("expr-eval-via-module", "np.system('ls')", "unknown function 'system'"),
    _expr("expr-lambda", "(lambda: mass1)()", "only named functions can be called (at character 1)"),
    _expr("expr-comprehension", "[m for m in (mass1, mass2)]",
          "'ListComp' is not allowed in an expression (at character 1)"),
    _expr("expr-walrus", "(C := 3)*mass1", "'NamedExpr' is not allowed in an expression (at character 2)"),
    _expr("expr-f-string", "f'{mass1}'", "'JoinedStr' is not allowed in an expression (at character 1)"),
    _expr("expr-string-literal", "'rm -rf /'", "only numbers are allowed as literals, not 'rm -rf /' (at character 1)"),
    _expr("expr-assignment", "mass1 = 3", "cannot parse the expression: invalid syntax (at character 7)"),
    _expr("expr-two-statements", "mass1; mass2", "cannot parse the expression: invalid syntax (at character 6)"),
    _expr("expr-keyword-argument", "sin(x=mass1)", "keyword arguments are not allowed (at character 1)"),
    _expr("expr-subscript", "mass1[0]", "'Subscript' is not allowed in an expression (at character 1)"),
    _expr("expr-comparison", "mass1 < mass2", "'Compare' is not allowed in an expression (at character 1)"),
    _expr("expr-wrong-arity", "sin(mass1, mass2)", "sin() takes 1 argument (at character 1)"),
    _expr("expr-division-by-zero", "C*mass1/0",
          "the division gives an infinite or undefined value (a division by zero, log(0), ...) (at character 1)"),
    _expr("expr-log-of-zero", "mass1 + log(0)",
          "log() gives an infinite or undefined value (a division by zero, log(0), ...) (at character 9)"),
    _expr("expr-zero-over-zero", "(mass1 - mass1)/(mass2 - mass2)",
          "the division gives an infinite or undefined value"),
    _expr("expr-overflowing-constant", "exp(1000)*mass1",
          "exp() gives a constant too large to compute with (more than 1e+300) (at character 1)"),
    _expr("expr-overflowing-power", "pi**1000*mass1",
          "the power gives a constant too large to compute with (more than 1e+300) (at character 1)"),
    _expr("expr-mod-by-zero", "mod(mass1, 0)", "mod() is undefined here (Modulo by zero) (at character 1)"),
    _expr("expr-infinite-literal", "1e999*mass1", "numbers must be finite (at character 1)"),
    _expr("expr-too-many-digits", "9" * 5000 + "*mass1", "cannot parse the expression: a number has too many digits"),
    _expr("expr-empty", "   ", "the expression is empty"),
    _expr("expr-too-long", "mass1+" * 3400 + "mass1", "the expression is too long (20405 characters, limit 20000)"),
    _expr("expr-deeply-nested", "-" * 1000 + "mass1", "the expression is nested too deeply"),
    _expr("expr-nested-brackets", "(" * 300 + "mass1" + ")" * 300,
          "cannot parse the expression: too many nested parentheses"),
    _expr("expr-long-power-tower", "**".join(["mass1"] * 250), "the expression is nested too deeply"),
    _expr("expr-zero-width-space", "mass1\u200b*mass2", "invalid non-printable character U+200B (at character 6)"),
    _expr("expr-cyrillic-lookalike", "m\u0430ss1*mass2",
          "unknown name 'm\u0430ss1' (it contains the non-ASCII character '\u0430', U+0430 CYRILLIC SMALL LETTER A) "
          "(variables: distance, mass1, mass2) (at character 1)", strict=True),
    _expr("expr-unknown-variable", "mass3*distance",
          "unknown name 'mass3' (variables: distance, mass1, mass2) (at character 1)", strict=True),
]

CASES: list[Case] = CSV_CASES + HDF5_CASES + STUDY_CASES + PROJECT_CASES + EXPRESSION_CASES
BY_ID = {c.id: c for c in CASES}
assert len(BY_ID) == len(CASES), "case ids must be unique"
