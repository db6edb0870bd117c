"""The stream timeline (app.core.streaming.timeline): what the inspector plots and what "Copy as JSON" gives."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from app.core.conversation import Conversation, Message, MessageStatus, Role
from app.core.streaming.generation import Generation, generate
from app.core.streaming.metrics import StreamMetrics, now
from app.core.streaming.scheduler import FairScheduler
from app.core.streaming.timeline import chunk_texts, figures, snapshot, timeline_dict, timeline_json
from app.core.types import GenerationParams
from app.engine.scripted import ScriptedEngine

pytestmark = pytest.mark.timeout(120)


def _hand_filled() -> StreamMetrics:
    m = StreamMetrics(t_request=9.0)
    m.t_slot = 10.0
    # chunk i produced at 10.1 + 0.01 i, enqueued 1 ms later, dequeued 2 ms later, painted by ticks of 2 chunks
    for i in range(6):
        t = 10.1 + 0.01 * i
        m.on_produced(t, 1)
        m.on_enqueued(t + 0.001, depth=i % 3 + 1, waited_s=0.2 if i == 4 else 0.0, n_chars=2)
        m.on_dequeued(t + 0.002)
        if i % 2:
            m.on_painted(t + 0.005, 2, 0.003 * (i + 1))
    m.t_end = 10.2
    return m


def test_snapshot_gives_ms_since_the_slot_for_every_chunk_and_tick() -> None:
    tl = snapshot(_hand_filled())
    assert tl.request == pytest.approx(-1000.0)
    assert tl.prefill == pytest.approx((0.0, 100.0))
    assert tl.produced.tolist() == pytest.approx([100 + 10 * i for i in range(6)])
    assert tl.enqueued.tolist() == pytest.approx([101 + 10 * i for i in range(6)])
    assert tl.dequeued.tolist() == pytest.approx([102 + 10 * i for i in range(6)])
    assert tl.painted.tolist() == pytest.approx([115, 115, 135, 135, 155, 155])
    assert tl.depth.tolist() == [1, 2, 3, 1, 2, 3]
    assert tl.wait.tolist() == pytest.approx([0, 0, 0, 0, 200, 0])
    assert tl.tick_at.tolist() == pytest.approx([115, 135, 155])
    assert tl.tick_cost.tolist() == pytest.approx([6, 12, 18])
    assert tl.tick_chunks.tolist() == [2, 2, 2]
    assert tl.end == pytest.approx(200.0)


def test_figures_add_gaps_latency_and_chunks_per_tick_to_the_summary() -> None:
    f = figures(_hand_filled())
    assert f["prefill_ms"] == pytest.approx(100.0)
    assert f["first_paint_ms"] == pytest.approx(15.0)
    assert f["ttft_ms"] == pytest.approx(115.0)
    assert f["gap_ms_p50"] == pytest.approx(10.0) and f["gap_ms_max"] == pytest.approx(10.0)
    assert f["latency_ms_p50"] == pytest.approx(10.0) and f["latency_ms_max"] == pytest.approx(15.0)
    assert f["chunks_per_tick_mean"] == 2 and f["chunks_per_tick_max"] == 2
    assert f["backpressure_waits"] == 1 and f["queue_high_water"] == 3
    assert f["longest_tick_ms"] == pytest.approx(18.0)


def test_timeline_json_is_complete_and_splits_the_text_into_chunks() -> None:
    m = _hand_filled()
    d = json.loads(timeline_json(m, "aabbccddeeff", reply_id=7))
    assert d["reply_id"] == 7 and d["version"] == 1
    assert d["chunks"]["text"] == ["aa", "bb", "cc", "dd", "ee", "ff"]
    assert len(d["chunks"]["painted_ms"]) == 6 and d["ticks"]["chunks"] == [2, 2, 2]
    assert d["prefill_ms"] == [0.0, 100.0]
    assert d["figures"]["ttft_ms"] == pytest.approx(115.0)


def test_a_real_generation_records_each_chunks_text_depth_and_ticks() -> None:
    """Through generate() on the scripted engine (worker thread, bounded queue): the chunks' texts, cut by
    the recorded character counts, are the reply; one depth and one wait per chunk; ticks cover all chunks."""
    engine = ScriptedEngine("Hello *world*, this is a reply in many small chunks. " * 4, tokens_per_s=0)
    engine.load()
    c = Conversation()
    c.add(Message(Role.USER, "hi"))
    reply = c.add(Message(Role.ASSISTANT, status=MessageStatus.WAITING))

    gen = Generation(reply, c)

    async def main() -> None:
        task = asyncio.ensure_future(generate(engine, FairScheduler(), c, reply, GenerationParams(max_tokens=10**4),
                                              generation=gen))
        while not task.done() or reply.pending:
            await asyncio.sleep(0.005)
            t0 = now()
            _text, n = reply.take_new()
            gen.metrics.on_painted(now(), n, now() - t0)
        assert gen.stream is not None
        await gen.stream.wait_closed()

    asyncio.run(main())
    assert reply.status is MessageStatus.DONE
    m = gen.metrics
    tl = snapshot(m)
    texts = chunk_texts(tl, reply.text)
    assert len(texts) == reply.chunks > 10
    assert "".join(texts) == reply.text
    assert len(tl.depth) == len(tl.wait) == len(tl.produced)
    # each chunk's stamps are in pipeline order (enqueued is when the put got its slot, not when it returned)
    n = len(tl.painted)
    assert (tl.produced[:n] <= tl.enqueued[:n]).all() and (tl.enqueued[:n] <= tl.dequeued[:n]).all()
    assert (tl.dequeued[:n] <= tl.painted[:n]).all()
    assert int(tl.tick_chunks.sum()) == len(tl.painted) == reply.chunks
    d = timeline_dict(m, reply.text)
    assert "".join(d["chunks"]["text"]) == reply.text


def test_enqueued_is_when_the_put_got_its_slot_even_if_the_worker_is_slow_to_go_on(monkeypatch) -> None:
    """The worker may lose the GIL right after a put; the consumer can take the chunk first. The enqueued
    stamp must still come before the dequeued one (it is the time the put got its slot, not when it returned)."""
    import threading
    import time

    from app.core.streaming.stream import ChunkQueue, TokenStream
    from app.core.types import Chunk

    metrics = StreamMetrics()
    real_put = ChunkQueue.put
    puts = 0

    def put_then_stall(self: ChunkQueue, item: object) -> tuple[int, float]:
        nonlocal puts
        result = real_put(self, item)
        if isinstance(item, Chunk):
            puts += 1
            deadline = time.monotonic() + 60
            while len(metrics.dequeued) < puts and time.monotonic() < deadline:   # the consumer took it first
                time.sleep(0.001)
        return result

    monkeypatch.setattr(ChunkQueue, "put", put_then_stall)

    def produce(_stop: threading.Event):
        for i in range(5):
            yield Chunk(f"c{i} ")

    async def main() -> None:
        stream = TokenStream(produce, metrics=metrics)
        stream.start()
        while (await stream.get_batch()) is not None:
            pass
        await stream.wait_closed()

    asyncio.run(main())
    tl = snapshot(metrics)
    assert len(tl.dequeued) == 5
    assert (tl.enqueued <= tl.dequeued).all(), (tl.enqueued - tl.dequeued).tolist()


def test_the_figures_do_not_import_numpy_ma_on_the_loop() -> None:
    """np.percentile's first call imports numpy.ma (0.1-0.5 s of the event loop, seen by the watchdog when
    the inspector first showed a reply); the figures compute percentiles without it."""
    import subprocess
    import sys

    code = ("import sys\nfrom app.core.streaming.metrics import StreamMetrics\n"
            "from app.core.streaming.timeline import figures\n"
            "m = StreamMetrics(t_request=0.0)\nm.t_slot = 0.0\n"
            "for i in range(50):\n    m.on_produced(0.1 + i / 100, 1)\n    m.on_dequeued(0.1 + i / 100)\n"
            "    m.on_painted(0.2 + i / 100, 1, 0.001)\n"
            "f = figures(m)\nassert f['gap_ms_p50'] is not None\nprint('numpy.ma' in sys.modules)\n")
    root = Path(__file__).resolve().parents[3]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=str(root))
    assert out.stdout.strip() == "False", out.stdout + out.stderr
