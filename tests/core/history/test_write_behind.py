"""A reply's saves written behind: on the history's writer thread, in order, never read stale, redone on failure."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

from app.core.conversation import Conversation, Message, MessageStatus, Role
from app.core.history.search import search
from app.core.history.store import Store


def _chat(store: Store) -> tuple[Conversation, Message]:
    conv = Conversation()
    store.save_message(conv, conv.add(Message(Role.USER, "tell me")))
    reply = conv.add(Message(Role.ASSISTANT, status=MessageStatus.GENERATING))
    store.save_message(conv, reply)
    return conv, reply


def _text(store: Store, conv: Conversation) -> str:
    """The saved text of ``conv``'s second message."""
    assert conv.id is not None
    return store.load_conversation(conv.id).messages[1].text


def _block_writer(store: Store) -> tuple[threading.Event, threading.Event]:
    """Hold the writer thread in a job until the returned ``release`` is set (``started``: it is held)."""
    started, release = threading.Event(), threading.Event()

    def hold(_db: sqlite3.Connection) -> None:
        started.set()
        assert release.wait(30)

    assert store.behind is not None
    store.behind.submit(hold, lambda exc: None)
    assert started.wait(30)
    return started, release


def _failed(exc: BaseException) -> None:
    raise AssertionError(f"write behind failed: {exc}")


def test_a_save_behind_returns_before_it_is_written_and_a_read_waits_for_it(tmp_path: Path) -> None:
    store = Store(tmp_path / "h.sqlite3")
    conv, reply = _chat(store)
    _, release = _block_writer(store)
    reply.append("the whole answer")
    reply.status = MessageStatus.DONE
    store.save_message(conv, reply, behind=_failed)      # returns although the writer is held
    assert store.behind is not None and store.behind.pending == 2
    raw = sqlite3.connect(tmp_path / "h.sqlite3")
    row = raw.execute("SELECT content, status FROM messages WHERE id = ?", (reply.db_id,)).fetchone()
    assert row == ("", "generating")
    threading.Timer(0.2, release.set).start()
    loaded = store.load_conversation(conv.id or 0)       # waits for the write handed over before it
    assert [m.text for m in loaded.messages] == ["tell me", "the whole answer"]
    assert loaded.messages[1].status is MessageStatus.DONE
    assert [h.message_id for h in store.search("whole")] == [reply.db_id]   # indexed: it is finished
    store.close()


def test_saves_behind_are_written_in_order_on_the_writer_thread(tmp_path: Path) -> None:
    store = Store(tmp_path / "h.sqlite3")
    conv, reply = _chat(store)
    threads: set[str] = set()
    assert store.behind is not None
    store.behind.submit(lambda _db: threads.add(threading.current_thread().name), _failed)
    for word in ("one ", "two ", "three"):
        reply.append(word)
        store.save_message(conv, reply, behind=_failed)
    reply.status = MessageStatus.DONE
    store.save_message(conv, reply, behind=_failed)
    store.close()                                       # writes what is pending, ends the thread
    assert threads == {"brook-history-writer"}
    assert store.behind.written == 5
    again = Store(tmp_path / "h.sqlite3")
    [_, saved] = again.load_conversation(conv.id or 0).messages
    assert (saved.text, saved.status) == ("one two three", MessageStatus.DONE)
    assert len(search(again.db, "three")) == 1
    again.close()


def test_a_failed_write_behind_is_given_back_and_later_writes_still_run(tmp_path: Path) -> None:
    store = Store(tmp_path / "h.sqlite3")
    conv, reply = _chat(store)
    failures: list[BaseException] = []
    assert store.behind is not None

    def broken(db: sqlite3.Connection) -> None:
        db.execute("INSERT INTO no_such_table VALUES (1)")

    store.behind.submit(broken, failures.append)
    reply.append("kept")
    store.save_message(conv, reply, behind=_failed)
    store.behind.flush()
    assert len(failures) == 1 and isinstance(failures[0], sqlite3.OperationalError)
    assert _text(store, conv) == "kept"
    store.close()


def test_an_insert_or_a_memory_history_is_written_at_once(tmp_path: Path) -> None:
    memory = Store(":memory:")
    assert memory.behind is None
    conv, reply = _chat(memory)
    reply.append("now")
    memory.save_message(conv, reply, behind=_failed)
    assert _text(memory, conv) == "now"
    store = Store(tmp_path / "h.sqlite3")
    conv = Conversation()
    new = conv.add(Message(Role.USER, "a new message"))
    store.save_message(conv, new, behind=_failed)        # no row yet: inserted at once, its id known
    assert new.db_id is not None and conv.id is not None
    assert store.behind is not None and store.behind.written == 0
    store.close()


def test_a_reply_whose_write_behind_fails_is_saved_on_the_loop_instead(tmp_path: Path) -> None:
    import asyncio

    from app.core.chat.session import ChatSession
    from app.engine.scripted import ScriptedEngine
    from tests.core.chat.test_session import Recorder, run, until

    store = Store(tmp_path / "h.sqlite3")
    assert store.behind is not None
    tried: list[str] = []

    def cannot_open(db: sqlite3.Connection) -> None:
        tried.append("open")
        raise sqlite3.OperationalError("disk I/O error")

    store.behind._configure = cannot_open           # every write behind fails
    session = ChatSession(ScriptedEngine("An answer that must not be lost.", tokens_per_s=0), store=store,
                          listener=Recorder())

    async def main() -> None:
        assert await session.load()
        reply = session.send("question")
        assert reply is not None
        await until(lambda: reply.status.final and not session.generating)
        await until(lambda: bool(tried))
        await asyncio.sleep(0.05)                     # the redo, posted to the loop, runs
        saved = store.load_conversation(session.conversation.id or 0).messages[-1]
        assert (saved.text, saved.status) == ("An answer that must not be lost.", MessageStatus.DONE)
        await session.shutdown()

    run(main())
    assert store.behind.written == 0
    store.close()


def test_a_write_behind_settles_before_it_runs_unless_something_waits_for_it(tmp_path: Path) -> None:
    """A reply's end is written after its last frames (``SETTLE_S``), not beside them; a read, ``flush`` or
    ``close`` writes at once what waits (no timed assert: the settling here is 10 minutes)."""
    from app.core.history.write_behind import SETTLE_S, WriteBehind

    assert 0 < SETTLE_S <= 0.5                          # a frame or two and the final render; not a long loss
    ran: list[str] = []
    writer = WriteBehind(str(tmp_path / "w.sqlite3"), lambda _db: None, settle_s=600.0)
    writer.submit(lambda _db: ran.append("first"), _failed)
    waiting = threading.Event()
    writer.submit(lambda _db: waiting.set(), _failed)
    assert not waiting.wait(0.3) and ran == []          # settling (600 s)
    flushed = threading.Event()
    threading.Thread(target=lambda: (writer.flush(), flushed.set()), daemon=True).start()
    assert flushed.wait(30) and ran == ["first"] and waiting.is_set()     # flushed: written at once
    writer.submit(lambda _db: ran.append("later"), _failed)
    assert not writer._hurry.wait(0.3) and ran == ["first"]   # the hurry ended with the jobs it was for
    closed = threading.Event()
    threading.Thread(target=lambda: (writer.close(), closed.set()), daemon=True).start()
    assert closed.wait(30) and ran == ["first", "later"]
