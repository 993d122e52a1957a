"""Renders Kepler Lab's icon, assets/icons/keplerlab.svg, to the PNG sizes beside it.

    python packaging/render_icons.py            write assets/icons/keplerlab-<size>.png
    python packaging/render_icons.py --check    exit 1 if a PNG is missing or differs from a
                                                fresh rendering of the SVG

Qt's own SVG renderer (QSvgRenderer, in PySide6-Essentials) draws them, so no other tool is
needed. The output depends only on the SVG and the Qt version: the image is cleared to
transparent, drawn with antialiasing, and saved without text chunks or timestamps.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ICONS = ROOT / "assets" / "icons"
SVG = ICONS / "keplerlab.svg"
SIZES = (16, 32, 48, 64, 128, 256, 512)


def png_path(size: int, folder: Path = ICONS) -> Path:
    return folder / f"keplerlab-{size}.png"


def render(size: int, svg: Path = SVG):
    """The icon as a QImage of ``size`` × ``size`` pixels (premultiplied ARGB)."""
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise ValueError(f"{svg} is not an SVG file Qt can draw")
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
    renderer.render(painter)
    painter.end()
    return image.convertToFormat(QImage.Format.Format_ARGB32)


def _app():
    # QImage and QSvgRenderer need a QGuiApplication for fonts; none is shown.
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtGui import QGuiApplication

    return QGuiApplication.instance() or QGuiApplication(sys.argv[:1])


def same_pixels(a, b, tolerance: int = 2) -> bool:
    """Whether two QImages have the same size and channels within ``tolerance`` (antialiasing
    may differ by a unit between Qt builds)."""
    if a.size() != b.size():
        return False
    from PySide6.QtGui import QImage

    a = a.convertToFormat(QImage.Format.Format_RGBA8888)
    b = b.convertToFormat(QImage.Format.Format_RGBA8888)
    da, db = bytes(a.constBits()), bytes(b.constBits())
    return len(da) == len(db) and all(abs(x - y) <= tolerance for x, y in zip(da, db))


def write_all(folder: Path = ICONS) -> list[Path]:
    _app()
    written = []
    for size in SIZES:
        path = png_path(size, folder)
        if not render(size).save(str(path), "PNG"):
            raise OSError(f"could not write {path}")
        written.append(path)
    return written


def check(folder: Path = ICONS) -> list[str]:
    """Problems with the PNGs in ``folder`` (empty when they match the SVG)."""
    _app()
    from PySide6.QtGui import QImage

    problems = []
    for size in SIZES:
        path = png_path(size, folder)
        stored = QImage(str(path))
        if stored.isNull():
            problems.append(f"{path.name}: missing or not a PNG")
        elif (stored.width(), stored.height()) != (size, size):
            problems.append(f"{path.name}: {stored.width()}×{stored.height()} px, expected {size}×{size}")
        elif not same_pixels(stored, render(size)):
            problems.append(f"{path.name}: differs from the SVG (run python packaging/render_icons.py)")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Render assets/icons/keplerlab.svg to PNG sizes.")
    parser.add_argument("--check", action="store_true", help="compare the PNGs with a fresh rendering instead")
    args = parser.parse_args(argv)
    if args.check:
        problems = check()
        for p in problems:
            print(p)
        print("icons match the SVG" if not problems else f"{len(problems)} icon(s) out of date")
        return 1 if problems else 0
    for path in write_all():
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
