"""The application icon: the SVG source and its PNG renderings."""

from __future__ import annotations

import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ICONS = REPO / "assets" / "icons"
SIZES = (16, 32, 48, 64, 128, 256, 512)


def test_every_png_size_exists_and_has_its_size(qapp):
    from PySide6.QtGui import QImage

    for size in SIZES:
        image = QImage(str(ICONS / f"keplerlab-{size}.png"))
        assert not image.isNull(), size
        assert (image.width(), image.height()) == (size, size)
        assert image.hasAlphaChannel()
        # the corners of the rounded square are transparent, its middle is not
        assert image.pixelColor(0, 0).alpha() == 0
        assert image.pixelColor(size // 2, size // 2).alpha() == 255


def test_pngs_are_renderings_of_the_svg(qapp, render_icons):
    assert render_icons.SIZES == SIZES
    assert render_icons.check() == []


def test_check_notices_a_stale_or_missing_png(qapp, render_icons, tmp_path):
    for size in SIZES:
        shutil.copy2(ICONS / f"keplerlab-{size}.png", tmp_path / f"keplerlab-{size}.png")
    shutil.copy2(ICONS / "keplerlab-32.png", tmp_path / "keplerlab-64.png")  # wrong size
    (tmp_path / "keplerlab-16.png").unlink()
    problems = render_icons.check(tmp_path)
    assert len(problems) == 2
    assert any("keplerlab-16.png: missing" in p for p in problems)
    assert any("keplerlab-64.png: 32×32 px" in p for p in problems)


def test_rendering_is_deterministic(qapp, render_icons, tmp_path):
    first = render_icons.write_all(tmp_path)
    data = [p.read_bytes() for p in first]
    second = render_icons.write_all(tmp_path)
    assert [p.read_bytes() for p in second] == data
    assert render_icons.check(tmp_path) == []
