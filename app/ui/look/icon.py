"""Brook's icon: ``app/resources/brook.svg`` (the one source; ``packaging/make_icons.py`` renders the PNG, ICO
and ICNS files from it), found next to the ``app`` package both installed and frozen."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QIcon

#: The icon's SVG source (package data ``app/resources/*``; the frozen bundle keeps the same relative path).
ICON_SVG = Path(__file__).resolve().parents[2] / "resources" / "brook.svg"


def app_icon() -> QIcon:
    """The app's icon (scalable, from the SVG); a null ``QIcon`` when the file is missing."""
    return QIcon(str(ICON_SVG)) if ICON_SVG.is_file() else QIcon()
