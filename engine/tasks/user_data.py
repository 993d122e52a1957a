"""Your own data: a table a scientist brings becomes a task stored under ``user/<name>``.

Sources
    * a delimited text file (comma, tab or semicolon separated; UTF-8, UTF-8 with BOM or UTF-16
      with BOM), with or without a header row — :func:`inspect_csv` describes one and
      :func:`import_table` imports it; the train / test-ID / test-OOD splits are either cut from
      one file or given as separate files with the same columns (the shape of LLM-SR's
      ``train.csv`` / ``test_id.csv`` / ``test_ood.csv``);
    * the official LLM-SRBench HDF5 file (``lsr_bench_data.hdf5``) —
      :func:`import_llmsrbench_hdf5` imports every problem group in it.

Storage
    ``<user data dir>/user_tasks/<name with / as ~>/`` holds ``task.json`` (variables, context,
    how the splits were made, where the data came from) and ``data.npz`` (X and y of every split,
    the layout of :mod:`engine.data.cache`). An import is written into a staging directory next
    to the others and renamed into place, so a failed or interrupted import leaves nothing
    behind. :func:`load_tasks` lists the stored tasks; a damaged one is skipped with a warning.

Rules (also in ``docs/architecture.md``)
    * Messages name the file, the line (as a text editor counts them: the header is line 1),
      the column and what is wrong. Nothing is guessed silently.
    * Column names become variable names usable in expressions: characters other than letters,
      digits and ``_`` become ``_``; a name starting with a digit gets a ``c_`` prefix; Python
      keywords, function names of :mod:`engine.expr` and module names (``np``, ``math``, ...)
      get a ``_`` suffix; an empty header cell is an error. The original name is kept in the
      variable's description and in ``task.json``. Users may refer to a column by either name.
    * Only the chosen columns (target, inputs and the out-of-domain column) must be numeric; other
      columns (labels, comments) are ignored.
    * Empty, NaN and infinite cells in chosen columns are refused with their position, unless
      ``drop_invalid=True``: then those rows are dropped and the count is reported. A cell that
      is text is always refused.
    * The ground truth of user data is unknown: ``GroundTruth(expression="")``.
"""

from __future__ import annotations

import csv
import dataclasses
import difflib
import hashlib
import io
import json
import keyword
import logging
import math
import os
import re
import shutil
import tempfile
import time
import unicodedata
import warnings
from dataclasses import dataclass, field
from functools import cache, partial
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from .. import paths
from .model import SPLITS, GroundTruth, Split, Task, TaskData, Variable

SUITE = "user"
BENCHMARK_LABEL = "Your data"
SUITE_LABEL = "Imported tables"
HDF5_PREFIX = "llmsrbench"
HDF5_SUITE = f"{SUITE}/{HDF5_PREFIX}"
HDF5_SUITE_LABEL = "LLM-SRBench (HDF5 file)"

FORMAT = "keplerlab-user-task"
FORMAT_VERSION = 1
TASKS_DIRNAME = "user_tasks"

#: A single-file import needs at least this many usable data rows, and every import at least
#: MIN_TRAIN_ROWS training rows.
MIN_ROWS = 10
MIN_TRAIN_ROWS = 5
#: Rows shown by :func:`inspect_csv`.
PREVIEW_ROWS = 20
#: Lines the delimiter guess looks at.
SNIFF_LINES = 50
DELIMITER_NAMES = {",": "comma", "\t": "tab", ";": "semicolon"}
#: Preference when several delimiters split the first lines consistently.
_DELIMITER_ORDER = ("\t", ";", ",")

_SEGMENT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,79}")
_MAX_SEGMENTS = 6

log = logging.getLogger(__name__)


class DataImportError(ValueError):
    """A file or a choice that cannot be imported; the message says where and why."""


# --------------------------------------------------------------------------- names


#: Module spellings the expression parser accepts before a function (``np.sin``, ``math.exp``).
_MODULE_NAMES = {"np", "numpy", "math", "sp", "sympy"}


@cache
def _reserved_names() -> frozenset[str]:
    """Names a column cannot keep: Python keywords, function names and module spellings of
    :mod:`engine.expr` (``pi`` and ``e`` stay usable: a variable wins over the constant)."""
    from ..expr.parse import FUNCTIONS

    return frozenset(set(FUNCTIONS) | _MODULE_NAMES | set(keyword.kwlist))


def safe_name(original: str, index: int) -> str:
    """The variable name a column is known by in expressions (see the module notes)."""
    text = unicodedata.normalize("NFKC", original.strip())
    name = re.sub(r"\W+", "_", text).strip("_")
    if name and not name.isidentifier():
        name = re.sub(r"[^A-Za-z0-9_]+", "_", text).strip("_")
    if not name:
        return f"c{index + 1}"
    if name[0].isdigit():
        name = "c_" + name
    if name in _reserved_names():
        name += "_"
    return name


def _unique_names(originals: Sequence[str]) -> list[str]:
    names: list[str] = []
    for i, original in enumerate(originals):
        base = safe_name(original, i)
        name, k = base, 2
        while name in names:
            name, k = f"{base}_{k}", k + 1
        names.append(name)
    return names


def check_name(name: str) -> str:
    """A task name (without ``user/``), checked: segments of letters, digits, ``.``, ``_`` and
    ``-`` separated by ``/``, each starting with a letter or digit."""
    if not isinstance(name, str) or not name.strip():
        raise DataImportError("give the task a name (letters, digits, '.', '_' or '-')")
    text = name.strip().strip("/")
    if text.startswith(SUITE + "/"):
        text = text[len(SUITE) + 1:]
    segments = text.split("/")
    for segment in segments:
        if not _SEGMENT.fullmatch(segment):
            raise DataImportError(
                f"'{name}' is not a valid task name: each part must start with a letter or digit and "
                "use only letters, digits, '.', '_' and '-' (at most 80 characters), parts separated by '/'"
            )
    if len(segments) > _MAX_SEGMENTS:
        raise DataImportError(f"'{name}' is not a valid task name: at most {_MAX_SEGMENTS} parts separated by '/'")
    return text


def task_id(name: str) -> str:
    return f"{SUITE}/{check_name(name)}"


def tasks_dir() -> Path:
    """Where imported tasks live (``KEPLERLAB_HOME`` is respected)."""
    return paths.data_dir() / TASKS_DIRNAME


def _task_dir(name: str) -> Path:
    return tasks_dir() / name.replace("/", "~")


def task_exists(name: str) -> bool:
    return (_task_dir(check_name(name)) / "task.json").exists()


# --------------------------------------------------------------------------- reading text


def _read_text(path: Path) -> str:
    label = path.name
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise DataImportError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise DataImportError(f"{path}: is a folder, not a file") from None
    except OSError as exc:
        raise DataImportError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if raw.startswith(b"\x89HDF\r\n\x1a\n"):
        raise DataImportError(f"{label}: this is an HDF5 file, not a text table; import it as HDF5")
    if raw.startswith(b"PK\x03\x04"):
        raise DataImportError(f"{label}: this looks like a spreadsheet or zip archive; save the sheet as CSV first")
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            text = raw.decode("utf-16")
        except UnicodeDecodeError as exc:
            raise DataImportError(f"{label}: damaged UTF-16 text near byte {exc.start}") from None
    else:
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            line = raw[: exc.start].count(b"\n") + 1
            raise DataImportError(
                f"{label}, line {line}: byte 0x{raw[exc.start]:02x} is not UTF-8 text; "
                "save the file as UTF-8 (or plain ASCII) and import it again"
            ) from None
    if "\x00" in text:
        line = text[: text.index("\x00")].count("\n") + 1
        raise DataImportError(f"{label}, line {line}: contains a NUL character; this is not a text table")
    if not text.strip():
        raise DataImportError(f"{label}: the file is empty")
    if "\r" in text:
        # Classic Mac OS line ends (a lone CR) would otherwise reach the csv module as one line.
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def _field_counts(sample: str, delimiter: str) -> list[int]:
    try:
        return [len(row) for row in csv.reader(io.StringIO(sample), delimiter=delimiter) if row]
    except csv.Error:  # e.g. a cell over the csv module's size limit: reported when the table is read
        return []


def _csv_problem(exc: csv.Error) -> str:
    """The csv module's complaint in the words of the module notes."""
    text = str(exc)
    if "field larger than field limit" in text:
        return (f"a cell is longer than {csv.field_size_limit():,} characters; "
                "this does not look like a table of numbers")
    return text


def _sniff(text: str, label: str) -> str:
    """The delimiter: the csv module's guess among comma, tab and semicolon, accepted when it
    splits the first lines into the same number (> 1) of fields; otherwise the first of tab,
    semicolon, comma that does; otherwise the one giving line 1 most fields (the ragged line is
    then reported when the table is read)."""
    lines = [line for line in text.splitlines() if line.strip()][:SNIFF_LINES]
    sample = "\n".join(lines)
    consistent = []
    for d in _DELIMITER_ORDER:
        counts = set(_field_counts(sample, d))
        if len(counts) == 1 and counts.pop() > 1:
            consistent.append(d)
    try:
        guess = csv.Sniffer().sniff(sample, delimiters="".join(_DELIMITER_ORDER)).delimiter
    except csv.Error:
        guess = None
    if guess in consistent:
        return guess
    if consistent:
        return consistent[0]
    first = lines[0] if lines else ""
    best = max(_DELIMITER_ORDER, key=lambda d: (_field_counts(first, d) or [0])[0])
    if (_field_counts(first, best) or [0])[0] < 2:
        raise DataImportError(
            f"{label} has a single column (no comma, tab or semicolon separates its values); "
            "a task needs a target column and at least one input column"
        )
    return best


# Cell kinds.
_OK, _EMPTY, _NAN, _INF, _TEXT = "ok", "empty", "NaN", "infinite", "text"


def _cell(text: str) -> tuple[float, str]:
    s = text.strip()
    if not s:
        return math.nan, _EMPTY
    try:
        value = float(s)
    except ValueError:
        return math.nan, _TEXT
    if "_" in s:  # float() accepts 1_000; a data file should not
        return math.nan, _TEXT
    if math.isnan(value):
        return value, _NAN
    if math.isinf(value):
        return value, _INF
    return value, _OK


def _text_problem(cell: str) -> str:
    shown = cell.strip()
    if len(shown) > 40:
        shown = shown[:37] + "..."
    hint = ""
    if re.fullmatch(r"[+-]?\d+,\d+([eE][+-]?\d+)?", shown):
        hint = " (a decimal comma? use a point as the decimal separator)"
    elif "\n" in cell:
        hint = " (a quoted cell running over several lines: is a closing quotation mark missing?)"
    # Line breaks and control characters are shown escaped, so the message stays one line.
    shown = "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in shown)
    return f"'{shown}' is not a number{hint}"


@dataclass
class _Table:
    """A parsed delimited file: every cell as a float (NaN where empty or not a number)."""

    path: Path
    delimiter: str
    has_header: bool
    columns: list[str]  # names as in the file (c1, c2, ... without a header)
    names: list[str]  # variable names (see safe_name)
    values: np.ndarray  # (rows, columns)
    lines: np.ndarray  # line number of every row
    kinds: list[dict[str, list]]  # per column: kind -> [count, first line, first cell]
    preview: list[list[str]]

    @property
    def label(self) -> str:
        return self.path.name

    def first(self, columns: Iterable[int], kinds: Iterable[str]) -> tuple[int, int, str, str] | None:
        """The first (line, column, kind, cell) among ``columns`` having a cell of ``kinds``."""
        best = None
        for c in columns:
            for k in kinds:
                info = self.kinds[c].get(k)
                if info and (best is None or (info[1], c) < (best[0], best[1])):
                    best = (info[1], c, k, info[2])
        return best

    def count(self, column: int, kind: str) -> int:
        info = self.kinds[column].get(kind)
        return info[0] if info else 0


def _read_table(path: str | os.PathLike, delimiter: str | None = None, header: bool | None = None) -> _Table:
    path = Path(path)
    text = _read_text(path)
    label = path.name
    if delimiter is None:
        delimiter = _sniff(text, label)
    elif delimiter not in DELIMITER_NAMES:
        raise DataImportError(f"unsupported delimiter {delimiter!r}; use comma, tab or semicolon")
    reader = csv.reader(io.StringIO(text), delimiter=delimiter)
    try:
        first = next((row for row in reader if any(c.strip() for c in row)), None)
    except csv.Error as exc:
        raise DataImportError(f"{label}, line {reader.line_num}: {_csv_problem(exc)}") from None
    if first is None:
        raise DataImportError(f"{label}: the file is empty")
    first_line = reader.line_num
    if len(first) < 2:
        raise DataImportError(
            f"{label} has a single column (no {DELIMITER_NAMES[delimiter]} separates its values); "
            "a task needs a target column and at least one input column"
        )
    if header is None:
        header = any(_cell(c)[1] == _TEXT for c in first)
    n_cols = len(first)
    if header:
        columns = [c.strip() for c in first]
        for i, c in enumerate(columns):
            if not c:
                raise DataImportError(f"{label}, line {first_line}: column {i + 1} has no name in the header")
        seen: dict[str, int] = {}
        for i, c in enumerate(columns):
            if c in seen:
                raise DataImportError(
                    f"{label}, line {first_line}: the header names column '{c}' twice "
                    f"(columns {seen[c] + 1} and {i + 1}); column names must be unique"
                )
            seen[c] = i
        rows_iter: Iterable[list[str]] = reader
    else:
        columns = [f"c{i + 1}" for i in range(n_cols)]
        rows_iter = _chain_first(first, first_line, reader)
    names = _unique_names(columns)

    values: list[list[float]] = []
    lines: list[int] = []
    kinds: list[dict[str, list]] = [{} for _ in range(n_cols)]
    preview: list[list[str]] = []
    last_line = first_line  # where the previous row ended: a quoted cell may span lines
    try:
        for row in rows_iter:
            end = first_line if row is first else reader.line_num
            # A row is reported at the line where it starts (where an editor shows it).
            line, last_line = (first_line if row is first else last_line + 1), end
            if not row or not any(c.strip() for c in row):
                continue  # blank line
            if len(row) != n_cols and end > line and any("\n" in c for c in row):
                raise DataImportError(
                    f"{label}, line {line}: a quoted cell starting on this line runs on to line {end}; "
                    "is a closing quotation mark (\") missing?"
                )
            if len(row) != n_cols:
                raise DataImportError(
                    f"{label}, line {line}: {len(row)} field{'s' if len(row) != 1 else ''}, expected {n_cols} "
                    f"({', '.join(columns)}); every row needs one value per column"
                )
            parsed = []
            for c, cell in enumerate(row):
                value, kind = _cell(cell)
                parsed.append(value)
                if kind != _OK:
                    info = kinds[c].get(kind)
                    if info is None:
                        kinds[c][kind] = [1, line, cell]
                    else:
                        info[0] += 1
            values.append(parsed)
            lines.append(line)
            if len(preview) < PREVIEW_ROWS:
                preview.append([c.strip() for c in row])
    except csv.Error as exc:
        raise DataImportError(f"{label}, line {reader.line_num}: {_csv_problem(exc)}") from None
    array = np.array(values, dtype=float).reshape(len(values), n_cols)
    return _Table(path, delimiter, bool(header), columns, names, array, np.array(lines, dtype=int), kinds, preview)


def _chain_first(first: list[str], first_line: int, reader):
    yield first
    yield from reader


# --------------------------------------------------------------------------- inspection


@dataclass
class ColumnInfo:
    name: str  # as in the file
    variable: str  # the name used in expressions
    numeric: bool  # every non-empty cell is a number (NaN / inf count as numbers)
    problem: str = ""  # first text cell, e.g. "line 5: 'abc' is not a number"
    missing: int = 0  # empty, NaN or infinite cells
    minimum: float | None = None
    maximum: float | None = None


@dataclass
class TableInfo:
    """What :func:`inspect_csv` found in a file."""

    path: str
    delimiter: str
    delimiter_name: str
    has_header: bool
    rows: int
    columns: list[ColumnInfo]
    preview: list[list[str]]  # the first PREVIEW_ROWS data rows as text

    @property
    def column_names(self) -> list[str]:
        return [c.name for c in self.columns]

    def to_json(self) -> dict:
        return {
            "path": self.path,
            "delimiter": self.delimiter_name,
            "header": self.has_header,
            "rows": self.rows,
            "columns": [c.__dict__ for c in self.columns],
            "preview": self.preview,
        }


def inspect_csv(path: str | os.PathLike, delimiter: str | None = None, header: bool | None = None) -> TableInfo:
    """Describe a delimited text file: delimiter, header, row count, per-column numeric check and
    a preview. Raises :class:`DataImportError` for a file that cannot be a table at all (empty,
    not text, one column, ragged rows, bad header)."""
    table = _read_table(path, delimiter, header)
    columns = []
    for c, (name, variable) in enumerate(zip(table.columns, table.names)):
        text = table.kinds[c].get(_TEXT)
        finite = table.values[:, c][np.isfinite(table.values[:, c])]
        columns.append(
            ColumnInfo(
                name=name,
                variable=variable,
                numeric=text is None and finite.size > 0,
                problem=f"line {text[1]}: {_text_problem(text[2])}" if text else ("" if finite.size else "no numbers"),
                missing=sum(table.count(c, k) for k in (_EMPTY, _NAN, _INF)),
                minimum=float(finite.min()) if finite.size else None,
                maximum=float(finite.max()) if finite.size else None,
            )
        )
    return TableInfo(
        str(table.path), table.delimiter, DELIMITER_NAMES[table.delimiter], table.has_header,
        int(table.values.shape[0]), columns, table.preview,
    )


# --------------------------------------------------------------------------- importing


@dataclass
class OOD:
    """How the out-of-domain test rows are chosen from the main file: rows where ``column``
    ``op`` ``value`` (op is ">" or "<"), or the last ``last_rows`` rows, or the last
    ``last_fraction`` of the rows (file order)."""

    column: str | None = None
    op: str = ">"
    value: float | None = None
    last_rows: int | None = None
    last_fraction: float | None = None

    @classmethod
    def coerce(cls, spec: "OOD | Mapping[str, Any] | None") -> "OOD | None":
        if spec is None or isinstance(spec, cls):
            rule = dataclasses.replace(spec) if spec is not None else None
        elif isinstance(spec, Mapping):
            unknown = set(spec) - {"column", "op", "value", "last_rows", "last_fraction"}
            if unknown:
                raise DataImportError(f"unknown out-of-domain option(s): {', '.join(sorted(unknown))}")
            rule = cls(**spec)
        else:
            raise DataImportError(f"an out-of-domain rule must be an OOD or a dict, not {type(spec).__name__}")
        if rule is None:
            return None
        given = [rule.column is not None, rule.last_rows is not None, rule.last_fraction is not None]
        if sum(given) != 1:
            raise DataImportError(
                "an out-of-domain rule takes exactly one of: a column threshold, a number of last rows, "
                "or a fraction of last rows"
            )
        if rule.column is not None:
            if rule.op not in (">", "<"):
                raise DataImportError(f"the out-of-domain operator must be '>' or '<', not '{rule.op}'")
            try:
                rule.value = float(rule.value)  # type: ignore[arg-type]
            except (TypeError, ValueError):
                raise DataImportError(f"the out-of-domain threshold must be a number, not {rule.value!r}") from None
            if not math.isfinite(rule.value):
                raise DataImportError("the out-of-domain threshold must be a finite number")
        if rule.last_rows is not None:
            if isinstance(rule.last_rows, bool) or not isinstance(rule.last_rows, (int, np.integer)) or rule.last_rows < 1:
                raise DataImportError(f"the number of last rows must be a whole number of at least 1, not {rule.last_rows!r}")
        if rule.last_fraction is not None:
            try:
                ok = 0.0 < float(rule.last_fraction) < 1.0
            except (TypeError, ValueError):
                ok = False
            if not ok:
                raise DataImportError(f"the fraction of last rows must be between 0 and 1, not {rule.last_fraction!r}")
        return rule

    def describe(self) -> str:
        if self.column is not None:
            return f"the rows where {self.column} {self.op} {self.value:g}"
        if self.last_rows is not None:
            return f"the last {self.last_rows} rows of the file"
        return f"the last {self.last_fraction:.0%} of the rows of the file"

    def to_json(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if v is not None}


@dataclass
class ImportResult:
    task_id: str
    rows: dict[str, int]  # split -> rows
    dropped_rows: int = 0
    renamed: dict[str, str] = field(default_factory=dict)  # original column name -> variable name
    warnings: list[str] = field(default_factory=list)
    path: str = ""

    def to_json(self) -> dict:
        return {
            "task": self.task_id,
            "rows": self.rows,
            "dropped_rows": self.dropped_rows,
            "renamed": self.renamed,
            "warnings": self.warnings,
            "path": self.path,
        }


def _column_index(table: _Table, spec: str, what: str) -> int:
    key = str(spec).strip()
    if key in table.columns:
        return table.columns.index(key)
    if key in table.names:
        return table.names.index(key)
    close = difflib.get_close_matches(key, table.columns, n=3, cutoff=0.6)
    hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    raise DataImportError(
        f"{table.label} has no column '{key}' (the {what}); its columns are {', '.join(table.columns)}{hint}"
    )


def _check_cells(table: _Table, used: list[int], drop_invalid: bool) -> np.ndarray:
    """Refuse text cells in the used columns; refuse (or mark for dropping) empty / NaN / inf
    cells. Returns the mask of rows kept."""
    bad = table.first(used, [_TEXT])
    if bad:
        line, c, _, cell = bad
        raise DataImportError(f"{table.label}, line {line}, column '{table.columns[c]}': {_text_problem(cell)}")
    keep = np.isfinite(table.values[:, used]).all(axis=1) if len(table.values) else np.ones(0, bool)
    if not drop_invalid:
        bad = table.first(used, [_EMPTY, _NAN, _INF])
        if bad:
            line, c, kind, cell = bad
            what = "the cell is empty" if kind == _EMPTY else f"'{cell.strip()}' is {'not a number (NaN)' if kind == _NAN else 'infinite'}"
            n_bad = int((~keep).sum())
            raise DataImportError(
                f"{table.label}, line {line}, column '{table.columns[c]}': {what}; "
                f"{n_bad} row{'s have' if n_bad != 1 else ' has'} missing, NaN or infinite values in the chosen columns "
                "(repair them, or leave such rows out: drop_invalid=True, --drop-invalid, or 'Drop rows with missing "
                "values' in the import dialog)"
            )
    return keep


def _matching_table(main: _Table, path, delimiter, header, role: str) -> _Table:
    """A separate split file, checked to have the main file's columns (in any order)."""
    other = _read_table(path, delimiter, main.has_header if header is None else header)
    if other.has_header != main.has_header:
        raise DataImportError(f"{other.label}: has {'a' if other.has_header else 'no'} header row, unlike {main.label}")
    if sorted(other.columns) != sorted(main.columns):
        missing = [c for c in main.columns if c not in other.columns]
        extra = [c for c in other.columns if c not in main.columns]
        parts = []
        if missing:
            parts.append(f"missing {', '.join(missing)}")
        if extra:
            parts.append(f"unexpected {', '.join(extra)}")
        raise DataImportError(
            f"{other.label} (the {role} file) must have the columns of {main.label} "
            f"({', '.join(main.columns)}): {'; '.join(parts)}"
        )
    return other


def _columns_of(table: _Table, main_columns: list[str], indices: list[int]) -> list[int]:
    return [table.columns.index(main_columns[i]) for i in indices]


def import_table(
    path: str | os.PathLike,
    name: str,
    target: str | None = None,
    inputs: Sequence[str] | None = None,
    ood: OOD | Mapping[str, Any] | None = None,
    test_fraction: float = 0.1,
    seed: int = 0,
    units: Mapping[str, str] | None = None,
    descriptions: Mapping[str, str] | None = None,
    context: str = "",
    test_file: str | os.PathLike | None = None,
    ood_file: str | os.PathLike | None = None,
    drop_invalid: bool = False,
    replace: bool = False,
    delimiter: str | None = None,
    header: bool | None = None,
    title: str = "",
) -> ImportResult:
    """Import a delimited file (plus optional separate test-ID / test-OOD files) as ``user/<name>``.

    ``target`` defaults to the last column and ``inputs`` to every other column holding numbers.
    The out-of-domain rows come from ``ood`` (see :class:`OOD`) or ``ood_file``; the remaining
    rows are shuffled with ``seed`` into train and test-ID (``test_fraction`` of them), unless
    ``test_file`` gives the test-ID rows. Raises :class:`DataImportError`; on error nothing is
    written.
    """
    name = check_name(name)
    new_id = f"{SUITE}/{name}"
    if not replace and task_exists(name):
        raise DataImportError(f"a task named '{new_id}' already exists; choose another name or replace it")
    rule = OOD.coerce(ood)
    if rule is not None and ood_file is not None:
        raise DataImportError("give either an out-of-domain rule or an out-of-domain file, not both")
    try:
        test_fraction = float(test_fraction)
    except (TypeError, ValueError):
        raise DataImportError(f"the test fraction must be a number, not {test_fraction!r}") from None
    if not 0.0 <= test_fraction <= 0.9:
        raise DataImportError(f"the test fraction must be between 0 and 0.9, not {test_fraction:g}")

    main = _read_table(path, delimiter, header)
    if main.values.shape[0] == 0:
        raise DataImportError(f"{main.label} has {'a header but ' if main.has_header else ''}no data rows")

    # Target and inputs.
    t = _column_index(main, target, "target") if target not in (None, "") else len(main.columns) - 1
    if inputs is None or (isinstance(inputs, str) and not inputs.strip()):
        chosen = [c for c in range(len(main.columns)) if c != t and np.isfinite(main.values[:, c]).any()]
        skipped = [main.columns[c] for c in range(len(main.columns)) if c != t and c not in chosen]
    else:
        if isinstance(inputs, str):
            inputs = [s for s in inputs.split(",") if s.strip()]
        chosen, skipped = [], []
        for spec in inputs:
            c = _column_index(main, spec, "input")
            if c == t:
                raise DataImportError(f"'{main.columns[t]}' is the target; it cannot also be an input")
            if c in chosen:
                raise DataImportError(f"the input '{main.columns[c]}' is listed twice")
            chosen.append(c)
    if not chosen:
        raise DataImportError(f"{main.label}: choose at least one input column besides the target '{main.columns[t]}'")
    ood_col = _column_index(main, rule.column, "out-of-domain column") if rule and rule.column is not None else None
    used = [t, *chosen] + ([ood_col] if ood_col is not None and ood_col not in (t, *chosen) else [])

    warn: list[str] = []
    if skipped:
        warn.append(f"columns without numbers are not used: {', '.join(skipped)}")

    # Cells of the main file.
    keep = _check_cells(main, used, drop_invalid)
    dropped = int((~keep).sum())
    values = main.values[keep]
    lines = main.lines[keep]
    if values.shape[0] < MIN_ROWS:
        extra = f" after dropping {dropped} with missing values" if dropped else ""
        raise DataImportError(
            f"{main.label} has {values.shape[0]} usable data row{'s' if values.shape[0] != 1 else ''}{extra}; "
            f"at least {MIN_ROWS} are needed"
        )
    # A column holding one value in every row carries no information: as the target there is
    # nothing to discover; as the only inputs nothing can explain the target.
    flat = [c for c in (t, *chosen) if np.all(values[:, c] == values[0, c])]
    if t in flat:
        raise DataImportError(
            f"{main.label}, column '{main.columns[t]}': the target has the same value ({values[0, t]:g}) in every "
            "usable row; there is no law to discover"
        )
    if len(flat) == len(chosen):
        raise DataImportError(
            f"{main.label}: every input column ({', '.join(main.columns[c] for c in flat)}) holds one value in all "
            "usable rows; nothing can explain the target"
        )
    if flat:
        warn.append(
            f"column{'s' if len(flat) > 1 else ''} {', '.join(main.columns[c] for c in flat)} "
            f"hold{'' if len(flat) > 1 else 's'} the same value in every row and cannot explain the target"
        )

    def xy(vals: np.ndarray, cols: list[int], target_col: int) -> tuple[np.ndarray, np.ndarray]:
        return np.ascontiguousarray(vals[:, cols], dtype=float), np.ascontiguousarray(vals[:, target_col], dtype=float)

    splits: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    note_parts: list[str] = []
    rest = np.arange(values.shape[0])

    # Out-of-domain rows.
    if ood_file is not None:
        other = _matching_table(main, ood_file, delimiter, header, "out-of-domain test")
        cols = _columns_of(other, main.columns, chosen)
        tcol = other.columns.index(main.columns[t])
        okeep = _check_cells(other, [tcol, *cols], drop_invalid)
        if okeep.sum() == 0:
            raise DataImportError(f"{other.label} (the out-of-domain test file) has no usable data rows")
        dropped += int((~okeep).sum())
        splits["test_ood"] = xy(other.values[okeep], cols, tcol)
        note_parts.append(f"out-of-domain test: the {int(okeep.sum())} rows of {other.label}")
    elif rule is not None:
        n = values.shape[0]
        if rule.column is not None:
            column = values[:, ood_col]
            mask = column > rule.value if rule.op == ">" else column < rule.value
            rule.column = main.columns[ood_col]
            if not mask.any():
                raise DataImportError(
                    f"no row of {main.label} has {rule.column} {rule.op} {rule.value:g} "
                    f"({rule.column} ranges from {column.min():g} to {column.max():g}); "
                    "the out-of-domain test set would be empty"
                )
        else:
            count = rule.last_rows if rule.last_rows is not None else int(round(rule.last_fraction * n))
            if count >= n:
                raise DataImportError(
                    f"the last {count} rows are all of {main.label}'s {n} usable rows; none would be left for training"
                )
            count = max(count, 1)
            mask = np.zeros(n, bool)
            mask[n - count:] = True
        splits["test_ood"] = xy(values[mask], chosen, t)
        rest = np.flatnonzero(~mask)
        note_parts.append(f"out-of-domain test: {rule.describe()} ({int(mask.sum())} rows)")

    # In-domain test rows.
    rng = np.random.default_rng(int(seed))
    if test_file is not None:
        other = _matching_table(main, test_file, delimiter, header, "in-domain test")
        cols = _columns_of(other, main.columns, chosen)
        tcol = other.columns.index(main.columns[t])
        tkeep = _check_cells(other, [tcol, *cols], drop_invalid)
        if tkeep.sum() == 0:
            raise DataImportError(f"{other.label} (the in-domain test file) has no usable data rows")
        dropped += int((~tkeep).sum())
        train_rows = rest
        splits["test_id"] = xy(other.values[tkeep], cols, tcol)
        which = "the" if len(train_rows) == values.shape[0] else "the remaining"
        id_note = f"in-domain test: the {int(tkeep.sum())} rows of {other.label}; training: {which} {len(train_rows)} rows of {main.label}"
    else:
        order = rng.permutation(rest)
        n_test = int(round(test_fraction * len(rest)))
        if test_fraction > 0:
            n_test = max(n_test, 1)
        train_rows = np.sort(order[n_test:])
        test_rows = np.sort(order[:n_test])
        if n_test:
            splits["test_id"] = xy(values[test_rows], chosen, t)
        id_note = (
            f"the other {len(rest)} rows of {main.label} were shuffled with seed {int(seed)} into "
            f"{len(train_rows)} training and {n_test} in-domain test rows"
        )
    if len(train_rows) < MIN_TRAIN_ROWS:
        raise DataImportError(
            f"only {len(train_rows)} row{'s are' if len(train_rows) != 1 else ' is'} left for training; "
            f"at least {MIN_TRAIN_ROWS} are needed (choose a smaller test fraction or out-of-domain set)"
        )
    splits["train"] = xy(values[train_rows], chosen, t)
    note_parts.append(id_note)

    # Variables.
    units = dict(units or {})
    descriptions = dict(descriptions or {})
    for what, mapping in (("units", units), ("descriptions", descriptions)):
        for key in mapping:
            c = _column_index(main, key, f"column named in {what}")
            if c not in (t, *chosen):
                raise DataImportError(f"{what} are given for '{main.columns[c]}', which is neither the target nor an input")
    variables = []
    for role, c in [("target", t)] + [("input", c) for c in chosen]:
        original, variable = main.columns[c], main.names[c]
        given = descriptions.get(original, descriptions.get(variable, "")).strip()
        where = f"column '{original}' of {main.label}"
        if given:
            description = given if original == variable else f"{given} ({where})"
        else:
            description = where if original == variable else f"{where}, called {variable} in expressions"
        unit = units.get(original, units.get(variable, "")).strip()
        variables.append({"name": variable, "role": role, "description": description, "unit": unit, "column": original})
    renamed = {main.columns[c]: main.names[c] for c in (t, *chosen) if main.columns[c] != main.names[c]}

    counts = {s: int(splits[s][1].shape[0]) for s in SPLITS if s in splits}
    dropped_note = f" ({dropped} row{'s' if dropped != 1 else ''} with missing, NaN or infinite values dropped)" if dropped else ""
    split_note = (
        f"Imported from {main.label}{dropped_note}: " + "; ".join(note_parts) + "."
    )
    files = {"train": str(Path(path).resolve())}
    if test_file is not None:
        files["test_id"] = str(Path(test_file).resolve())
    if ood_file is not None:
        files["test_ood"] = str(Path(ood_file).resolve())
    user_context = (context or "").strip()
    base_context = (
        f"Your data, imported from {main.label} on {time.strftime('%Y-%m-%d')}. "
        "The law behind them is unknown: there is no ground truth to reveal, only the data."
    )
    record = {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "id": new_id,
        "name": name.rsplit("/", 1)[-1],
        "suite": SUITE,
        "group": name.rsplit("/", 1)[0] if "/" in name else "",
        "title": (title or "").strip() or f"{name.rsplit('/', 1)[-1]}: {variables[0]['name']} from {', '.join(v['name'] for v in variables[1:])}",
        "context": f"{user_context}\n\n{base_context}" if user_context else base_context,
        "split_note": split_note,
        "variables": variables,
        "splits": counts,
        "source": {
            "files": files,
            "sha256": _sha256(Path(path)),
            "delimiter": DELIMITER_NAMES[main.delimiter],
            "header": main.has_header,
            "imported_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "first_line": int(lines[0]) if len(lines) else None,
        },
        "options": {
            "test_fraction": test_fraction,
            "seed": int(seed),
            "ood": rule.to_json() if rule else None,
            "drop_invalid": bool(drop_invalid),
        },
        "dropped_rows": dropped,
    }
    stored = _store([(name, record, splits)], replace=replace)
    return ImportResult(new_id, counts, dropped, renamed, warn, str(stored[0]))


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


# --------------------------------------------------------------------------- storage


def _store(items: list[tuple[str, dict, dict[str, tuple[np.ndarray, np.ndarray]]]], replace: bool) -> list[Path]:
    """Write every task into one staging directory, then rename each into place. A failure
    before the renames leaves nothing; existing tasks are only replaced with ``replace``."""
    root = tasks_dir()
    root.mkdir(parents=True, exist_ok=True)
    targets = [_task_dir(name) for name, _, _ in items]
    if len(set(targets)) != len(targets):
        raise DataImportError("two of the imported tasks would get the same name")
    if not replace:
        taken = [f"{SUITE}/{name}" for (name, _, _), target in zip(items, targets) if target.exists()]
        if taken:
            raise DataImportError(
                f"a task named '{taken[0]}' already exists; choose another name or replace it"
                + (f" ({len(taken)} names are taken)" if len(taken) > 1 else "")
            )
    staging = Path(tempfile.mkdtemp(prefix=".import-", dir=root))
    moved: list[tuple[Path, Path | None]] = []  # (target, backup of the replaced task)
    try:
        for i, (name, record, splits) in enumerate(items):
            folder = staging / str(i)
            folder.mkdir()
            arrays: dict[str, np.ndarray] = {"split_names": np.array([s for s in SPLITS if s in splits])}
            for split, (X, y) in splits.items():
                arrays[f"{split}__X"] = X
                arrays[f"{split}__y"] = y
            with open(folder / "data.npz", "wb") as fh:
                np.savez_compressed(fh, **arrays)
            (folder / "task.json").write_text(json.dumps(record, indent=2, allow_nan=False), encoding="utf-8")
        for i, target in enumerate(targets):
            backup = None
            if target.exists():
                backup = staging / f"replaced-{i}"
                os.replace(target, backup)
            try:
                os.rename(staging / str(i), target)
            except OSError:
                if backup is not None:
                    os.replace(backup, target)
                raise
            moved.append((target, backup))
    except BaseException as exc:
        for target, backup in reversed(moved):  # undo the renames already done
            shutil.rmtree(target, ignore_errors=True)
            if backup is not None:
                os.replace(backup, target)
        shutil.rmtree(staging, ignore_errors=True)
        if isinstance(exc, OSError):
            raise DataImportError(f"cannot write the imported task under {root}: {exc.strerror or exc}") from None
        raise
    shutil.rmtree(staging, ignore_errors=True)
    from . import registry

    registry.invalidate()
    return targets


def remove_task(task_id_or_name: str) -> None:
    """Delete an imported task (its folder under the user data directory)."""
    name = check_name(task_id_or_name)
    folder = _task_dir(name)
    if not (folder / "task.json").exists():
        raise DataImportError(f"there is no imported task '{SUITE}/{name}'")
    trash = Path(tempfile.mkdtemp(prefix=".remove-", dir=tasks_dir()))
    os.replace(folder, trash / "task")
    shutil.rmtree(trash, ignore_errors=True)
    from . import registry

    registry.invalidate()


class _Corrupt(Exception):
    pass


def _task_from_record(record: Any, folder: Path) -> Task:
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        raise _Corrupt("task.json is not a Kepler Lab imported task")
    if record.get("version") != FORMAT_VERSION:
        raise _Corrupt(f"task.json has format version {record.get('version')!r}; this version reads {FORMAT_VERSION}")
    try:
        tid = str(record["id"])
        if not tid.startswith(SUITE + "/") or _task_dir(check_name(tid)) != folder:
            raise _Corrupt(f"its id '{tid}' does not match the folder name")
        variables = [
            Variable(str(v["name"]), str(v["role"]), str(v.get("description", "")), str(v.get("unit", "")))
            for v in record["variables"]
        ]
        title, context = str(record["title"]), str(record["context"])
        suite, group = str(record.get("suite", SUITE)), str(record.get("group", ""))
        split_note = str(record.get("split_note", ""))
        name = str(record.get("name") or tid.rsplit("/", 1)[-1])
    except (KeyError, TypeError, ValueError, DataImportError) as exc:
        raise _Corrupt(f"task.json is incomplete ({type(exc).__name__}: {exc})") from None
    roles = [v.role for v in variables]
    if roles.count("target") != 1 or roles.count("input") < 1 or set(roles) - {"target", "input"}:
        raise _Corrupt("task.json must name one target and at least one input")
    if not (folder / "data.npz").is_file():
        raise _Corrupt("data.npz is missing")
    return Task(
        id=tid,
        suite=suite,
        kind="function",
        name=name,
        group=group,
        title=title,
        variables=variables,
        ground_truth=GroundTruth(expression="", source="unknown: imported data"),
        context=context,
        split_note=split_note,
        metadata={"user": True, "folder": str(folder), "source": record.get("source", {}),
                  "options": record.get("options", {}), "dropped_rows": record.get("dropped_rows", 0)},
        builder=partial(_load_data, folder),
    )


def _load_data(folder: Path, task: Task) -> TaskData:
    path = folder / "data.npz"
    n_inputs = len(task.input_names)
    try:
        with np.load(path, allow_pickle=False) as archive:
            names = [str(n) for n in archive["split_names"]]
            splits = {}
            for n in names:
                X = np.asarray(archive[f"{n}__X"], dtype=float)
                y = np.asarray(archive[f"{n}__y"], dtype=float)
                if X.ndim != 2 or X.shape[1] != n_inputs or y.shape != (X.shape[0],):
                    raise ValueError(f"split {n} has shapes {X.shape} and {y.shape}, expected (n, {n_inputs}) and (n,)")
                splits[n] = Split(n, X, y)
    except Exception as exc:
        raise RuntimeError(
            f"the stored data of {task.id} are damaged ({path}: {exc}); import the file again"
        ) from None
    if "train" not in splits:
        raise RuntimeError(f"the stored data of {task.id} have no training split ({path}); import the file again")
    return TaskData(splits)


#: A staging folder older than this belongs to an import that died (killed, power cut).
STALE_STAGING_SECONDS = 3600.0


def _recover_interrupted_imports(root: Path) -> None:
    """Clean up after imports that died between their renames (the process was killed, so no
    ``except`` ran): a task they were replacing is moved back when its place is empty, then the
    staging folder goes. Only folders older than an hour are touched, so an import running in
    another thread is never disturbed."""
    now = time.time()
    for staging in root.glob(".import-*"):
        try:
            if not staging.is_dir() or now - staging.stat().st_mtime < STALE_STAGING_SECONDS:
                continue
            for backup in staging.glob("replaced-*"):
                try:
                    record = json.loads((backup / "task.json").read_text(encoding="utf-8"))
                    target = _task_dir(check_name(str(record["id"])))
                except (OSError, ValueError, KeyError, TypeError, DataImportError):
                    continue
                if not target.exists():
                    target.parent.mkdir(parents=True, exist_ok=True)
                    os.replace(backup, target)
                    log.warning("restored the imported task %s from an interrupted replacement", target)
            shutil.rmtree(staging, ignore_errors=True)
        except OSError as exc:  # a read-only store: leave it, never break the catalog
            log.warning("could not clean up %s: %s", staging, exc)


def load_tasks() -> list[Task]:
    """Every stored imported task; damaged ones are skipped with a warning."""
    root = tasks_dir()
    if not root.is_dir():
        return []
    _recover_interrupted_imports(root)
    tasks: list[Task] = []
    for folder in sorted(root.iterdir()):
        if folder.name.startswith(".") or not folder.is_dir():
            continue
        try:
            try:
                record = json.loads((folder / "task.json").read_text(encoding="utf-8"))
            except FileNotFoundError:
                raise _Corrupt("task.json is missing") from None
            except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise _Corrupt(f"task.json cannot be read ({exc})") from None
            tasks.append(_task_from_record(record, folder))
        except _Corrupt as exc:
            message = f"skipping the imported task in {folder}: {exc}"
            log.warning(message)
            warnings.warn(message, stacklevel=2)
    return tasks


# --------------------------------------------------------------------------- LLM-SRBench HDF5

#: Split dataset names in LLM-SRBench's file (bench/dataclasses.py reads train, test, ood_test)
#: and the spellings of its unused SynProblem class, mapped to ours.
HDF5_SPLITS = {
    "train": "train",
    "train_data": "train",
    "test": "test_id",
    "id_test": "test_id",
    "test_id": "test_id",
    "id_test_data": "test_id",
    "ood_test": "test_ood",
    "test_ood": "test_ood",
    "ood_test_data": "test_ood",
}


@dataclass
class Hdf5Problem:
    path: str  # group path inside the file, e.g. "lsr_synth/matsci/MatSci0"
    splits: dict[str, tuple[int, int]]  # dataset name -> shape
    ignored: list[str] = field(default_factory=list)


def _open_hdf5(path: Path):
    try:
        import h5py
    except ImportError:  # pragma: no cover - h5py is a dependency
        raise DataImportError("reading HDF5 files needs the h5py package (pip install h5py)") from None
    if not path.exists():
        raise DataImportError(f"{path}: no such file")
    if path.is_dir():
        raise DataImportError(f"{path}: is a folder, not a file")
    try:
        return h5py.File(path, "r")
    except OSError as exc:
        raise DataImportError(f"{path.name}: not a readable HDF5 file ({exc})") from None


#: Most values one HDF5 array may hold, and all arrays of one import together. The arrays are
#: read into memory before anything is written, and a file of a few kilobytes may declare an
#: array of 10⁹ rows (never written, so it costs the file nothing): without a limit, reading it
#: would exhaust memory. LLM-SRBench's problems hold a few thousand rows each.
MAX_HDF5_VALUES = 20_000_000
MAX_HDF5_TOTAL_VALUES = 60_000_000


def _hdf5_guard(label: str, where: str, read):
    """``read()``, with what h5py raises on a damaged file (OSError, KeyError, RuntimeError, ...)
    turned into a DataImportError naming the file and the object being read."""
    try:
        return read()
    except DataImportError:
        raise
    except (OSError, KeyError, RuntimeError, ValueError, TypeError, IndexError) as exc:
        place = f", reading {where}" if where else ""
        raise DataImportError(f"{label}{place}: the HDF5 file is damaged or cannot be read ({exc})") from None


def _hdf5_problems(fh, label: str) -> list[Hdf5Problem]:
    import h5py

    problems: list[Hdf5Problem] = []

    def visit(name, obj):
        if not isinstance(obj, h5py.Group):
            return
        # Links are looked at, never followed: an external link would read another file on
        # this disk, a dangling one cannot be opened.
        items = {}
        for key in obj:
            link = obj.get(key, getlink=True)
            if isinstance(link, h5py.HardLink):
                items[key] = obj[key]
            elif key in HDF5_SPLITS:
                target = (f"an external link to {link.filename}:{link.path}" if isinstance(link, h5py.ExternalLink)
                          else f"a link to {getattr(link, 'path', '?')}")
                raise DataImportError(
                    f"{label}: /{name}/{key} is {target}; only arrays stored in the file itself are read"
                )
        if any(isinstance(items.get(k), h5py.Dataset) for k in ("train", "train_data")):
            splits, ignored = {}, []
            for key, item in items.items():
                if isinstance(item, h5py.Dataset):
                    if key in HDF5_SPLITS:
                        splits[key] = tuple(item.shape)
                    else:
                        ignored.append(key)
            problems.append(Hdf5Problem(name, splits, ignored))

    _hdf5_guard(label, "", lambda: fh.visititems(visit))
    if not problems:
        raise DataImportError(
            f"{label}: no problem found; expected groups such as /lsr_transform/<name> or "
            "/lsr_synth/<domain>/<name> holding a 'train' array (LLM-SRBench's lsr_bench_data.hdf5 layout)"
        )
    return sorted(problems, key=lambda p: p.path)


def inspect_hdf5(path: str | os.PathLike) -> list[Hdf5Problem]:
    """The problem groups of an LLM-SRBench HDF5 file and the shapes of their splits."""
    path = Path(path)
    with _open_hdf5(path) as fh:
        return _hdf5_problems(fh, path.name)


def _hdf5_name(prefix: str, group: str) -> str:
    segments = [re.sub(r"[^A-Za-z0-9._-]+", "_", s).strip("._-") or "x" for s in group.split("/") if s]
    return check_name("/".join([prefix, *segments]))


def import_llmsrbench_hdf5(
    path: str | os.PathLike,
    prefix: str = HDF5_PREFIX,
    replace: bool = False,
    only: Sequence[str] | None = None,
    symbols: Mapping[str, Sequence[str]] | None = None,
) -> list[ImportResult]:
    """Import every problem of an LLM-SRBench HDF5 file as ``user/<prefix>/<group path>``.

    Layout (LLM-SRBench ``bench/datamodules.py``): ``/lsr_transform/<name>/<split>`` and
    ``/lsr_synth/<domain>/<name>/<split>``, each split a float 2-D array of shape
    (rows, 1 + inputs) with the target in column 0; splits ``train``, ``test`` (in-domain) and
    optionally ``ood_test``. The variable names are not in the file (they are in the dataset's
    metadata): they are read from a ``symbols`` attribute of the group when present (output
    first), else from ``symbols[problem name]``, else called y and x1, x2, .... ``only`` limits
    the import to the given group paths. All problems are checked before anything is written.
    """
    path = Path(path)
    label = path.name
    prefix = check_name(prefix)
    symbols = dict(symbols or {})
    items = []
    results = []
    with _open_hdf5(path) as fh:
        problems = _hdf5_problems(fh, label)
        if only:
            wanted = {s.strip("/") for s in only}
            unknown = wanted - {p.path for p in problems}
            if unknown:
                raise DataImportError(f"{label} has no problem {', '.join(sorted(unknown))}")
            problems = [p for p in problems if p.path in wanted]
        total_values = 0
        for problem in problems:
            group = _hdf5_guard(label, f"/{problem.path}", lambda problem=problem: fh[problem.path])
            arrays: dict[str, np.ndarray] = {}
            width = None
            for key in sorted(problem.splits, key=lambda k: SPLITS.index(HDF5_SPLITS[k])):
                ours = HDF5_SPLITS[key]
                where = f"{label}: /{problem.path}/{key}"
                if ours in arrays:
                    raise DataImportError(f"{where}: a second {ours} split in the same group")
                dataset = _hdf5_guard(label, f"/{problem.path}/{key}", lambda key=key: group[key])
                if dataset.dtype.kind not in "fiu":
                    raise DataImportError(f"{where} holds {dataset.dtype} values, expected numbers")
                if dataset.ndim != 2 or dataset.shape[1] < 2:
                    raise DataImportError(
                        f"{where} has shape {tuple(dataset.shape)}, expected a 2-D array (rows, 1 + inputs) "
                        "with the target in column 0 and at least one input"
                    )
                if width is not None and dataset.shape[1] != width:
                    raise DataImportError(
                        f"{where} has {dataset.shape[1]} columns but the other splits of /{problem.path} have {width}"
                    )
                width = dataset.shape[1]
                total_values += dataset.size
                if dataset.size > MAX_HDF5_VALUES or total_values > MAX_HDF5_TOTAL_VALUES:
                    limit = (f"at most {MAX_HDF5_VALUES:,} are read from one array" if dataset.size > MAX_HDF5_VALUES
                             else f"the arrays read so far hold {total_values:,}; at most {MAX_HDF5_TOTAL_VALUES:,} "
                             "are read in one import (choose fewer problems)")
                    raise DataImportError(f"{where} has shape {tuple(dataset.shape)}: {dataset.size:,} values; {limit}")
                data = _hdf5_guard(label, f"/{problem.path}/{key}",
                                   lambda dataset=dataset: np.asarray(dataset[()], dtype=float))
                bad = ~np.isfinite(data)
                if bad.any():
                    r, c = map(int, np.argwhere(bad)[0])
                    what = "NaN" if np.isnan(data[r, c]) else "infinite"
                    col = "column 0 (the target)" if c == 0 else f"column {c} (input {c})"
                    raise DataImportError(f"{where}, row {r}, {col}: the value is {what} (rows count from 0)")
                if data.shape[0] == 0:
                    raise DataImportError(f"{where} has no rows")
                arrays[ours] = data
            if "train" not in arrays or arrays["train"].shape[0] < MIN_TRAIN_ROWS:
                n = arrays["train"].shape[0] if "train" in arrays else 0
                raise DataImportError(
                    f"{label}: /{problem.path}/train has {n} rows; at least {MIN_TRAIN_ROWS} are needed"
                )
            problem_name = problem.path.rsplit("/", 1)[-1]
            given = symbols.get(problem_name) or symbols.get(problem.path)
            names = _hdf5_guard(label, f"/{problem.path}",
                                partial(_hdf5_symbols, group, given, width, f"{label}: /{problem.path}"))
            safe = _unique_names(names)
            name = _hdf5_name(prefix, problem.path)
            variables = [
                {
                    "name": safe[i],
                    "role": "target" if i == 0 else "input",
                    "description": (f"{names[i]}: " if names[i] != safe[i] else "")
                    + ("the target (column 0 of the arrays)" if i == 0 else f"input {i} (column {i} of the arrays)"),
                    "unit": "",
                    "column": names[i],
                }
                for i in range(width)
            ]
            splits = {s: (np.ascontiguousarray(a[:, 1:]), np.ascontiguousarray(a[:, 0])) for s, a in arrays.items()}
            counts = {s: int(splits[s][1].shape[0]) for s in SPLITS if s in splits}
            group_path = problem.path.rsplit("/", 1)[0] if "/" in problem.path else ""
            split_names = {"train": "train", "test_id": "in-domain test", "test_ood": "out-of-domain test"}
            note = "Splits as published in " + label + ": " + ", ".join(
                f"{counts[s]} {split_names[s]} rows (/{problem.path}/{k})"
                for s in SPLITS for k in problem.splits if HDF5_SPLITS[k] == s
            ) + "."
            record = {
                "format": FORMAT,
                "version": FORMAT_VERSION,
                "id": f"{SUITE}/{name}",
                "name": problem_name,
                "suite": f"{SUITE}/{prefix}",
                "group": group_path,
                "title": f"{problem_name} (LLM-SRBench, {group_path or 'top level'})",
                "context": (
                    f"Problem {problem_name} of LLM-SRBench ({group_path or 'top level'}), imported from {label} on "
                    f"{time.strftime('%Y-%m-%d')}. The ground truth is not stored in the HDF5 file (it is in the "
                    "dataset's metadata), so it is unknown here."
                ),
                "split_note": note,
                "variables": variables,
                "splits": counts,
                "source": {
                    "files": {"hdf5": str(path.resolve())},
                    "group": "/" + problem.path,
                    "imported_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                    "ignored_datasets": problem.ignored,
                },
                "options": {},
                "dropped_rows": 0,
            }
            items.append((name, record, splits))
            warn = [f"ignored dataset(s) {', '.join(problem.ignored)} in /{problem.path}"] if problem.ignored else []
            renamed = {n: s for n, s in zip(names, safe) if n != s}
            results.append(ImportResult(f"{SUITE}/{name}", counts, 0, renamed, warn))
    if not items:
        raise DataImportError(f"{label}: nothing to import")
    stored = _store(items, replace=replace)
    for result, folder in zip(results, stored):
        result.path = str(folder)
    return results


def _hdf5_symbols(group, given: Sequence[str] | None, width: int, where: str) -> list[str]:
    names = given
    if names is None and "symbols" in group.attrs:
        raw = group.attrs["symbols"]
        try:
            names = [n.decode() if isinstance(n, bytes) else str(n) for n in np.atleast_1d(raw)]
        except UnicodeDecodeError:
            raise DataImportError(f"{where}: the 'symbols' attribute is not UTF-8 text") from None
    if names is None:
        return ["y"] + [f"x{i}" for i in range(1, width)]
    names = [str(n).strip() for n in names]
    if len(names) != width:
        raise DataImportError(f"{where}: {len(names)} symbol names ({', '.join(names)}) for {width} columns")
    if len(set(names)) != len(names) or not all(names):
        raise DataImportError(f"{where}: the symbol names must be unique and non-empty ({', '.join(names)})")
    return names
