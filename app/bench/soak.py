"""Many replies in a row: memory and threads must not grow.

``python -m app.bench soak [--replies 100] [--tokens 1000] [--rate TOK_S]``

One conversation receives ``--replies`` replies of ``--tokens`` tokens each from the scripted engine, through
the whole path (``generate`` → coalescer → renderer, offscreen), as in a long chat session. Five warm-up replies
run first (allocator pools, Qt caches, first-use imports); then ``rss_growth_mb`` = RSS after the replies − RSS
before them (``/proc/self/statm``, MiB; budget < 20), and ``threads_leaked`` = threads after − before (must
be 0). The conversation itself (the replies' text) is kept, as the app keeps it.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import gc
import logging
from typing import Any

from app.bench._util import PaintStage, emit, qt_loop, rss_mb, thread_count, wait_until
from app.core.conversation import Conversation, Message, MessageStatus, Role
from app.core.streaming.generation import Generation, StreamSettings, generate
from app.core.streaming.metrics import StreamMetrics
from app.core.streaming.scheduler import FairScheduler
from app.core.streaming.stream import live_streams
from app.core.types import GenerationParams
from app.engine.scripted import DEFAULT_REPLY, ScriptedEngine


def _painted_all(m: StreamMetrics) -> bool:
    return len(m.painted) >= len(m.dequeued)


async def replies(engine: ScriptedEngine, sched: FairScheduler, stage: PaintStage, conv: Conversation, n: int,
                  tokens: int) -> None:
    params = GenerationParams(max_tokens=tokens)
    for i in range(n):
        conv.add(Message(Role.USER, f"Question {i}: tell me more."))
        reply = conv.add(Message(Role.ASSISTANT, status=MessageStatus.WAITING))
        gen = Generation(reply, conv)
        stage.attach(reply, gen.metrics)
        await generate(engine, sched, conv, reply, params, settings=StreamSettings(paint_grace_s=0.2),
                       generation=gen)
        m = gen.metrics
        await wait_until(functools.partial(_painted_all, m), 10.0)
        assert gen.stream is not None
        await gen.stream.wait_closed()
        stage.detach(reply)
        assert reply.status is MessageStatus.DONE, (reply.status, reply.error)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m app.bench soak")
    ap.add_argument("--replies", type=int, default=100)
    ap.add_argument("--tokens", type=int, default=1000)
    ap.add_argument("--rate", type=float, default=20000.0, help="scripted decode rate, tokens/s")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    result: dict[str, Any] = {"bench": "soak", "replies": args.replies, "tokens": args.tokens}
    with qt_loop() as loop:
        stage = PaintStage()
        engine = ScriptedEngine(DEFAULT_REPLY, tokens_per_s=args.rate, repeat=10**6)
        engine.load()
        sched = FairScheduler(engine.max_concurrency)
        conv = Conversation()
        loop.run_until_complete(replies(engine, sched, stage, conv, 5, args.tokens))
        loop.run_until_complete(asyncio.sleep(0.3))
        gc.collect()
        threads_before, rss_before = thread_count(), rss_mb()
        loop.run_until_complete(replies(engine, sched, stage, conv, args.replies, args.tokens))
        loop.run_until_complete(asyncio.sleep(0.3))    # let the last summaries settle
        gc.collect()
        threads_after, rss_after = thread_count(), rss_mb()
        result.update(paint_stage=stage.kind, rss_before_mb=rss_before, rss_after_mb=rss_after,
                      rss_growth_mb=rss_after - rss_before, threads_leaked=threads_after - threads_before,
                      live_streams=len(live_streams()),
                      text_kb=sum(len(m.text) for m in conv.messages) / 1024)
    result["budget_ok"] = bool(result["rss_growth_mb"] < 20 and result["threads_leaked"] == 0)
    emit(result)
    return 0
