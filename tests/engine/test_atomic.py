"""engine.atomic: a reader never sees half a file, and a failed write leaves nothing behind."""

from __future__ import annotations

import pytest

from engine.atomic import write_atomically


def test_the_content_replaces_the_file_whole(tmp_path):
    target = tmp_path / "run.json"
    target.write_text("old", encoding="utf-8")
    write_atomically(target, lambda fh: fh.write("new"))
    assert target.read_text(encoding="utf-8") == "new"
    write_atomically(target, lambda fh: fh.write(b"\x00bytes"), binary=True)
    assert target.read_bytes() == b"\x00bytes"
    assert [p.name for p in tmp_path.iterdir()] == ["run.json"]


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "run.csv"
    target.write_text("old", encoding="utf-8")

    def broken(fh):
        fh.write("half")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        write_atomically(target, broken)
    assert target.read_text(encoding="utf-8") == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["run.csv"]
