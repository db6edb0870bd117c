"""Editing a chat's messages: edit a user message (and drop what followed, to resend from there), delete one.

Plain data plus the history file (``store`` may be ``None``: nothing is saved). The chat session calls these
and then starts the reply; the window calls the session. Every change is saved at once, so the chat reopens
exactly as it was left.
"""

from __future__ import annotations

from typing import Any

from app.core.conversation import Conversation, Message, Role


def edit_message(store: Any, conv: Conversation, msg: Message, text: str) -> list[Message]:
    """Replace ``msg``'s text with ``text`` and remove every later message of ``conv`` (their answers no longer
    follow from it). Returns the removed messages. Raises ``ValueError`` for a message not in ``conv``, or a
    blank ``text`` for a user message."""
    idx = _index(conv, msg)
    if msg.role is Role.USER and not text.strip():
        raise ValueError("A message cannot be empty.")
    removed = conv.messages[idx + 1:]
    del conv.messages[idx + 1:]
    msg.set_text(text)
    msg.versions, msg.version_index = None, 0
    if store is not None:
        for m in removed:
            if m.db_id is not None:
                store.delete_message(m.db_id)
                m.db_id = None
        store.save_message(conv, msg)
    return removed


def delete_message(store: Any, conv: Conversation, msg: Message) -> None:
    """Remove ``msg`` (with every version of it) from ``conv`` and the history. Raises ``ValueError`` when it is
    not in ``conv``."""
    conv.messages.pop(_index(conv, msg))
    if store is not None and msg.db_id is not None:
        store.delete_message(msg.db_id)
        msg.db_id = None


def _index(conv: Conversation, msg: Message) -> int:
    for i, m in enumerate(conv.messages):
        if m is msg:
            return i
    raise ValueError("The message is not in this chat.")
