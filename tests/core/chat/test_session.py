"""The chat session without Qt: send, stop, regenerate, switch conversation, delete, engine switch (scripted
engine, a real SQLite history in a temporary folder)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from app.core.chat.session import ChatSession, ModelState, NoticeKind, SessionListener, title_for
from app.core.conversation import Conversation, MessageStatus, Role
from app.core.history.store import Store
from app.core.streaming.generation import Generation
from app.core.streaming.metrics import now
from app.core.types import GenerationParams
from app.engine.base import InvalidModelError
from app.engine.scripted import ScriptedEngine
from tests.helpers import run, until

pytestmark = pytest.mark.timeout(60)


class Recorder(SessionListener):
    """Records what a view would be told, and paints like the render tick (stamps each paint)."""

    def __init__(self) -> None:
        self.events: list[tuple[str, object]] = []
        self.notices: list[str] = []
        self.shown: list[Conversation] = []

    def conversation_shown(self, conv: Conversation) -> None:
        self.shown.append(conv)

    def reply_started(self, gen: Generation) -> None:
        self.events.append(("started", gen.reply.id))

    def reply_stopping(self, gen: Generation) -> None:
        self.events.append(("stopping", gen.reply.text))

    def reply_ended(self, gen: Generation) -> None:
        self.events.append(("ended", gen.reply.status))

    def notice(self, text: str, kind: NoticeKind) -> None:
        self.notices.append(text)


def make(engine: ScriptedEngine, store: Store | None = None) -> tuple[ChatSession, Recorder]:
    rec = Recorder()
    return ChatSession(engine, store=store, listener=rec), rec


def test_send_then_stop_keeps_the_partial_reply_saved_once_as_stopped(tmp_path: Path) -> None:
    store = Store(tmp_path / "h.sqlite3")
    session, rec = make(ScriptedEngine(tokens_per_s=200, repeat=50), store)

    async def main() -> None:
        assert await session.load()
        reply = session.send("Tell me a story")
        assert reply is not None and session.generating and session.send("again") is None
        await until(lambda: len(reply.text) > 40)
        session.stop()
        assert not session.generating and reply.status is MessageStatus.STOPPED and reply.stop_reason == "user"
        text_at_stop = reply.text
        gen = session.generation_of(reply)
        assert gen is not None and gen.stream is not None
        await gen.stream.wait_closed()
        await asyncio.sleep(0.05)
        assert reply.text == text_at_stop                      # nothing after Stop reached the message
        assert rec.events.count(("ended", MessageStatus.STOPPED)) == 1
        assert ("stopping", text_at_stop) in rec.events
        saved = store.load_conversation(session.conversation.id or 0)
        assert [m.role for m in saved.messages] == [Role.USER, Role.ASSISTANT]
        assert saved.messages[1].status is MessageStatus.STOPPED and saved.messages[1].text == text_at_stop
        assert saved.title == "Tell me a story"
        await session.shutdown()

    run(main())



def test_a_reply_keeps_generating_in_a_chat_that_is_not_shown(tmp_path: Path) -> None:
    store = Store(tmp_path / "h.sqlite3")
    engine = ScriptedEngine("word " * 200, tokens_per_s=400)
    session, rec = make(engine, store)

    async def main() -> None:
        assert await session.load()
        reply = session.send("A long essay, please")
        assert reply is not None
        conv_id = session.conversation.id
        assert conv_id is not None
        await until(lambda: len(reply.text) > 20)
        session.new_chat()                                      # switch away mid-reply
        assert reply.status is MessageStatus.GENERATING and session.busy_conversations() == {conv_id}
        assert not session.generating                            # the new chat can send
        other = session.send("meanwhile")                        # waits for the model, then answers
        assert other is not None
        await until(lambda: reply.status.final and other.status.final)
        assert reply.status is MessageStatus.DONE and reply.text == "word " * 200
        assert session.busy_conversations() == set()
        back = session.open_conversation(conv_id)
        assert back is not None and back.messages[-1].text == "word " * 200
        assert store.load_conversation(conv_id).messages[-1].status is MessageStatus.DONE
        assert rec.shown[-1] is back
        await session.shutdown()

    run(main())


def test_coming_back_while_it_generates_shows_the_same_live_reply(tmp_path: Path) -> None:
    store = Store(tmp_path / "h.sqlite3")
    session, _rec = make(ScriptedEngine("x" * 4000, tokens_per_s=300), store)

    async def main() -> None:
        assert await session.load()
        reply = session.send("go")
        assert reply is not None
        conv = session.conversation
        await until(lambda: reply.chunks > 3)
        session.new_chat()
        assert session.open_conversation(conv.id or 0) is conv    # the in-memory one, not a stale copy
        assert session.generating
        session.stop()
        assert reply.status is MessageStatus.STOPPED
        await session.shutdown()

    run(main())


def test_stop_reaches_the_worker_before_the_view_paints_and_the_reply_is_saved(tmp_path: Path) -> None:
    """The model stops first: painting what arrived and saving the reply (milliseconds of window work) come after
    the worker's stop event is set, not before it."""
    seen: list[bool] = []

    class Stopping(Recorder):
        def reply_stopping(self, gen: Generation) -> None:
            assert gen.stream is not None
            seen.append(gen.stream.stop_event.is_set())

    session = ChatSession(ScriptedEngine(tokens_per_s=200, repeat=50), store=Store(tmp_path / "h.sqlite3"),
                          listener=Stopping())

    async def main() -> None:
        assert await session.load()
        reply = session.send("Tell me a story")
        assert reply is not None
        await until(lambda: len(reply.text) > 40)
        session.stop()
        assert seen == [True]
        gen = session.generation_of(reply)
        assert gen is not None and gen.stream is not None and gen.metrics.t_stop is not None
        await gen.stream.wait_closed()
        assert reply.status is MessageStatus.STOPPED
        await session.shutdown()

    run(main())


def test_deleting_a_chat_stops_its_reply_and_undo_restores_it(tmp_path: Path) -> None:
    store = Store(tmp_path / "h.sqlite3")
    session, _rec = make(ScriptedEngine("y" * 4000, tokens_per_s=300), store)

    async def main() -> None:
        assert await session.load()
        reply = session.send("to be deleted")
        assert reply is not None
        conv_id = session.conversation.id or 0
        await until(lambda: reply.chunks > 2)
        deleted = session.delete_conversation(conv_id)
        assert deleted is not None and reply.status is MessageStatus.STOPPED
        assert store.list_conversations() == [] and session.conversation.messages == []
        session.restore_conversation(deleted)
        (info,) = store.list_conversations()
        assert [m.text for m in store.load_conversation(info.id).messages] == ["to be deleted", reply.text]
        await session.shutdown()

    run(main())


def test_switching_to_a_bad_engine_keeps_the_old_one() -> None:
    class Broken(ScriptedEngine):
        def load(self, progress=None) -> None:  # type: ignore[no-untyped-def, override]
            raise InvalidModelError("broken on purpose")

    old = ScriptedEngine(["ok"], tokens_per_s=0, name="old")
    session, rec = make(old)

    def opener(path: str) -> ScriptedEngine:
        if path == "refused":
            raise InvalidModelError("not a GGUF")
        return Broken(name="broken")

    session.opener = opener

    async def main() -> None:
        assert await session.load()
        assert not await session.open_model("refused")
        assert session.engine is old and old.loaded                  # refused before anything was unloaded
        assert not await session.open_model("broken.gguf")
        assert session.engine is old and old.loaded and session.model_state is ModelState.IDLE
        assert any("Kept old" in n for n in rec.notices)
        reply = session.send("still there?")
        assert reply is not None
        await until(lambda: reply.status.final)
        assert reply.text == "ok"
        await session.shutdown()

    run(main())


def test_live_and_summary_tokens_per_s_are_one_function() -> None:
    """A server that sends 4 tokens per event: the rate counts tokens, not events."""
    from app.core.streaming.metrics import StreamMetrics

    m = StreamMetrics()
    t = now()
    for i in range(11):
        m.on_produced(t + i * 0.1, 4)
    assert m.tokens_per_s() == pytest.approx(40.0)
    assert m.summary().decode_tokens_per_s == m.tokens_per_s()


def test_titles_come_from_the_first_line() -> None:
    assert title_for("\n  Hello there\nsecond") == "Hello there"
    assert title_for("x" * 100) == "x" * 60 + "…"
    assert title_for("   ") == "New chat"


def test_session_works_without_a_history(tmp_path: Path) -> None:
    session, _rec = make(ScriptedEngine(["a", "b"], tokens_per_s=0))

    async def main() -> None:
        assert await session.load()
        reply = session.send("hi", GenerationParams(max_tokens=5))
        assert reply is not None
        await until(lambda: reply.status.final)
        assert reply.text == "ab" and session.conversation.id is None
        await session.shutdown()

    run(main())


def test_a_reply_deleted_right_after_it_ended_stays_deleted(tmp_path: Path) -> None:
    """The reply's final figures arrive after it ended (once painted, or after the paint grace): they must not
    save a reply that was deleted meanwhile."""
    from app.core.chat import session_ops

    store = Store(tmp_path / "h.sqlite3")
    session, _rec = make(ScriptedEngine(["Hi", "!"], tokens_per_s=0), store)

    async def main() -> None:
        assert await session.load()
        reply = session.send("hello")
        assert reply is not None
        await until(lambda: reply.status.final and not session.generating)
        figures_before = reply.metrics
        assert session_ops.delete(session, reply)
        await until(lambda: reply.metrics is not figures_before)   # the late, final figures came
        await session.shutdown()

    run(main())
    conv = store.list_conversations()[0]
    assert [m.text for m in store.load_conversation(conv.id).messages] == ["hello"]
