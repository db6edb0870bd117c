"""What a person does to the messages of the shown chat, on top of the chat session (``app.core.chat.session``):
regenerate keeping versions, continue a reply, edit and resend, delete, switch versions, and the message typed
while a reply streams (queued, sent when it ends).

Plain functions over a ``ChatSession`` (no Qt): each changes the conversation and the history through
``app.core.chat.versions`` / ``app.core.chat.message_ops``, tells the view through the session's listener, and starts
the
reply with ``ChatSession.start_reply`` and the chat's own parameters (``app.core.chat.presets.chat_params``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.core.chat import versions
from app.core.chat.message_ops import delete_message, edit_message
from app.core.chat.presets import chat_params
from app.core.conversation import Conversation, Message, MessageStatus, Role
from app.core.types import GenerationParams

if TYPE_CHECKING:
    from app.core.chat.session import ChatSession


def reply_params(session: ChatSession) -> GenerationParams:
    """The next reply's sampling parameters: the shown chat's preset (else the settings'), the loaded model file's
    sampling defaults (``app.core.model_settings``), then the chat's own overrides."""
    return chat_params(session.conversation, session.settings.generation, session.model_settings())


def _replace_view(session: ChatSession, conv: Conversation, msg: Message) -> None:
    """Have the view draw ``msg`` afresh (its text changed under it)."""
    session.listener.message_removed(conv, msg)
    session.listener.message_added(conv, msg)


def regenerate(session: ChatSession, params: GenerationParams | None = None) -> Message | None:
    """A new version of the shown chat's last reply; the old one is kept (‹1/2›). Returns the reply, or None
    when the last message is not a finished reply, a reply is generating or no model is loaded."""
    conv = session.conversation
    if not session.can_send() or not conv.messages or conv.messages[-1].role is not Role.ASSISTANT:
        return None
    reply = conv.messages[-1]
    versions.begin_new_version(reply)
    _replace_view(session, conv, reply)
    session.start_reply(conv, reply=reply, params=params or reply_params(session))
    return reply


def continue_reply(session: ChatSession, params: GenerationParams | None = None) -> Message | None:
    """The model goes on from the shown chat's last reply (stopped, cut at the length limit or timed out), in the
    same message. Returns the reply, or None when there is nothing to continue."""
    conv = session.conversation
    if not session.can_send() or not conv.messages:
        return None
    reply = conv.messages[-1]
    if reply.role is not Role.ASSISTANT or not reply.text or not reply.status.final \
            or reply.status is MessageStatus.ERROR:
        return None
    _replace_view(session, conv, reply)
    session.start_reply(conv, reply=reply, params=params or reply_params(session))
    return reply


def edit_and_resend(session: ChatSession, msg: Message, text: str,
                    params: GenerationParams | None = None) -> Message | None:
    """Replace user message ``msg``'s text, drop what followed it, and ask the model again. Returns the new reply
    (None when a reply is generating or no model is loaded). Raises ``ValueError`` for an empty text."""
    conv = session.conversation
    if not session.can_send():
        return None
    edit_message(session.store, conv, msg, text)
    session.listener.conversation_shown(conv)
    gen = session.start_reply(conv, params=params or reply_params(session))
    return gen.reply


def branch(session: ChatSession, upto: Message | None = None) -> Conversation | None:
    """A new chat holding the shown chat's messages up to and including ``upto`` (None: all of them, a
    duplicate), with its system prompt, preset and sampling; saved and shown. The original is unchanged. Not
    while the chat generates, nor without a history store. Returns the new chat (None when refused)."""
    import copy
    from dataclasses import fields as dc_fields

    conv, store = session.conversation, session.store
    if store is None or session.generating or not conv.messages:
        return None
    if upto is not None and upto not in conv.messages:
        return None
    kept = conv.messages if upto is None else conv.messages[:conv.messages.index(upto) + 1]
    word = "copy" if upto is None else "branch"
    new = Conversation(title=f"{conv.title} ({word})", system_prompt=conv.system_prompt, preset=conv.preset,
                       params=copy.deepcopy(conv.params))
    store.create_conversation(new)
    skip = {"id", "content", "generation_id"}
    for m in kept:
        twin = Message(m.role, m.text, **{f.name: copy.deepcopy(getattr(m, f.name)) for f in dc_fields(Message)
                                          if f.init and f.name not in skip and not f.name.startswith("_")
                                          and f.name not in ("role", "db_id")})
        new.add(twin)
        store.save_message(new, twin)
    session.listener.history_changed()
    session.open_conversation(int(new.id or 0))
    return new


def delete(session: ChatSession, msg: Message) -> bool:
    """Delete ``msg`` from the shown chat (not while the chat generates). Returns True when deleted."""
    conv = session.conversation
    if session.generating or msg not in conv.messages:
        return False
    delete_message(session.store, conv, msg)
    session.listener.message_removed(conv, msg)
    return True


def show_version(session: ChatSession, msg: Message, index: int) -> bool:
    """Show version ``index`` of reply ``msg`` and save which one is shown (the next reply follows from it)."""
    conv = session.conversation
    if session.generating or not versions.show_version(msg, index):
        return False
    if session.store is not None:
        session.store.save_message(conv, msg)
    _replace_view(session, conv, msg)
    return True


class SendQueue:
    """Messages typed while the shown chat's reply generates: kept in order and sent, one at a time, as soon as
    the chat is idle (``pump`` is called when a reply ends). Never silently dropped: ``pending`` shows them."""

    def __init__(self, session: ChatSession) -> None:
        self.session = session
        self.pending: list[tuple[Conversation, str]] = []       # (conversation, text)

    def pump(self) -> Message | None:
        """Send the next queued message of the shown chat if it is idle. Returns the reply started, if any."""
        if self.session.generating or not self.session.can_send():
            return None
        for i, (conv, text) in enumerate(self.pending):
            if conv is self.session.conversation:
                del self.pending[i]
                return self.session.send(text, reply_params(self.session))
        return None
