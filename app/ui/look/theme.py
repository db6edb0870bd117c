"""Theme choice (system / light / dark) and text size (zoom) for the whole app.

"system" keeps the platform's palette; "light" and "dark" switch to Qt's Fusion style with a light or dark palette
(the window's stylesheet follows the palette, see ``app.ui.look.style``). Zoom scales the application font in steps of
10 % (Ctrl +/−, Ctrl+0), from 70 % to 200 % (the window applies the factor to its font).
"""

from __future__ import annotations

from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication, QStyleFactory, QWidget

from app.ui.look.style import apply_style

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
    disabled = QPalette.ColorGroup.Disabled       # greyed, as Qt's own palettes do (else disabled looks enabled)
    for role, color in ((QPalette.ColorRole.WindowText, "#6b7280"), (QPalette.ColorRole.Text, "#6b7280"),
                        (QPalette.ColorRole.ButtonText, "#6b7280"), (QPalette.ColorRole.Base, "#232428"),
                        (QPalette.ColorRole.Button, "#232428"), (QPalette.ColorRole.Highlight, "#3a3d42")):
        p.setColor(disabled, role, QColor(color))
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


def zoom_factor(step: int) -> float:
    """Move the text size ``step`` steps along ``ZOOM_STEPS`` (0 = back to 100 %); returns the new factor."""
    index = int(_state.get("zoom", ZOOM_STEPS.index(1.0)))  # type: ignore[call-overload]
    index = ZOOM_STEPS.index(1.0) if step == 0 else max(0, min(len(ZOOM_STEPS) - 1, index + step))
    _state["zoom"] = index
    return ZOOM_STEPS[index]
