"""Notes at a message (issue 10, items 2 and 4): which replies get one, and what it says."""

from __future__ import annotations

import pytest

from app.core.chat.notes import left_out_note, message_notes, unanswered_note
from app.core.conversation import Message, MessageStatus, Role


@pytest.mark.parametrize("status, words", [(MessageStatus.STOPPED, "Stopped before any reply"),
                                           (MessageStatus.ERROR, "No reply"), (MessageStatus.TIMED_OUT, "No reply"),
                                           (MessageStatus.DONE, "without any text")])
def test_a_reply_without_text_offers_resend(status: MessageStatus, words: str) -> None:
    note = unanswered_note(Message(Role.ASSISTANT, "", status=status))
    assert note is not None and words in note and "left out" in note and "Resend" in note


@pytest.mark.parametrize("msg", [Message(Role.ASSISTANT, "partial", status=MessageStatus.STOPPED),
                                 Message(Role.ASSISTANT, "", status=MessageStatus.GENERATING),
                                 Message(Role.ASSISTANT, "", status=MessageStatus.PREFILL),
                                 Message(Role.USER, "")])
def test_no_note_for_replies_with_text_or_still_running(msg: Message) -> None:
    assert message_notes(msg) == []


def test_left_out_counts() -> None:
    one = Message(Role.ASSISTANT, "x", metrics={"left_out": 1})
    many = Message(Role.ASSISTANT, "x", metrics={"left_out": 6})
    assert one.left_out == 1 and "The oldest message was left out" in (left_out_note(one) or "")
    assert "The 6 oldest messages were left out" in (left_out_note(many) or "")
    assert left_out_note(Message(Role.ASSISTANT, "x")) is None
