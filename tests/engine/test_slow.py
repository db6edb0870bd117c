"""``--slow-ms`` is an engine wrapper: it delays each text chunk of any engine, and Stop still stops at once."""

from __future__ import annotations

import threading
import time

from app.core.types import GenerationParams
from app.engine.open import EngineSpec, open_engine
from app.engine.scripted import ScriptedEngine
from app.engine.slow import SlowEngine


def test_slow_engine_delays_each_text_chunk_and_keeps_the_inner_engine() -> None:
    inner = ScriptedEngine(["a", "b", "c", "d"], tokens_per_s=0, name="inner")
    e = SlowEngine(inner, slow_ms=30)
    e.load()
    assert e.loaded and e.name == "inner" and e.max_concurrency == 1 and e.calls is inner.calls
    t0 = time.perf_counter()
    chunks = list(e.stream([], GenerationParams(), threading.Event()))
    elapsed = time.perf_counter() - t0
    assert "".join(c.text for c in chunks) == "abcd"
    assert elapsed >= 4 * 0.030                     # four text chunks, each waited for
    e.slow_ms = 0                                   # adjustable between replies
    assert "".join(c.text for c in e.stream([], GenerationParams(), threading.Event())) == "abcd"


def test_stop_ends_a_slow_stream_within_one_wait() -> None:
    e = SlowEngine(ScriptedEngine("x" * 4000, tokens_per_s=0), slow_ms=10_000)
    e.load()
    stop = threading.Event()
    it = e.stream([], GenerationParams(max_tokens=10_000), stop)
    threading.Timer(0.05, stop.set).start()
    assert list(it) == []                           # the first chunk was still being waited for


def test_open_engine_wraps_any_engine_only_when_asked() -> None:
    plain = open_engine(EngineSpec(scripted=True))
    assert isinstance(plain, ScriptedEngine)
    slow = open_engine(EngineSpec(scripted=True, slow_ms=5))
    assert isinstance(slow, SlowEngine) and isinstance(slow.inner, ScriptedEngine)
