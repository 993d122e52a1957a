"""The demo replay's controls: Play / Pause, step back and forward, a slider over the steps, the
speed, where the replay is, and End demo.

Large type and large buttons, so a class can follow it on a projector. The bar only shows and
asks: the demo controller (app/demo.py) owns the timeline and the timer and tells the bar where
the replay is with :meth:`ReplayBar.show_position`.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QFont, QFontMetrics
from PySide6.QtWidgets import (QApplication, QComboBox, QHBoxLayout, QLabel, QPushButton, QSizePolicy, QSlider, QStyle,
                               QVBoxLayout, QWidget)

from engine.replay import SPEEDS

#: The bar's type is this much larger than the application's.
FONT_SCALE = 1.25
#: Buttons are at least this tall (pixels), for a mouse on a projected screen.
BUTTON_HEIGHT = 40
ICON_SIZE = 22


class ReplayBar(QWidget):
    play_requested = Signal()
    pause_requested = Signal()
    step_requested = Signal(int)  # -1 back, +1 forward
    seek_requested = Signal(int)  # a position the user dragged or clicked the slider to
    speed_changed = Signal(object)  # run seconds per second (float), or None for "fit to 30 s"
    close_requested = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("replayBar")

        self.title = QLabel("Demo replay")
        self.title.setObjectName("replayTitle")
        self.title.setTextFormat(Qt.TextFormat.PlainText)
        self.status = QLabel("")
        self.status.setObjectName("replayStatus")
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self.status.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)

        # The style's media icons: drawn by Qt, so no font needs the symbols.
        icon = self.style().standardIcon
        self._icons = {"play": icon(QStyle.StandardPixmap.SP_MediaPlay),
                       "pause": icon(QStyle.StandardPixmap.SP_MediaPause),
                       "again": icon(QStyle.StandardPixmap.SP_BrowserReload)}
        self.play_button = self._button("Play", "Play the run as it happened (at the chosen speed)")
        self.play_button.setObjectName("replayPlay")
        self.back_button = self._button("Step", "One step back")
        self.back_button.setIcon(icon(QStyle.StandardPixmap.SP_MediaSeekBackward))
        self.forward_button = self._button("Step", "One step forward")
        self.forward_button.setIcon(icon(QStyle.StandardPixmap.SP_MediaSeekForward))
        self.forward_button.setLayoutDirection(Qt.LayoutDirection.RightToLeft)  # the arrow after the word
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setObjectName("replaySlider")
        self.slider.setToolTip("Drag to any moment of the run")
        self.slider.setMinimumWidth(220)
        self.slider.setMinimumHeight(BUTTON_HEIGHT)
        self.slider.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.slider.setSingleStep(1)
        self.slider.setPageStep(10)
        self.time_label = QLabel("")
        self.time_label.setObjectName("replayTime")
        self.time_label.setToolTip("Time into the run as it was recorded, and the step shown")
        self.speed_box = QComboBox()
        self.speed_box.setObjectName("replaySpeed")
        self.speed_box.setToolTip("How fast the run plays: as it happened, faster, or the whole run in 30 seconds")
        self.speed_box.setMinimumHeight(BUTTON_HEIGHT)
        for label, factor in SPEEDS:
            self.speed_box.addItem(label, factor)
        self.close_button = self._button("End demo", "Stop the replay and show the whole run")
        self.close_button.setIcon(icon(QStyle.StandardPixmap.SP_MediaStop))
        self.close_button.setObjectName("replayClose")

        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.title)
        top.addSpacing(12)
        top.addWidget(self.status, 1)
        controls = QHBoxLayout()
        controls.setContentsMargins(0, 0, 0, 0)
        controls.setSpacing(8)
        controls.addWidget(self.play_button)
        controls.addWidget(self.back_button)
        controls.addWidget(self.forward_button)
        controls.addWidget(self.slider, 1)
        controls.addWidget(self.time_label)
        speed = QLabel("Speed")
        speed.setBuddy(self.speed_box)
        controls.addWidget(speed)
        controls.addWidget(self.speed_box)
        controls.addSpacing(8)
        controls.addWidget(self.close_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 4, 8, 6)
        layout.setSpacing(4)
        layout.addLayout(top)
        layout.addLayout(controls)

        self._playing = False
        self._steps = 0
        self._duration = 0.0
        self.play_button.clicked.connect(self._on_play)
        self.back_button.clicked.connect(lambda: self.step_requested.emit(-1))
        self.forward_button.clicked.connect(lambda: self.step_requested.emit(1))
        self.close_button.clicked.connect(self.close_requested)
        # Only the user's moves are requests: show_position sets the slider with signals blocked.
        self.slider.valueChanged.connect(self.seek_requested)
        self.speed_box.currentIndexChanged.connect(lambda _i: self.speed_changed.emit(self.speed()))
        self._apply_font()
        # A font set on a widget no longer follows the application's (presentation mode changes
        # it): follow it by hand.
        app = QApplication.instance()
        if app is not None:
            app.fontChanged.connect(self._apply_font)
        self.set_loading("")

    def _apply_font(self, *_args) -> None:
        """Type larger than the application's (which presentation mode enlarges in turn)."""
        font = QFont(QApplication.font())
        if font.pointSizeF() > 0:
            font.setPointSizeF(font.pointSizeF() * FONT_SCALE)
        elif font.pixelSize() > 0:
            font.setPixelSize(round(font.pixelSize() * FONT_SCALE))
        self.setFont(font)
        bold = QFont(font)
        bold.setBold(True)
        self.title.setFont(bold)
        self.play_button.setFont(bold)
        self.play_button.setMinimumWidth(QFontMetrics(bold).horizontalAdvance("Replay") + ICON_SIZE + 48)
        self.time_label.setMinimumWidth(QFontMetrics(font).horizontalAdvance(
            "0000.0 s of 0000.0 s · step 00000 / 00000") + 8)

    def _button(self, text: str, tip: str) -> QPushButton:
        button = QPushButton(text)
        button.setToolTip(tip)
        button.setMinimumHeight(BUTTON_HEIGHT)
        button.setIconSize(QSize(ICON_SIZE, ICON_SIZE))
        button.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        return button

    # ------------------------------------------------------------------ what the controller says

    def set_title(self, text: str) -> None:
        self.title.setText(text)

    def set_loading(self, text: str) -> None:
        """No timeline yet (it is being read): only End demo works."""
        self.status.setText(text)
        self._steps, self._duration = 0, 0.0
        for widget in (self.play_button, self.back_button, self.forward_button, self.slider):
            widget.setEnabled(False)
        self.slider.blockSignals(True)
        self.slider.setRange(0, 0)
        self.slider.blockSignals(False)
        self.time_label.setText("")
        self.set_playing(False)

    def set_length(self, steps: int, duration: float) -> None:
        """A timeline of ``steps`` steps over ``duration`` run seconds."""
        self._steps, self._duration = int(steps), float(duration)
        self.slider.blockSignals(True)
        self.slider.setRange(0, self._steps)
        self.slider.blockSignals(False)
        self.slider.setEnabled(self._steps > 0)
        self.play_button.setEnabled(self._steps > 0)

    def show_position(self, position: int, seconds: float, description: str = "") -> None:
        self.slider.blockSignals(True)
        self.slider.setValue(int(position))
        self.slider.blockSignals(False)
        self.time_label.setText(f"{seconds:.1f} s of {self._duration:.1f} s · step {position} / {self._steps}")
        self.back_button.setEnabled(position > 0)
        self.forward_button.setEnabled(position < self._steps)
        if description:
            self.status.setText(description)
        self._update_play_text()

    def set_playing(self, playing: bool) -> None:
        self._playing = bool(playing)
        self._update_play_text()

    def _update_play_text(self) -> None:
        if self._playing:
            text, icon, tip = "Pause", "pause", "Pause the replay"
        elif self._steps and self.slider.value() >= self._steps:
            text, icon, tip = "Replay", "again", "Play the run again from the start"
        else:
            text, icon, tip = "Play", "play", "Play the run as it happened (at the chosen speed)"
        self.play_button.setText(text)
        self.play_button.setIcon(self._icons[icon])
        self.play_button.setToolTip(tip)

    # ------------------------------------------------------------------ reading

    def is_playing(self) -> bool:
        return self._playing

    def position(self) -> int:
        return self.slider.value()

    def speed(self) -> float | None:
        return self.speed_box.currentData()

    def set_speed(self, label_or_factor) -> bool:
        """Pick a speed by its label ("10×") or its factor (10.0, None for fit to 30 s)."""
        for i in range(self.speed_box.count()):
            if label_or_factor == self.speed_box.itemText(i) or (
                    not isinstance(label_or_factor, str) and label_or_factor == self.speed_box.itemData(i)):
                self.speed_box.setCurrentIndex(i)
                return True
        return False

    def _on_play(self) -> None:
        (self.pause_requested if self._playing else self.play_requested).emit()
