"""The welcome tour's pieces: a small card floating over the main window, and a coloured frame
that points at the panel a step talks about.

Both are plain child widgets of the main window, not dialogs: the window stays fully usable
under them. They only show things; :mod:`app.welcome` decides what they say and when.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QPoint, QRect, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QPainter, QPalette, QPen, QRegion
from PySide6.QtWidgets import (QApplication, QFrame, QGraphicsDropShadowEffect, QHBoxLayout, QLabel, QPushButton,
                               QSizePolicy, QToolButton, QVBoxLayout, QWidget)

from .progress import ProgressBar

#: Tones of the card's status line: (text colour, background) for light and for dark windows.
_TONES = {
    "info": (("#1f4e79", "#e7f0fa"), ("#cfe3f7", "#21374d")),
    "busy": (("#1f4e79", "#e7f0fa"), ("#cfe3f7", "#21374d")),
    "ok": (("#1e5e2a", "#e3f4e6"), ("#c8ecd0", "#1f3d26")),
    "warn": (("#7a4a00", "#fff1d6"), ("#ffe2a8", "#4a3610")),
}


def _is_dark(_widget: QWidget | None = None) -> bool:
    # The application's palette: the card's own is overridden by its style sheet, and reading it
    # would flip with every restyle.
    return QApplication.palette().color(QPalette.ColorRole.Window).lightness() < 128


def _mix(a: QColor, b: QColor, share_of_a: float) -> str:
    """``a`` blended into ``b``, as a style-sheet colour (muted text that reads in any theme,
    where the palette's fixed "dark" and "mid" roles vanish on a dark background)."""
    t = share_of_a
    return QColor(round(a.red() * t + b.red() * (1 - t)), round(a.green() * t + b.green() * (1 - t)),
                  round(a.blue() * t + b.blue() * (1 - t))).name()


class StepDots(QWidget):
    """Three dots: done and current steps filled in the highlight colour, the rest hollow."""

    def __init__(self, total: int = 3, parent: QWidget | None = None):
        super().__init__(parent)
        self.total = total
        self.current = 0  # 0-based; == total when every step is done
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)

    def set_current(self, index: int) -> None:
        self.current = index
        self.update()

    def _diameter(self) -> int:
        return max(8, self.fontMetrics().height() // 2)

    def sizeHint(self) -> QSize:
        d = self._diameter()
        return QSize(self.total * d + (self.total - 1) * d, d + 2)

    def paintEvent(self, _event) -> None:
        d = self._diameter()
        accent = self.palette().color(QPalette.ColorRole.Highlight)
        muted = QColor(_mix(self.palette().color(QPalette.ColorRole.Text),
                            self.palette().color(QPalette.ColorRole.Base), 0.45))
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        y = (self.height() - d) // 2
        for i in range(self.total):
            x = i * 2 * d
            rect = QRect(x + 1, y + 1, d - 2, d - 2)
            if i < self.current:  # done
                painter.setPen(Qt.PenStyle.NoPen)
                painter.setBrush(accent)
            elif i == self.current:  # here: a ring around a filled dot
                painter.setPen(QPen(accent, 2))
                painter.setBrush(accent.lighter(140) if not _is_dark(self) else accent.darker(130))
            else:
                painter.setPen(QPen(muted, 1.5))
                painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawEllipse(rect)
        painter.end()


class WelcomeCard(QFrame):
    """The tour's card: step counter and dots, a title, a few sentences, a status line (with a
    thin progress bar while a run goes), the step's main button, and Back / Skip / Next.

    The card knows nothing of the window; it emits what was clicked."""

    action_clicked = Signal()  # the step's main button ("Pick one for me", "Start…", "Reveal…", "Done")
    back_clicked = Signal()
    next_clicked = Signal()
    skip_clicked = Signal()
    close_clicked = Signal()  # the × in the corner, or Esc
    dragged = Signal()  # the user moved the card with the mouse
    font_changed = Signal()  # the application font changed (presentation mode): the card's size too

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("welcomeCard")
        self.setAccessibleName("Welcome tour")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        # Painted as a solid rounded panel even though it is a child widget over other widgets.
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.setAutoFillBackground(True)

        self.kicker = QLabel("WELCOME TOUR")
        self.kicker.setObjectName("welcomeKicker")
        self.kicker.setToolTip("Drag the card to move it out of the way")
        self._drag_offset: QPoint | None = None
        self.step_label = QLabel("Step 1 of 3")
        self.step_label.setObjectName("welcomeStep")
        self.dots = StepDots(3)
        self.close_button = QToolButton()
        self.close_button.setObjectName("welcomeClose")
        self.close_button.setText("✕")
        self.close_button.setAutoRaise(True)
        self.close_button.setToolTip("Close the tour (Help ▸ Welcome tour brings it back)")
        self.close_button.setAccessibleName("Close the welcome tour")
        self.close_button.setCursor(Qt.CursorShape.PointingHandCursor)

        self.title = QLabel("")
        self.title.setObjectName("welcomeTitle")
        self._size_title()
        self.body = QLabel("")
        self.body.setObjectName("welcomeBody")
        self.body.setWordWrap(True)
        self.body.setTextFormat(Qt.TextFormat.RichText)
        self.status = QLabel("")
        self.status.setObjectName("welcomeStatus")
        self.status.setWordWrap(True)
        self.status.setTextFormat(Qt.TextFormat.RichText)
        self.status.setVisible(False)
        self.extra = QLabel("")
        self.extra.setObjectName("welcomeExtra")
        self.extra.setWordWrap(True)
        self.extra.setTextFormat(Qt.TextFormat.RichText)
        self.extra.setVisible(False)
        self.progress = ProgressBar()
        self.progress.setObjectName("welcomeProgress")
        self.progress.setRange(0, 1000)
        self.progress.setTextVisible(False)
        self.progress.setFixedHeight(max(4, self.fontMetrics().height() // 3))
        self.progress.setVisible(False)

        self.action_button = QPushButton("")
        self.action_button.setObjectName("welcomeAction")
        self.action_button.setDefault(True)
        self.action_button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.back_button = QPushButton("‹ Back")
        self.back_button.setObjectName("welcomeBack")
        self.back_button.setFlat(True)
        self.next_button = QPushButton("Next ›")
        self.next_button.setObjectName("welcomeNext")
        self.next_button.setFlat(True)
        self.skip_button = QPushButton("Skip tour")
        self.skip_button.setObjectName("welcomeSkip")
        self.skip_button.setFlat(True)
        self.skip_button.setToolTip("Hide the tour for good (Help ▸ Welcome tour brings it back)")

        header = QHBoxLayout()
        header.setSpacing(8)
        header.addWidget(self.kicker)
        header.addWidget(self.step_label)
        header.addWidget(self.dots, 0, Qt.AlignmentFlag.AlignVCenter)
        header.addStretch(1)
        header.addWidget(self.close_button)
        actions = QHBoxLayout()
        actions.addWidget(self.action_button)
        actions.addStretch(1)
        nav = QHBoxLayout()
        nav.setSpacing(4)
        nav.addWidget(self.back_button)
        nav.addWidget(self.skip_button)
        nav.addStretch(1)
        nav.addWidget(self.next_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(18, 12, 14, 12)
        layout.setSpacing(8)
        layout.addLayout(header)
        layout.addWidget(self.title)
        layout.addWidget(self.body)
        layout.addWidget(self.status)
        layout.addWidget(self.progress)
        layout.addWidget(self.extra)
        layout.addLayout(actions)
        layout.addSpacing(2)
        layout.addLayout(nav)

        shadow = QGraphicsDropShadowEffect(self)
        shadow.setBlurRadius(28)
        shadow.setOffset(0, 6)
        shadow.setColor(QColor(0, 0, 0, 90))
        self.setGraphicsEffect(shadow)
        self._tone = "info"
        self._dark = False
        self._restyle()

        self.action_button.clicked.connect(self.action_clicked)
        self.back_button.clicked.connect(self.back_clicked)
        self.next_button.clicked.connect(self.next_clicked)
        self.skip_button.clicked.connect(self.skip_clicked)
        self.close_button.clicked.connect(self.close_clicked)

    # ------------------------------------------------------------------ content

    def set_step(self, index: int, total: int, title: str, body_html: str, done: bool = False) -> None:
        """Step ``index`` (0-based) of ``total``; ``done`` marks every step as completed."""
        self.step_label.setText(f"Step {min(index + 1, total)} of {total}" + (" · done" if done else ""))
        self.dots.total = total
        self.dots.set_current(total if done else index)
        self.title.setText(title)
        self.body.setText(body_html)

    def set_extra(self, body_html: str = "") -> None:
        """A second block of text under the status line (the "what next" list); empty hides it."""
        self.extra.setText(body_html)
        self.extra.setVisible(bool(body_html))

    def set_status(self, text: str = "", tone: str = "info") -> None:
        """The line under the text: what is happening now (``busy``), what went well (``ok``) or
        what needs the user (``warn``). Empty hides it."""
        self.status.setText(text)
        self.status.setVisible(bool(text))
        if tone != self._tone:
            self._tone = tone
            self._restyle()

    def set_progress(self, fraction: float | None) -> None:
        """The thin bar under the status line; None hides it."""
        self.progress.setVisible(fraction is not None)
        if fraction is not None:
            self.progress.setValue(int(max(0.0, min(1.0, fraction)) * 1000))

    def set_action(self, text: str | None, enabled: bool = True, tip: str = "") -> None:
        """The step's main button; None hides it."""
        self.action_button.setVisible(text is not None)
        if text is not None:
            self.action_button.setText(text)
            self.action_button.setEnabled(enabled)
            self.action_button.setToolTip(tip)

    def set_navigation(self, back: bool, next_enabled: bool | None, next_tip: str = "", skip: bool = True) -> None:
        """Back shown or not; Next hidden (None), greyed out (False) or ready (True); Skip tour
        shown or not."""
        self.back_button.setVisible(back)
        self.skip_button.setVisible(skip)
        self.next_button.setVisible(next_enabled is not None)
        self.next_button.setEnabled(bool(next_enabled))
        self.next_button.setToolTip(next_tip)

    def preferred_size(self) -> QSize:
        """A width that reads well at the current font size, and the height the text needs."""
        width = max(400, min(640, self.fontMetrics().averageCharWidth() * 66))
        layout = self.layout()
        height = layout.totalHeightForWidth(width) if layout.hasHeightForWidth() else layout.totalSizeHint().height()
        return QSize(width, max(height, layout.totalMinimumSize().height()))

    # ------------------------------------------------------------------ looks

    def _restyle(self) -> None:
        dark = self._dark = _is_dark(self)
        fg, bg = _TONES.get(self._tone, _TONES["info"])[1 if dark else 0]
        text = self.palette().color(QPalette.ColorRole.Text)
        base = self.palette().color(QPalette.ColorRole.Base)
        muted, faint, edge = _mix(text, base, 0.6), _mix(text, base, 0.35), _mix(text, base, 0.25)
        # palette(...) keeps the card in step with the light and dark themes.
        self.setStyleSheet(f"""
            #welcomeCard {{
                background: palette(base);
                border: 1px solid {edge};
                border-top: 4px solid palette(highlight);
                border-radius: 10px;
            }}
            #welcomeKicker {{ color: palette(highlight); font-weight: bold; letter-spacing: 1px; }}
            #welcomeStep {{ color: {muted}; }}
            #welcomeStatus {{
                color: {fg}; background: {bg}; border-radius: 6px; padding: 6px 8px;
            }}
            #welcomeAction {{
                background: palette(highlight); color: palette(highlighted-text);
                border: none; border-radius: 6px; padding: 6px 16px; font-weight: bold;
            }}
            #welcomeAction:hover {{ background: palette(link); }}
            #welcomeAction:disabled {{ background: {faint}; color: {base.name()}; }}
            #welcomeBack, #welcomeNext, #welcomeSkip {{
                border: none; padding: 4px 8px; color: palette(link);
            }}
            #welcomeBack:disabled, #welcomeNext:disabled, #welcomeSkip:disabled {{ color: {faint}; }}
            #welcomeBack:hover, #welcomeNext:hover, #welcomeSkip:hover {{ text-decoration: underline; }}
            #welcomeProgress {{ border: none; background: {edge}; border-radius: 2px; }}
            #welcomeProgress::chunk {{ background: palette(highlight); border-radius: 2px; }}
            #welcomeClose {{ border: none; color: {muted}; padding: 2px 4px; }}
        """)

    def _size_title(self) -> None:
        font = QFont(self.font())
        if font.pointSizeF() > 0:
            font.setPointSizeF(font.pointSizeF() * 1.35)
        else:
            font.setPixelSize(round(font.pixelSize() * 1.35))
        font.setBold(True)
        self.title.setFont(font)

    def follow_font(self, font: QFont) -> None:
        """Take the window's font (presentation mode makes it larger). A widget with a style
        sheet keeps the font it had when the sheet was applied, so this is done by hand."""
        if font == self.font():
            return
        self.setFont(font)
        for child in self.findChildren(QWidget):
            child.setFont(font)
        self._size_title()
        self.progress.setFixedHeight(max(4, self.fontMetrics().height() // 3))
        self.dots.updateGeometry()
        self.font_changed.emit()

    def changeEvent(self, event) -> None:
        # A theme change (light / dark) also switches the status tints. Setting a style sheet
        # sends a palette change of its own, hence the comparison.
        if event.type() == QEvent.Type.PaletteChange and _is_dark(self) != self._dark:
            self._restyle()
        super().changeEvent(event)

    # The card can be dragged by any spot that is not a button, so it never hides what the
    # user wants to see.
    def mousePressEvent(self, event) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self._drag_offset = event.position().toPoint()
            self.setCursor(Qt.CursorShape.ClosedHandCursor)
            event.accept()
            return
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event) -> None:
        parent = self.parentWidget()
        if self._drag_offset is not None and parent is not None:
            target = parent.mapFromGlobal(event.globalPosition().toPoint()) - self._drag_offset
            self.move(self.clamped(target))
            self.dragged.emit()
            event.accept()
            return
        super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event) -> None:
        if self._drag_offset is not None:
            self._drag_offset = None
            self.unsetCursor()
            event.accept()
            return
        super().mouseReleaseEvent(event)

    def clamped(self, top_left: QPoint) -> QPoint:
        """``top_left`` moved just enough for the whole card to stay inside its parent."""
        parent = self.parentWidget()
        if parent is None:
            return top_left
        x = max(0, min(top_left.x(), parent.width() - self.width()))
        y = max(0, min(top_left.y(), parent.height() - self.height()))
        return QPoint(x, y)

    def keyPressEvent(self, event) -> None:
        if event.key() == Qt.Key.Key_Escape:
            self.close_clicked.emit()
            event.accept()
            return
        super().keyPressEvent(event)


class Spotlight(QWidget):
    """A coloured rounded frame drawn around another widget of the same window (a dock), to
    say "look here". It never takes a click: the frame is drawn in a ring-shaped mask and the
    widget is transparent for the mouse. It follows its target when the target moves, is
    resized, hidden or shown."""

    def __init__(self, window: QWidget):
        super().__init__(window)
        self.setObjectName("welcomeSpotlight")
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents, True)
        self.setAttribute(Qt.WidgetAttribute.WA_NoSystemBackground, True)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.thickness = 3
        self.target: QWidget | None = None
        self._watcher = _Watcher(self.follow)
        self.hide()

    def set_target(self, target: QWidget | None) -> None:
        if self.target is not None:
            self.target.removeEventFilter(self._watcher)
        self.target = target
        if target is not None:
            target.installEventFilter(self._watcher)
        self.follow()

    def follow(self) -> None:
        """Cover the target's area again, or hide when it is not on this window (closed, or a
        floating dock that is a window of its own)."""
        target, window = self.target, self.parentWidget()
        if target is None or window is None or not target.isVisible() or target.isWindow():
            self.hide()
            return
        top_left = target.mapTo(window, QPoint(0, 0))
        rect = QRect(top_left, target.size()).intersected(window.rect())
        if rect.width() < 20 or rect.height() < 20:  # a tabbed dock out of view
            self.hide()
            return
        self.setGeometry(rect)
        # The ring is a little wider than the pen so the rounded corners are not cut off.
        t = self.thickness + 3
        ring = QRegion(self.rect()).subtracted(QRegion(self.rect().adjusted(t, t, -t, -t)))
        self.setMask(ring)
        self.show()
        self.raise_()

    def paintEvent(self, _event) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        accent = self.palette().color(QPalette.ColorRole.Highlight)
        pen = QPen(accent, self.thickness)
        painter.setPen(pen)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        half = self.thickness / 2
        painter.drawRoundedRect(self.rect().toRectF().adjusted(half, half, -half, -half), 6, 6)
        painter.end()


class _Watcher(QObject):
    """Calls ``callback`` when a watched widget moves, is resized, shown or hidden."""

    _TYPES = (QEvent.Type.Move, QEvent.Type.Resize, QEvent.Type.Show, QEvent.Type.Hide, QEvent.Type.ParentChange)

    def __init__(self, callback):
        super().__init__()
        self.callback = callback

    def eventFilter(self, obj, event) -> bool:
        if event.type() in self._TYPES:
            self.callback()
        return False
