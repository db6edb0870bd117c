"""The message menu's operations over a chat session: copy, edit and resend,
delete, regenerate keeping versions, continue, switch versions (``app.core.chat.session_ops``). Also the ‹ 1/2 ›
version switcher and the provenance tooltip shown on a reply (``decorate``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QPoint, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QMenu, QWidget

from app.core.chat import session_ops
from app.core.chat.session import ChatSession
from app.core.conversation import Message, Role
from app.ui.messages.menu import message_menu, provenance_html


class MessageActions(QObject):
    """What a message's menu does, on ``session``.

    Args:
        session: the chat session the operations run on.
        parent: the widget the edit dialog opens over (and this object's Qt parent).
        inspect: shows a reply in the stream inspector; None where there is no inspector.
    """

    def __init__(self, session: ChatSession, parent: QWidget,
                 inspect: Callable[[Message], None] | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.parent_widget = parent
        self._inspect = inspect

    def can_change(self) -> bool:
        return not self.session.generating and not self.session.closing

    def is_last(self, msg: Message) -> bool:
        msgs = self.session.conversation.messages
        return bool(msgs) and msgs[-1] is msg

    # operations ------------------------------------------------------------------------------------------
    def copy(self, msg: Message) -> None:
        QGuiApplication.clipboard().setText(msg.text)

    def edit(self, msg: Message) -> Message | None:
        from app.ui.dialogs.edit_message import EditMessageDialog

        dlg = EditMessageDialog(msg.text, self.parent_widget)
        if not dlg.exec() or not dlg.text().strip():
            return None
        text = dlg.text()
        return session_ops.edit_and_resend(self.session, msg, text)

    def branch(self, msg: Message | None) -> bool:
        """A new chat with this chat's messages up to ``msg`` (None: all, a duplicate), shown. True when made."""
        return session_ops.branch(self.session, msg) is not None

    def delete(self, msg: Message) -> bool:
        return session_ops.delete(self.session, msg)

    def regenerate(self, msg: Message) -> Message | None:
        return session_ops.regenerate(self.session) if self.is_last(msg) else None

    def continue_reply(self, msg: Message) -> Message | None:
        return session_ops.continue_reply(self.session) if self.is_last(msg) else None

    def show_version(self, msg: Message, index: int) -> bool:
        return session_ops.show_version(self.session, msg, index)

    def inspect(self, msg: Message) -> bool:
        """Show ``msg`` in the stream inspector (``app.ui.inspector.dock``); False when there is none."""
        if self._inspect is None:
            return False
        self._inspect(msg)
        return True

    # the view ----------------------------------------------------------------------------------------------
    def open_menu(self, widget: QWidget, msg: Message, pos: QPoint, text_view: Any = None) -> QMenu:
        """Pop up ``msg``'s menu at ``pos`` (in ``widget``'s coordinates; a right click on the message's text
        gives its ``text_view`` and ``pos`` in the view's viewport). Returns the menu."""
        menu = message_menu(msg, self, widget, text_view)
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        where = text_view.viewport().mapToGlobal(pos) if text_view is not None else widget.mapToGlobal(pos)
        menu.popup(where)
        return menu

    def decorate(self, widget: Any) -> None:
        """Give a message widget its menu, its provenance tooltip and (replies with versions) ‹ k/n ›."""
        msg = widget.message
        if not widget.property("brookMenu"):
            widget.setProperty("brookMenu", True)
            widget.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
            widget.customContextMenuRequested.connect(lambda pos, w=widget: self.open_menu(w, w.message, pos))
            for text in (getattr(widget, "view", None), getattr(widget, "plain", None)):
                if text is not None:        # the text itself: Brook's menu with Copy / Select All, not Qt's
                    text.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
                    text.customContextMenuRequested.connect(
                        lambda pos, w=widget, t=text: self.open_menu(w, w.message, pos, t))
            if hasattr(widget, "version_requested"):
                widget.version_requested.connect(lambda k, w=widget: self.show_version(w.message, k))
        if msg.role is Role.ASSISTANT and msg.status.final:
            tip = provenance_html(msg)
            if tip:
                widget.who.setToolTip(tip)
                widget.figures.setToolTip(tip)
        widget.update_status()          # the ‹ k/n › switcher is part of the status (MessageWidget)
