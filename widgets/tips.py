"""Tooltips for metric headers, from the app's one glossary (:mod:`engine.metrics.glossary`)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTableWidget

from engine.metrics.glossary import explain


def explain_headers(table: QTableWidget, orientation=Qt.Orientation.Horizontal, keep: bool = True) -> int:
    """Give every header of ``table`` that names a metric a one-sentence tooltip. Headers that
    already have a tooltip keep it when ``keep``. Returns how many headers got one."""
    horizontal = orientation == Qt.Orientation.Horizontal
    count = table.columnCount() if horizontal else table.rowCount()
    done = 0
    for i in range(count):
        item = table.horizontalHeaderItem(i) if horizontal else table.verticalHeaderItem(i)
        if item is None or (keep and item.toolTip()):
            continue
        text = explain(item.text().replace("\n", " "))
        if text:
            item.setToolTip(text)
            done += 1
    return done
