"""What a person can do with one message (right click, or the ⋯ button): copy, edit and resend, delete,
regenerate, continue, switch versions, see where a reply came from.

``message_menu(msg, actions, parent)`` builds the menu for ``msg``; ``actions`` is whatever object offers the
operations (the window's ``MessageActions``), each enabled only where it applies. ``provenance_html`` is the
reply's details (model file, SHA-256, template, sampling, seed, TTFT, tokens/s, stop reason) for a tooltip.
"""

from __future__ import annotations

import functools
import html
from typing import Any

from PySide6.QtCore import QCoreApplication
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QMenu, QTextEdit, QWidget

from app.core.chat import versions
from app.core.conversation import Message, Role
from app.core.streaming.provenance import describe


def provenance_html(msg: Message) -> str:
    """The reply's provenance as a small HTML table (empty for a user message)."""
    if msg.role is not Role.ASSISTANT:
        return ""
    rows = describe(msg)
    if not rows:
        return ""
    cells = "".join(f"<tr><td style='padding-right:10px'><b>{html.escape(QCoreApplication.translate('Provenance', k))}"
                    f"</b></td><td>{html.escape(v)}</td></tr>" for k, v in rows)
    return f"<table>{cells}</table>"


def message_menu(msg: Message, actions: Any, parent: QWidget | None = None,
                 text_view: QTextEdit | None = None) -> QMenu:
    """The menu of ``msg``. ``actions`` has: ``copy(msg)``, ``edit(msg)``, ``delete(msg)``, ``regenerate(msg)``,
    ``continue_reply(msg)``, ``show_version(msg, index)``, ``can_change()`` (False while the chat generates) and
    optionally ``inspect(msg)`` (show a reply in the stream inspector). ``text_view``: the message's text, when
    the right click was on it: the menu starts with Copy (the selection) and Select All, in the UI language, in
    place of Qt's own text menu."""
    menu = QMenu(parent)
    if text_view is not None:
        a = menu.addAction(QCoreApplication.translate("MessageMenu", "Copy"), text_view.copy)
        a.setShortcut(QKeySequence(QKeySequence.StandardKey.Copy))
        a.setEnabled(text_view.textCursor().hasSelection())
        a = menu.addAction(QCoreApplication.translate("MessageMenu", "Select All"), text_view.selectAll)
        a.setShortcut(QKeySequence(QKeySequence.StandardKey.SelectAll))
        menu.addSeparator()
    idle = actions.can_change()
    menu.addAction(QCoreApplication.translate("MessageMenu", "Copy (markdown)"), lambda: actions.copy(msg))
    if msg.role is Role.USER:
        a = menu.addAction(QCoreApplication.translate("MessageMenu", "Edit and resend…"), lambda: actions.edit(msg))
        a.setEnabled(idle)
    else:
        a = menu.addAction(QCoreApplication.translate("MessageMenu", "Regenerate (keeps this version)"),
                           lambda: actions.regenerate(msg))
        a.setEnabled(idle)
        a = menu.addAction(QCoreApplication.translate("MessageMenu", "Continue"), lambda: actions.continue_reply(msg))
        a.setEnabled(idle and msg.status.final and msg.stop_reason in ("user", "length", "timeout") and bool(msg.text))
        n = versions.count(msg)
        if n > 1:
            sub = menu.addMenu(QCoreApplication.translate("MessageMenu", "Versions"))
            for i in range(n):
                v = sub.addAction(f"{i + 1}/{n}", functools.partial(actions.show_version, msg, i))
                v.setCheckable(True)
                v.setChecked(i == msg.version_index)
                v.setEnabled(idle)
    branch = getattr(actions, "branch", None)
    if branch is not None:              # a new chat from the start of this one to this message
        a = menu.addAction(QCoreApplication.translate("MessageMenu", "Branch from here (new chat)"),
                           lambda: branch(msg))
        a.setEnabled(idle)
    inspect = getattr(actions, "inspect", None)
    if msg.role is Role.ASSISTANT and inspect is not None:   # the stream inspector (app.ui.inspector.dock)
        menu.addAction(QCoreApplication.translate("MessageMenu", "Inspect the stream (timings)"), lambda: inspect(msg))
    menu.addSeparator()
    a = menu.addAction(QCoreApplication.translate("MessageMenu", "Delete message"), lambda: actions.delete(msg))
    a.setEnabled(idle)
    return menu
