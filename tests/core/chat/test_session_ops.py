"""Edit/resend, regenerate with versions, continue, delete and the send queue on the chat session keep the stored
chat consistent after a restart (scripted engine, real SQLite history)."""

from __future__ import annotations

from pathlib import Path

import pytest

session_mod = pytest.importorskip("app.core.chat.session")

from app.core.chat import session_ops, versions  # noqa: E402
from app.core.conversation import MessageStatus, Role  # noqa: E402
from app.core.history.store import Store  # noqa: E402
from app.engine.scripted import ScriptedEngine  # noqa: E402
from tests.helpers import run, until  # noqa: E402

pytestmark = pytest.mark.timeout(60)


def test_regenerate_edit_continue_delete_survive_a_restart(tmp_path: Path) -> None:
    store = Store(tmp_path / "h.sqlite3")
    session = session_mod.ChatSession(ScriptedEngine("Hello there.", tokens_per_s=0), store=store)

    async def main() -> int:
        assert await session.load()
        first = session.send("hi")
        await until(lambda: first.status.final)
        again = session_ops.regenerate(session)
        assert again is first and versions.count(first) == 2
        await until(lambda: first.status.final)
        assert first.text == "Hello there." and versions.label(first) == "2/2"
        assert session_ops.show_version(session, first, 0) and versions.label(first) == "1/2"

        first.stop_reason = "length"                       # pretend it was cut: continue it
        cont = session_ops.continue_reply(session)
        assert cont is first
        await until(lambda: first.status.final)
        assert first.text == "Hello there.Hello there." and len(session.conversation.messages) == 2

        session.send("second question")
        await until(lambda: not session.generating)
        user = session.conversation.messages[0]
        reply = session_ops.edit_and_resend(session, user, "hi, edited")
        assert reply is not None
        await until(lambda: reply.status.final)
        assert [m.text for m in session.conversation.messages] == ["hi, edited", "Hello there."]
        assert session_ops.delete(session, reply)
        return session.conversation.id or 0

    conv_id = run(main())
    store.close()
    loaded = Store(tmp_path / "h.sqlite3").load_conversation(conv_id)
    assert [(m.role, m.text) for m in loaded.messages] == [(Role.USER, "hi, edited")]


def test_a_message_typed_while_streaming_is_queued_then_sent(tmp_path: Path) -> None:
    session = session_mod.ChatSession(ScriptedEngine(tokens_per_s=300, repeat=5), store=Store(tmp_path / "h.db"))
    queue = session_ops.SendQueue(session)

    async def main() -> None:
        assert await session.load()
        r1 = session.send("first")
        assert r1 is not None and session.generating
        queue.pending.append((session.conversation, "second"))     # typed while the reply streams
        assert queue.pump() is None and [t for _c, t in queue.pending] == ["second"]
        await until(lambda: r1.status.final)
        r2 = queue.pump()
        assert r2 is not None and queue.pending == []
        await until(lambda: r2.status is MessageStatus.DONE)
        assert [m.text for m in session.conversation.messages if m.role is Role.USER] == ["first", "second"]

    run(main())


def test_new_chats_take_the_settings_and_each_chat_keeps_its_own(tmp_path: Path) -> None:
    from app.core.chat.presets import chat_params
    from app.core.settings import AppSettings
    from app.core.types import GenerationParams

    settings = AppSettings(system_prompt="Be brief.", preset="Precise",
                           generation=GenerationParams(temperature=0.15, top_k=20, top_p=0.9, min_p=0.1,
                                                       repeat_penalty=1.05, seed=3))
    session = session_mod.ChatSession(ScriptedEngine("ok", tokens_per_s=0), settings, Store(tmp_path / "h.db"))

    async def main() -> None:
        assert await session.load()
        first = session.conversation
        assert (first.system_prompt, first.preset, first.params) == ("Be brief.", "Precise", {"temperature": 0.15,
                                                                                             "seed": 3})
        reply = session.send("hi")
        await until(lambda: reply.status.final)
        assert reply.params["temperature"] == 0.15 and reply.params["seed"] == 3
        session.settings.generation = GenerationParams(temperature=1.0)    # later defaults: new chats only
        session.settings.system_prompt = "Be long."
        assert chat_params(first, session.settings.generation).temperature == 0.15
        again = session.send("and again")                # the chat keeps its own parameters
        await until(lambda: again.status.final)
        assert again.params["temperature"] == 0.15
        second = session.new_chat()
        assert second.system_prompt == "Be long." and chat_params(second).temperature == 1.0

    run(main())
