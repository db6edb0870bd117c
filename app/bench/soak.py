"""Many replies in a row: memory and threads must not grow.

``python -m app.bench soak [--replies 100] [--tokens 1000] [--rate TOK_S]``

One conversation receives ``--replies`` replies of ``--tokens`` tokens each from the scripted engine, through
the whole path (the shown, styled window: ``app.bench.window_path.BenchWindow``; history in a SQLite file), as in
a long chat session. Five warm-up replies
run first (allocator pools, Qt caches, first-use imports); then ``rss_growth_mb`` = RSS after the replies − RSS
before them (``/proc/self/statm``, MiB; budget < 20), and ``threads_leaked`` = threads after − before (must
be 0). The conversation itself (the replies' text) is kept, as the app keeps it.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
from typing import Any

from app.bench._util import emit, qt_loop, rss_mb, thread_count
from app.bench.window_path import BenchWindow, bench_home
from app.core.conversation import MessageStatus
from app.core.streaming.stream import live_streams
from app.core.types import GenerationParams
from app.engine.scripted import DEFAULT_REPLY, ScriptedEngine


async def replies(window: BenchWindow, n: int, tokens: int) -> None:
    """``n`` replies of ``tokens`` tokens in the chat shown, each sent once the one before is painted."""
    params = GenerationParams(max_tokens=tokens)
    for i in range(n):
        run = await window.reply(f"Question {i}: tell me more.", params, new_chat=False)
        stream = run.generation.stream
        assert stream is not None
        await stream.wait_closed()
        assert run.reply.status is MessageStatus.DONE, (run.reply.status, run.reply.error)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m app.bench soak")
    ap.add_argument("--replies", type=int, default=100)
    ap.add_argument("--tokens", type=int, default=1000)
    ap.add_argument("--rate", type=float, default=20000.0, help="scripted decode rate, tokens/s")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    result: dict[str, Any] = {"bench": "soak", "replies": args.replies, "tokens": args.tokens}
    with bench_home() as home, qt_loop() as loop:
        engine = ScriptedEngine(DEFAULT_REPLY, tokens_per_s=args.rate, repeat=10**6)
        window = BenchWindow(engine, home)
        loop.run_until_complete(window.start())
        loop.run_until_complete(replies(window, 5, args.tokens))
        loop.run_until_complete(asyncio.sleep(0.3))
        gc.collect()
        threads_before, rss_before = thread_count(), rss_mb()
        loop.run_until_complete(replies(window, args.replies, args.tokens))
        loop.run_until_complete(asyncio.sleep(0.3))    # let the last summaries settle
        gc.collect()
        threads_after, rss_after = thread_count(), rss_mb()
        conv = window.window.session.conversation
        result.update(paint_stage="window", rss_before_mb=rss_before, rss_after_mb=rss_after,
                      rss_growth_mb=rss_after - rss_before, threads_leaked=threads_after - threads_before,
                      live_streams=len(live_streams()),
                      text_kb=sum(len(m.text) for m in conv.messages) / 1024)
        loop.run_until_complete(window.close())
    result["budget_ok"] = bool(result["rss_growth_mb"] < 20 and result["threads_leaked"] == 0)
    emit(result)
    return 0
