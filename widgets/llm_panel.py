"""The LLM panel: what an LLM method asked, what came back, and what the replies were worth.

A budget meter (calls used of the limit, tokens, dollars, failed attempts, cached replies) sits
above a tree of the run's LLM calls, one row per attempt: ``#seq  purpose  status  tokens
latency  cost  result``. Expanding a call shows its prompt messages and replies in monospace,
then the hypotheses (programs) extracted from them with their training NMSE, or the reason they
failed in red. Selecting any row shows its full text below.

Live events are queued by :meth:`LLMPanel.add_event` and applied on a timer
(:data:`REFRESH_MS`), in one model update per tick, so a run making thousands of calls never
floods the GUI thread. The tree's model builds nothing per row until the view asks for it.
"""

from __future__ import annotations

import bisect
import itertools
import math
from dataclasses import fields, is_dataclass
from typing import Any

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QRect, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QFont, QFontDatabase, QFontMetrics, QPen
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QProxyStyle,
    QSplitter,
    QStackedWidget,
    QStyle,
    QStyledItemDelegate,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from widgets.progress import ProgressBar

#: Queued events are applied at most this often (ms).
REFRESH_MS = 200
#: Lines of a prompt message / of a reply or program shown inline; the rest is in the detail view.
MESSAGE_LINES = 10
PROGRAM_LINES = 18

NO_LLM_TEXT = ("This run used no LLM. Pick an LLM method (LLM-SR, LaSR, SGA, DataBlind, OpenEvolve) and set "
               "the endpoint in Run ▸ LLM settings…")
IDLE_TEXT = ("The LLM calls of a run, and the programs proposed in their replies, appear here while an LLM "
             "method runs or when you open a stored LLM run. Pick an LLM method (LLM-SR, LaSR, SGA, "
             "DataBlind, OpenEvolve) and set the endpoint in Run ▸ LLM settings…")

COLUMNS = ("Call", "Purpose", "Status", "Tokens in → out", "Latency", "Cost", "Result")
(COL_CALL, COL_PURPOSE, COL_STATUS, COL_TOKENS, COL_LATENCY, COL_COST, COL_RESULT) = range(len(COLUMNS))

RED = QColor(180, 35, 24)
GREEN = QColor(26, 127, 55)
GREY = QColor(110, 110, 110)
AMBER = QColor(154, 103, 0)
_ROLE_COLORS = {"system": QColor(110, 110, 110), "user": QColor(0, 90, 160), "assistant": QColor(100, 60, 150),
                "reply": QColor(26, 127, 55)}
_CODE_BG = QColor(246, 248, 250)
_CODE_BORDER = QColor(216, 222, 228)
_CODE_TEXT = QColor(31, 35, 40)

#: Roles the block delegate reads.
KIND_ROLE = Qt.ItemDataRole.UserRole + 1
BLOCK_ROLE = Qt.ItemDataRole.UserRole + 2


# --------------------------------------------------------------------------- formatting


def _int(value) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


def _float(value) -> float:
    try:
        out = float(value or 0.0)
    except (TypeError, ValueError):
        return 0.0
    return out if math.isfinite(out) else 0.0


def money(value: float | None) -> str:
    if value is None:
        return "—"
    if value == 0:
        return "$0"
    if value >= 100:
        return f"${value:,.0f}"
    if value >= 1:
        return f"${value:,.2f}"
    if value >= 0.01:
        return f"${value:.3f}"
    return f"${value:.5f}" if value >= 1e-5 else "<$0.00001"


def nmse(value) -> str:
    if value is None:
        return "—"
    try:
        value = float(value)
    except (TypeError, ValueError):
        return str(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "∞"
    return f"{value:.3g}"


def _float_or_nan(value) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def _first_line(text: str | None, limit: int = 160) -> str:
    line = (text or "").strip().split("\n", 1)[0]
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _content(message: Any) -> tuple[str, str]:
    """(role, text) of a chat message; list contents keep their text parts."""
    if not isinstance(message, dict):
        return "message", str(message)
    role = str(message.get("role") or "message")
    content = message.get("content")
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict):
                parts.append(str(part.get("text") or f"[{part.get('type', 'part')}]"))
            else:
                parts.append(str(part))
        content = "\n".join(parts)
    return role, "" if content is None else str(content)


def _as_dict(event) -> dict:
    """A shallow dict of an event (``asdict`` would deep-copy every prompt: too slow by far)."""
    if isinstance(event, dict):
        return dict(event)
    if is_dataclass(event):
        return {f.name: getattr(event, f.name) for f in fields(event)}
    return dict(vars(event))


# --------------------------------------------------------------------------- tree nodes


class _Node:
    """One row of the tree. Calls (top level) have message / reply / error / hypothesis
    children; a hypothesis without a known call is a top-level block."""

    __slots__ = ("uid", "kind", "data", "parent", "children", "order", "row", "_block", "n_ok", "n_failed",
                 "best", "first_failure", "attached")
    _ids = itertools.count(1)

    def __init__(self, kind: str, data: dict, parent: "_Node | None" = None, order: int = 0):
        self.uid = next(_Node._ids)
        self.kind = kind  # call, message, reply, error, hypothesis
        self.data = data
        self.parent = parent
        self.children: list[_Node] = []
        self.order = order  # position key among the top-level rows
        self.row = 0  # row under the parent (children only)
        self._block = None
        self.n_ok = 0
        self.n_failed = 0
        self.best: float | None = None
        self.first_failure: str | None = None
        self.attached = False  # in the model (top-level nodes only)

    # ---------------------------------------------------------------- calls

    def add_child(self, node: "_Node") -> None:
        node.parent = self
        node.row = len(self.children)
        self.children.append(node)
        if node.kind == "hypothesis":
            if node.data.get("ok"):
                self.n_ok += 1
                loss = node.data.get("loss")
                if loss is not None and (self.best is None or float(loss) < self.best):
                    self.best = float(loss)
            else:
                self.n_failed += 1
                if self.first_failure is None:
                    self.first_failure = node.data.get("error") or "failed"

    def failed(self) -> bool:
        if self.kind == "call":
            return self.data.get("status") == "error" or self.n_failed > 0
        return self.kind == "hypothesis" and not self.data.get("ok")

    def is_block(self) -> bool:
        return self.kind != "call"

    # ---------------------------------------------------------------- blocks

    def block(self) -> tuple[str, QColor, list[str], int, str]:
        """(header, header colour, shown body lines, hidden line count, full text)."""
        if self._block is None:
            self._block = self._make_block()
        return self._block

    def _make_block(self):
        d = self.data
        if self.kind == "message":
            role, text = d["role"], d["text"]
            header = f"{role} · {len(text):,} characters"
            color, limit = _ROLE_COLORS.get(role, GREY), MESSAGE_LINES
        elif self.kind == "reply":
            text = d["text"]
            which = f"reply {d['i']} of {d['n']}" if d["n"] > 1 else "reply"
            header = f"{which} · {len(text):,} characters"
            color, limit = _ROLE_COLORS["reply"], PROGRAM_LINES
        elif self.kind == "error":
            text = d["text"]
            header = f"✗ error on attempt {d['attempts']}" if d.get("attempts") else "✗ error"
            color, limit = RED, PROGRAM_LINES
        else:  # hypothesis
            text = hypothesis_text(d)
            header = hypothesis_header(d)
            color, limit = (GREEN if d.get("ok") else RED), PROGRAM_LINES
        lines = text.split("\n") if text else ["(empty)"]
        shown, hidden = lines[:limit], max(0, len(lines) - limit)
        return header, color, shown, hidden, text


def hypothesis_header(d: dict) -> str:
    parts = [f"program {d.get('index', '?')}"]
    if d.get("ok"):
        parts.append(f"train NMSE {nmse(d.get('loss'))}")
        if d.get("complexity") is not None:
            parts.append(f"complexity {d['complexity']}")
    if d.get("origin"):
        parts.append(str(d["origin"]))
    if d.get("seconds"):
        parts.append(f"{float(d['seconds']):.2f} s")
    head = ("✓ " if d.get("ok") else "✗ ") + " · ".join(parts)
    if not d.get("ok"):
        head += f" — failed: {_first_line(d.get('error') or 'unknown reason', 200)}"
    elif d.get("error"):
        head += f" ({_first_line(d['error'], 120)})"
    return head


def hypothesis_text(d: dict) -> str:
    program = (d.get("program") or "").rstrip("\n")
    if not program:
        program = "# nothing could be extracted from the reply"
    extra = []
    if d.get("expression"):
        extra.append(f"# closed form: {d['expression']}")
    if d.get("params"):
        values = ", ".join(f"{_float_or_nan(p):.6g}" for p in d["params"][:12])
        more = f", … ({len(d['params'])} in all)" if len(d["params"]) > 12 else ""
        extra.append(f"# fitted parameters: [{values}{more}]")
    return program + ("\n" + "\n".join(extra) if extra else "")


def call_children(call: dict) -> list[_Node]:
    nodes = []
    for message in call.get("messages") or []:
        role, text = _content(message)
        nodes.append(_Node("message", {"role": role, "text": text}))
    replies = call.get("replies") or []
    for i, text in enumerate(replies, start=1):
        nodes.append(_Node("reply", {"text": str(text), "i": i, "n": len(replies)}))
    if call.get("error"):
        nodes.append(_Node("error", {"text": str(call["error"]), "attempts": call.get("attempts")}))
    return nodes


# --------------------------------------------------------------------------- the model


class LLMCallModel(QAbstractItemModel):
    """Calls at the top level (filtered by "failures only"), their messages, replies, errors and
    hypotheses below. Rows are only ever appended or inserted, never rebuilt, while a run goes."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self._all: list[_Node] = []  # every top-level node, in arrival order
        self._visible: list[_Node] = []
        self._orders: list[int] = []  # order keys of _visible, for bisect
        self._nodes: dict[int, _Node] = {}
        self.failures_only = False
        self._order = itertools.count()

    # ---------------------------------------------------------------- building

    def reset(self, tops: list[_Node] | None = None) -> None:
        self.beginResetModel()
        self._all = list(tops or [])
        self._nodes = {}
        for node in self._all:
            self._register(node)
            node.attached = True
        self._visible = [n for n in self._all if self._shows(n)]
        self._orders = [n.order for n in self._visible]
        self.endResetModel()

    def new_order(self) -> int:
        return next(self._order)

    def _register(self, node: _Node) -> None:
        self._nodes[node.uid] = node
        for child in node.children:
            self._register(child)

    def _shows(self, node: _Node) -> bool:
        return not self.failures_only or node.failed()

    def append_tops(self, nodes: list[_Node]) -> None:
        """New top-level nodes, all newer than the ones shown: one insertion for the batch."""
        for node in nodes:
            self._register(node)
            node.attached = True
        self._all.extend(nodes)
        shown = [n for n in nodes if self._shows(n)]
        if not shown:
            return
        first = len(self._visible)
        self.beginInsertRows(QModelIndex(), first, first + len(shown) - 1)
        self._visible.extend(shown)
        self._orders.extend(n.order for n in shown)
        self.endInsertRows()

    def add_hypothesis(self, call: _Node, node: _Node) -> None:
        """A hypothesis under a call (announcing the new row when the call is shown)."""
        if not call.attached:  # the call arrived in the same batch: it is inserted with its children
            call.add_child(node)
            return
        self._nodes[node.uid] = node
        index = self.index_of(call)
        if index.isValid():
            row = len(call.children)
            self.beginInsertRows(index, row, row)
            call.add_child(node)
            self.endInsertRows()
            self.dataChanged.emit(index.siblingAtColumn(COL_RESULT), index.siblingAtColumn(COL_RESULT))
        else:
            call.add_child(node)
            if self._shows(call):  # it became a failure while "failures only" hid it
                self._insert_visible(call)

    def _insert_visible(self, node: _Node) -> None:
        row = bisect.bisect_left(self._orders, node.order)
        self.beginInsertRows(QModelIndex(), row, row)
        self._visible.insert(row, node)
        self._orders.insert(row, node.order)
        self.endInsertRows()

    def set_failures_only(self, on: bool) -> None:
        if on != self.failures_only:
            self.failures_only = on
            self.beginResetModel()
            self._visible = [n for n in self._all if self._shows(n)]
            self._orders = [n.order for n in self._visible]
            self.endResetModel()

    def top_count(self) -> int:
        return len(self._all)

    def tops(self) -> list[_Node]:
        return list(self._all)

    # ---------------------------------------------------------------- index plumbing

    def node(self, index: QModelIndex) -> _Node | None:
        return self._nodes.get(index.internalId()) if index.isValid() else None

    def index_of(self, node: _Node, column: int = 0) -> QModelIndex:
        if node.parent is None:
            row = bisect.bisect_left(self._orders, node.order)
            if row < len(self._visible) and self._visible[row] is node:
                return self.createIndex(row, column, node.uid)
            return QModelIndex()
        parent = self.index_of(node.parent)
        if not parent.isValid():
            return QModelIndex()
        return self.createIndex(node.row, column, node.uid)

    def index(self, row: int, column: int, parent: QModelIndex = QModelIndex()) -> QModelIndex:
        if column < 0 or column >= len(COLUMNS) or row < 0:
            return QModelIndex()
        if not parent.isValid():
            if row < len(self._visible):
                return self.createIndex(row, column, self._visible[row].uid)
            return QModelIndex()
        node = self.node(parent)
        if node is None or row >= len(node.children):
            return QModelIndex()
        return self.createIndex(row, column, node.children[row].uid)

    def parent(self, index: QModelIndex = QModelIndex()) -> QModelIndex:  # type: ignore[override]
        node = self.node(index)
        if node is None or node.parent is None:
            return QModelIndex()
        return self.index_of(node.parent)

    def rowCount(self, parent: QModelIndex = QModelIndex()) -> int:
        if not parent.isValid():
            return len(self._visible)
        if parent.column() != 0:
            return 0
        node = self.node(parent)
        return len(node.children) if node is not None else 0

    def hasChildren(self, parent: QModelIndex = QModelIndex()) -> bool:
        return self.rowCount(parent) > 0

    def columnCount(self, parent: QModelIndex = QModelIndex()) -> int:
        return len(COLUMNS)

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        return None

    def flags(self, index: QModelIndex):
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable

    # ---------------------------------------------------------------- data

    def data(self, index: QModelIndex, role: int = Qt.ItemDataRole.DisplayRole):
        node = self.node(index)
        if node is None:
            return None
        if role == KIND_ROLE:
            return node.kind
        if node.is_block():
            if role == BLOCK_ROLE:
                return node.block()
            if index.column() != 0:
                return None
            header, _color, _lines, _hidden, text = node.block()
            if role == Qt.ItemDataRole.DisplayRole:
                return header + "\n" + text
            if role == Qt.ItemDataRole.ToolTipRole and node.kind == "hypothesis" and not node.data.get("ok"):
                return node.data.get("error")
            return None
        return self._call_data(node, index.column(), role)

    def _call_data(self, node: _Node, col: int, role: int):
        d = node.data
        status = d.get("status") or "ok"
        if role == Qt.ItemDataRole.DisplayRole:
            if col == COL_CALL:
                return f"#{d.get('seq', '?')}"
            if col == COL_PURPOSE:
                return d.get("purpose") or "—"
            if col == COL_STATUS:
                text = {"ok": "✓ ok", "cached": "↺ cached", "error": "✗ error"}.get(status, status)
                attempts = _int(d.get("attempts"))
                return text + (f" · try {attempts}" if attempts > 1 else "")
            if col == COL_TOKENS:
                return f"{_int(d.get('prompt_tokens')):,} → {_int(d.get('completion_tokens')):,}"
            if col == COL_LATENCY:
                latency = _float(d.get("latency"))
                return "—" if status == "cached" and latency == 0 else f"{latency:.2f} s"
            if col == COL_COST:
                return money(_float(d.get("cost")))
            if col == COL_RESULT:
                return self._result_text(node)
            return None
        if role == Qt.ItemDataRole.ForegroundRole:
            if col == COL_STATUS:
                return {"error": RED, "cached": GREY}.get(status, GREEN)
            if col == COL_RESULT:
                if status == "error" or (node.n_failed and not node.n_ok):
                    return RED
                return None
            if col in (COL_LATENCY, COL_COST, COL_TOKENS) and status == "cached":
                return GREY
            return None
        if role == Qt.ItemDataRole.TextAlignmentRole and col in (COL_CALL, COL_TOKENS, COL_LATENCY, COL_COST):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ToolTipRole:
            lines = [f"Call #{d.get('seq')}: {d.get('purpose') or 'no purpose given'}",
                     f"model {d.get('model') or '?'}, attempt {_int(d.get('attempts')) or 1}, status {status}",
                     f"{_int(d.get('prompt_tokens')):,} prompt + {_int(d.get('completion_tokens')):,} completion "
                     f"tokens, {money(_float(d.get('cost')))}"]
            if d.get("error"):
                lines.append(f"error: {d['error']}")
            if node.n_ok or node.n_failed:
                lines.append(self._result_text(node))
            return "\n".join(lines)
        return None

    @staticmethod
    def _result_text(node: _Node) -> str:
        d = node.data
        if d.get("status") == "error":
            return _first_line(d.get("error") or "failed")
        total = node.n_ok + node.n_failed
        if not total:
            replies = d.get("replies") or []
            return f"{len(replies)} replies" if len(replies) > 1 else ""
        if not node.n_ok:
            what = "program failed" if total == 1 else f"{total} programs failed"
            return f"{what}: {_first_line(node.first_failure, 120)}"
        parts = [f"{total} program{'s' if total != 1 else ''}"]
        if node.best is not None:
            parts.append(f"best NMSE {nmse(node.best)}")
        if node.n_failed:
            parts.append(f"{node.n_failed} failed")
        return " · ".join(parts)


# --------------------------------------------------------------------------- the delegate


class _BlockDelegate(QStyledItemDelegate):
    """Draws message / reply / program rows as a coloured header over a monospace text box."""

    PAD = 4

    def __init__(self, mono: QFont, parent=None):
        super().__init__(parent)
        self.mono = mono
        self.mono_metrics = QFontMetrics(mono)
        self._row_height: int | None = None

    def _header_font(self, option) -> QFont:
        font = QFont(option.font)
        font.setBold(True)
        return font

    def _block(self, index):
        node = self.parent().model().node(index) if self.parent() is not None else None
        return node.block() if node is not None and node.is_block() else None

    def sizeHint(self, option, index):
        block = self._block(index)
        if block is None:
            # Call rows all have one line of text: their height is measured once (the tree asks
            # for every row's height to size its scroll bar, thousands of times).
            if self._row_height is None:
                self._row_height = super().sizeHint(option, index).height() + 6
            return QSize(40, self._row_height)
        _header, _color, lines, hidden, _text = block
        n = len(lines) + (1 if hidden else 0)
        header_h = QFontMetrics(self._header_font(option)).height()
        height = self.PAD + header_h + 3 + n * self.mono_metrics.lineSpacing() + 2 * self.PAD + self.PAD
        return QSize(200, height)

    def paint(self, painter, option, index):
        block = self._block(index)
        if block is None:
            super().paint(painter, option, index)
            return
        header, color, lines, hidden, _text = block
        painter.save()
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        if selected:  # a light tint and an accent bar: the text stays readable in its own colours
            tint = QColor(option.palette.highlight().color())
            tint.setAlpha(38)
            painter.fillRect(option.rect, tint)
            painter.fillRect(QRect(option.rect.left(), option.rect.top(), 3, option.rect.height()),
                             option.palette.highlight())
        rect = option.rect.adjusted(self.PAD, self.PAD, -self.PAD, -self.PAD)
        header_font = self._header_font(option)
        hm = QFontMetrics(header_font)
        painter.setFont(header_font)
        painter.setPen(color)
        header_rect = QRect(rect.left(), rect.top(), rect.width(), hm.height())
        painter.drawText(header_rect, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                         hm.elidedText(header, Qt.TextElideMode.ElideRight, header_rect.width()))
        line_h = self.mono_metrics.lineSpacing()
        n = len(lines) + (1 if hidden else 0)
        box = QRect(rect.left(), header_rect.bottom() + 3, rect.width(), n * line_h + 2 * self.PAD)
        painter.setPen(QPen(_CODE_BORDER))
        painter.setBrush(_CODE_BG)
        painter.drawRect(box.adjusted(0, 0, -1, -1))
        painter.setFont(self.mono)
        width = box.width() - 2 * self.PAD
        y = box.top() + self.PAD
        painter.setPen(_CODE_TEXT)
        for line in lines:
            text = self.mono_metrics.elidedText(line.replace("\t", "    "), Qt.TextElideMode.ElideRight, width)
            painter.drawText(QRect(box.left() + self.PAD, y, width, line_h),
                             Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, text)
            y += line_h
        if hidden:
            painter.setPen(GREY)
            painter.drawText(QRect(box.left() + self.PAD, y, width, line_h),
                             Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                             f"… {hidden:,} more line{'s' if hidden != 1 else ''} "
                             "(select the row to read it all below)")
        painter.restore()


class _NoDecorationSelection(QProxyStyle):
    """The indentation beside a selected row is not filled with the selection colour (a tall
    message or program row would get a solid bar there)."""

    def styleHint(self, hint, option=None, widget=None, returnData=None):
        if hint == QStyle.StyleHint.SH_ItemView_ShowDecorationSelected:
            return 0
        return super().styleHint(hint, option, widget, returnData)


class _CallTree(QTreeView):
    def __init__(self, parent=None):
        super().__init__(parent)
        self._style = _NoDecorationSelection()  # kept: the widget does not own its style
        self.setStyle(self._style)


# --------------------------------------------------------------------------- the meter


class _Meter(QWidget):
    """Calls used of the limit, tokens, dollars (of the limit), failed attempts, cached replies."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.calls_bar = self._bar("llmCallsBar")
        self.cost_bar = self._bar("llmCostBar")
        self.tokens_label = QLabel("—")
        self.tokens_label.setObjectName("llmTokens")
        self.failures_label = QLabel("0")
        self.failures_label.setObjectName("llmFailures")
        self.cached_label = QLabel("0")
        self.cached_label.setObjectName("llmCached")
        self.unpriced_label = QLabel("")
        self.unpriced_label.setStyleSheet(f"color: {AMBER.name()};")
        self.unpriced_label.setWordWrap(True)
        self.unpriced_label.setVisible(False)
        grid = QGridLayout(self)
        grid.setContentsMargins(4, 2, 4, 2)
        grid.setHorizontalSpacing(10)
        grid.setVerticalSpacing(3)
        self.calls_bar.setToolTip("Successful completions used of the run's budget")
        self.cost_bar.setToolTip("Dollars spent (by the price table) of the run's limit")
        self.tokens_label.setToolTip("Prompt and completion tokens charged so far (failed replies included)")
        self.failures_label.setToolTip("Failed attempts: errors, time-outs, malformed or empty replies")
        self.cached_label.setToolTip("Calls answered from the recorded replies instead of the endpoint")
        for col, (text, widget) in enumerate((("Calls", self.calls_bar), ("Cost", self.cost_bar))):
            grid.addWidget(self._caption(text), 0, 2 * col)
            grid.addWidget(widget, 0, 2 * col + 1)
        grid.addWidget(self._caption("Tokens"), 1, 0)
        grid.addWidget(self.tokens_label, 1, 1)
        small = QHBoxLayout()
        small.setSpacing(6)
        small.addWidget(self._caption("Failures"))
        small.addWidget(self.failures_label)
        small.addSpacing(16)
        small.addWidget(self._caption("Cached"))
        small.addWidget(self.cached_label)
        small.addStretch(1)
        grid.addLayout(small, 1, 2, 1, 2)
        grid.addWidget(self.unpriced_label, 2, 0, 1, 4)
        grid.setColumnStretch(1, 1)
        grid.setColumnStretch(3, 1)

    @staticmethod
    def _caption(text: str) -> QLabel:
        label = QLabel(text)
        label.setStyleSheet("color: palette(placeholder-text);")
        return label

    @staticmethod
    def _bar(name: str) -> ProgressBar:
        bar = ProgressBar()
        bar.setObjectName(name)
        bar.setRange(0, 1000)
        bar.setTextVisible(True)
        bar.setMaximumHeight(18)
        return bar

    def show_budget(self, b: dict) -> None:
        limits = b.get("limits") or {}
        calls, max_calls = _int(b.get("calls")), limits.get("max_calls")
        if max_calls:
            self.calls_bar.setRange(0, int(max_calls))
            self.calls_bar.setValue(min(calls, int(max_calls)))
            self.calls_bar.setFormat(f"{calls:,} / {int(max_calls):,}")
        else:
            self.calls_bar.setRange(0, 1)
            self.calls_bar.setValue(0)
            self.calls_bar.setFormat(f"{calls:,} (no limit)")
        cost, max_cost = _float(b.get("cost")), limits.get("max_cost")
        if max_cost:
            self.cost_bar.setRange(0, 1000)
            self.cost_bar.setValue(int(min(1.0, cost / float(max_cost)) * 1000))
            self.cost_bar.setFormat(f"{money(cost)} / {money(float(max_cost))}")
        else:
            self.cost_bar.setRange(0, 1)
            self.cost_bar.setValue(0)
            self.cost_bar.setFormat(f"{money(cost)} (no limit)")
        prompt, completion = _int(b.get("prompt_tokens")), _int(b.get("completion_tokens"))
        text = f"{prompt:,} prompt + {completion:,} completion = {prompt + completion:,}"
        limit_bits = [f"{k.split('_')[1]} ≤ {int(v):,}" for k, v in limits.items()
                      if k in ("max_prompt_tokens", "max_completion_tokens") and v]
        self.tokens_label.setText(text + (f"  (limits: {', '.join(limit_bits)})" if limit_bits else ""))
        failures, malformed = _int(b.get("failures")), _int(b.get("malformed"))
        self.failures_label.setText(f"{failures:,}" + (f" ({malformed:,} malformed)" if malformed else ""))
        self.failures_label.setStyleSheet(f"color: {RED.name()}; font-weight: bold;" if failures else "")
        self.cached_label.setText(f"{_int(b.get('cached')):,}")
        unpriced = b.get("unpriced_models") or []
        self.unpriced_label.setText(f"No price for {', '.join(unpriced)}: its calls count as $0. Add it in "
                                    "Run ▸ LLM settings…" if unpriced else "")
        self.unpriced_label.setVisible(bool(unpriced))


# --------------------------------------------------------------------------- the panel


class LLMPanel(QWidget):
    """Live (or stored) LLM calls of one run, with its budget. See the module docstring."""

    budget_changed = Signal(dict)  # the meter's current numbers, after each refresh

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)

        self.message = QLabel(IDLE_TEXT)
        self.message.setObjectName("llmEmptyState")
        self.message.setWordWrap(True)
        self.message.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.message.setStyleSheet("color: palette(placeholder-text); padding: 24px;")

        self.meter = _Meter()
        self.failures_only = QCheckBox("Failures only")
        self.failures_only.setToolTip("Show only calls that failed, or whose programs failed")
        self.count_label = QLabel("")
        self.count_label.setStyleSheet("color: palette(placeholder-text);")
        self.count_label.setToolTip("Requests are attempts (a retried request counts each attempt); the "
                                    "meter's calls are successful completions")
        self.model = LLMCallModel(self)
        self.tree = _CallTree()
        self.tree.setObjectName("llmCalls")
        self.tree.setModel(self.model)
        self.tree.setUniformRowHeights(False)
        self.tree.setAllColumnsShowFocus(True)
        self.tree.setAlternatingRowColors(False)
        self.tree.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        # Per item, not per pixel: the tree then measures only the rows it shows, instead of every
        # row of a run with thousands of calls after each update.
        self.tree.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerItem)
        self.tree.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.tree.setItemDelegate(_BlockDelegate(self.mono, self.tree))
        header = self.tree.header()
        header.setStretchLastSection(True)
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        fm = self.fontMetrics()
        widths = ((COL_CALL, "#00000  "), (COL_PURPOSE, "propose (island 10)"), (COL_STATUS, "↺ cached · try 3"),
                  (COL_TOKENS, "00,000 → 0,000"), (COL_LATENCY, "000.00 s"), (COL_COST, "$0.00000"))
        for col, sample in widths:
            header.resizeSection(col, fm.horizontalAdvance(sample) + 26)
        self.detail_title = QLabel("Select a call or a program to read it in full.")
        self.detail_title.setStyleSheet("color: palette(placeholder-text);")
        self.detail_title.setWordWrap(True)
        self.detail_title.setTextFormat(Qt.TextFormat.PlainText)
        self.detail = QPlainTextEdit()
        self.detail.setObjectName("llmDetail")
        self.detail.setReadOnly(True)
        self.detail.setFont(self.mono)
        self.detail.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        detail_host = QWidget()
        dl = QVBoxLayout(detail_host)
        dl.setContentsMargins(0, 2, 0, 0)
        dl.setSpacing(2)
        dl.addWidget(self.detail_title)
        dl.addWidget(self.detail, 1)
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.addWidget(self.tree)
        self.splitter.addWidget(detail_host)
        self.splitter.setStretchFactor(0, 5)
        self.splitter.setStretchFactor(1, 2)
        self.splitter.setChildrenCollapsible(False)

        bar = QHBoxLayout()
        bar.addWidget(self.failures_only)
        bar.addStretch(1)
        bar.addWidget(self.count_label)
        content = QWidget()
        cl = QVBoxLayout(content)
        cl.setContentsMargins(0, 0, 0, 0)
        cl.setSpacing(3)
        cl.addWidget(self.meter)
        cl.addLayout(bar)
        cl.addWidget(self.splitter, 1)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.message)
        self.stack.addWidget(content)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.stack)

        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(REFRESH_MS)
        self._timer.timeout.connect(self.flush)
        self.failures_only.toggled.connect(self._on_filter)
        self.tree.selectionModel().currentRowChanged.connect(self._on_current)
        self.tree.expanded.connect(self._span_children)
        self.model.rowsInserted.connect(self._on_rows_inserted)
        self._reset_state()

    # ------------------------------------------------------------------ state

    def _reset_state(self) -> None:
        self._pending: list = []
        self._calls: dict[int, _Node] = {}
        self._waiting: dict[int, list[_Node]] = {}  # hypotheses whose call has not arrived yet
        self._snapshot: dict | None = None  # the newest budget snapshot an event carried
        self._snapshot_seq = -1
        self._final: dict | None = None  # the run's final budget (RunFinished.llm)
        self._limits: dict = {}
        self._tally = {"calls": 0, "cached": 0, "failures": 0, "malformed": 0, "prompt_tokens": 0,
                       "completion_tokens": 0, "cost": 0.0}
        self._n_hyp = 0
        self._n_hyp_failed = 0
        self._n_orphans = 0

    def clear(self) -> None:
        """Forget everything and show an empty call list (an LLM run is about to start)."""
        self._timer.stop()
        self._reset_state()
        self.model.reset([])
        self.detail.clear()
        self.detail_title.setText("Select a call or a program to read it in full.")
        self.stack.setCurrentIndex(1)
        self._refresh_meter()

    def show_message(self, text: str) -> None:
        """Forget everything and show ``text`` instead of the call list."""
        self._timer.stop()
        self._reset_state()
        self.model.reset([])
        self.detail.clear()
        self.message.setText(text)
        self.stack.setCurrentIndex(0)

    def show_no_llm(self) -> None:
        """The displayed run used no LLM."""
        self.show_message(NO_LLM_TEXT)

    def is_empty_state(self) -> bool:
        return self.stack.currentIndex() == 0

    def empty_text(self) -> str:
        return self.message.text() if self.is_empty_state() else ""

    def set_budget_limits(self, limits: dict) -> None:
        """Limits shown by the meter until events bring their own, e.g. ``{"max_calls": 100,
        "max_cost": None}`` (the keys of ``Budget.snapshot()["limits"]``)."""
        self._limits = {k: v for k, v in (limits or {}).items() if v is not None}
        self._refresh_meter()

    def set_budget(self, snapshot: dict | None) -> None:
        """The run's final budget (``RunFinished.llm``, a ``Budget.snapshot()``)."""
        if snapshot:
            self._final = dict(snapshot)
            self._refresh_meter()

    # ------------------------------------------------------------------ events

    def add_event(self, event) -> None:
        """Queue an ``LLMCall`` or ``Hypothesis`` event (objects or their dicts); others are
        ignored. The view catches up at most every :data:`REFRESH_MS` ms."""
        kind = event.get("kind") if isinstance(event, dict) else getattr(event, "kind", None)
        if kind not in ("llm_call", "hypothesis"):
            return
        if self.is_empty_state():
            self.stack.setCurrentIndex(1)
        self._pending.append((kind, event))
        if not self._timer.isActive():
            self._timer.start()

    def pending(self) -> int:
        return len(self._pending)

    def flush(self) -> None:
        """Apply every queued event now (the timer calls this)."""
        self._timer.stop()
        events, self._pending = self._pending, []
        if not events:
            return
        bar = self.tree.verticalScrollBar()
        at_bottom = bar.value() >= bar.maximum() - 4
        new_tops: list[_Node] = []
        for kind, event in events:
            data = _as_dict(event)
            if kind == "llm_call":
                node = self._call_node(data)
                if node is not None:
                    new_tops.append(node)
            else:
                orphan = self._hypothesis_node(data, live=True)
                if orphan is not None:
                    new_tops.append(orphan)
        self.model.append_tops(new_tops)
        self._refresh_meter()
        if at_bottom and new_tops:
            self.tree.scrollToBottom()

    def _call_node(self, data: dict) -> _Node | None:
        seq = _int(data.get("seq"))
        if seq in self._calls:  # the same attempt twice (a reloaded run): keep the first
            return None
        node = _Node("call", data, order=self.model.new_order())
        for child in call_children(data):
            node.add_child(child)
        for hyp in self._waiting.pop(seq, []):
            node.add_child(hyp)
        self._calls[seq] = node
        self._count_call(data)
        snapshot = data.get("budget")
        if snapshot and seq >= self._snapshot_seq:
            self._snapshot, self._snapshot_seq = snapshot, seq
        return node

    def _count_call(self, d: dict) -> None:
        t = self._tally
        status = d.get("status") or "ok"
        if status in ("ok", "cached"):
            t["calls"] += 1
            if status == "cached":
                t["cached"] += 1
        else:
            t["failures"] += 1
        t["prompt_tokens"] += _int(d.get("prompt_tokens"))
        t["completion_tokens"] += _int(d.get("completion_tokens"))
        t["cost"] += _float(d.get("cost"))

    def _hypothesis_node(self, data: dict, live: bool) -> _Node | None:
        """Attach a hypothesis to its call; returns it when it must be a top-level row."""
        node = _Node("hypothesis", data)
        self._n_hyp += 1
        if not data.get("ok"):
            self._n_hyp_failed += 1
        seq = data.get("call_seq")
        if seq is None:
            node.order = self.model.new_order()
            self._n_orphans += 1
            return node
        call = self._calls.get(_int(seq))
        if call is None:
            self._waiting.setdefault(_int(seq), []).append(node)
            return None
        if live:
            self.model.add_hypothesis(call, node)
        else:
            call.add_child(node)
        return None

    # ------------------------------------------------------------------ stored runs

    def load_run(self, calls: list[dict], hypotheses: list[dict], budget: dict | None = None,
                 limits: dict | None = None, used_llm: bool | None = None) -> None:
        """Show a stored run: ``calls`` as ``RunStore.llm_calls(run_id)`` returns them,
        ``hypotheses`` as ``RunStore.events(run_id, "hypothesis")``. ``budget`` is the run's
        final budget snapshot when known (else the meter adds up the calls). A run with neither
        calls nor hypotheses shows the "no LLM" text, unless ``used_llm`` says it was an LLM run
        (one that ended before its first request)."""
        self._timer.stop()
        self._reset_state()
        self.detail.clear()
        self.detail_title.setText("Select a call or a program to read it in full.")
        if not calls and not hypotheses and not used_llm:
            self.show_no_llm()
            return
        self._limits = {k: v for k, v in (limits or {}).items() if v is not None}
        self._final = dict(budget) if budget else None
        tops: list[_Node] = []
        for call in calls:
            node = self._call_node(dict(call))
            if node is not None:
                tops.append(node)
        for hyp in hypotheses:
            orphan = self._hypothesis_node(dict(hyp), live=False)
            if orphan is not None:
                tops.append(orphan)
        for waiting in self._waiting.values():  # their call was not stored: show them on their own
            for node in waiting:
                node.order = self.model.new_order()
                self._n_orphans += 1
                tops.append(node)
        self._waiting.clear()
        tops.sort(key=lambda n: n.order)
        self.model.reset(tops)
        self._span_top_blocks()
        self.stack.setCurrentIndex(1)
        self._refresh_meter()
        if not tops:
            self.detail_title.setText("This run made no LLM call.")

    # ------------------------------------------------------------------ meter and counts

    def budget(self) -> dict:
        """What the meter shows: a ``Budget.snapshot()``-shaped dict."""
        if self._final:
            b = dict(self._final)
        elif self._snapshot:
            b = dict(self._snapshot)
        else:
            b = dict(self._tally)
        limits = dict(self._limits)
        limits.update({k: v for k, v in (b.get("limits") or {}).items() if v is not None})
        b["limits"] = limits
        return b

    def _refresh_meter(self) -> None:
        b = self.budget()
        self.meter.show_budget(b)
        n_calls = len(self._calls)
        text = (f"{n_calls:,} request{'s' if n_calls != 1 else ''} · "
                f"{self._n_hyp:,} program{'s' if self._n_hyp != 1 else ''}")
        if self._n_hyp_failed:
            text += f" ({self._n_hyp_failed:,} failed)"
        self.count_label.setText(text)
        self.budget_changed.emit(b)

    def summary(self) -> str:
        """One line for a status bar: calls of the limit, tokens and dollars."""
        b = self.budget()
        max_calls = (b.get("limits") or {}).get("max_calls")
        calls = f"{_int(b.get('calls')):,}" + (f"/{int(max_calls):,}" if max_calls else "")
        tokens = _int(b.get("prompt_tokens")) + _int(b.get("completion_tokens"))
        return f"LLM {calls} calls · {tokens:,} tokens · {money(_float(b.get('cost')))}"

    # ------------------------------------------------------------------ view helpers

    def _on_filter(self, on: bool) -> None:
        self.flush()
        self.model.set_failures_only(on)
        self._span_top_blocks()

    def _span_top_blocks(self) -> None:
        root = QModelIndex()
        for row in range(self.model.rowCount(root)):
            index = self.model.index(row, 0, root)
            if self.model.node(index).is_block():
                self.tree.setFirstColumnSpanned(row, root, True)

    def _span_children(self, parent: QModelIndex) -> None:
        for row in range(self.model.rowCount(parent)):
            self.tree.setFirstColumnSpanned(row, parent, True)

    def _on_rows_inserted(self, parent: QModelIndex, first: int, last: int) -> None:
        # Rows under a collapsed call get their span when it is expanded: each span makes the
        # tree lay out every row first, which is not free with thousands of calls.
        if parent.isValid() and not self.tree.isExpanded(parent):
            return
        for row in range(first, last + 1):
            node = self.model.node(self.model.index(row, 0, parent))
            if node is not None and node.is_block():
                self.tree.setFirstColumnSpanned(row, parent, True)

    def _on_current(self, current: QModelIndex, _previous: QModelIndex) -> None:
        node = self.model.node(current)
        if node is None:
            return
        if node.kind == "call":
            self.detail_title.setText(self._call_title(node.data))
            self.detail.setPlainText(call_transcript(node.data))
        else:
            header, _c, _l, _h, text = node.block()
            owner = node.parent
            where = f"call #{owner.data.get('seq')} · " if owner is not None else ""
            self.detail_title.setText(where + header)
            if node.kind == "hypothesis" and not node.data.get("ok") and node.data.get("error"):
                reason = "\n".join("# " + line for line in str(node.data["error"]).splitlines())
                text = f"# failed:\n{reason}\n\n{text}"
            self.detail.setPlainText(text)
        self.detail.moveCursor(self.detail.textCursor().MoveOperation.Start)

    @staticmethod
    def _call_title(d: dict) -> str:
        return (f"Call #{d.get('seq')} · {d.get('purpose') or 'no purpose'} · {d.get('status')} · "
                f"{d.get('model') or '?'} · attempt {_int(d.get('attempts')) or 1} · "
                f"{_int(d.get('prompt_tokens')):,} + {_int(d.get('completion_tokens')):,} tokens · "
                f"{_float(d.get('latency')):.2f} s · {money(_float(d.get('cost')))}")

    def call_index(self, seq: int) -> QModelIndex:
        """The tree index of call ``seq`` (invalid when it is filtered out or unknown)."""
        node = self._calls.get(int(seq))
        return self.model.index_of(node) if node is not None else QModelIndex()

    def row_count(self) -> int:
        return self.model.rowCount()


def call_transcript(d: dict) -> str:
    """A call's prompt messages, replies and error as plain text."""
    parts = []
    for message in d.get("messages") or []:
        role, text = _content(message)
        parts.append(f"── {role} " + "─" * max(4, 60 - len(role)) + "\n" + text)
    replies = d.get("replies") or []
    for i, text in enumerate(replies, start=1):
        label = f"reply {i} of {len(replies)}" if len(replies) > 1 else "reply"
        parts.append(f"══ {label} " + "═" * max(4, 60 - len(label)) + "\n" + str(text))
    if d.get("error"):
        parts.append("!! error " + "!" * 55 + "\n" + str(d["error"]))
    return "\n\n".join(parts)
