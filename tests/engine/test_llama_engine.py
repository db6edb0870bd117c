"""LlamaEngine on the real bundled model (SmolLM2-135M-Instruct GGUF): UTF-8, stop, bad files, context
overflow, unload (issue 3, items 3 and 8)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from app.core.conversation import Conversation, Message, MessageStatus, Role
from app.core.streaming.generation import generate
from app.core.streaming.scheduler import FairScheduler
from app.core.streaming.stream import TokenStream
from app.core.types import GenerationParams
from app.engine.base import ContextOverflowError, EngineNotLoadedError, InvalidModelError, ModelNotFoundError
from app.engine.llama import LlamaEngine
from tests.helpers import run

pytestmark = [pytest.mark.model]


@pytest.fixture(scope="module")
def engine(bundled_model: Path):  # type: ignore[no-untyped-def]
    e = LlamaEngine(bundled_model, n_ctx=1024)
    e.load()
    yield e
    e.unload()


@pytest.mark.parametrize("prompt", [
    "请用中文写三句话介绍长城。",
    "Reply only with emoji: 🎉🚀👍🏽🇫🇷 — then say why.",
    "日本語で挨拶してください。😊",
])
def test_no_split_character_becomes_fffd(engine: LlamaEngine, prompt: str) -> None:
    c = Conversation()
    c.add(Message(Role.USER, prompt))
    reply = c.add(Message(Role.ASSISTANT))
    run(generate(engine, FairScheduler(), c, reply, GenerationParams(max_tokens=96, seed=7, temperature=0.9)))
    assert reply.status is MessageStatus.DONE, reply.error
    assert reply.text
    assert "\ufffd" not in reply.text


def test_stop_within_one_token(engine: LlamaEngine) -> None:
    async def main() -> tuple[int, int]:
        stream = TokenStream(lambda stop: engine.stream([{"role": "user", "content": "Count from 1 to 500."}],
                                                        GenerationParams(max_tokens=512, seed=1), stop),
                             maxsize=4)
        stream.start()
        n = 0
        async for _ in stream:
            n += 1
            if n == 10:
                at_stop = len(stream.metrics.produced)
                stream.request_stop()
                break
        await stream.wait_closed()
        return at_stop, len(stream.metrics.produced)
    at_stop, total = run(main())
    assert total - at_stop <= 1


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ModelNotFoundError, match="does not exist"):
        LlamaEngine(tmp_path / "nope.gguf").load()
    with pytest.raises(ModelNotFoundError, match="not a file"):
        LlamaEngine(tmp_path).load()


def test_not_a_gguf(tmp_path: Path) -> None:
    p = tmp_path / "model.gguf"
    p.write_bytes(b"PK\x03\x04 this is a zip file" * 10)
    with pytest.raises(InvalidModelError, match="not a GGUF model"):
        LlamaEngine(p).load()


def test_header_only_file(tmp_path: Path) -> None:
    p = tmp_path / "tiny.gguf"
    p.write_bytes(b"GGUF\x03\x00")
    with pytest.raises(InvalidModelError, match="truncated"):
        LlamaEngine(p).load()


def test_truncated_model(tmp_path: Path, bundled_model: Path) -> None:
    p = tmp_path / "cut.gguf"
    with bundled_model.open("rb") as src:
        p.write_bytes(src.read(5 << 20))                  # the first 5 MB of ~100 MB
    with pytest.raises(InvalidModelError) as info:
        LlamaEngine(p).load()
    assert "cut.gguf" in str(info.value) and "truncated, corrupt" in str(info.value)


def test_corrupt_metadata(tmp_path: Path, bundled_model: Path) -> None:
    data = bytearray(bundled_model.read_bytes()[: 8 << 20])
    data[24:4096] = b"\xff" * (4096 - 24)                  # garbage right after the header
    p = tmp_path / "corrupt.gguf"
    p.write_bytes(bytes(data))
    with pytest.raises(InvalidModelError, match="could not load the model"):
        LlamaEngine(p).load()


def test_context_overflow(bundled_model: Path) -> None:
    e = LlamaEngine(bundled_model, n_ctx=256)
    e.load()
    try:
        long_prompt = "Tell me about the sea. " * 200          # well over 256 tokens
        with pytest.raises(ContextOverflowError, match="context window"):
            list(e.stream([{"role": "user", "content": long_prompt}], GenerationParams(max_tokens=8),
                          threading.Event()))
        # through generate: a clear error on the reply, and the engine still works afterwards. One loop for both,
        # as in the app: the engine slot is released on the loop once the first worker has exited (a second
        # asyncio.run would find it still held when the first loop closed before that).
        c = Conversation()
        c.add(Message(Role.USER, long_prompt))
        reply = c.add(Message(Role.ASSISTANT))
        c2 = Conversation()
        c2.add(Message(Role.USER, "Hi"))
        ok = c2.add(Message(Role.ASSISTANT))

        async def main() -> None:
            sched = FairScheduler()
            await generate(e, sched, c, reply, GenerationParams(max_tokens=8))
            assert reply.status is MessageStatus.ERROR and "context window" in (reply.error or "")
            await generate(e, sched, c2, ok, GenerationParams(max_tokens=8, seed=1))
        run(main())
        assert ok.status is MessageStatus.DONE and ok.text
    finally:
        e.unload()


def test_unload_frees_and_is_idempotent(bundled_model: Path) -> None:
    e = LlamaEngine(bundled_model, n_ctx=512)
    e.load()
    assert e.loaded and e.metadata
    llm = e._llm
    e.unload()
    e.unload()
    assert not e.loaded and e.metadata == {}
    assert getattr(llm, "_ctx", None) is None or getattr(llm._ctx, "ctx", None) is None   # llama.cpp freed it
    with pytest.raises(EngineNotLoadedError):
        list(e.stream([{"role": "user", "content": "hi"}], GenerationParams(), threading.Event()))
