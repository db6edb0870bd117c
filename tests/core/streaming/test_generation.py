"""generate(): status, stop, prefill stop, timeouts, engine errors, fairness, leaks (issue 3, items 1, 3-7)."""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import random
import threading
import weakref

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.conversation import Conversation, Message, MessageStatus, Role
from app.core.errors import BrookError
from app.core.streaming.generation import Generation, StreamSettings, generate
from app.core.streaming.metrics import now
from app.core.streaming.scheduler import FairScheduler
from app.core.streaming.stream import live_streams
from app.core.types import GenerationParams
from app.engine import base as engine_base
from app.engine.scripted import ScriptedEngine
from tests.helpers import run, until


def engine(script: str | list[str] | None = None, **kw) -> ScriptedEngine:  # type: ignore[no-untyped-def]
    kw.setdefault("tokens_per_s", 0)
    e = ScriptedEngine(script, **kw)
    e.load()
    return e


def chat(prompt: str = "hello") -> tuple[Conversation, Message]:
    c = Conversation()
    c.add(Message(Role.USER, prompt))
    reply = c.add(Message(Role.ASSISTANT, status=MessageStatus.WAITING))
    return c, reply


async def painter(gen: Generation, interval_s: float = 0.016) -> None:
    """What the UI's coalescer does each tick: take new text, 'render' it, stamp the paint."""
    while True:
        await asyncio.sleep(interval_s)
        t0 = now()
        _text, n = gen.reply.take_new()
        t1 = now()
        gen.metrics.on_painted(t1, n, t1 - t0)


# -- done ------------------------------------------------------------------------------------------------

@settings(max_examples=15, deadline=None)
@given(pieces=st.lists(st.text(max_size=6), min_size=1, max_size=120),
       maxsize=st.integers(min_value=1, max_value=64))
def test_the_reply_is_exactly_the_engine_output(pieces: list[str], maxsize: int) -> None:
    e = engine(pieces)
    c, reply = chat()
    run(generate(e, FairScheduler(), c, reply, GenerationParams(max_tokens=10_000),
                 settings=StreamSettings(queue_maxsize=maxsize)))
    assert reply.text == "".join(pieces)
    assert reply.status is MessageStatus.DONE and reply.stop_reason == "stop"
    assert reply.metrics is not None and reply.metrics["queue_high_water"] <= maxsize


def test_statuses_metrics_and_one_log_line_per_reply(caplog: pytest.LogCaptureFixture) -> None:
    e = engine("word " * 100, tokens_per_s=2000)
    c, reply = chat()
    seen: list[MessageStatus] = []
    updates: list[dict | None] = []

    def on_update(m: Message) -> None:
        seen.append(m.status)
        updates.append(m.metrics)

    async def main() -> None:
        gen = Generation(reply, c)
        paint = asyncio.ensure_future(painter(gen))
        await generate(e, FairScheduler(), c, reply, GenerationParams(), on_update=on_update, generation=gen)
        # the last tick paints the rest, then the summary is final and notified once more
        await until(lambda: updates[-1] is not None and updates[-1]["chunks_painted"] == updates[-1]["chunks"])
        paint.cancel()

    with caplog.at_level(logging.DEBUG, logger="brook.generation"):
        run(main())
    assert seen[0] is MessageStatus.PREFILL
    assert MessageStatus.GENERATING in seen and seen[-1] is MessageStatus.DONE
    assert reply.generation_id is not None
    m = reply.metrics
    assert m is not None
    assert m["ttft_ms"] is not None and m["first_paint_ms"] is not None and m["prefill_ms"] is not None
    assert m["decode_tokens"] == 125 and m["decode_tokens_per_s"] > 0
    assert m["chunks_painted"] == m["chunks"] and m["ticks"] >= 1
    assert updates[-1] is not None and updates[-1]["ttft_ms"] is not None   # re-notified once painted
    lines = [r for r in caplog.records if r.name == "brook.generation" and "ttft=" in r.getMessage()]
    assert len(lines) == 1
    assert "tok/s=" in lines[0].getMessage() and "queue_hw=" in lines[0].getMessage()


def test_max_tokens_gives_stop_reason_length() -> None:
    e = engine(["a"] * 50)
    c, reply = chat()
    run(generate(e, FairScheduler(), c, reply, GenerationParams(max_tokens=10)))
    assert reply.text == "a" * 10 and reply.stop_reason == "length"


# -- 3. stop ---------------------------------------------------------------------------------------------

def test_stop_reraises_keeps_partial_text_and_drops_later_chunks() -> None:
    e = engine(["x"] * 100_000, tokens_per_s=2000)
    c, reply = chat()
    sched = FairScheduler()
    gen = Generation(reply, c)

    async def main() -> tuple[str, str]:
        task = asyncio.ensure_future(generate(e, sched, c, reply, GenerationParams(max_tokens=100_000),
                                              generation=gen))
        while len(reply.text) < 50:
            await asyncio.sleep(0.005)
        task.cancel()
        text_at_stop = reply.text
        with pytest.raises(asyncio.CancelledError):
            await task
        assert gen.stream is not None
        await gen.stream.wait_closed()
        assert sched.active == 0          # slot released once the worker returned
        return text_at_stop, reply.text

    at_stop, final = run(main())
    assert final == at_stop and len(final) >= 50        # nothing after Stop reaches the message
    assert reply.status is MessageStatus.STOPPED and reply.stop_reason == "user"
    assert gen.metrics.summary().stop_latency_ms is not None


def test_cancel_while_waiting_for_the_model() -> None:
    e = engine(["x"] * 1000, tokens_per_s=500)
    sched = FairScheduler()
    c, first = chat()
    second = c.add(Message(Role.ASSISTANT))
    gen = Generation(first, c)

    async def main() -> None:
        t1 = asyncio.ensure_future(generate(e, sched, c, first, GenerationParams(), generation=gen))
        await asyncio.sleep(0.02)
        t2 = asyncio.ensure_future(generate(e, sched, c, second, GenerationParams()))
        await asyncio.sleep(0.02)
        assert second.status is MessageStatus.WAITING and sched.waiting == 1
        t2.cancel()
        with pytest.raises(asyncio.CancelledError):
            await t2
        assert second.status is MessageStatus.STOPPED and sched.waiting == 0
        t1.cancel()
        with pytest.raises(asyncio.CancelledError):
            await t1
        assert gen.stream is not None
        await gen.stream.wait_closed()
    run(main())


class GatedPrefill:
    """A scripted engine whose prefill lasts until the test opens ``gate`` (uninterruptible, like llama.cpp's)."""

    def __init__(self, inner: ScriptedEngine) -> None:
        self.inner = inner
        self.name = inner.name
        self.gate = threading.Event()
        self.in_prefill = threading.Event()

    def stream(self, messages, params, stop):  # type: ignore[no-untyped-def]
        self.in_prefill.set()
        self.gate.wait()
        self.in_prefill.clear()
        yield from self.inner.stream(messages, params, stop)


def test_stop_during_prefill_goes_idle_at_once_and_holds_the_slot() -> None:
    e = GatedPrefill(engine(["y"] * 20, tokens_per_s=1000))
    sched = FairScheduler()
    c, first = chat()
    second = c.add(Message(Role.ASSISTANT))
    gen = Generation(first, c)

    async def main() -> None:
        task = asyncio.ensure_future(generate(e, sched, c, first, GenerationParams(), generation=gen))
        await until(e.in_prefill.is_set)             # inside the (uninterruptible) prefill
        assert first.status is MessageStatus.PREFILL
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task                               # the UI is idle while prefill still runs
        assert first.status is MessageStatus.STOPPED and first.text == ""
        assert gen.stream is not None and gen.stream.alive and e.in_prefill.is_set()
        assert sched.active == 1                     # ... holding the engine slot
        later = asyncio.ensure_future(generate(e, sched, c, second, GenerationParams()))
        await until(lambda: sched.waiting == 1)
        assert second.status is MessageStatus.WAITING  # waits for the slot ...
        e.gate.set()                                 # ... until the first prefill ends
        await later
        assert second.status is MessageStatus.DONE and second.text == "y" * 20
        assert not gen.stream.alive
        assert e.inner.max_active == 1

    run(main())


def test_100_start_stop_cycles_leave_nothing_behind() -> None:
    e = engine(["z"] * 100_000, tokens_per_s=3000, prefill_s=0.0)
    sched = FairScheduler()
    rng = random.Random(3)
    gc.collect()
    threads_before = threading.active_count()
    fds_before = len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else 0
    refs: list[weakref.ref] = []

    async def main() -> None:
        for _ in range(100):
            c, reply = chat()
            gen = Generation(reply, c)
            task = asyncio.ensure_future(generate(e, sched, c, reply, GenerationParams(max_tokens=100_000),
                                                  settings=StreamSettings(queue_maxsize=rng.randint(1, 64)),
                                                  generation=gen))
            await asyncio.sleep(rng.choice([0, 0, 0.0005, 0.002, 0.01]))
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            if gen.stream is not None:
                refs.append(weakref.ref(gen.stream))
                refs.append(weakref.ref(gen.stream.queue))   # type: ignore[arg-type]
                await gen.stream.wait_closed()
            assert reply.status is MessageStatus.STOPPED
        assert sched.active == 0 and sched.waiting == 0

    run(main())
    gc.collect()
    assert threading.active_count() == threads_before
    if fds_before:
        assert len(os.listdir("/proc/self/fd")) <= fds_before
    assert live_streams() == []
    assert all(r() is None for r in refs)     # no stream or queue is kept alive by the core
    assert e.active == 0


# -- 5. timeouts -----------------------------------------------------------------------------------------

def test_first_token_timeout() -> None:
    e = engine(["a"] * 5, prefill_s=0.5)
    c, reply = chat()
    run(generate(e, FairScheduler(), c, reply, GenerationParams(),
                 settings=StreamSettings(first_token_timeout_s=0.1, total_timeout_s=10)))
    assert reply.status is MessageStatus.TIMED_OUT and reply.stop_reason == "timeout"
    assert reply.error is not None and "first-token timeout" in reply.error and "0.1 s" in reply.error


def test_total_timeout_keeps_the_text() -> None:
    e = engine(["b"] * 10_000, tokens_per_s=200)
    c, reply = chat()
    run(generate(e, FairScheduler(), c, reply, GenerationParams(max_tokens=10_000),
                 settings=StreamSettings(first_token_timeout_s=5, total_timeout_s=0.3)))
    assert reply.status is MessageStatus.TIMED_OUT
    assert reply.error is not None and "total timeout" in reply.error
    assert 10 < len(reply.text) < 10_000


# -- 6. engine errors ------------------------------------------------------------------------------------

def test_engine_error_mid_stream_is_a_clear_error_and_the_engine_is_usable_again() -> None:
    e = engine(["c"] * 20, fail_after=7)
    sched = FairScheduler()
    c, reply = chat()

    async def main() -> None:
        await generate(e, sched, c, reply, GenerationParams())
        assert reply.status is MessageStatus.ERROR and reply.stop_reason == "error"
        assert reply.error == "Scripted failure after 7 chunks."
        assert reply.text == "c" * 7
        e.fail_after = None
        again = c.add(Message(Role.ASSISTANT))
        await generate(e, sched, c, again, GenerationParams())
        assert again.status is MessageStatus.DONE and again.text == "c" * 20
    run(main())


def test_an_unexpected_exception_is_reported_not_raised() -> None:
    e = engine(["d"] * 5, fail_after=2, fail_with=lambda n: KeyError("vocab"))
    c, reply = chat()
    run(generate(e, FairScheduler(), c, reply, GenerationParams()))
    assert reply.status is MessageStatus.ERROR
    assert reply.error is not None and reply.error.startswith("The model failed while generating: KeyError")


def test_an_engine_timeouterror_is_an_error_not_a_timeout() -> None:
    e = engine(["d"] * 5, fail_after=1, fail_with=lambda n: TimeoutError("read timed out"))
    c, reply = chat()
    run(generate(e, FairScheduler(), c, reply, GenerationParams()))
    assert reply.status is MessageStatus.ERROR and "read timed out" in (reply.error or "")


def test_engine_not_loaded() -> None:
    e = ScriptedEngine(["a"])
    c, reply = chat()
    run(generate(e, FairScheduler(), c, reply, GenerationParams()))
    assert reply.status is MessageStatus.ERROR and reply.error == "The model is not loaded yet."


def test_every_engine_error_is_a_brook_error() -> None:
    """The window shows a ``BrookError``'s own message (``_fail``); any other exception gets a generic one."""
    errors = [v for v in vars(engine_base).values() if isinstance(v, type) and v.__name__.endswith("Error")]
    assert {c.__name__ for c in errors} >= {"EngineError", "ModelNotFoundError", "InvalidModelError",
                                             "ContextOverflowError", "EngineNotLoadedError"}
    assert all(issubclass(c, BrookError) for c in errors)


# -- 7. fairness -----------------------------------------------------------------------------------------

def test_one_generation_at_a_time_in_fifo_order_saying_waiting() -> None:
    e = engine(["w"] * 10, tokens_per_s=500)
    sched = FairScheduler(e.max_concurrency)
    c = Conversation()
    replies = [c.add(Message(Role.ASSISTANT)) for _ in range(4)]
    order: list[int] = []
    statuses: dict[int, list[MessageStatus]] = {r.id: [] for r in replies}

    def on_update(m: Message) -> None:
        statuses[m.id].append(m.status)
        if m.status is MessageStatus.PREFILL:
            order.append(m.id)

    async def main() -> None:
        tasks = []
        for r in replies:
            tasks.append(asyncio.ensure_future(generate(e, sched, c, r, GenerationParams(), on_update=on_update)))
            await asyncio.sleep(0)
        await asyncio.gather(*tasks)

    run(main())
    assert order == [r.id for r in replies]
    assert e.max_active == 1
    for r in replies[1:]:
        assert statuses[r.id][0] is MessageStatus.WAITING
    assert all(r.status is MessageStatus.DONE and r.text == "w" * 10 for r in replies)


def test_a_higher_limit_runs_generations_together() -> None:
    e = engine(["v"] * 30, tokens_per_s=300, max_concurrency=3)
    sched = FairScheduler(e.max_concurrency)
    c = Conversation()
    replies = [c.add(Message(Role.ASSISTANT)) for _ in range(3)]

    async def main() -> None:
        await asyncio.gather(*(generate(e, sched, c, r, GenerationParams()) for r in replies))
    run(main())
    assert e.max_active == 3


def test_prompt_excludes_the_reply_itself() -> None:
    e = engine(["ok"])
    c, reply = chat("what is 2+2?")
    run(generate(e, FairScheduler(), c, reply, GenerationParams()))
    assert e.calls[-1] == [{"role": "user", "content": "what is 2+2?"}]
