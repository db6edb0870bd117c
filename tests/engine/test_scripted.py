"""ScriptedEngine: deterministic script, deadline pacing, prefill, failure injection, byte-level output."""

from __future__ import annotations

import threading
import time

import pytest

from app.core.types import Chunk, GenerationParams
from app.engine import scripted
from app.engine.base import Engine, EngineError, EngineNotLoadedError
from app.engine.scripted import DEFAULT_REPLY, ScriptedEngine, split_tokens

pytestmark = pytest.mark.timeout(30)


def loaded(*a, **kw) -> ScriptedEngine:  # type: ignore[no-untyped-def]
    e = ScriptedEngine(*a, **kw)
    e.load()
    return e


def collect(e: ScriptedEngine, params: GenerationParams | None = None) -> list[Chunk]:
    return list(e.stream([{"role": "user", "content": "hi"}], params or GenerationParams(max_tokens=10**6),
                         threading.Event()))


def test_is_an_engine_and_replays_its_script() -> None:
    e = loaded(tokens_per_s=0)
    assert isinstance(e, Engine)
    chunks = collect(e)
    assert "".join(c.text for c in chunks) == DEFAULT_REPLY == e.text
    assert chunks[-1].finish_reason == "stop"
    assert [c.text for c in chunks[:-1]] == split_tokens(DEFAULT_REPLY)
    assert e.n_calls == 1 and e.calls[-1] == [{"role": "user", "content": "hi"}]


def test_load_reports_progress_and_unload() -> None:
    e = ScriptedEngine()
    seen: list[float] = []
    e.load(seen.append)
    assert seen[0] == 0.0 and seen[-1] == 1.0 and e.loaded
    e.unload()
    assert not e.loaded
    with pytest.raises(EngineNotLoadedError):
        collect(e)


class _Clock:
    """Stands in for the ``time`` module inside ``app.engine.scripted``: time moves only when waited on."""

    def __init__(self) -> None:
        self.t = 100.0

    def perf_counter(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        self.t += seconds


class _OversleepingStop:
    """A stop event that is never set and whose ``wait`` oversleeps by 1 ms, as on a busy machine."""

    def __init__(self, clock: _Clock) -> None:
        self.clock = clock

    def is_set(self) -> bool:
        return False

    def wait(self, timeout: float) -> bool:
        self.clock.t += timeout + 0.001
        return False


def test_deadline_pacing_does_not_drift(monkeypatch: pytest.MonkeyPatch) -> None:
    """Token i is due at t0 + i/rate: a late wake-up delays that token only, it does not add up."""
    clock = _Clock()
    monkeypatch.setattr(scripted, "time", clock)
    e = loaded(["t"] * 60, tokens_per_s=100)
    stamps = [clock.t for _ in e.stream([], GenerationParams(), _OversleepingStop(clock))]  # type: ignore[arg-type]
    assert len(stamps) == 61
    lateness = [t - (100.0 + i / 100) for i, t in enumerate(stamps[:60])]
    assert min(lateness) >= -1e-9
    assert max(lateness) <= 0.001 + 1e-9        # one oversleep at most (sleep-based pacing: 59 of them)


def test_prefill_delay_before_the_first_token() -> None:
    e = loaded(["a", "b"], tokens_per_s=0, prefill_s=0.15)
    t0 = time.perf_counter()
    it = e.stream([], GenerationParams(), threading.Event())
    first = next(it)
    assert first.text == "a" and time.perf_counter() - t0 >= 0.14
    assert e.active == 1
    list(it)
    assert e.active == 0


def test_max_tokens_and_repeat() -> None:
    e = loaded(["x", "y"], tokens_per_s=0, repeat=5)
    assert "".join(c.text for c in collect(e)) == "xy" * 5
    chunks = collect(e, GenerationParams(max_tokens=3))
    assert [c.text for c in chunks] == ["x", "y", "x"] and chunks[-1].finish_reason == "length"


def test_failure_injection() -> None:
    e = loaded(["a"] * 10, tokens_per_s=0, fail_after=4)
    got: list[str] = []
    with pytest.raises(EngineError, match="after 4 chunks"):
        for c in e.stream([], GenerationParams(), threading.Event()):
            got.append(c.text)
    assert got == ["a"] * 4 and e.active == 0
    e2 = loaded(["a"] * 10, tokens_per_s=0, fail_after=0, fail_with=lambda n: OSError("disk"))
    with pytest.raises(OSError, match="disk"):
        collect(e2)


def test_stop_returns_within_one_token_interval() -> None:
    e = loaded(["s"] * 1000, tokens_per_s=1 / 3600)   # one token an hour: only a wait that Stop wakes can end it
    stop = threading.Event()
    it = e.stream([], GenerationParams(max_tokens=1000), stop)
    next(it)                                           # the first token is due at once
    threading.Timer(0.01, stop.set).start()
    assert list(it) == []
    assert e.last_stop_t is not None


def test_byte_chunks_are_decoded_by_the_engine_without_fffd() -> None:
    text = "héllo 世界 🎉👍🏽"
    e = loaded(text, tokens_per_s=0, byte_chunks=1)
    chunks = collect(e)
    out = "".join(c.text for c in chunks)
    assert out == text and "\ufffd" not in out
    assert any(c.text == "" for c in chunks[:-1])   # pieces inside a character give empty text


def test_raw_bytes_are_split_inside_characters() -> None:
    text = "中文 🎉"
    e = loaded(text, tokens_per_s=0, raw_bytes=2)
    chunks = collect(e)
    raws = [c.raw for c in chunks if c.raw]
    assert b"".join(raws) == text.encode()
    assert any(_splits_a_char(r) for r in raws)
    assert all(c.text == "" for c in chunks)


def _splits_a_char(b: bytes) -> bool:
    try:
        b.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def test_mixed_script_items() -> None:
    e = loaded(["a", b"\xe4\xb8", Chunk("", 1, None, b"\xad"), Chunk("!", 2)], tokens_per_s=0)
    chunks = collect(e)
    assert chunks[1].raw == b"\xe4\xb8" and chunks[3].n_tokens == 2
    assert e.text == "a中!"                   # b"\xe4\xb8" + b"\xad" is one character, as the stream delivers it
    assert loaded(["x", b"\xe4\xb8"]).text == "x\ufffd"   # cut off for good at the end


def test_text_is_what_the_stream_delivers() -> None:
    from app.core.streaming.stream import TokenStream
    from tests.helpers import run

    e = loaded(["a", b"\xe4\xb8", Chunk("", 1, None, b"\xad"), Chunk("!", 2), b"\xf0\x9f"], tokens_per_s=0)

    async def main() -> str:
        stream = TokenStream(lambda stop: e.stream([], GenerationParams(), stop))
        stream.start()
        out = "".join([tc.chunk.text async for tc in stream])
        await stream.wait_closed()
        return out
    assert run(main()) == e.text == "a中!\ufffd"
