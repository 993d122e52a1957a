"""Rendering report tables as Markdown, CSV, LaTeX or HTML.

:func:`render` is the one entry point. Markdown, LaTeX and HTML show the paper-layout summary
tables and the detail tables (published rows in italics, group summary rows in bold, each
table's notes under it); CSV shows the detail tables by default, one CSV block per table with
the table's name in the first column and numbers at full precision, blocks separated by one
blank line.

* Markdown flattens two-level headers to "Group · Metric".
* LaTeX uses booktabs (``\\toprule``, ``\\cmidrule``) and ``\\multicolumn`` for column groups;
  summary tables are floats, detail tables ``longtable`` (they can run over several pages).
  The output is a fragment for a document that loads ``booktabs`` and ``longtable``.
* HTML is a complete standalone document with a small inline stylesheet; column groups are
  header cells with ``colspan``.
"""

from __future__ import annotations

import csv
import html
import io
import math
from typing import Any, Iterable, Sequence

from .layouts import Column, Table

FORMATS = ("md", "csv", "latex", "html")
NA = "n/a"
EMPTY_MESSAGE = "No finished runs match."


# ---------------------------------------------------------------------------- values


def display(value: Any, fmt: str) -> str:
    """A value as shown to a reader (rounded). A missing number is "n/a"; a missing text or
    count (a published row has no run count) is blank."""
    if value is None:
        return "" if fmt in ("text", "int") else NA
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, float)):
        v = float(value)
        if math.isnan(v):
            return NA
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        if fmt == "int":
            return str(int(round(v)))
        if fmt == "pct":
            return f"{v:.1f}"
        if fmt == "num":
            if v == 0:
                return "0"
            return f"{v:.3g}" if abs(v) < 1e-3 or abs(v) >= 1e5 else f"{v:.4g}"
        return f"{v:g}" if isinstance(value, float) else str(value)
    return str(value)


def exact(value: Any, fmt: str = "num") -> str:
    """A value at full precision (CSV): floats by ``repr`` (shortest round-trip form)."""
    if value is None:
        return "" if fmt in ("text", "int") else NA
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value):
            return NA
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    return str(value)


def _spans(columns: Sequence[Column]) -> list[tuple[str | None, int, int]]:
    """Runs of consecutive columns sharing a group header: (header, first index, count)."""
    spans: list[tuple[str | None, int, int]] = []
    for i, c in enumerate(columns):
        if spans and c.group is not None and spans[-1][0] == c.group:
            h, start, n = spans[-1]
            spans[-1] = (h, start, n + 1)
        else:
            spans.append((c.group, i, 1))
    return spans


def _select(tables: Iterable[Table], which: str) -> list[Table]:
    if which not in ("all", "summary", "detail"):
        raise ValueError(f"table selection must be all, summary or detail, not {which!r}")
    return [t for t in tables if which == "all" or t.kind == which]


# ---------------------------------------------------------------------------- CSV


def render_csv(tables: Sequence[Table]) -> str:
    blocks = []
    for t in tables:
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        # Headers are the tables' own labels ("SA (%)", "ID NMSE (median)"), as a reader sees them.
        w.writerow(["table", "row", *[f"{c.group} · {c.label}" if c.group else c.label for c in t.columns]])
        for row in t.rows:
            w.writerow([t.name or t.title, row.get("row", ""), *[exact(row.get(c.key), c.fmt) for c in t.columns]])
        blocks.append(buf.getvalue())
    return "\n".join(blocks)


# ---------------------------------------------------------------------------- Markdown


def _md_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("*", "\\*").replace("`", "\\`").replace("\n", " ")


def _md_table(t: Table) -> str:
    heads = [f"{c.group} · {c.label}" if c.group else c.label for c in t.columns]
    lines = [f"## {_md_escape(t.title)}", ""]
    lines.append("| " + " | ".join(_md_escape(h) for h in heads) + " |")
    lines.append("|" + "|".join("---:" if c.fmt in ("int", "pct", "num") else "---" for c in t.columns) + "|")
    for row in t.rows:
        cells = []
        for c in t.columns:
            text = _md_escape(display(row.get(c.key), c.fmt))
            if row.get("row") == "published" and row.get(c.key) is not None:
                text = f"*{text}*"
            elif row.get("row") == "summary" and t.kind == "detail" and row.get(c.key) is not None:
                text = f"**{text}**"
            cells.append(text)
        lines.append("| " + " | ".join(cells) + " |")
    if not t.rows:
        lines.append("")
        lines.append("(no rows)")
    if t.notes:
        lines.append("")
        lines += [f"- {_md_escape(n)}" for n in t.notes]
    return "\n".join(lines) + "\n"


def render_md(tables: Sequence[Table], title: str, preamble: Sequence[str]) -> str:
    parts = [f"# {_md_escape(title)}\n"]
    if preamble:
        parts.append("\n".join(_md_escape(p) for p in preamble) + "\n")
    if not tables:
        parts.append(EMPTY_MESSAGE + "\n")
    else:
        parts.append("Published numbers are in *italics*; rows summarising a group are in **bold**.\n")
    parts += [_md_table(t) for t in tables]
    return "\n".join(parts)


# ---------------------------------------------------------------------------- LaTeX

_LATEX_CHARS = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    # non-ASCII characters our labels use, so that pdflatex without extra packages copes
    "²": r"\textsuperscript{2}",
    "·": r"\textperiodcentered{}",
    "—": "---",
    "–": "--",
    "×": r"\texttimes{}",
    "τ": r"$\tau$",
    "≥": r"$\geq$",
    "≤": r"$\leq$",
}


def latex_escape(text: str) -> str:
    return "".join(_LATEX_CHARS.get(ch, ch) for ch in str(text))


def _latex_table(t: Table) -> str:
    cols = t.columns
    align = "".join("r" if c.fmt in ("int", "pct", "num") else "l" for c in cols)
    head: list[str] = []
    if t.has_column_groups:
        cells, rules = [], []
        for header, start, n in _spans(cols):
            if header is None:
                cells += [""] * n
            else:
                cells.append(rf"\multicolumn{{{n}}}{{c}}{{{latex_escape(header)}}}")
                rules.append(rf"\cmidrule(lr){{{start + 1}-{start + n}}}")
        head.append(" & ".join(cells) + r" \\")
        head.append(" ".join(rules))
    head.append(" & ".join(latex_escape(c.label) for c in cols) + r" \\")
    body = []
    for row in t.rows:
        cells = []
        for c in cols:
            text = latex_escape(display(row.get(c.key), c.fmt))
            if row.get("row") == "published" and row.get(c.key) is not None:
                text = rf"\textit{{{text}}}"
            elif row.get("row") == "summary" and t.kind == "detail" and row.get(c.key) is not None:
                text = rf"\textbf{{{text}}}"
            cells.append(text)
        body.append(" & ".join(cells) + r" \\")
    label = "tab:" + "".join(ch if ch.isalnum() or ch in "-:" else "-" for ch in (t.name or t.title))
    notes = ""
    if t.notes:
        notes = r"\par\smallskip{\footnotesize " + " ".join(latex_escape(n) for n in t.notes) + "}"
    if t.kind == "detail":
        lines = [rf"\begin{{longtable}}{{{align}}}",
                 rf"\caption{{{latex_escape(t.title)}}}\label{{{label}}} \\",
                 r"\toprule", *head, r"\midrule", r"\endhead",
                 *body, r"\bottomrule", r"\end{longtable}"]
        if notes:
            lines.append(r"{\footnotesize " + " ".join(latex_escape(n) for n in t.notes) + r"\par}")
    else:
        lines = [r"\begin{table}[htbp]", r"\centering", rf"\caption{{{latex_escape(t.title)}}}",
                 rf"\label{{{label}}}", r"\resizebox{\linewidth}{!}{%", rf"\begin{{tabular}}{{{align}}}",
                 r"\toprule", *head, r"\midrule", *body, r"\bottomrule", r"\end{tabular}}"]
        if notes:
            lines.append(notes)
        lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"


def render_latex(tables: Sequence[Table], title: str, preamble: Sequence[str]) -> str:
    parts = [f"% {title}", "% Needs \\usepackage{booktabs}, \\usepackage{longtable} and \\usepackage{graphicx}."]
    parts += [f"% {p}" for p in preamble]
    parts.append("% Published numbers are in italics; rows summarising a group are in bold.")
    if not tables:
        parts.append(f"% {EMPTY_MESSAGE}")
    text = "\n".join(parts) + "\n"
    return text + "\n".join(_latex_table(t) for t in tables)


# ---------------------------------------------------------------------------- HTML

_STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.15em; margin-top: 2em; }
table { border-collapse: collapse; font-size: 0.9em; margin: 0.5em 0; }
th, td { padding: 0.25em 0.6em; border-bottom: 1px solid #ddd; }
thead th { border-bottom: 2px solid #444; background: #f6f6f6; }
th.group { border-bottom: 1px solid #888; text-align: center; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.published td { font-style: italic; color: #555; background: #fbfbf4; }
tr.summary td { font-weight: 600; background: #f3f6fb; }
ul.notes { font-size: 0.85em; color: #555; }
p.legend { font-size: 0.85em; color: #555; }
""".strip()


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _html_table(t: Table) -> str:
    cols = t.columns
    out = [f'<section id="{_e(t.name)}">', f"<h2>{_e(t.title)}</h2>", "<table>", "<thead>"]
    if t.has_column_groups:
        first = []
        for header, start, n in _spans(cols):
            if header is None:
                first += [f'<th rowspan="2">{_e(c.label)}</th>' for c in cols[start:start + n]]
            else:
                first.append(f'<th class="group" colspan="{n}">{_e(header)}</th>')
        out.append("<tr>" + "".join(first) + "</tr>")
        out.append("<tr>" + "".join(f"<th>{_e(c.label)}</th>" for c in cols if c.group is not None) + "</tr>")
    else:
        out.append("<tr>" + "".join(f"<th>{_e(c.label)}</th>" for c in cols) + "</tr>")
    out.append("</thead>")
    out.append("<tbody>")
    for row in t.rows:
        kind = row.get("row", "task")
        cells = []
        for c in cols:
            cls = ' class="num"' if c.fmt in ("int", "pct", "num") else ""
            cells.append(f"<td{cls}>{_e(display(row.get(c.key), c.fmt))}</td>")
        out.append(f'<tr class="{_e(kind)}">' + "".join(cells) + "</tr>")
    out.append("</tbody>")
    out.append("</table>")
    if not t.rows:
        out.append("<p>(no rows)</p>")
    if t.notes:
        out.append('<ul class="notes">' + "".join(f"<li>{_e(n)}</li>" for n in t.notes) + "</ul>")
    out.append("</section>")
    return "\n".join(out)


def render_html(tables: Sequence[Table], title: str, preamble: Sequence[str]) -> str:
    body = [f"<h1>{_e(title)}</h1>"]
    body += [f"<p>{_e(p)}</p>" for p in preamble]
    if tables:
        body.append('<p class="legend">Published numbers are in italics; rows summarising a group are in bold.</p>')
    else:
        body.append(f"<p>{_e(EMPTY_MESSAGE)}</p>")
    body += [_html_table(t) for t in tables]
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f"<title>{_e(title)}</title>\n<style>\n{_STYLE}\n</style>\n</head>\n<body>\n"
        + "\n".join(body)
        + "\n</body>\n</html>\n"
    )


# ---------------------------------------------------------------------------- entry point


def render(
    tables: Sequence[Table],
    fmt: str,
    *,
    which: str | None = None,
    title: str = "Kepler Lab report",
    preamble: Sequence[str] = (),
) -> str:
    """``tables`` as text in ``fmt`` ("md", "csv", "latex" or "html").

    ``which`` selects "summary", "detail" or "all" tables; by default CSV shows the detail
    tables and the other formats all of them. ``preamble``: lines printed before the tables
    (not in CSV), e.g. how many runs were left out.
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown report format {fmt!r}; formats: {', '.join(FORMATS)}")
    chosen = _select(tables, which or ("detail" if fmt == "csv" else "all"))
    if fmt == "csv":
        return render_csv(chosen)
    if fmt == "md":
        return render_md(chosen, title, preamble)
    if fmt == "latex":
        return render_latex(chosen, title, preamble)
    return render_html(chosen, title, preamble)
