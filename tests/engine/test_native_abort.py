"""Stop reaches llama.cpp inside a graph: the native abort flag ends a prefill or the token being decoded at
its next graph node, and what the KV cache held before that token is kept (real bundled model)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app.core.streaming.stream import StopEvent
from app.core.types import GenerationParams
from app.engine.llama import LlamaEngine
from app.engine.native_abort import NativeAbort

PARAMS = GenerationParams(temperature=0.0, seed=1, max_tokens=40)
SAY_HI = [{"role": "user", "content": "Say hi."}]


def test_the_native_callback_returns_the_flag() -> None:
    abort = NativeAbort()
    assert abort.available
    assert abort.check() is False and not abort.is_set()
    abort.set()
    assert abort.check() is True and abort.is_set()
    abort.clear()
    assert abort.check() is False


@pytest.fixture(scope="module")
def engine(bundled_model: Path):
    e = LlamaEngine(bundled_model, n_ctx=4096)
    e.load()
    yield e
    e.unload()


def _say(engine: LlamaEngine) -> str:
    return "".join(c.text for c in engine.stream(SAY_HI, PARAMS, StopEvent()))


@pytest.mark.model
def test_stop_during_a_tokens_decode_aborts_it_and_keeps_the_cache(engine: LlamaEngine,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    before = _say(engine)
    llm = engine._llm
    stop = StopEvent()
    calls, seen = _stop_at_eval(monkeypatch, llm, stop, 6)   # Stop pressed while the 6th token is being decoded
    chunks = list(engine.stream(SAY_HI, GenerationParams(temperature=0.0, seed=1, max_tokens=200), stop))
    monkeypatch.undo()
    assert len(calls) == 6 and len(chunks) == 5       # prefill + 4 tokens decoded; the 6th eval was ended
    assert seen and "returned 2" in str(seen[0])      # llama_decode: aborted
    assert llm.n_tokens == calls[-1] > 0              # the cache before that token stays (no reset)
    assert _say(engine) == before                     # and it is consistent: the next reply is the same


@pytest.mark.model
def test_a_set_flag_alone_ends_the_next_decode(engine: LlamaEngine) -> None:
    stop = StopEvent()
    it = engine.stream(SAY_HI, PARAMS, stop)
    next(it)
    assert engine._abort is not None
    engine._abort.set()                                # llama.cpp reads the flag, not Python's event
    with pytest.raises(RuntimeError, match="returned 2"):
        next(it)
    it.close()
    assert _say(engine)                                # cleared at the next stream's start


@pytest.mark.model
def test_stop_during_prefill_through_the_native_flag(engine: LlamaEngine, monkeypatch: pytest.MonkeyPatch) -> None:
    before = _say(engine)
    llm = engine._llm
    stop = StopEvent()
    _calls, seen = _stop_at_eval(monkeypatch, llm, stop, 1)  # Stop pressed as the prompt's prefill starts
    long = [{"role": "user", "content": "Summarize: " + " ".join(f"word{i}" for i in range(800))}]
    out = list(engine.stream(long, PARAMS, stop))
    monkeypatch.undo()
    assert out == [] and seen and "returned 2" in str(seen[0])   # aborted, not finished
    assert llm.n_tokens == 0                          # prefill: llama.cpp dropped the sequence, so do we
    assert _say(engine) == before


def _stop_at_eval(monkeypatch: pytest.MonkeyPatch, llm: Any, stop: StopEvent,
                  at_call: int) -> tuple[list[int], list[BaseException]]:
    """Wrap ``llm.eval``: Stop is pressed as eval call number ``at_call`` (1-based) starts. Returns the lists it
    fills: the cache length (``n_tokens``) at each call, and the errors the calls raised."""
    calls: list[int] = []
    seen: list[BaseException] = []
    eval_ = llm.eval

    def eval_with_stop(tokens: Any) -> None:
        calls.append(llm.n_tokens)
        if len(calls) == at_call:
            stop.set()
        try:
            eval_(tokens)
        except RuntimeError as exc:
            seen.append(exc)
            raise

    monkeypatch.setattr(llm, "eval", eval_with_stop)
    return calls, seen
