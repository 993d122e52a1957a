"""The papers' published numbers (assets/published/*.json) load, validate and match the notes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.report import published as pub
from engine.report.published import (BENCHMARKS, PublishedRow, group_problem, load_file, metric_spec, published_rows,
                                     source_of)


def one(benchmark: str, **match) -> PublishedRow:
    rows = [r for r in published_rows(benchmark) if all(getattr(r, k) == v for k, v in match.items())]
    assert len(rows) == 1, (match, rows)
    return rows[0]


# --------------------------------------------------------------------------- every file loads


@pytest.mark.parametrize("benchmark", BENCHMARKS)
def test_every_file_loads_and_is_consistent(benchmark):
    path = pub.default_dir() / f"{benchmark}.json"
    loaded = load_file(path, benchmark=benchmark)
    assert loaded.benchmark == benchmark
    assert source_of(benchmark) == loaded.source and "(" in loaded.source
    spec = metric_spec(benchmark)
    assert spec and all(v["unit"] in ("%", "") and v["better"] in ("higher", "lower") for v in spec.values())
    rows = published_rows(benchmark)
    assert rows == list(loaded.rows)
    for row in rows:
        assert row.benchmark == benchmark
        assert group_problem(benchmark, row.group) is None
        assert row.split in ("id", "ood", "all")
        assert set(row.metrics) <= set(spec)
    if benchmark == "erbench":
        assert rows == [] and "stripped" in pub.notes_of("erbench")
    else:
        assert rows


def test_all_rows_is_the_concatenation():
    assert len(published_rows()) == sum(len(published_rows(b)) for b in BENCHMARKS)
    with pytest.raises(ValueError, match="unknown benchmark"):
        published_rows("nosuchbench")


def test_method_names_use_our_registry_where_we_have_the_method():
    from engine.methods import METHODS

    ours = set(METHODS) | {"agent:vanilla", "agent:code"}
    papers_only = {"pysr", "proged", "odeformer", "logicgep", "lpcmci", "jpcmci-plus"}
    for row in published_rows():
        assert row.method in ours | papers_only, row
        # Non-LLM methods carry no backbone.
        if row.method in papers_only | {"pcmci"}:
            assert row.model is None, row


def test_newtonbench_modules_match_the_lab():
    from engine.lab import MODULE_NAMES

    assert pub.NEWTON_MODULES == MODULE_NAMES


# --------------------------------------------------------------------------- group keys


def test_group_keys():
    assert {r.group for r in published_rows("llmsrbench")} == set(pub.LLMSR_GROUPS)
    assert {r.group for r in published_rows("surfacebench")} == {"explicit", "implicit", "parametric"}
    assert {r.group for r in published_rows("symbolbench")} == {"cde/1d", "cde/2d", "cde/3d", "cde/4d", "bn", "scm"}
    newton = {r.group for r in published_rows("newtonbench")}
    cells = {f"{d}/{s}" for d in ("easy", "medium", "hard") for s in ("vanilla", "simple", "complex")}
    assert cells | {"all"} <= newton
    assert newton - cells - {"all"} == {f"m0_gravity/{c}" for c in cells}


@pytest.mark.parametrize("benchmark,group", [
    ("llmsrbench", "lsr_transform"), ("llmsrbench", "matsci"), ("surfacebench", "explicits"),
    ("surfacebench", "explicit/"), ("symbolbench", "cde/5d"), ("symbolbench", "scm/x"),
    ("newtonbench", "easy"), ("newtonbench", "easy/medium"), ("newtonbench", "gravity/easy/vanilla"),
    ("erbench", "secret/x"),
])
def test_bad_group_keys_are_named(benchmark, group):
    problem = group_problem(benchmark, group)
    assert problem and repr(group).strip("'") in problem


def test_good_finer_group_keys():
    assert group_problem("surfacebench", "explicit/piecewise_regime") is None
    assert group_problem("symbolbench", "bn/cortical-area-development") is None
    assert group_problem("newtonbench", "m11_heat_transfer/hard/complex") is None


# --------------------------------------------------------------------------- spot checks


def test_llmsrbench_cells():
    llmsr = one("llmsrbench", table="Table 1", method="llmsr", model="GPT-4o-mini", group="lsr-transform")
    assert llmsr.label == "LLM-SR" and llmsr.split == "id"
    assert llmsr.metrics == {"sa": 31.53, "acc_0.1": 39.64, "nmse": 0.0091}
    assert "ID" in llmsr.note
    matsci = one("llmsrbench", table="Table 1", method="llmsr", model="GPT-4o-mini", group="material_science")
    assert matsci.metrics["nmse"] == pytest.approx(3.21e-9, rel=0, abs=1e-15)
    lasr = one("llmsrbench", table="Table 1", method="lasr", model="GPT-4o-mini", group="lsr-transform")
    assert lasr.metrics["acc_0.1"] == 50.45
    direct = one("llmsrbench", table="Table 1", method="direct", model="Llama-3.1-8B-Instruct", group="lsr-transform")
    assert direct.metrics["acc_0.1"] == 1.801
    pysr = one("llmsrbench", method="pysr", group="lsr-transform")
    assert pysr.table == "Table 3" and pysr.model is None
    assert pysr.metrics == {"sa": 8.11, "acc_0.1": 56.76}
    assert one("llmsrbench", method="pysr", group="material_science").metrics == {"sa": 0.0, "acc_0.1": 68.0}
    assert metric_spec("llmsrbench")["sa"] == {"label": "SA", "unit": "%", "better": "higher"}
    assert metric_spec("llmsrbench")["nmse"]["better"] == "lower"
    assert len([r for r in published_rows("llmsrbench") if r.table == "Table 1"]) == 12 * 5


def test_surfacebench_cells():
    pysr = one("surfacebench", method="pysr", group="explicit")
    assert pysr.metrics == {"sa": 0.65, "nmse": 0.0011, "chamfer": 0.13, "hausdorff": 0.41}
    oe = one("surfacebench", method="openevolve", model="GPT4o-mini", group="parametric")
    assert oe.metrics == {"sa": 0.80, "nmse": 0.30, "chamfer": 1.22, "hausdorff": 2.01}
    assert one("surfacebench", method="llmsr", model="Qwen-7B", group="implicit").metrics["hausdorff"] == 10.6
    # "–" cells: no parametric rows for SGA, LaSR, LLM-SR.
    assert {r.method for r in published_rows("surfacebench") if r.group == "parametric"} == {"openevolve", "pysr"}
    assert metric_spec("surfacebench")["sa"]["unit"] == ""  # printed as a fraction


def test_symbolbench_cells():
    cde = one("symbolbench", group="cde/1d", method="symbolbench", model="Qwen2.5-14B", label="Context", split="id")
    assert cde.metrics == {"sr2": 99.0, "acc_0.9": 100.0, "avg_rank": 1.0}
    pysr_ood = one("symbolbench", group="cde/4d", method="pysr", split="ood")
    assert pysr_ood.metrics["sr2"] == 23.8 and pysr_ood.metrics["acc_0.9"] == 21.7
    img = one("symbolbench", group="cde/2d", model="GPT-4o-mini", label="CoT (image input)", split="all")
    assert img.metrics == {"count_ops": 6.33, "ted": 10.0}
    bn = one("symbolbench", group="bn", method="logicgep", split="ood")
    assert bn.metrics["precision"] == 84.7 and bn.metrics["acc_0.8"] == 76.9 and bn.model is None
    scm = one("symbolbench", group="scm", method="pcmci")
    assert scm.split == "all"
    assert scm.metrics == {"f1": 52.7, "precision": 52.2, "recall": 63.7, "fdr": 46.1, "acc_0.5": 55.3,
                           "acc_0.7": 23.7, "acc_0.8": 7.9, "shd": 95.28, "n_edges": 96.76}
    chatts = one("symbolbench", group="scm", model="ChatTS-14B", label="CoT")
    assert chatts.metrics["f1"] == 54.4 and chatts.metrics["shd"] == 31.1


def test_symbolbench_table2_ranks_reproduce_the_printed_average_rank():
    """The column alignment of Table 2: each printed Avg. rank is the mean of the ranks on SR² and
    ACC0.9 within (dimension, split), as the reference notes infer (ties share the best rank)."""
    rows = [r for r in published_rows("symbolbench") if r.table == "Table 2" and r.split in ("id", "ood")]
    for group in ("cde/1d", "cde/2d", "cde/3d", "cde/4d"):
        for split in ("id", "ood"):
            cell = [r for r in rows if r.group == group and r.split == split]
            assert len(cell) == 17

            def rank(key, row):
                return 1 + sum(1 for other in cell if other.metrics[key] > row.metrics[key])

            for row in cell:
                assert (rank("sr2", row) + rank("acc_0.9", row)) / 2 == row.metrics["avg_rank"], (group, split, row)


def test_newtonbench_cells():
    cell = one("newtonbench", table="Table 2", method="agent:vanilla", model="GPT-5", group="hard/complex")
    assert cell.metrics == {"sa": 40.3, "sa_std": 5.319}
    avg = one("newtonbench", table="Table 2", method="agent:code", model="GPT-4.1", group="all")
    assert avg.metrics == {"sa": 18.9, "sa_std": 0.772, "rmsle": 2.5044, "rmsle_std": 0.229, "tokens_k": 4.53}
    underlined = one("newtonbench", table="Table 2", method="agent:vanilla", model="GPT-5-mini", group="medium/vanilla")
    assert underlined.metrics["sa"] == 79.9
    grav = one("newtonbench", table="Figure 8", method="agent:code", model="gemini-2.5-pro",
               group="m0_gravity/medium/simple")
    assert grav.metrics == {"sa": 50.0, "rmsle": 0.0}
    assert all(r.split == "all" for r in published_rows("newtonbench"))


def test_newtonbench_table2_agrees_with_the_lab_paper_module():
    from engine.lab import paper

    for agent, method in (("vanilla", "agent:vanilla"), ("code", "agent:code")):
        for system in paper.SYSTEMS:
            for difficulty in paper.DIFFICULTIES:
                for model, value in paper.paper_accuracy(system, difficulty, agent).items():
                    row = one("newtonbench", table="Table 2", method=method, model=model,
                              group=f"{difficulty}/{system}")
                    assert row.metrics["sa"] == value


# --------------------------------------------------------------------------- malformed files


def _valid_doc() -> dict:
    return {
        "benchmark": "llmsrbench",
        "source": "LLM-SRBench (Shojaee et al., ICML 2025), Table 1",
        "notes": "test file",
        "metrics": {"sa": {"label": "SA", "unit": "%", "better": "higher"}},
        "rows": [
            {"table": "Table 1", "method": "llmsr", "label": "LLM-SR", "model": "GPT-4o-mini",
             "group": "lsr-transform", "split": "id", "metrics": {"sa": 31.53}, "note": ""},
            {"table": "Table 1", "method": "llmsr", "label": "LLM-SR", "model": "GPT-4o-mini",
             "group": "chemistry", "split": "id", "metrics": {"sa": 11.11}},
        ],
    }


def _write(tmp_path: Path, doc) -> Path:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc) if not isinstance(doc, str) else doc)
    return path


def test_valid_tmp_file_loads(tmp_path):
    loaded = load_file(_write(tmp_path, _valid_doc()))
    assert [r.metrics["sa"] for r in loaded.rows] == [31.53, 11.11]
    assert loaded.rows[1].note == ""


def _mutate_row(index, **changes):
    def apply(doc):
        row = doc["rows"][index]
        for key, value in changes.items():
            if value is KeyError:
                row.pop(key)
            else:
                row[key] = value
    return apply


@pytest.mark.parametrize("mutate,pattern", [
    (_mutate_row(1, group="lsr_synth"), r"row 1: unknown group key 'lsr_synth'"),
    (_mutate_row(0, metrics={"sa": "31.53"}), r"row 0: metric 'sa' must be a finite number"),
    (_mutate_row(0, metrics={"sa": True}), r"row 0: metric 'sa' must be a finite number"),
    (_mutate_row(1, metrics={"sa": float("nan")}), r"row 1: metric 'sa' must be a finite number"),
    (_mutate_row(1, model=KeyError), r"row 1: missing field\(s\): model"),
    (_mutate_row(0, split="test"), r"row 0: split must be one of"),
    (_mutate_row(0, metrics={"acc": 1.0}), r"row 0: metric 'acc' is not declared"),
    (_mutate_row(0, metrics={}), r"row 0: 'metrics' must be a non-empty object"),
    (_mutate_row(0, method="LLM-SR"), r"row 0: method 'LLM-SR'"),
    (_mutate_row(0, extra=1), r"row 0: unknown field\(s\): extra"),
    (_mutate_row(1, group="lsr-transform"), r"row 1: duplicates row 0"),
    (lambda d: d.pop("source"), r"missing field\(s\): source"),
    (lambda d: d.update(benchmark="srbench"), r"unknown benchmark 'srbench'"),
    (lambda d: d["metrics"]["sa"].update(unit="percent"), r"metric 'sa': unit must be"),
    (lambda d: d["metrics"]["sa"].update(better="up"), r"metric 'sa': better must be"),
])
def test_malformed_file_gives_clear_error(tmp_path, mutate, pattern):
    doc = _valid_doc()
    mutate(doc)
    path = _write(tmp_path, doc)
    with pytest.raises(ValueError, match=pattern) as info:
        load_file(path)
    assert str(path) in str(info.value)


def test_not_json_and_wrong_benchmark(tmp_path):
    path = _write(tmp_path, "{not json")
    with pytest.raises(ValueError, match="not valid JSON") as info:
        load_file(path)
    assert str(path) in str(info.value)
    path = _write(tmp_path, _valid_doc())
    with pytest.raises(ValueError, match="expected 'surfacebench'"):
        load_file(path, benchmark="surfacebench")
