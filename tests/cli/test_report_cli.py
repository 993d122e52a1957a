"""``keplerlab report``: built on a parser of our own with ``add_parser`` (the command's wiring
into engine/cli.py is one line there), and once through ``engine.cli.main`` when it is wired."""

from __future__ import annotations

import argparse
import csv
import io
from html.parser import HTMLParser

import pytest

from engine.cli import EXIT_FAILURE, EXIT_OK, UsageError
from engine.report import cli as report_cli
from engine.store import RunStore


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="keplerlab")
    report_cli.add_parser(p.add_subparsers(dest="command"))
    return p


def report(*argv: str) -> int:
    args = parser().parse_args(["report", *argv])
    return args.func(args)


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "runs.db"
    with RunStore(path) as s:
        for seed, (nmse, acc, eq) in enumerate([(0.01, 1.0, True), (0.03, 0.0, False), (0.05, 0.0, False)]):
            rid = s.create_run("llmsrbench/lsr-synth/chemistry/CKR1", "gp", {}, seed)
            s.finish_run(rid, "finished", seconds=1.0, metrics={
                "id": {"nmse": nmse, "acc_0.1": acc}, "ood": {"nmse": nmse * 2, "acc_0.1": 0.0},
                "symbolic": {"equivalent": eq}})
        rid = s.create_run("llmsrbench/lsr-synth/chemistry/CKR1", "gp", {}, 9)
        s.finish_run(rid, "failed", error="boom")
        rid = s.create_run("erbench/variants/noise/0.05/feynman/I.6.2", "gp", {}, 0)
        s.finish_run(rid, "finished", metrics={"id": {"nmse": 0.2}, "structure": {"recovered": True},
                                              "symbolic": {"equivalent": True}})
    return path


def test_markdown_report_to_stdout(db, capsys):
    assert report("--db", str(db)) == EXIT_OK
    out, err = capsys.readouterr()
    assert out.startswith("# Kepler Lab report")
    assert "## LLM-SRBench — in-domain (paper Table 1 layout)" in out
    assert "| Chemistry · SA (%) |" in out
    assert "(published)" in out  # the paper's numbers beside ours (assets/published)
    assert "Not included because they did not finish: 1 failed." in out
    assert "1 not included" in err


def test_csv_defaults_to_detail_tables_and_parses(db, capsys):
    assert report("--db", str(db), "--format", "csv", "--suite", "llmsrbench") == EXIT_OK
    out = capsys.readouterr().out
    blocks = out.split("\n\n")
    assert len(blocks) == 1
    rows = list(csv.DictReader(io.StringIO(blocks[0])))
    task = [r for r in rows if r["row"] == "task"][0]
    assert task["table"] == "llmsrbench-detail" and task["Runs"] == "3"
    assert float(task["SA (%)"]) == 100 / 3
    assert float(task["ID NMSE (median)"]) == 0.03
    assert any(r["row"] == "published" for r in rows)


def test_summary_only_and_method_filter(db, capsys):
    assert report("--db", str(db), "--format", "csv", "--table", "summary", "--method", "gp") == EXIT_OK
    out = capsys.readouterr().out
    names = {r[0] for r in csv.reader(io.StringIO(out)) if r and r[0] != "table"}
    assert "llmsrbench-summary-id" in names and "erbench-variants-summary" in names
    assert not any(n.endswith("detail") for n in names)


def test_latex_and_html_to_files_with_plots(db, tmp_path, capsys):
    tex = tmp_path / "r.tex"
    assert report("--db", str(db), "--format", "latex", "--out", str(tex)) == EXIT_OK
    text = tex.read_text()
    assert text.count(r"\begin{tabular}") == text.count(r"\end{tabular}") > 0
    page = tmp_path / "r.html"
    plots = tmp_path / "plots"
    assert report("--db", str(db), "--format", "html", "--out", str(page), "--plots", str(plots),
                  "--plot-format", "svg") == EXIT_OK
    html_text = page.read_text()
    HTMLParser().feed(html_text)
    assert html_text.startswith("<!DOCTYPE html>") and "</html>" in html_text
    made = sorted(p.name for p in plots.iterdir())
    assert "nmse_id.svg" in made and "recovery_vs_axis.svg" in made
    assert all((plots / n).stat().st_size > 500 for n in made)
    err = capsys.readouterr().err
    assert f"report written to {page}" in err and "plot(s) saved" in err


def test_no_matching_runs_is_a_valid_empty_report(db, capsys):
    assert report("--db", str(db), "--suite", "surfacebench") == EXIT_OK
    out, err = capsys.readouterr()
    assert "No finished runs match." in out
    assert "no finished runs match" in err
    assert report("--db", str(db), "--suite", "surfacebench", "--format", "csv") == EXIT_OK
    assert capsys.readouterr().out == ""


def test_missing_store_is_a_one_line_failure(tmp_path, capsys):
    missing = tmp_path / "nope.db"
    assert report("--db", str(missing)) == EXIT_FAILURE
    out, err = capsys.readouterr()
    assert out == "" and err.strip().count("\n") == 0 and "no run store" in err
    assert not missing.exists()  # a report never creates an empty store


def test_corrupt_store_is_a_failure(tmp_path, capsys):
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"this is not sqlite" * 100)
    assert report("--db", str(bad)) == EXIT_FAILURE
    assert "error:" in capsys.readouterr().err


def test_unknown_sweep_is_a_usage_error(db):
    with pytest.raises(UsageError, match="no sweep 'zzz'"):
        report("--db", str(db), "--sweep", "zzz")


def test_unwritable_output_is_a_failure(db, tmp_path, capsys):
    assert report("--db", str(db), "--out", str(tmp_path / "no" / "dir" / "r.md")) == EXIT_FAILURE
    assert "cannot write" in capsys.readouterr().err


def test_bad_format_is_rejected_by_argparse():
    with pytest.raises(SystemExit) as exc:
        parser().parse_args(["report", "--format", "pdf"])
    assert exc.value.code == 2


def test_through_engine_cli_main_when_wired(db, capsys):
    from engine import cli

    probe = cli.build_parser()
    sub = [a for a in probe._actions if isinstance(a, argparse._SubParsersAction)]
    if not sub or "report" not in sub[0].choices:
        pytest.skip("the report command is not wired into engine/cli.py yet")
    assert cli.main(["report", "--db", str(db), "--format", "csv"]) == EXIT_OK
    assert capsys.readouterr().out.startswith("table,row,")
    assert cli.main(["report", "--db", str(db), "--sweep", "zzz"]) == 2
