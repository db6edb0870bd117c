"""A long chat keeps working: the oldest messages are left out of the prompt to fit the context window."""

from __future__ import annotations

import logging
import threading

import pytest

from app.core.types import GenerationParams
from app.engine.base import ContextOverflowError
from app.engine.llama import LlamaEngine

pytestmark = [pytest.mark.model]
PARAMS = GenerationParams(temperature=0.0, seed=1, max_tokens=16)


@pytest.fixture(scope="module")
def small_engine(bundled_model):
    e = LlamaEngine(bundled_model, n_ctx=512)
    e.load()
    yield e
    e.unload()


def _history(n: int) -> list[dict[str, str]]:
    msgs = [{"role": "system", "content": "You are terse."}]
    for i in range(n):
        msgs.append({"role": "user", "content": f"Question {i}: " + "tell me about rivers " * 20})
        msgs.append({"role": "assistant", "content": f"Answer {i}: " + "rivers flow to the sea " * 20})
    msgs.append({"role": "user", "content": "Say OK."})
    return msgs


def test_fit_context_keeps_system_and_newest_messages(small_engine, caplog) -> None:
    msgs = _history(10)
    with caplog.at_level(logging.WARNING, logger="brook.engine.llama"):
        fitted = small_engine.fit_context(msgs, PARAMS)
    assert fitted[0] == msgs[0] and fitted[-1] == msgs[-1]
    assert 2 < len(fitted) < len(msgs)
    assert fitted[1:] == msgs[len(msgs) - len(fitted) + 1:]          # a contiguous, most recent run
    used = sum(small_engine.count_tokens(m["content"]) + 8 for m in fitted)
    assert used <= 512 - 16
    assert "left out" in caplog.text


def test_long_chat_still_gets_a_reply(small_engine) -> None:
    chunks = list(small_engine.stream(_history(10), PARAMS, threading.Event()))
    assert "".join(c.text for c in chunks).strip()


def test_a_single_message_longer_than_the_window_is_a_clear_error(small_engine) -> None:
    huge = [{"role": "user", "content": "word " * 2000}]
    with pytest.raises(ContextOverflowError, match="context window"):
        list(small_engine.stream(huge, PARAMS, threading.Event()))


def test_stop_during_prefill_returns_at_once_and_leaves_the_model_consistent(bundled_model) -> None:
    import time

    engine = LlamaEngine(bundled_model, n_ctx=4096)
    engine.load()
    try:
        def say() -> str:
            return "".join(c.text for c in engine.stream([{"role": "user", "content": "Say hi."}], PARAMS,
                                                         threading.Event()))

        before = say()
        long = [{"role": "user", "content": "Summarize: " + " ".join(f"word{i}" for i in range(800))}]
        stop = threading.Event()
        out: list = []
        worker = threading.Thread(target=lambda: out.extend(engine.stream(long, PARAMS, stop)))
        worker.start()
        time.sleep(0.5)                       # well inside a prefill of ~2,400 tokens (seconds on a CPU)
        assert worker.is_alive()
        stop.set()
        worker.join()
        assert out == []
        # the prefill was aborted, not finished: llama.cpp dropped the sequence and the engine reset its count
        # (a finished prefill leaves the ~2,400 prompt tokens in the KV cache). The latency: app.bench stop.
        assert engine._llm.n_tokens == 0
        assert say() == before                 # the aborted prefill left no stale KV cache behind
    finally:
        engine.unload()


def _counting_renders(engine: LlamaEngine) -> list[int]:
    """Wrap the engine's chat-template rendering with a counter (a list of one int)."""
    chat = engine._prompt
    assert chat is not None
    calls = [0]
    render = chat._render

    def counted(messages):
        calls[0] += 1
        return render(messages)

    chat._render = counted  # type: ignore[method-assign]
    return calls


def test_a_reply_after_its_fit_renders_the_chat_template_once(bundled_model) -> None:
    e = LlamaEngine(bundled_model, n_ctx=512)
    e.load()
    try:
        calls = _counting_renders(e)
        msgs = [{"role": "user", "content": "Say OK."}]
        fitted = e.fit_context(msgs, PARAMS)
        assert e.prompt_tokens(fitted) == fitted.prompt_tokens == e.prompt_tokens(msgs)
        calls[0] = 0
        fitted = e.fit_context(msgs, PARAMS)
        text = "".join(c.text for c in e.stream(fitted, PARAMS, threading.Event()))
        assert text.strip() and calls[0] == 1                 # measured and sent: the same rendering
        calls[0] = 0
        list(e.stream(msgs, PARAMS, threading.Event()))       # unfitted: fitted inside, still rendered once
        assert calls[0] == 1
        calls[0] = 0
        e.fit_context([{"role": "user", "content": "Say no."}], PARAMS)
        list(e.stream(fitted, PARAMS, threading.Event()))     # a fit of other messages is not reused
        assert calls[0] == 2
    finally:
        e.unload()
