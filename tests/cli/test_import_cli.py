"""``keplerlab import csv|hdf5``, run as a user runs it: in a subprocess, ids on stdout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
LLMSR = REPO.parent / "shared" / "data" / "llmsr" / "oscillator1"


def keplerlab(*args: str, home: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    env = dict(os.environ, KEPLERLAB_HOME=str(home))
    env.pop("DISPLAY", None)
    return subprocess.run(
        [sys.executable, "-m", "app", *map(str, args)],
        cwd=REPO, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout,
    )


def write_csv(path: Path, n: int = 40, header: str = "x,v,a") -> Path:
    x = np.linspace(0, 1, n)
    v = np.cos(7 * x)
    lines = [header] + [f"{a:.17g},{b:.17g},{2 * a + b * b:.17g}" for a, b in zip(x, v)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def user_dirs(home: Path) -> list[str]:
    root = home / "data" / "user_tasks"
    return sorted(p.name for p in root.iterdir()) if root.exists() else []


def assert_usage_error(done: subprocess.CompletedProcess, message: str) -> None:
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    assert done.stdout == ""
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert lines[-1] == f"keplerlab: error: {message}", done.stderr


def test_import_csv_prints_the_id_and_the_task_is_listed_and_shown(tmp_path):
    home = tmp_path / "home"
    csv = write_csv(tmp_path / "bench.csv")
    done = keplerlab("import", "csv", csv, "--name", "bench", "--target", "a", "--inputs", "x,v",
                     "--ood-column", "x", "--ood-above", "0.75", "--unit", "x=m", "--description", "a=acceleration",
                     home=home)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "user/bench\n"
    assert "imported 1 task" in done.stderr

    listed = keplerlab("tasks", "list", "--suite", "user", "--json", home=home)
    assert listed.returncode == 0, listed.stderr
    assert [t["id"] for t in json.loads(listed.stdout)] == ["user/bench"]
    shown = keplerlab("tasks", "show", "user/bench", home=home)
    assert shown.returncode == 0, shown.stderr
    assert "Ground truth: unknown (your own data)" in shown.stdout
    assert "acceleration" in shown.stdout and "[m]" in shown.stdout
    assert "x > 0.75" in shown.stdout


def test_import_csv_json_with_last_rows_and_replace(tmp_path):
    home = tmp_path / "home"
    csv = write_csv(tmp_path / "d.csv")
    done = keplerlab("import", "csv", csv, "--name", "lab/d", "--ood-last", "8", "--json", home=home)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["imported"] == ["user/lab/d"]
    assert out["results"][0]["rows"]["test_ood"] == 8
    assert sum(out["results"][0]["rows"].values()) == 40

    again = keplerlab("import", "csv", csv, "--name", "lab/d", home=home)
    assert_usage_error(again, "a task named 'user/lab/d' already exists; choose another name or replace it")
    replaced = keplerlab("import", "csv", csv, "--name", "lab/d", "--replace", home=home)
    assert replaced.returncode == 0 and replaced.stdout == "user/lab/d\n", replaced.stderr
    assert user_dirs(home) == ["lab~d"]


def test_import_separate_split_files(tmp_path):
    home = tmp_path / "home"
    if not (LLMSR / "train.csv").exists():
        pytest.skip(f"LLM-SR data not present at {LLMSR}")
    done = keplerlab("import", "csv", LLMSR / "train.csv", "--name", "osc1", "--test-file", LLMSR / "test_id.csv",
                     "--ood-file", LLMSR / "test_ood.csv", "--json", home=home)
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)["results"][0]["rows"]
    assert rows == {"train": 10000, "test_id": 10000, "test_ood": 10000}


@pytest.mark.parametrize(
    ("content", "args", "message"),
    [
        ("x,v,a\n", [], "bad.csv has a header but no data rows"),
        ("x,v,a\n" + "1,2,3\n" * 3 + "1,2\n" + "1,2,3\n" * 20, [],
         "bad.csv, line 5: 2 fields, expected 3 (x, v, a); every row needs one value per column"),
        ("x,v,a\n" + "1,2,3\n" * 3 + "1,oops,3\n" + "1,2,3\n" * 20, [], "bad.csv, line 5, column 'v': 'oops' is not a number"),
        ("x,v,a\n" + "1,2,3\n" * 20, ["--target", "y"], "bad.csv has no column 'y' (the target); its columns are x, v, a"),
        ("x,v,a\n" + "1,2,3\n" * 20, ["--target", "a", "--inputs", "a,x"], "'a' is the target; it cannot also be an input"),
    ],
    ids=["header only", "ragged", "text cell", "unknown target", "target is input"],
)
def test_bad_files_exit_2_with_the_engines_message(tmp_path, content, args, message):
    home = tmp_path / "home"
    path = tmp_path / "bad.csv"
    path.write_text(content, encoding="utf-8")
    assert_usage_error(keplerlab("import", "csv", path, "--name", "bad", *args, home=home), message)
    assert user_dirs(home) == []


def test_conflicting_options_and_missing_file(tmp_path):
    home = tmp_path / "home"
    csv = write_csv(tmp_path / "d.csv")
    assert_usage_error(
        keplerlab("import", "csv", csv, "--name", "d", "--ood-last", "3", "--ood-column", "x", "--ood-above", "1", home=home),
        "choose one out-of-domain split: --ood-column, --ood-last, --ood-last-fraction or --ood-file",
    )
    assert_usage_error(
        keplerlab("import", "csv", csv, "--name", "d", "--ood-column", "x", home=home),
        "--ood-column needs exactly one of --ood-above VALUE or --ood-below VALUE",
    )
    assert_usage_error(keplerlab("import", "csv", tmp_path / "nope.csv", "--name", "d", home=home),
                       f"{tmp_path / 'nope.csv'}: no such file")
    missing_name = keplerlab("import", "csv", csv, home=home)
    assert missing_name.returncode == 2 and "--name" in missing_name.stderr
    assert user_dirs(home) == []


def test_import_hdf5(tmp_path):
    h5py = pytest.importorskip("h5py")
    home = tmp_path / "home"
    path = tmp_path / "lsr_bench_data.hdf5"
    rng = np.random.default_rng(0)
    with h5py.File(path, "w") as fh:
        fh.create_dataset("lsr_transform/I.6.2/train", data=rng.uniform(size=(30, 3)))
        fh.create_dataset("lsr_transform/I.6.2/test", data=rng.uniform(size=(10, 3)))
        fh.create_dataset("lsr_synth/bio_pop_growth/BPG0/train", data=rng.uniform(size=(30, 3)))
    done = keplerlab("import", "hdf5", path, home=home)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["user/llmsrbench/lsr_synth/bio_pop_growth/BPG0", "user/llmsrbench/lsr_transform/I.6.2"]

    bad = tmp_path / "bad.hdf5"
    with h5py.File(bad, "w") as fh:
        fh.create_dataset("lsr_transform/X/train", data=np.ones(30))
    assert_usage_error(
        keplerlab("import", "hdf5", bad, "--prefix", "other", home=home),
        "bad.hdf5: /lsr_transform/X/train has shape (30,), expected a 2-D array (rows, 1 + inputs) "
        "with the target in column 0 and at least one input",
    )
    assert len(user_dirs(home)) == 2
