"""What a streaming reply's consumer costs the loop thread: ``python -m app.bench consumer [--seconds S]``.

A ``ScriptedEngine`` produces 4-character chunks at 100, 1,000 and 5,000 chunks/s (``--rates``) for ``--seconds``
each; ``generate`` (worker thread → bounded queue → the consumer coroutine appending to the ``Message``) runs on a
Qt + qasync loop with no window, so what the loop thread spends (``time.thread_time``) is the consumer's alone —
the wake-ups of the loop, the batches, the appends. Each rate runs twice, alternating, in the same process: with
the consumer paced (``stream.BATCH_INTERVAL_S``: a fast producer's chunks are taken once per interval) and
unpaced (the interval 0: the loop is woken for every chunk it waits for). Per rate: ``cpu_share`` of the loop
thread (CPU seconds ÷ wall seconds), ``batches`` taken and ``paced_vs_unpaced`` (the ratio of their CPU shares).
No budget: the cost shows in the render bench's frames and end-to-end ratio at 1,000-5,000 tokens/s, where the
loop also renders. Prints one JSON object as its last line.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from app.bench._util import emit, qt_loop


async def _one(rate: float, seconds: float) -> dict[str, Any]:
    from app.core.conversation import Conversation, Message, MessageStatus, Role
    from app.core.streaming.generation import Generation, generate
    from app.core.streaming.scheduler import FairScheduler
    from app.core.types import GenerationParams
    from app.engine.scripted import ScriptedEngine

    n = max(2, int(rate * seconds))
    engine = ScriptedEngine(["abcd"] * n, tokens_per_s=rate)
    engine.load()
    conv = Conversation()
    conv.messages.append(Message(Role.USER, "hi"))
    reply = Message(Role.ASSISTANT, status=MessageStatus.WAITING)
    conv.messages.append(reply)
    gen = Generation(reply, conv)
    cpu0, t0 = time.thread_time(), time.perf_counter()
    await generate(engine, FairScheduler(), conv, reply, GenerationParams(max_tokens=n + 1), generation=gen)
    cpu, wall = time.thread_time() - cpu0, time.perf_counter() - t0
    assert reply.text == "abcd" * n, "the reply lost text"
    return {"cpu_s": cpu, "wall_s": wall, "cpu_share": cpu / wall, "batches": len(set(gen.metrics.dequeued)),
            "chunks": n}


def main(argv: list[str]) -> int:
    import app.core.streaming.stream as stream

    ap = argparse.ArgumentParser(prog="python -m app.bench consumer")
    ap.add_argument("--rates", default="100,1000,5000", help="chunks per second (comma-separated)")
    ap.add_argument("--seconds", type=float, default=3.0, help="seconds of producing per run")
    args = ap.parse_args(argv)
    stream.tune_switch_interval()                # the GIL hand-over the app runs with
    paced_interval = stream.BATCH_INTERVAL_S
    result: dict[str, Any] = {"bench": "consumer", "batch_interval_ms": paced_interval * 1e3}
    with qt_loop() as loop:
        for rate in [float(r) for r in args.rates.split(",") if r.strip()]:
            runs: dict[str, dict[str, Any]] = {}
            for mode, interval in (("unpaced", 0.0), ("paced", paced_interval)):
                stream.BATCH_INTERVAL_S = interval
                try:
                    runs[mode] = loop.run_until_complete(_one(rate, args.seconds))
                finally:
                    stream.BATCH_INTERVAL_S = paced_interval
            ratio = runs["paced"]["cpu_share"] / runs["unpaced"]["cpu_share"]
            result[f"rate_{rate:g}"] = {**runs, "paced_vs_unpaced": ratio}
            print(f"{rate:g} chunks/s: loop thread {runs['unpaced']['cpu_share']:.1%} unpaced "
                  f"({runs['unpaced']['batches']} batches), {runs['paced']['cpu_share']:.1%} paced "
                  f"({runs['paced']['batches']} batches): {ratio:.2f}x", flush=True)
    emit(result)
    return 0
