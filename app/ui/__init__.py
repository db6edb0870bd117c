"""The window (PySide6): ``look/`` (style, theme, translations, icon), ``window/`` (main window, status bar, menus,
window-level panels), ``messages/`` (the virtual message list, message widgets, markdown view, render tick),
``compose/`` (prompt box, attachments, context meter), ``inspector/``, ``dialogs/``."""
