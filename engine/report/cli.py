"""``keplerlab report``: the stored runs as the benchmark papers' tables.

    keplerlab report [--db PATH] [--suite PREFIX[,PREFIX]] [--method M[,M]] [--sweep ID]
                     [--format md|csv|latex|html] [--table detail|summary|all]
                     [--out FILE] [--plots DIR] [--plot-format png|svg]

The report goes to stdout (or ``--out``); messages go to stderr. Exit codes follow the rest of
the command line: 0 success — including when no finished run matches: the report is then
empty but valid (CSV: nothing; Markdown / LaTeX / HTML: a document saying so) and stderr says
"no finished runs match"; 1 the store cannot be opened or read, or a file cannot be written;
2 bad usage (unknown sweep, bad option).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..atomic import write_atomically
from ..store import RunStore, StoreError
from .collect import ReportError, load_results
from .formats import FORMATS, render

TABLE_CHOICES = ("all", "summary", "detail")


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Add the ``report`` command to ``subparsers`` (from ``parser.add_subparsers()``)."""
    p = subparsers.add_parser(
        "report",
        help="tables of stored results in the papers' layouts, beside the published numbers",
        description="Aggregate finished runs into the benchmark papers' tables (Markdown, CSV, LaTeX or HTML), "
                    "with the papers' published numbers beside ours, and optionally save plots.",
    )
    p.add_argument("--db", help="run store path (default: the user data directory)")
    p.add_argument("--suite", metavar="PREFIX[,PREFIX]",
                   help="only tasks whose id starts with one of these prefixes, e.g. llmsrbench/lsr-synth,feynman")
    p.add_argument("--method", metavar="M[,M]", help="only these methods, e.g. gp,llmsr")
    p.add_argument("--sweep", metavar="ID", help="only the runs of this sweep")
    p.add_argument("--format", choices=FORMATS, default="md", help="output format (default: md)")
    p.add_argument("--table", choices=TABLE_CHOICES, default=None,
                   help="which tables: the papers' summary layouts, the per-task detail, or all "
                        "(default: detail for csv, all otherwise)")
    p.add_argument("--out", metavar="FILE", help="write the report to FILE instead of stdout")
    p.add_argument("--plots", metavar="DIR", help="also save plots (NMSE box plots, SA vs complexity, "
                   "ERBench recovery) in DIR")
    p.add_argument("--plot-format", choices=("png", "svg"), default="png", help="plot file format (default: png)")
    p.set_defaults(func=cmd_report)
    return p


def _open_store(db: str | None) -> RunStore:
    """Open an existing store; a report never creates an empty database by mistake."""
    from .. import paths

    path = Path(db) if db else paths.default_db_path()
    if not path.exists():
        raise StoreError(f"no run store at {path} (run something first, or give --db)")
    if path.is_dir():
        raise StoreError(f"{path} is a directory, not a run store")
    return RunStore(path)


def _preamble(results, args) -> list[str]:
    lines = [f"{len(results)} finished run(s)."]
    filters = []
    if args.suite:
        filters.append(f"suite {args.suite}")
    if args.method:
        filters.append(f"method {args.method}")
    if args.sweep:
        filters.append(f"sweep {args.sweep}")
    if filters:
        lines[0] = f"{len(results)} finished run(s) matching {', '.join(filters)}."
    if results.excluded:
        parts = ", ".join(f"{n} {status}" for status, n in sorted(results.excluded.items()))
        lines.append(f"Not included because they did not finish: {parts}.")
    return lines


def cmd_report(args: argparse.Namespace) -> int:
    # engine.cli is imported here, not at the top: engine.cli imports this module to add the command.
    from ..cli import EXIT_FAILURE, EXIT_OK, UsageError, _err
    from .layouts import build_tables

    try:
        with _open_store(args.db) as store:
            results = load_results(store, suite=args.suite, methods=args.method, sweep_id=args.sweep)
    except StoreError as exc:
        _err(f"error: {exc}")
        return EXIT_FAILURE
    except ReportError as exc:
        raise UsageError(str(exc)) from None

    which = args.table or ("detail" if args.format == "csv" else "all")
    tables = build_tables(results, which=which) if results or results.excluded else []
    text = render(tables, args.format, which=which, preamble=_preamble(results, args))

    if not results:
        _err("no finished runs match" + (f" ({results.excluded_total} did not finish)" if results.excluded else ""))
    elif results.excluded:
        _err(f"{len(results)} finished runs; {results.excluded_total} not included (did not finish)")

    if args.out:
        try:
            out = Path(args.out)
            if out.parent and not out.parent.exists():
                raise OSError(f"folder {out.parent} does not exist")
            write_atomically(out, lambda fh: fh.write(text))
        except OSError as exc:
            _err(f"error: cannot write {args.out}: {exc}")
            return EXIT_FAILURE
        _err(f"report written to {args.out}")
    else:
        sys.stdout.write(text)
        sys.stdout.flush()

    if args.plots:
        from .plots import save_all

        try:
            made = save_all(results, args.plots, args.plot_format)
        except OSError as exc:
            _err(f"error: cannot save plots in {args.plots}: {exc}")
            return EXIT_FAILURE
        if made:
            _err(f"{len(made)} plot(s) saved in {args.plots}: {', '.join(p.name for p in made)}")
        else:
            _err("no plots: nothing to plot in these results")
    return EXIT_OK
