"""View → text size and theme: the window's stylesheet for the palette plus the zoomed text size, and the
theme choice (``app.ui.look.theme``), kept in the settings."""

from __future__ import annotations

import functools
from collections.abc import Callable

from PySide6.QtCore import QObject
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QMenu, QWidget

from app.core.chat.session import ChatSession
from app.ui.look.style import is_dark, stylesheet
from app.ui.look.theme import apply_theme, zoom_factor
from app.ui.window.menus import Entry, Item, Submenu
from app.ui.window.status_bar import StatusBar


class Appearance(QObject):
    """Text size and theme of ``window``.

    Args:
        window: the window restyled (its stylesheet carries the zoomed font size).
        session: holds the theme setting, and saves it.
        status: where the new text size is said.
        relayout: lays the shown chat out again (message heights are measured per font).
    """

    def __init__(self, window: QWidget, session: ChatSession, status: StatusBar,
                 relayout: Callable[[], None]) -> None:
        super().__init__(window)
        self.window = window
        self.session = session
        self.status = status
        self.relayout = relayout
        self._base_pt: float | None = None      # the unzoomed size, read at the first zoom
        self._font_pt: float | None = None

    def entries(self) -> list[Entry]:
        """The View menu's text size items and the Theme submenu (three exclusive choices)."""
        themes = ((self.tr("Follow the system"), "system"), (self.tr("Light"), "light"), (self.tr("Dark"), "dark"))
        return [
            Item(self.tr("&Larger text"), lambda: self.zoom(1), QKeySequence.StandardKey.ZoomIn),
            Item(self.tr("&Smaller text"), lambda: self.zoom(-1), QKeySequence.StandardKey.ZoomOut),
            Item(self.tr("&Normal text size"), lambda: self.zoom(0), "Ctrl+0"),
            Submenu(self.tr("&Theme"), [
                Item(label, functools.partial(self.set_theme, key), checkable=True,
                     checked=self.session.settings.theme == key, group="theme")
                for label, key in themes], name="themeMenu"),
        ]

    def zoom(self, step: int) -> float:
        """Change the text size; the shown chat is laid out again with the new size.

        Args:
            step: steps along ``app.ui.look.theme.ZOOM_STEPS`` (+1 larger, -1 smaller; 0: back to 100 %).

        Returns:
            The new factor (1.0 = 100 %).
        """
        if self._base_pt is None:
            self._base_pt = self.window.font().pointSizeF()
        factor = zoom_factor(step)
        self._font_pt = max(6.0, self._base_pt * factor) if factor != 1.0 else None
        self.restyle()
        self.relayout()
        self.status.note(self.tr("Text size %1 %").replace("%1", f"{factor * 100:.0f}"), 2000)
        return factor

    def restyle(self) -> None:
        """The window's stylesheet for the palette, plus the zoomed text size (a stylesheet rule: fonts set on
        the window do not reach widgets a stylesheet styles)."""
        pt = self._font_pt
        self.window.setStyleSheet(stylesheet(is_dark()) + (f"\nQWidget {{ font-size: {pt:.1f}pt; }}" if pt else ""))

    def set_theme(self, theme: str) -> None:
        """Switch to ``theme`` ("system", "light" or "dark") now, tick it in View → Theme and keep it in the
        settings (Settings → Theme and the View menu both come here)."""
        self.session.settings.theme = theme
        apply_theme(theme)
        self.restyle()
        self.tick_theme(theme)
        self.session.save_settings()

    def tick_theme(self, theme: str) -> None:
        """Check ``theme``'s item in View → Theme (the window's ``themeMenu``)."""
        menu = self.window.findChild(QMenu, "themeMenu")
        if menu is None:
            return
        keys = ("system", "light", "dark")
        for action, key in zip(menu.actions(), keys, strict=False):
            if action.isChecked() != (key == theme):
                action.setChecked(key == theme)

