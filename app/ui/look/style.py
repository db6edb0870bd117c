"""Window style: one Qt stylesheet that follows the system palette (light or dark)."""

from __future__ import annotations

from PySide6.QtGui import QGuiApplication, QPalette
from PySide6.QtWidgets import QWidget

from app.core.chat.session import NoticeKind

#: The object name (stylesheet selector, ``#notice`` / ``#errorNotice``) that gives a notice of each kind its look.
NOTICE_STYLE: dict[NoticeKind, str] = {NoticeKind.INFO: "notice", NoticeKind.ERROR: "errorNotice"}


def is_dark() -> bool:
    """True when the application palette is dark (window colour lightness < 128)."""
    app = QGuiApplication.instance()
    if app is None:
        return False
    return QGuiApplication.palette().color(QPalette.ColorRole.Window).lightness() < 128


LIGHT = {
    "bg": "#f7f7f8", "user": "#e8f0fe", "assistant": "#ffffff", "border": "#e1e3e8", "muted": "#6b7280",
    "error": "#b91c1c", "error_bg": "#fdecec", "accent": "#2563eb", "stop": "#dc2626", "input": "#ffffff",
    "text": "#111827", "side": "#eef0f3", "scroll": "#c4c7cd",
}
DARK = {
    "bg": "#1e1f22", "user": "#2b3a55", "assistant": "#26282c", "border": "#3a3d42", "muted": "#9ca3af",
    "error": "#fca5a5", "error_bg": "#3b1f1f", "accent": "#3b82f6", "stop": "#ef4444", "input": "#2b2d31",
    "text": "#e5e7eb", "side": "#18191c", "scroll": "#5a5e66",
}


def stylesheet(dark: bool) -> str:
    """The window's style sheet in the light or dark colours. The chat's scroll bar (``#chatScrollBar``) is drawn
    by it, flat, without arrows: that bar repaints on every render tick while a reply grows and on every scroll
    step, and Fusion's own drawing of it cost 2.5-3.7 ms a paint (its gradients are cached per size, and the
    handle's size changes as the reply grows); a style sheet bar costs 0.03 ms, and the whole window's repaint
    went from 4.3-6.3 to 0.7 ms (2-core machine). Only that bar: rules for every ``QScrollBar`` also matched the
    two hidden bars of each message's text views, which made opening a long chat slower."""
    c = DARK if dark else LIGHT
    return f"""
#chatInner {{ background: {c['bg']}; }}
QScrollArea {{ border: none; background: {c['bg']}; }}
#userMessage {{ background: {c['user']}; border-radius: 10px; }}
#assistantMessage {{ background: {c['assistant']}; border-radius: 10px; }}
#userMessage QLabel, #assistantMessage QLabel {{ background: transparent; color: {c['text']}; }}
#messageStatus, #messageFigures {{ color: {c['muted']}; font-size: 11px; }}
#messageError, #errorNotice {{ color: {c['error']}; background: {c['error_bg']}; border-radius: 6px;
                               padding: 6px 8px; }}
#notice {{ color: {c['muted']}; }}
#inputBar {{ background: {c['bg']}; border-top: 1px solid {c['border']}; }}
QPlainTextEdit {{ background: {c['input']}; color: {c['text']}; border: 1px solid {c['border']};
                  border-radius: 8px; padding: 6px; }}
QPlainTextEdit:disabled {{ color: {c['muted']}; background: {c['bg']}; }}
#sendButton {{ background: {c['accent']}; color: white; border: none; border-radius: 8px;
               padding: 8px 14px; font-weight: bold; }}
#sendButton[stopMode="true"] {{ background: {c['stop']}; }}
#modelLabel {{ font-weight: bold; }}
#sidebar {{ background: {c['side']}; }}
#history {{ border: none; background: transparent; color: {c['text']}; }}
#history::item {{ padding: 6px 6px; border-radius: 6px; }}
#history::item:selected {{ background: {c['user']}; color: {c['text']}; }}
#history {{ show-decoration-selected: 0; }}
#history::branch, #history::branch:selected {{ background: transparent; border: none; image: none; }}
#chatScrollBar:vertical {{ background: {c['bg']}; width: 12px; margin: 0; border: none; }}
#chatScrollBar::handle:vertical {{ background: {c['scroll']}; border-radius: 4px; margin: 2px; min-height: 24px; }}
#chatScrollBar::handle:vertical:hover {{ background: {c['muted']}; }}
#chatScrollBar::add-line:vertical, #chatScrollBar::sub-line:vertical {{ height: 0; border: none; }}
#chatScrollBar::add-page:vertical, #chatScrollBar::sub-page:vertical {{ background: none; }}
#history QScrollBar:vertical {{ background: {c['side']}; width: 10px; margin: 0; border: none; }}
#history QScrollBar::handle:vertical {{ background: {c['border']}; border-radius: 4px; min-height: 24px; }}
#history QScrollBar::handle:vertical:hover {{ background: {c['muted']}; }}
#history QScrollBar::add-line:vertical, #history QScrollBar::sub-line:vertical {{ height: 0; border: none; }}
#history QScrollBar::add-page:vertical, #history QScrollBar::sub-page:vertical {{ background: none; }}
"""


def apply_style(widget: QWidget) -> None:
    widget.setStyleSheet(stylesheet(is_dark()))


def border_color() -> str:
    """The colour of a reply's border in the current theme."""
    return (DARK if is_dark() else LIGHT)["border"]
