"""What is stored about a reply describes the stored reply, whatever the timing: a Stop that leaves chunks in the
queue, a Stop in prefill, a timeout mid-stream, closing mid-reply; the timeline writer never raises when the loop
is gone; the first chunk is saved at once (a crash in the reply's first second keeps it), and a SIGKILL mid-reply
loses no finished reply."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from app.core.chat.session import ChatSession
from app.core.conversation import Conversation, Message, MessageStatus, Role
from app.core.history.store import Store
from app.core.history.timeline_writer import TimelineWriter
from app.core.streaming.generation import Generation
from app.core.streaming.metrics import StreamMetrics
from app.engine.scripted import ScriptedEngine
from tests.core.chat.test_session import Recorder
from tests.helpers import ROOT, run, until


def _stored(store: Store, reply: Message) -> tuple[str, dict | None]:
    [conv] = [store.load_conversation(c.id) for c in store.list_conversations()][:1]
    [saved] = [m for m in conv.messages if m.db_id == reply.db_id]
    assert reply.db_id is not None
    return saved.text, store.load_timeline(reply.db_id)


async def _final(session: ChatSession, store: Store, reply: Message) -> tuple[str, dict]:
    await until(lambda: reply.db_id is not None and store.load_timeline(reply.db_id) is not None)
    text, timeline = _stored(store, reply)
    assert timeline is not None
    return text, timeline


def test_a_stop_with_chunks_still_in_the_queue_stores_a_timeline_of_the_stored_text(tmp_path: Path) -> None:
    store = Store(tmp_path / "h.sqlite3")
    engine = ScriptedEngine(tokens_per_s=2000, repeat=400)
    session = ChatSession(engine, store=store, listener=Recorder())

    async def main() -> None:
        assert await session.load()
        for busy_s in (0.01, 0.03, 0.1):
            reply = session.send("go")
            assert reply is not None
            gen = session.generation_of(reply)
            assert gen is not None
            await until(lambda r=reply: r.chunks > 5)
            time.sleep(busy_s)     # a busy window: the worker fills the queue while the loop cannot take it
            left = len(gen.metrics.enqueued) - reply.chunks
            session.stop()
            text, timeline = await _final(session, store, reply)
            assert left > 0 and text == reply.text
            assert sum(timeline["chunks"]["chars"]) == len(text)
            assert len(timeline["chunks"]["produced_ms"]) == reply.chunks == reply.metrics["chunks"]
            await until(lambda: not session.generating)
        await session.shutdown()

    run(main())


def test_a_stop_in_prefill_and_a_timeout_mid_stream_store_matching_timelines(tmp_path: Path) -> None:
    store = Store(tmp_path / "h.sqlite3")
    engine = ScriptedEngine(tokens_per_s=2000, repeat=400, prefill_s=0.3)
    session = ChatSession(engine, store=store, listener=Recorder())

    async def main() -> None:
        assert await session.load()
        reply = session.send("stop me in prefill")
        assert reply is not None
        await until(lambda: reply.status is MessageStatus.PREFILL)
        session.stop()
        text, timeline = await _final(session, store, reply)
        assert text == "" and sum(timeline["chunks"]["chars"]) == 0
        await until(lambda: not session.generating and engine.active == 0)
        engine.prefill_s = 0.0
        engine.tokens_per_s = 2000
        session.settings.total_timeout_s = 0.05
        reply = session.send("time out")
        assert reply is not None
        text, timeline = await _final(session, store, reply)
        assert reply.status is MessageStatus.TIMED_OUT and text == reply.text and text
        assert sum(timeline["chunks"]["chars"]) == len(text)
        await session.shutdown()

    run(main())


def test_closing_mid_reply_stores_a_matching_timeline(tmp_path: Path) -> None:
    store = Store(tmp_path / "h.sqlite3")
    session = ChatSession(ScriptedEngine(tokens_per_s=2000, repeat=400), store=store, listener=Recorder())

    async def main() -> None:
        assert await session.load()
        reply = session.send("close while I stream")
        assert reply is not None
        await until(lambda: reply.chunks > 20)
        await session.shutdown()
        text, timeline = await _final(session, store, reply)
        assert text == reply.text and sum(timeline["chunks"]["chars"]) == len(text)

    run(main())


def _gen_with_metrics(store: Store) -> Generation:
    conv = Conversation()
    reply = Message(Role.ASSISTANT, "hello", status=MessageStatus.STOPPED)
    conv.add(reply)
    store.save_message(conv, reply)
    m = StreamMetrics()
    m.t_slot = m.t_request
    for i in range(3):
        m.on_produced(m.t_request + i * 0.01, 1)
        m.on_enqueued(m.t_request + i * 0.01, 1, 0.0, 2)
    m.t_end = m.t_request + 0.1
    return Generation(reply, conv, metrics=m)


def test_the_timeline_writer_never_raises_without_a_running_loop(tmp_path: Path, caplog) -> None:
    store = Store(tmp_path / "h.sqlite3")
    writer = TimelineWriter(store)
    gen = _gen_with_metrics(store)
    writer.save(gen)                       # no loop at all (the window closed mid-reply): written at once
    assert gen.reply.db_id is not None and store.load_timeline(gen.reply.db_id) is not None
    store.db.execute("DELETE FROM timelines")

    async def shut_executor() -> None:
        loop = asyncio.get_running_loop()
        await loop.shutdown_default_executor()
        writer.save(gen)                   # the loop's executor is shut down: written at once too

    run(shut_executor())
    assert store.load_timeline(gen.reply.db_id) is not None
    store.close()
    writer.save(gen)                       # a closed history: logged, not raised
    assert "no running event loop" not in caplog.text


def test_the_first_chunk_is_saved_at_once_not_at_the_next_autosave(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(ChatSession, "AUTOSAVE_S", 600.0)
    store = Store(tmp_path / "h.sqlite3")
    session = ChatSession(ScriptedEngine(["First", " second", " third"], tokens_per_s=2), store=store,
                          listener=Recorder())
    other = Store(tmp_path / "h.sqlite3")            # another connection: what a crash leaves on disk

    def on_disk() -> list[str]:
        return [m.text for c in other.list_conversations() for m in other.load_conversation(c.id).messages]

    async def main() -> None:
        assert await session.load()
        reply = session.send("hi")
        assert reply is not None
        await until(lambda: reply.chunks >= 1)
        assert reply.chunks == 1                      # the second chunk is 0.5 s away
        await until(lambda: on_disk() == ["hi", "First"] or reply.chunks > 1)     # saved before the 2nd chunk
        assert on_disk() == ["hi", "First"] and reply.chunks == 1
        await session.shutdown()

    run(main())


_CHILD = textwrap.dedent("""
    import asyncio, sys
    from pathlib import Path
    sys.path.insert(0, {root!r})
    from app.core.chat.session import ChatSession, SessionListener
    from app.core.history.store import Store
    from app.engine.scripted import ScriptedEngine

    ChatSession.AUTOSAVE_S = 600.0
    engine = ScriptedEngine(["Done", " reply"], tokens_per_s=0)
    session = ChatSession(engine, store=Store(Path({db!r})), listener=SessionListener())

    async def main():
        assert await session.load()
        for i in range(2):
            reply = session.send(f"question {{i}}")
            while not reply.status.final:
                await asyncio.sleep(0.005)
        engine.script, engine.tokens_per_s = ["Killed", " before", " the", " end"], 1
        reply = session.send("last")
        while reply.chunks < 1:
            await asyncio.sleep(0.005)
        await asyncio.sleep(0.05)
        print("first chunk", flush=True)
        await asyncio.sleep(60)

    asyncio.run(main())
""")


@pytest.mark.parametrize("attempt", range(3))
def test_a_sigkill_in_the_reply_s_first_second_keeps_its_first_chunk_and_every_finished_reply(
        tmp_path: Path, attempt: int) -> None:
    db = tmp_path / "h.sqlite3"
    env = {**os.environ, "BROOK_DATA_DIR": str(tmp_path / "d"), "BROOK_CONFIG_DIR": str(tmp_path / "c")}
    child = subprocess.Popen([sys.executable, "-c", _CHILD.format(root=str(ROOT), db=str(db))], env=env,
                             stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "first chunk"
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait()
    store = Store(db)
    [conv] = [store.load_conversation(c.id) for c in store.list_conversations()]
    assert [(m.text, m.status) for m in conv.messages] == [
        ("question 0", MessageStatus.DONE), ("Done reply", MessageStatus.DONE),
        ("question 1", MessageStatus.DONE), ("Done reply", MessageStatus.DONE),
        ("last", MessageStatus.DONE), ("Killed", MessageStatus.STOPPED)]
