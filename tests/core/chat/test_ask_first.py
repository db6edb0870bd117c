"""The model is asked before the window's own send work (``ask_now``): its prefill runs while the messages'
widgets are made and saved. Scripted engine, a real SQLite history in a temporary folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.chat.session import ChatSession, SessionListener
from app.core.conversation import Conversation, Message, MessageStatus, Role
from app.core.history.store import Store
from app.engine.scripted import ScriptedEngine
from tests.helpers import run, until

pytestmark = pytest.mark.timeout(60)


class SeesTheRequest(SessionListener):
    """At each ``message_added``: the message's role and status, and how many engine slots were held."""

    def __init__(self) -> None:
        self.session: ChatSession | None = None
        self.added: list[tuple[Role, MessageStatus, int]] = []

    def message_added(self, conv: Conversation, msg: Message) -> None:
        assert self.session is not None
        self.added.append((msg.role, msg.status, self.session.scheduler.active))


def test_the_model_is_asked_before_the_messages_are_shown_or_saved(tmp_path: Path) -> None:
    store = Store(tmp_path / "h.sqlite3")
    engine = ScriptedEngine("word " * 100, tokens_per_s=300, prefill_s=0.05)
    seen = SeesTheRequest()
    session = seen.session = ChatSession(engine, store=store, listener=seen)

    async def main() -> None:
        assert await session.load()
        reply = session.send("first")
        assert reply is not None
        # both widgets were made with the model's slot already held and the reply in prefill
        assert seen.added == [(Role.USER, MessageStatus.DONE, 1), (Role.ASSISTANT, MessageStatus.PREFILL, 1)]
        await until(lambda: len(reply.text) > 20)
        session.new_chat()
        other = session.send("second")                 # the model is busy: this one waits in line, as before
        assert other is not None
        assert seen.added[2:] == [(Role.USER, MessageStatus.DONE, 1), (Role.ASSISTANT, MessageStatus.WAITING, 1)]
        await until(lambda: reply.status.final and other.status.final)
        assert reply.text == other.text == "word " * 100
        conv_id = session.conversation.id
        assert conv_id is not None
        assert [m.role for m in store.load_conversation(conv_id).messages] == [Role.USER, Role.ASSISTANT]
        await session.shutdown()

    run(main())


def test_a_stop_in_the_same_loop_turn_as_send_frees_the_model_and_stores_the_stopped_reply(tmp_path: Path) -> None:
    store = Store(tmp_path / "h.sqlite3")
    engine = ScriptedEngine("word " * 400, tokens_per_s=2000, prefill_s=0.05)
    session = ChatSession(engine, store=store)

    async def main() -> None:
        assert await session.load()
        reply = session.send("stopped before its run began")
        assert reply is not None
        session.stop()                                  # its task is cancelled before its first step
        await until(lambda: session.scheduler.active == 0 and engine.active == 0)
        assert reply.status is MessageStatus.STOPPED and reply.stop_reason == "user"
        reply_id, conv_id = reply.db_id, session.conversation.id
        assert reply_id is not None and conv_id is not None
        await until(lambda: store.load_timeline(reply_id) is not None)
        stored = store.load_conversation(conv_id).messages[-1]
        assert stored.status is MessageStatus.STOPPED and stored.text == ""
        again = session.send("and now a whole reply")   # the model is free for the next request
        assert again is not None
        await until(lambda: again.status.final)
        assert again.status is MessageStatus.DONE and again.text == "word " * 400
        await session.shutdown()

    run(main())
