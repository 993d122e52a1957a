"""The benchmark papers' own published numbers, as data for the leaderboard's reference rows.

One JSON file per benchmark under ``assets/published/`` (``llmsrbench.json``, ``surfacebench.json``,
``symbolbench.json``, ``newtonbench.json``, ``erbench.json``)::

    {"benchmark": "llmsrbench",
     "source": "LLM-SRBench (Shojaee et al., ICML 2025), Table 1 and Table 3 (App. F, PySR)",
     "notes": "how the numbers were read, what was inferred, what is missing",
     "metrics": {"sa": {"label": "SA", "unit": "%", "better": "higher"}, ...},
     "rows": [{"table": "Table 1", "method": "llmsr", "label": "LLM-SR", "model": "GPT-4o-mini",
               "group": "lsr-transform", "split": "id",
               "metrics": {"sa": 31.53, "acc_0.1": 39.64, "nmse": 0.0091}, "note": "..."}, ...]}

Values are copied as the paper prints them (percentages stay percentages). ``method`` is our
method registry name when we have the method (``llmsr``, ``pcmci``, ``agent:code``, ...), else a
lowercase slug of the paper's name (``pysr``, ``logicgep``). ``group`` keys are fixed per
benchmark (see :func:`group_problem`) so a report can put published rows beside ours.

Files are validated on load; a malformed file raises :class:`ValueError` naming the file and the
row. No Qt here.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from .. import paths

BENCHMARKS = ("llmsrbench", "surfacebench", "symbolbench", "newtonbench", "erbench")
SPLITS = ("id", "ood", "all")
UNITS = ("%", "")
BETTER = ("higher", "lower")

LLMSR_GROUPS = ("lsr-transform", "chemistry", "biology", "physics", "material_science")
SURFACE_FORMS = ("explicit", "implicit", "parametric")
NEWTON_DIFFICULTIES = ("easy", "medium", "hard")
NEWTON_SYSTEMS = ("vanilla", "simple", "complex")
#: NewtonBench's twelve domains, named as engine.lab.MODULE_NAMES (per-domain groups use them).
NEWTON_MODULES = (
    "m0_gravity", "m1_coulomb_force", "m2_magnetic_force", "m3_fourier_law", "m4_snell_law",
    "m5_radioactive_decay", "m6_underdamped_harmonic", "m7_malus_law", "m8_sound_speed", "m9_hooke_law",
    "m10_be_distribution", "m11_heat_transfer",
)

_SLUG = r"[a-z0-9][a-z0-9_\-]*"
_ROW_FIELDS = ("table", "method", "label", "model", "group", "split", "metrics", "note")
_REQUIRED_ROW_FIELDS = ("table", "method", "label", "model", "group", "split", "metrics")
_FILE_FIELDS = ("benchmark", "source", "notes", "metrics", "rows")
_METHOD_RE = re.compile(r"[a-z0-9][a-z0-9_.:+\-]*")


@dataclass(frozen=True)
class PublishedRow:
    benchmark: str        # llmsrbench | surfacebench | symbolbench | newtonbench | erbench
    table: str            # e.g. "Table 1"
    method: str           # our method registry name when we have it, else a slug of the paper's method
    label: str            # the paper's own method name, e.g. "LLM-SR"
    model: str | None     # the backbone LLM as printed, e.g. "GPT-4o-mini"; None for non-LLM methods
    group: str            # the group key (see group_problem)
    split: str            # "id" | "ood" | "all"  ("all" when the paper does not split)
    metrics: dict[str, float]   # metric key -> value exactly as printed
    note: str = ""


@dataclass(frozen=True)
class PublishedFile:
    """One parsed and validated ``assets/published/<benchmark>.json``."""
    path: Path
    benchmark: str
    source: str
    notes: str
    metrics: dict[str, dict]
    rows: tuple[PublishedRow, ...]


def default_dir() -> Path:
    return paths.assets_dir() / "published"


def group_problem(benchmark: str, group: str) -> str | None:
    """Why ``group`` is not a valid group key of ``benchmark``, or None when it is.

    * llmsrbench: ``lsr-transform``, ``chemistry``, ``biology``, ``physics``, ``material_science``.
    * surfacebench: the form ``explicit`` | ``implicit`` | ``parametric``, or ``<form>/<category>``.
    * symbolbench: ``cde/1d`` ... ``cde/4d``, ``bn``, ``bn/<network>``, ``scm``.
    * newtonbench: ``all``, ``<difficulty>/<system>``, or ``<module>/<difficulty>/<system>`` for one
      domain (module as in engine.lab, e.g. ``m0_gravity``).
    * erbench: ``all``, ``feynman``, ``syneq``, ``syneq/d<k>``.
    """
    if benchmark == "llmsrbench":
        ok = group in LLMSR_GROUPS
        expected = " | ".join(LLMSR_GROUPS)
    elif benchmark == "surfacebench":
        form, sep, category = group.partition("/")
        ok = form in SURFACE_FORMS and (not sep or re.fullmatch(_SLUG, category) is not None)
        expected = "explicit | implicit | parametric, optionally /<category>"
    elif benchmark == "symbolbench":
        ok = (re.fullmatch(r"cde/[1-4]d", group) is not None or group in ("bn", "scm")
              or re.fullmatch(r"bn/" + _SLUG, group) is not None)
        expected = "cde/1d .. cde/4d | bn | bn/<network> | scm"
    elif benchmark == "newtonbench":
        parts = group.split("/")
        if len(parts) == 3 and parts[0] not in NEWTON_MODULES:
            return (f"unknown group key {group!r} for newtonbench: unknown domain {parts[0]!r} "
                    f"(expected one of {', '.join(NEWTON_MODULES)})")
        ok = group == "all" or (len(parts) in (2, 3) and parts[-2] in NEWTON_DIFFICULTIES
                                and parts[-1] in NEWTON_SYSTEMS)
        expected = "all | <easy|medium|hard>/<vanilla|simple|complex> | <module>/<difficulty>/<system>"
    elif benchmark == "erbench":
        ok = group in ("all", "feynman", "syneq") or re.fullmatch(r"syneq/d\d+", group) is not None
        expected = "all | feynman | syneq | syneq/d<k>"
    else:
        return f"unknown benchmark {benchmark!r}"
    return None if ok else f"unknown group key {group!r} for {benchmark} (expected {expected})"


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def load_file(path: str | Path, benchmark: str | None = None) -> PublishedFile:
    """Read and validate one published-results file. ``benchmark``, when given, must match the
    file's own ``benchmark`` field. Raises ValueError (naming the file, and the row when a row is
    at fault) for anything malformed, FileNotFoundError when the file is missing."""
    path = Path(path)
    where = str(path)

    def fail(message: str, row: int | None = None):
        at = f" row {row}" if row is not None else ""
        raise ValueError(f"published results {where}{at}: {message}")

    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        fail(f"not valid JSON ({exc})")
    if not isinstance(doc, dict):
        fail("the top level must be a JSON object")
    missing = [k for k in _FILE_FIELDS if k not in doc]
    if missing:
        fail(f"missing field(s): {', '.join(missing)}")
    extra = sorted(set(doc) - set(_FILE_FIELDS))
    if extra:
        fail(f"unknown field(s): {', '.join(extra)}")
    bench = doc["benchmark"]
    if bench not in BENCHMARKS:
        fail(f"unknown benchmark {bench!r} (expected one of {', '.join(BENCHMARKS)})")
    if benchmark is not None and bench != benchmark:
        fail(f"file is for benchmark {bench!r}, expected {benchmark!r}")
    for key in ("source", "notes"):
        if not isinstance(doc[key], str) or not doc[key].strip():
            fail(f"{key!r} must be a non-empty string")

    spec = doc["metrics"]
    if not isinstance(spec, dict) or not spec:
        fail("'metrics' must be a non-empty object: metric key -> {label, unit, better}")
    for key, entry in spec.items():
        if not isinstance(entry, dict) or set(entry) != {"label", "unit", "better"}:
            fail(f"metric {key!r} must be an object with exactly label, unit and better")
        if not isinstance(entry["label"], str) or not entry["label"].strip():
            fail(f"metric {key!r}: label must be a non-empty string")
        if entry["unit"] not in UNITS:
            fail(f"metric {key!r}: unit must be '%' or '' (got {entry['unit']!r})")
        if entry["better"] not in BETTER:
            fail(f"metric {key!r}: better must be 'higher' or 'lower' (got {entry['better']!r})")

    raw_rows = doc["rows"]
    if not isinstance(raw_rows, list):
        fail("'rows' must be a list")
    rows: list[PublishedRow] = []
    seen: dict[tuple, int] = {}
    for i, raw in enumerate(raw_rows):
        if not isinstance(raw, dict):
            fail("must be an object", i)
        missing = [k for k in _REQUIRED_ROW_FIELDS if k not in raw]
        if missing:
            fail(f"missing field(s): {', '.join(missing)}", i)
        extra = sorted(set(raw) - set(_ROW_FIELDS))
        if extra:
            fail(f"unknown field(s): {', '.join(extra)}", i)
        for key in ("table", "label"):
            if not isinstance(raw[key], str) or not raw[key].strip():
                fail(f"{key!r} must be a non-empty string", i)
        method = raw["method"]
        if not isinstance(method, str) or not _METHOD_RE.fullmatch(method):
            fail(f"method {method!r} must be a lowercase registry name or slug", i)
        model = raw["model"]
        if model is not None and (not isinstance(model, str) or not model.strip()):
            fail("'model' must be a non-empty string or null", i)
        group = raw["group"]
        if not isinstance(group, str):
            fail("'group' must be a string", i)
        problem = group_problem(bench, group)
        if problem:
            fail(problem, i)
        if raw["split"] not in SPLITS:
            fail(f"split must be one of {', '.join(SPLITS)} (got {raw['split']!r})", i)
        metrics = raw["metrics"]
        if not isinstance(metrics, dict) or not metrics:
            fail("'metrics' must be a non-empty object", i)
        for key, value in metrics.items():
            if key not in spec:
                fail(f"metric {key!r} is not declared in the file's 'metrics' "
                     f"(declared: {', '.join(spec)})", i)
            if not _is_number(value):
                fail(f"metric {key!r} must be a finite number, got {value!r}", i)
        note = raw.get("note", "")
        if not isinstance(note, str):
            fail("'note' must be a string", i)
        identity = (raw["table"], method, raw["label"], model, group, raw["split"])
        if identity in seen:
            fail(f"duplicates row {seen[identity]} (same table, method, label, model, group, split)", i)
        seen[identity] = i
        rows.append(PublishedRow(benchmark=bench, table=raw["table"], method=method, label=raw["label"],
                                 model=model, group=group, split=raw["split"],
                                 metrics={k: float(v) for k, v in metrics.items()}, note=note))
    return PublishedFile(path=path, benchmark=bench, source=doc["source"], notes=doc["notes"],
                         metrics={k: dict(v) for k, v in spec.items()}, rows=tuple(rows))


def _check_benchmark(benchmark: str) -> None:
    if benchmark not in BENCHMARKS:
        raise ValueError(f"unknown benchmark {benchmark!r} (expected one of {', '.join(BENCHMARKS)})")


@lru_cache(maxsize=None)
def _file(benchmark: str) -> PublishedFile:
    _check_benchmark(benchmark)
    return load_file(default_dir() / f"{benchmark}.json", benchmark=benchmark)


def published_file(benchmark: str) -> PublishedFile:
    """The validated file of one benchmark (cached)."""
    return _file(benchmark)


def published_rows(benchmark: str | None = None) -> list[PublishedRow]:
    """The published rows of one benchmark, or of all five (in BENCHMARKS order), in file order."""
    names = BENCHMARKS if benchmark is None else (benchmark,)
    out: list[PublishedRow] = []
    for name in names:
        out.extend(_file(name).rows)
    return out


def source_of(benchmark: str) -> str:
    """The full citation line, e.g. "LLM-SRBench (Shojaee et al., ICML 2025), Table 1 and Table 3 ..."."""
    return _file(benchmark).source


def notes_of(benchmark: str) -> str:
    """The file's notes: how the numbers were read, what was inferred, what is missing."""
    return _file(benchmark).notes


def metric_spec(benchmark: str) -> dict[str, dict]:
    """metric key -> {"label": ..., "unit": "%" or "", "better": "higher" | "lower"} (a copy)."""
    return {k: dict(v) for k, v in _file(benchmark).metrics.items()}


def clear_cache() -> None:
    """Forget loaded files (after editing them while the program runs)."""
    _file.cache_clear()


__all__ = [
    "BENCHMARKS",
    "PublishedFile",
    "PublishedRow",
    "clear_cache",
    "default_dir",
    "group_problem",
    "load_file",
    "metric_spec",
    "notes_of",
    "published_file",
    "published_rows",
    "source_of",
]
