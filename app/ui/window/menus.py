"""The menu bar as data: which menus, in which order, and what each one holds.

``MainWindow`` writes one table (``MenuKey`` → a list of entries) and ``build_menus`` makes the menus from it, so
adding a menu item is one line in that table. An entry is an ``Item`` (a text and a slot), an existing
``QAction`` (a feature's toggle, a dock's view action), a ``Submenu`` or ``SEPARATOR``. Features never look
menus up by their titles and never add themselves to the bar.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from PySide6.QtCore import QCoreApplication
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QMainWindow, QMenu

from app.core.text import QT_TRANSLATE_NOOP

#: What a menu item's shortcut may be: a key string ("Ctrl+M"), a standard key, or a sequence.
Shortcut = str | QKeySequence | QKeySequence.StandardKey


class MenuKey(enum.Enum):
    """The window's menus, in the order of the menu bar."""

    FILE = "file"
    CHAT = "chat"
    VIEW = "view"
    SERVER = "server"
    HELP = "help"


#: Each menu's title (the source text; shown translated, context "MainWindow").
MENU_TITLES: dict[MenuKey, str] = {
    MenuKey.FILE: QT_TRANSLATE_NOOP("MainWindow", "&File"),
    MenuKey.CHAT: QT_TRANSLATE_NOOP("MainWindow", "&Chat"),
    MenuKey.VIEW: QT_TRANSLATE_NOOP("MainWindow", "&View"),
    MenuKey.SERVER: QT_TRANSLATE_NOOP("MainWindow", "&Server"),
    MenuKey.HELP: QT_TRANSLATE_NOOP("MainWindow", "&Help"),
}


@dataclass(frozen=True)
class Item:
    """A menu item made into a window-wide ``QAction`` (its shortcut works wherever the focus is).

    ``text`` is shown as given (already translated); ``group`` names an exclusive group of checkable items
    (the theme's three choices)."""

    text: str
    slot: Callable[[], object]
    shortcut: Shortcut | None = None
    checkable: bool = False
    checked: bool = False
    group: str | None = None


@dataclass(frozen=True)
class Submenu:
    """A menu inside a menu; ``about_to_show(menu)`` fills it each time it opens (recent models)."""

    title: str
    entries: Sequence[Entry] = ()
    about_to_show: Callable[[QMenu], None] | None = None
    name: str = ""


class _Separator:
    def __repr__(self) -> str:
        return "SEPARATOR"


#: A line between groups of items.
SEPARATOR = _Separator()

Entry = Item | QAction | Submenu | _Separator


@dataclass
class Menus:
    """The built menu bar: ``menus[key]`` is a menu, ``actions[text]`` the ``QAction`` made for an ``Item``."""

    menus: dict[MenuKey, QMenu] = field(default_factory=dict)
    submenus: dict[str, QMenu] = field(default_factory=dict)
    actions: dict[str, QAction] = field(default_factory=dict)

    def __getitem__(self, key: MenuKey) -> QMenu:
        return self.menus[key]


def build_menus(window: QMainWindow, table: Mapping[MenuKey, Sequence[Entry]]) -> Menus:
    """Make ``window``'s menu bar from ``table``, menus in ``MenuKey`` order (a key missing from the table
    gives no menu).

    Args:
        window: the window whose ``menuBar()`` gets the menus; every ``Item`` becomes an action of it.
        table: the entries of each menu, top to bottom.

    Returns:
        The menus, submenus (by ``Submenu.name``) and the actions made for the items (by text).
    """
    built = Menus()
    groups: dict[str, QActionGroup] = {}
    bar = window.menuBar()
    for key in MenuKey:
        if key not in table:
            continue
        menu = bar.addMenu(QCoreApplication.translate("MainWindow", MENU_TITLES[key]))
        menu.setObjectName(f"{key.value}Menu")
        built.menus[key] = menu
        _fill(window, menu, table[key], built, groups)
    return built


def _fill(window: QMainWindow, menu: QMenu, entries: Sequence[Entry], built: Menus,
          groups: dict[str, QActionGroup]) -> None:
    for entry in entries:
        if isinstance(entry, _Separator):
            menu.addSeparator()
        elif isinstance(entry, QAction):
            menu.addAction(entry)
        elif isinstance(entry, Submenu):
            sub = menu.addMenu(entry.title)
            if entry.name:
                sub.setObjectName(entry.name)
                built.submenus[entry.name] = sub
            _fill(window, sub, entry.entries, built, groups)
            if entry.about_to_show is not None:
                fill = entry.about_to_show
                sub.aboutToShow.connect(lambda s=sub, f=fill: f(s))
        else:
            action = QAction(entry.text, window)
            if entry.shortcut is not None:
                action.setShortcut(QKeySequence(entry.shortcut))
            action.setCheckable(entry.checkable)
            action.setChecked(entry.checked)
            slot = entry.slot
            action.triggered.connect(lambda _checked=False, s=slot: s())
            if entry.group is not None:
                groups.setdefault(entry.group, QActionGroup(window)).addAction(action)
            window.addAction(action)
            menu.addAction(action)
            built.actions[entry.text] = action
