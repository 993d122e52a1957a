"""Exporting a stored run: JSON (everything) and CSV (the final Pareto front).

JSON document (``format`` = ``keplerlab-run``, ``version`` = 1)::

    {"format", "version", "exported_at",
     "run":        the run row (RunRecord.to_dict(): task, method, config, seed, status, times,
                   expression, complexity, train_loss, metrics, stop_reason, error),
     "events":     every event in order ({"seq", "kind", "t", ...payload}),
     "candidates": every Pareto report's members ({"report", "iteration", "expression",
                   "complexity", "loss"}),
     "final_front": the last report's members,
     "recommended": the expression PySR's rule picks from the final front (engine.pareto)}

Non-finite numbers are written as the strings ``"inf"``, ``"-inf"``, ``"nan"`` (as in the
store), so the file is strict JSON; :func:`read_run_json` turns them back into floats.

CSV: one row per member of the final front, simplest first, with the run's identity repeated on
every row so rows from several runs can be concatenated: :data:`CSV_COLUMNS`. ``train_loss`` is
empty where the store holds no finite loss. Test metrics per candidate are optional columns,
filled when the caller has computed them (:mod:`engine.candidates`).
"""

from __future__ import annotations

import csv
import json
import math
import time
from pathlib import Path
from typing import Any, Mapping

from . import pareto
from .atomic import write_atomically
from .store import RunStore

FORMAT = "keplerlab-run"
VERSION = 1

CSV_COLUMNS = (
    "run_id", "task_id", "method", "seed", "status", "started_at", "seconds",
    "rank", "expression", "complexity", "train_loss", "is_final", "is_recommended",
    "id_nmse", "ood_nmse", "id_acc_0.1", "sa",
)


def _clean(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return "inf" if value > 0 else "-inf" if value < 0 else "nan"
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def _restore(value: Any) -> Any:
    if value in ("inf", "-inf", "nan"):
        return float(value)
    if isinstance(value, dict):
        return {k: _restore(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_restore(v) for v in value]
    return value


def _require(store: RunStore, run_id: str):
    record = store.get_run(run_id)
    if record is None:
        raise KeyError(f"no run {run_id!r} in {store.path}")
    return record


def all_candidates(store: RunStore, run_id: str) -> list[dict]:
    rows = store.conn.execute(
        "SELECT report, iteration, expression, complexity, loss FROM candidates WHERE run_id=? "
        "ORDER BY report, complexity",
        (run_id,),
    ).fetchall()
    return [dict(r) for r in rows]


def run_document(store: RunStore, run_id: str) -> dict:
    """The JSON document of one run (a dict; non-finite numbers still floats)."""
    record = _require(store, run_id)
    front = store.last_front(run_id)
    best = pareto.recommended(front)
    return {
        "format": FORMAT,
        "version": VERSION,
        "exported_at": time.time(),
        "run": record.to_dict(),
        "events": store.events(run_id),
        "candidates": all_candidates(store, run_id),
        "final_front": front,
        "recommended": best["expression"] if best else None,
    }


def write_run_json(store: RunStore, run_id: str, path: str | Path) -> Path:
    path = Path(path)
    document = _clean(run_document(store, run_id))
    text = json.dumps(document, indent=1, allow_nan=False)
    write_atomically(path, lambda fh: fh.write(text))
    return path


def read_run_json(path: str | Path) -> dict:
    document = json.loads(Path(path).read_text(encoding="utf-8"))
    if document.get("format") != FORMAT:
        raise ValueError(f"{path} is not a Kepler Lab run export")
    return _restore(document)


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else _clean(value)
    return value


def front_rows(store: RunStore, run_id: str,
               candidate_metrics: Mapping[str, Mapping[str, Any]] | None = None) -> list[dict]:
    """The CSV rows (dicts keyed by :data:`CSV_COLUMNS`)."""
    record = _require(store, run_id)
    front = store.last_front(run_id)
    best = pareto.recommended(front)
    started = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(record.started_at))
    rows = []
    for rank, c in enumerate(front, start=1):
        extra = (candidate_metrics or {}).get(c["expression"]) or {}
        rows.append({
            "run_id": record.id,
            "task_id": record.task_id,
            "method": record.method,
            "seed": record.seed,
            "status": record.status,
            "started_at": started,
            "seconds": record.seconds,
            "rank": rank,
            "expression": c["expression"],
            "complexity": c["complexity"],
            "train_loss": c["loss"],
            "is_final": bool(record.expression) and c["expression"] == record.expression,
            "is_recommended": best is not None and c is best,
            "id_nmse": extra.get("id_nmse"),
            "ood_nmse": extra.get("ood_nmse"),
            "id_acc_0.1": extra.get("id_acc_0.1"),
            "sa": extra.get("sa"),
        })
    return rows


def write_run_csv(store: RunStore, run_id: str, path: str | Path,
                  candidate_metrics: Mapping[str, Mapping[str, Any]] | None = None) -> Path:
    """``candidate_metrics`` maps an expression to ``{"id_nmse", "ood_nmse", "id_acc_0.1",
    "sa"}`` (:meth:`engine.candidates.CandidateScore.to_dict`)."""
    path = Path(path)
    rows = front_rows(store, run_id, candidate_metrics)

    def write(fh) -> None:
        writer = csv.DictWriter(fh, fieldnames=CSV_COLUMNS)
        writer.writeheader()
        for row in rows:
            writer.writerow({k: _cell(v) for k, v in row.items()})

    write_atomically(path, write)
    return path


def read_run_csv(path: str | Path) -> list[dict]:
    """Rows of an exported CSV with numbers, booleans and empty cells (None) restored."""
    ints = {"seed", "rank", "complexity"}
    floats = {"seconds", "train_loss", "id_nmse", "ood_nmse", "id_acc_0.1"}
    flags = {"is_final", "is_recommended", "sa"}
    out = []
    with Path(path).open(newline="", encoding="utf-8") as fh:
        for raw in csv.DictReader(fh):
            row: dict[str, Any] = {}
            for key, text in raw.items():
                if text == "":
                    row[key] = None
                elif key in ints:
                    row[key] = int(text)
                elif key in floats:
                    row[key] = float(text)
                elif key in flags:
                    row[key] = text == "1"
                else:
                    row[key] = text
            out.append(row)
    return out


def export_run(store: RunStore, run_id: str, path: str | Path, fmt: str | None = None,
               candidate_metrics: Mapping[str, Mapping[str, Any]] | None = None) -> Path:
    """Write ``path`` as ``fmt`` ("csv" or "json"; by default from the file's suffix)."""
    path = Path(path)
    fmt = (fmt or path.suffix.lstrip(".")).lower()
    if fmt == "json":
        return write_run_json(store, run_id, path)
    if fmt == "csv":
        return write_run_csv(store, run_id, path, candidate_metrics)
    raise ValueError(f"unknown run export format {fmt!r} (csv or json)")
