"""The Qt binding itself: a release that mishandles references would crash the window.

PySide6-Essentials 6.12.0 drops one reference to ``None`` on every call of a method that
returns nothing (``QPainter.setPen`` and friends). On Python 3.11, where ``None`` is an
ordinary reference-counted object, drawing plots then aborts the app within minutes with
"Fatal Python error: none_dealloc". pyproject.toml excludes that release; this test fails
if a binding with the same defect is ever installed again.
"""

from __future__ import annotations

import sys

from PySide6.QtCore import QPointF
from PySide6.QtGui import QColor, QImage, QPainter, QPen


def test_void_calls_keep_the_reference_count_of_none(qapp):
    image = QImage(16, 16, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    try:
        pen = QPen(QColor("red"))
        calls = (
            lambda: painter.setPen(pen),
            lambda: painter.drawLine(QPointF(0, 0), QPointF(1, 1)),
            lambda: painter.setRenderHint(QPainter.RenderHint.Antialiasing, False),
        )
        for call in calls:
            call()  # warm-up: first calls may create cached objects
        before = sys.getrefcount(None)
        for _ in range(200):
            for call in calls:
                call()
        drift = sys.getrefcount(None) - before
    finally:
        painter.end()
    # A correct binding leaves None's count unchanged (give or take a few references held by
    # objects created meanwhile); the faulty one loses one per call, 600 here.
    assert abs(drift) < 50, f"None lost {-drift} references over 600 void Qt calls"
