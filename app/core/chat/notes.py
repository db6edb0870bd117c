"""What the window says at a message about the prompt it was part of (no Qt).

- Older messages left out of a reply's prompt because they no longer fit the context window (``Message.left_out``,
  set by ``generate`` from the engine's ``fit_context``): said at that reply, so a question like "Summarise that
  log" answered without the log is visibly so.
- A reply that ended without any text (Stop before the first token, an error, a timeout): its question is left
  out of every later prompt (``Conversation.prompt_messages``), and the window offers to send it again
  (``resend``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.core.conversation import Conversation, Message, MessageStatus, Role
from app.core.text import QT_TRANSLATE_NOOP

if TYPE_CHECKING:
    from app.core.chat.session import ChatSession

#: The link target the window puts in an unanswered reply's note ("Resend").
RESEND_LINK = "brook:resend"


#: The notes' texts, in English; the window shows them in its language (``app.ui.look.retranslate.core_text``
#: matches a note against these templates, ``%1`` a number).
LEFT_OUT_ONE = QT_TRANSLATE_NOOP(
    "Notes", "The oldest message was left out of this reply's prompt: the chat no longer fits the model's context "
    "window. Start a new chat, or paste the part that matters again.")
LEFT_OUT_MANY = QT_TRANSLATE_NOOP(
    "Notes", "The %1 oldest messages were left out of this reply's prompt: the chat no longer fits the model's "
    "context window. Start a new chat, or paste the part that matters again.")
UNANSWERED = {
    MessageStatus.STOPPED: QT_TRANSLATE_NOOP(
        "Notes", "Stopped before any reply. This question is left out of the chat from now on; Resend asks it "
        "again."),
    MessageStatus.DONE: QT_TRANSLATE_NOOP(
        "Notes", "The model ended its reply without any text. This question is left out of the chat from now on; "
        "Resend asks it again."),
}
NO_REPLY = QT_TRANSLATE_NOOP(
    "Notes", "No reply. This question is left out of the chat from now on; Resend asks it again.")
#: Said in the chat when a model load is cancelled (``app.core.errors.LoadCancelled``).
LOAD_CANCELLED = (QT_TRANSLATE_NOOP("Notes", "Loading %1 was cancelled."),
                  QT_TRANSLATE_NOOP("Notes", "Loading the model was cancelled."))


def left_out_note(msg: Message) -> str | None:
    """A sentence for a reply whose prompt left older messages out, else None."""
    n = msg.left_out
    if msg.role is not Role.ASSISTANT or n <= 0:
        return None
    return LEFT_OUT_ONE if n == 1 else LEFT_OUT_MANY.replace("%1", str(n))


def unanswered_note(msg: Message) -> str | None:
    """A sentence for a reply that ended without any text (its question is left out from now on), else None."""
    if msg.role is not Role.ASSISTANT or not msg.status.final or msg.text:
        return None
    return UNANSWERED.get(msg.status, NO_REPLY)


def message_notes(msg: Message) -> list[str]:
    """Every note for ``msg``, in the order the window shows them."""
    return [n for n in (unanswered_note(msg), left_out_note(msg)) if n]


def resend(session: ChatSession, reply: Message) -> Message | None:
    """Send the question of ``reply`` (a reply without any text) again. When ``reply`` is the chat's last
    message it is generated again in place; otherwise the question is sent anew at the end of the chat.
    Returns the reply being generated, or None (not unanswered, a reply is generating, no model)."""
    conv: Conversation = session.conversation
    if reply not in conv.messages or not conv.unanswered(reply) or not session.can_send():
        return None
    question = conv.question_of(reply)
    if question is None:
        return None
    if conv.messages[-1] is reply:
        reply.error, reply.stop_reason, reply.status = None, None, MessageStatus.WAITING
        session.listener.message_removed(conv, reply)
        session.listener.message_added(conv, reply)
        session.start_reply(conv, reply=reply)
        return reply
    return session.send(question.text)
