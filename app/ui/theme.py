"""Theme choice (system / light / dark) and text size (zoom) for the whole app.

"system" keeps the platform's palette; "light" and "dark" switch to Qt's Fusion style with a light or dark palette
(the window's stylesheet follows the palette, see ``app.ui.style``). Zoom scales the application font in steps of
10 % (Ctrl +/−, Ctrl+0), from 70 % to 200 %.
"""

from __future__ import annotations

from PySide6.QtGui import QColor, QFont, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication, QStyleFactory, QWidget

from app.ui.style import apply_style

ZOOM_STEPS = (0.7, 0.8, 0.9, 1.0, 1.1, 1.2, 1.35, 1.5, 1.75, 2.0)
_state: dict[str, object] = {}


def _dark_palette() -> QPalette:
    p = QPalette()
    for role, color in ((QPalette.ColorRole.Window, "#1e1f22"), (QPalette.ColorRole.WindowText, "#e5e7eb"),
                        (QPalette.ColorRole.Base, "#2b2d31"), (QPalette.ColorRole.AlternateBase, "#26282c"),
                        (QPalette.ColorRole.Text, "#e5e7eb"), (QPalette.ColorRole.Button, "#2b2d31"),
                        (QPalette.ColorRole.ButtonText, "#e5e7eb"), (QPalette.ColorRole.Highlight, "#3b82f6"),
                        (QPalette.ColorRole.HighlightedText, "#ffffff"), (QPalette.ColorRole.ToolTipBase, "#2b2d31"),
                        (QPalette.ColorRole.ToolTipText, "#e5e7eb"), (QPalette.ColorRole.PlaceholderText, "#9ca3af"),
                        (QPalette.ColorRole.Link, "#60a5fa")):
        p.setColor(role, QColor(color))
    return p


def apply_theme(theme: str, windows: list[QWidget] | None = None) -> None:
    """Switch the app to ``theme`` ("system", "light" or "dark") and restyle ``windows``."""
    app = QApplication.instance()
    if not isinstance(app, QApplication):
        return
    if "style" not in _state:
        _state["style"] = app.style().name()
        _state["palette"] = QPalette(app.palette())
    if theme == "dark":
        app.setStyle(QStyleFactory.create("Fusion"))
        app.setPalette(_dark_palette())
    elif theme == "light":
        app.setStyle(QStyleFactory.create("Fusion"))
        app.setPalette(app.style().standardPalette())
    else:
        app.setStyle(QStyleFactory.create(str(_state["style"])) or app.style())
        palette = _state["palette"]
        assert isinstance(palette, QPalette)
        app.setPalette(palette)
    for w in windows or []:
        apply_style(w)


def zoom(step: int) -> float:
    """Change the text size by ``step`` steps (0 = back to 100 %); returns the new factor."""
    app = QGuiApplication.instance()
    if not isinstance(app, QGuiApplication):
        return 1.0
    if "font" not in _state:
        _state["font"] = QFont(app.font())
        _state["zoom"] = ZOOM_STEPS.index(1.0)
    base = _state["font"]
    assert isinstance(base, QFont)
    index = ZOOM_STEPS.index(1.0) if step == 0 else \
        max(0, min(len(ZOOM_STEPS) - 1, int(_state["zoom"]) + step))  # type: ignore[call-overload]
    _state["zoom"] = index
    factor = ZOOM_STEPS[index]
    font = QFont(base)
    font.setPointSizeF(max(6.0, base.pointSizeF() * factor))
    app.setFont(font)
    return factor
