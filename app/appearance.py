"""Themes (light / dark / follow the system) and presentation mode, for the desk and the classroom.

View ▸ Theme ▸ Light / Dark / Follow system picks the theme; the choice is stored in the settings
under ``appearance/theme``. With nothing stored the window follows the system: a desktop set to a
dark colour scheme gets the dark theme, and where Qt cannot tell (older desktops, the offscreen
platform tests use) that means light. Widgets use Qt's Fusion style with a complete palette of
our own in both themes (disabled text, links, tooltips and highlighted text included), so the
application looks the same on every platform. Plots follow through :mod:`viewers.style`: every
viewer redraws in the new style and every pyqtgraph view of every top-level window (leaderboard,
sweep, compare, a floated lab) gets the new background, axes and text colours; plots made later
take pyqtgraph's defaults, which the style keeps current.

View ▸ Presentation mode (F5; Esc leaves it) is for projectors: the application font 1.6 times
larger, lines three times thicker, larger markers and axis text, high-contrast plot colours
(pure white or black backgrounds), and a simpler window that keeps the task browser, the task /
fit area, the loss and Pareto plots, the run panel and the result, and hides the run history, the
LLM calls, the lab and the candidate table, plus the status bar's store path. The candidates stay
within reach on the Pareto plot (hover a point for its equation, click it for its fit), and at
1.6 times the text the table would squeeze that plot to a stamp beside it; View ▸ Candidates
brings it back for the lecture if wanted. The exact dock layout and font from before are saved on entering and restored on leaving.
Presentation mode is deliberately not remembered across restarts: it belongs to one lecture, and
a window that opens with huge text and missing panels would puzzle the next user; the window
leaves it before closing, so the saved layout is always the normal one. View ▸ Full screen (F11)
is a separate toggle; the two combine, as do presentation mode and either theme.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QByteArray, Qt, Signal
from PySide6.QtGui import QAction, QActionGroup, QColor, QFont, QGuiApplication, QKeySequence, QPalette, QShortcut
from PySide6.QtWidgets import QApplication, QGraphicsView, QLabel, QMainWindow, QToolTip, QWidget

from viewers import style

from . import settings

THEMES = ("light", "dark", "system")
THEME_LABELS = {"light": "&Light", "dark": "&Dark", "system": "Follow &system"}
SETTINGS_KEY = "appearance/theme"
#: Application font in presentation mode, relative to the normal one.
FONT_SCALE = 1.6
#: Docks hidden in presentation mode (secondary panels).
SECONDARY_DOCKS = ("history", "llm", "lab", "candidates")

# Palette colours per theme: role -> (active/inactive colour, disabled colour).
_R = QPalette.ColorRole
_PALETTES = {
    "light": {
        _R.Window: ("#efefef", "#efefef"),
        _R.WindowText: ("#000000", "#a0a0a0"),
        _R.Base: ("#ffffff", "#f4f4f4"),
        _R.AlternateBase: ("#f5f5f5", "#f5f5f5"),
        _R.ToolTipBase: ("#ffffdc", "#ffffdc"),
        _R.ToolTipText: ("#000000", "#000000"),
        _R.PlaceholderText: ("#7a7a7a", "#9a9a9a"),
        _R.Text: ("#000000", "#a0a0a0"),
        _R.Button: ("#efefef", "#efefef"),
        _R.ButtonText: ("#000000", "#a0a0a0"),
        _R.BrightText: ("#ffffff", "#ffffff"),
        _R.Light: ("#ffffff", "#ffffff"),
        _R.Midlight: ("#cacaca", "#cacaca"),
        _R.Mid: ("#b8b8b8", "#b8b8b8"),
        _R.Dark: ("#9f9f9f", "#bebebe"),
        _R.Shadow: ("#767676", "#b1b1b1"),
        _R.Highlight: ("#308cc6", "#919191"),
        _R.HighlightedText: ("#ffffff", "#ffffff"),
        _R.Link: ("#0000ff", "#8080c0"),
        _R.LinkVisited: ("#ff00ff", "#c080c0"),
    },
    "dark": {
        _R.Window: ("#2b2c30", "#2b2c30"),
        _R.WindowText: ("#e6e6e6", "#7f7f7f"),
        _R.Base: ("#1e1f22", "#26272a"),
        _R.AlternateBase: ("#2a2b2f", "#2a2b2f"),
        _R.ToolTipBase: ("#3c3f44", "#3c3f44"),
        _R.ToolTipText: ("#f0f0f0", "#f0f0f0"),
        _R.PlaceholderText: ("#8c8c8c", "#767676"),
        _R.Text: ("#e6e6e6", "#7f7f7f"),
        _R.Button: ("#36373c", "#2f3034"),
        _R.ButtonText: ("#e6e6e6", "#7f7f7f"),
        _R.BrightText: ("#ff6b6b", "#ff6b6b"),
        _R.Light: ("#4a4b51", "#4a4b51"),
        _R.Midlight: ("#3e3f44", "#3e3f44"),
        _R.Mid: ("#303135", "#303135"),
        _R.Dark: ("#1a1b1d", "#1a1b1d"),
        _R.Shadow: ("#0d0d0e", "#0d0d0e"),
        _R.Highlight: ("#3d7ab8", "#46484d"),
        _R.HighlightedText: ("#ffffff", "#a0a0a0"),
        _R.Link: ("#6cb4ee", "#5b7d99"),
        _R.LinkVisited: ("#c39be0", "#8a7599"),
    },
}


def palette(theme: str) -> QPalette:
    """The complete widget palette of a theme ("light" or "dark")."""
    pal = QPalette()
    for role, (normal, disabled) in _PALETTES[theme].items():
        for group in (QPalette.ColorGroup.Active, QPalette.ColorGroup.Inactive):
            pal.setColor(group, role, QColor(normal))
        pal.setColor(QPalette.ColorGroup.Disabled, role, QColor(disabled))
    return pal


def system_prefers_dark() -> bool:
    """True when the desktop says it uses a dark colour scheme (Qt 6.5+); False when it says
    light or cannot tell."""
    hints = QGuiApplication.styleHints()
    scheme = getattr(hints, "colorScheme", None)
    return scheme is not None and scheme() == Qt.ColorScheme.Dark


def _scaled(font: QFont, factor: float) -> QFont:
    bigger = QFont(font)
    if font.pointSizeF() > 0:
        bigger.setPointSizeF(font.pointSizeF() * factor)
    else:  # a font sized in pixels
        bigger.setPixelSize(max(1, round(font.pixelSize() * factor)))
    return bigger


class Appearance(QObject):
    """The window's theme and presentation mode, with their View menu entries."""

    theme_changed = Signal(str)  # the theme in effect: "light" or "dark"
    presentation_changed = Signal(bool)

    def __init__(self, window: QMainWindow):
        super().__init__(window)
        self.window = window
        self.setObjectName("appearance")
        self._saved_state: QByteArray | None = None
        self._saved_font: QFont | None = None
        self._hidden_status: list = []
        self.presenting = False
        stored = settings.settings().value(SETTINGS_KEY)
        self.theme = stored if stored in THEMES else "system"
        self._build_actions()
        app = QApplication.instance()
        app.setStyle("Fusion")  # the same widgets everywhere; our palettes are made for it
        hints = QGuiApplication.styleHints()
        if hasattr(hints, "colorSchemeChanged"):
            hints.colorSchemeChanged.connect(self._on_system_scheme)
        # Esc leaves presentation mode and full screen; a shortcut only while one of them is on,
        # so Esc keeps its usual meaning otherwise.
        self.escape = QShortcut(QKeySequence(Qt.Key.Key_Escape), window)
        self.escape.setEnabled(False)
        self.escape.activated.connect(self.leave)
        window.close_hooks.append(self._on_close)
        window.layout_reset.connect(self._simplify_layout)  # Reset layout while presenting
        self.apply_theme()

    # ------------------------------------------------------------------ menus

    def _build_actions(self) -> None:
        view = self.window.menus["view"]
        view.addSeparator()
        self.theme_menu = view.addMenu("&Theme")
        self.theme_group = QActionGroup(self)
        self.theme_group.setExclusive(True)
        self.theme_actions: dict[str, QAction] = {}
        tips = {"light": "Dark text on light backgrounds", "dark": "Light text on dark backgrounds, plots included",
                "system": "Light or dark as the desktop is set (light where the desktop does not say)"}
        for name in THEMES:
            action = QAction(THEME_LABELS[name], self)
            action.setCheckable(True)
            action.setChecked(name == self.theme)
            action.setStatusTip(tips[name])
            action.setData(name)
            action.triggered.connect(lambda _checked=False, name=name: self.set_theme(name))
            self.theme_group.addAction(action)
            self.theme_menu.addAction(action)
            self.theme_actions[name] = action
        self.presentation_action = QAction("&Presentation mode", self)
        self.presentation_action.setCheckable(True)
        self.presentation_action.setShortcut(QKeySequence(Qt.Key.Key_F5))
        self.presentation_action.setStatusTip(
            "For projectors: large text, thick lines, high-contrast plots, only the main panels (Esc leaves)")
        self.presentation_action.toggled.connect(self.set_presentation)
        view.addAction(self.presentation_action)
        self.full_screen_action = QAction("&Full screen", self)
        self.full_screen_action.setCheckable(True)
        self.full_screen_action.setShortcut(QKeySequence(Qt.Key.Key_F11))
        self.full_screen_action.setStatusTip("The window fills the screen (Esc leaves)")
        self.full_screen_action.toggled.connect(self.set_full_screen)
        view.addAction(self.full_screen_action)

    # ------------------------------------------------------------------ theme

    def effective_theme(self) -> str:
        """"light" or "dark": the chosen theme, or the system's when following it."""
        if self.theme == "system":
            return "dark" if system_prefers_dark() else "light"
        return self.theme

    def set_theme(self, name: str) -> None:
        """Light, dark or "system"; stored in the settings and applied at once."""
        if name not in THEMES:
            raise ValueError(f"unknown theme {name!r}; expected one of {', '.join(THEMES)}")
        self.theme = name
        self.theme_actions[name].setChecked(True)
        s = settings.settings()
        s.setValue(SETTINGS_KEY, name)
        s.sync()
        self.apply_theme()

    def _on_system_scheme(self, *_args) -> None:
        if self.theme == "system":
            self.apply_theme()

    def apply_theme(self) -> None:
        """Palette, tooltips and plots in the current theme and presentation state."""
        theme = self.effective_theme()
        app = QApplication.instance()
        pal = palette(theme)
        app.setPalette(pal)
        QToolTip.setPalette(pal)
        # Style sheets resolve palette(...) colours when a widget is polished: widgets that use
        # them (muted notes, descriptions) are polished again so they take the new theme's colours.
        for top in QApplication.topLevelWidgets():
            for widget in [top, *top.findChildren(QWidget)]:
                if "palette(" in widget.styleSheet():
                    widget.style().unpolish(widget)
                    widget.style().polish(widget)
        self._apply_plot_style()
        self.theme_changed.emit(theme)

    def _apply_plot_style(self) -> None:
        font = self._saved_font if self._saved_font is not None else QApplication.instance().font()
        base = font.pointSizeF() if font.pointSizeF() > 0 else 9.0
        style.set_style(style.make_style(self.effective_theme(), self.presenting, base_pt=base))
        self.restyle_views()

    def restyle_views(self) -> None:
        """Background, axes and text of every pyqtgraph view in every top-level window, including
        those no viewer owns (the compare dialog's loss plot)."""
        import pyqtgraph as pg

        for top in QApplication.topLevelWidgets():
            views = [top] if isinstance(top, pg.GraphicsView) else []
            views += [v for v in top.findChildren(QGraphicsView) if isinstance(v, pg.GraphicsView)]
            for view in views:
                style.apply_view(view)

    # ------------------------------------------------------------------ presentation

    def set_presentation(self, on: bool) -> None:
        """Enter or leave presentation mode (the menu entry and F5 call this)."""
        on = bool(on)
        if on == self.presenting:
            return
        app = QApplication.instance()
        window = self.window
        if on:
            self._saved_state = window.saveState()
            self._saved_font = QFont(app.font())
            self.presenting = True
            app.setFont(_scaled(self._saved_font, FONT_SCALE))
            self._apply_plot_style()
            self._simplify_layout()
            # The status message and the activity indicator stay; the run store's path means
            # nothing to an audience.
            bar = window.statusBar()
            self._hidden_status = [w for w in bar.findChildren(QLabel)
                                   if w.parentWidget() is bar and w.isVisible()
                                   and w is not getattr(window, "status_label", None)
                                   and w is not getattr(window, "llm_status", None)]
            for w in self._hidden_status:
                w.hide()
        else:
            self.presenting = False
            font, self._saved_font = self._saved_font, None
            if font is not None:
                app.setFont(font)
            self._apply_plot_style()
            for w in self._hidden_status:
                w.show()
            self._hidden_status = []
            if self._saved_state is not None:
                window.restore_dock_state(self._saved_state)
            self._saved_state = None
        if self.presentation_action.isChecked() != on:
            self.presentation_action.setChecked(on)  # when called directly, not from the menu
        self._update_escape()
        self.presentation_changed.emit(on)

    def _simplify_layout(self) -> None:
        """Presentation mode's docks: the secondary ones hidden, the rest given more room. Also
        after View ▸ Reset layout while presenting (the normal layout still comes back on leaving)."""
        if not self.presenting:
            return
        window = self.window
        for key in SECONDARY_DOCKS:
            dock = window.docks.get(key)
            if dock is not None:
                dock.hide()
        # The larger text needs wider side columns (the saved layout comes back on leaving).
        sides = [window.docks.get("browser"), window.docks.get("run")]
        if all(d is not None and d.isVisible() and not d.isFloating() for d in sides):
            width = window.width()
            window.resizeDocks(sides, [int(width * 0.17), int(width * 0.27)], Qt.Orientation.Horizontal)
        # The loss and Pareto plots are what the audience watches during a run: a little more
        # of the height for them.
        column = [window.docks.get("detail"), window.docks.get("loss")]
        if all(d is not None and d.isVisible() and not d.isFloating() for d in column):
            height = window.height()
            window.resizeDocks(column, [int(height * 0.5), int(height * 0.4)], Qt.Orientation.Vertical)

    def set_full_screen(self, on: bool) -> None:
        window = self.window
        if bool(on) == window.isFullScreen():
            pass
        elif on:
            self._was_maximized = window.isMaximized()
            window.showFullScreen()
        elif getattr(self, "_was_maximized", False):
            window.showMaximized()
        else:
            window.showNormal()
        if self.full_screen_action.isChecked() != bool(on):
            self.full_screen_action.setChecked(bool(on))
        self._update_escape()

    def leave(self) -> None:
        """Esc: back to the normal window."""
        if self.full_screen_action.isChecked():
            self.set_full_screen(False)
        if self.presenting:
            self.set_presentation(False)

    def _update_escape(self) -> None:
        self.escape.setEnabled(self.presenting or self.full_screen_action.isChecked())

    def _on_close(self) -> None:
        """Before the window saves its layout: the normal layout and font, not presentation's."""
        if self.presenting:
            self.set_presentation(False)


def install(window: QMainWindow, **_kwargs) -> Appearance:
    """Add View ▸ Theme, Presentation mode and Full screen to ``window`` and apply the stored theme."""
    return Appearance(window)
