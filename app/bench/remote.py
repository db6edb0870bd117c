"""Brook's remote (HTTP/SSE) path vs a raw httpx-sse read loop, same server, same run.

``python -m app.bench remote [--rounds 5] [--events 10000] [--rate 5000] [--stops 20]``

A local SSE server (``app.bench.sse_server``, 127.0.0.1, in this process) sends ``--events`` chat-completion
chunk events at ``--rate`` events/s (a deadline schedule), then ``[DONE]``. Per round, alternating:

- **raw**: ``httpx`` + ``httpx_sse.connect_sse`` reading every event and decoding its JSON (what any client
  must do at least);
- **ours**: ``RemoteEngine`` through the app's pipeline: ``generate`` (scheduler, TokenStream worker thread,
  bounded queue) on a qasync loop, painted by the app's coalescer into the app's markdown view offscreen.

Throughput is content events received ÷ (request sent → the stream has ended: ``[DONE]`` read). Stop:
``--stops`` replies on an endless stream at the same rate are stopped after a random 50-300 ms the way the UI
does (``task.cancel()``);
``stop_to_disconnect_ms`` is the click → the server seeing the client's FIN (both stamped with
``perf_counter`` in this process); ``chunks_after_stop`` counts chunks that reached the reply or were painted
after the click (must be 0). Budgets (issue 12): ``throughput_ratio_remote`` ≥ 0.98, ``stop_to_disconnect_ms_p95``
≤ 50, ``chunks_after_stop`` 0. ``throughput_ratio_unpaced`` is the same ratio with the server writing as fast as it
can (informative: the ceiling of each path on this machine).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
from httpx_sse import connect_sse

from app.bench._util import PaintStage, emit, median, percentile, qt_loop, wait_until
from app.bench.sse_server import DONE, Reply, SSEServer, delta_event
from app.core.conversation import Conversation, Message, Role
from app.core.streaming.generation import Generation, generate
from app.core.streaming.metrics import now
from app.core.streaming.scheduler import scheduler_for
from app.core.types import GenerationParams
from app.engine.remote.engine import RemoteConnection, RemoteEngine

WORDS = ["The ", "quick ", "brown ", "fox ", "jumps ", "over ", "the ", "lazy ", "dog. ", "`code` ", "**bold** ",
         "é ", "世界 ", "🙂 ", "\n\n"]


def _events(n: int | None) -> Iterator[tuple[bytes, float]]:
    """``n`` content events then finish + [DONE] (``None``: endless)."""
    i = 0
    while n is None or i < n:
        yield delta_event(WORDS[i % len(WORDS)]), 0.0
        i += 1
    yield delta_event(None, finish="stop") + DONE, 0.0


class Bench:
    def __init__(self, events: int, rate: float | None) -> None:
        self.events = events
        self.rate: float | None = rate
        self.endless = False
        self.server = SSEServer(self._answer)

    def _answer(self, req: Any) -> Reply | None:
        if not req.path.endswith("/chat/completions"):
            return None
        return Reply(steps=_events(None if self.endless else self.events), pace_per_s=self.rate,
                     end="hang" if self.endless else "close")


def raw_round(url: str) -> tuple[float, int]:
    """Raw read loop: (events/s, events)."""
    body = {"model": "test-model", "messages": [{"role": "user", "content": "go"}], "stream": True}
    n = 0
    with httpx.Client(timeout=httpx.Timeout(None, connect=10)) as client:
        t0 = now()
        with connect_sse(client, "POST", f"{url}/chat/completions", json=body) as source:
            for sse in source.iter_sse():
                if sse.data == "[DONE]":
                    break
                obj = json.loads(sse.data)
                if obj["choices"] and obj["choices"][0]["delta"].get("content"):
                    n += 1
        t_end = now()
    return n / (t_end - t0), n


async def ours_round(engine: RemoteEngine, stage: PaintStage) -> tuple[float, int]:
    conv = Conversation(messages=[Message(Role.USER, "go")])
    reply = conv.add(Message(Role.ASSISTANT))
    gen = Generation(reply, conv)
    stage.attach(reply, gen.metrics)
    t0 = now()
    await generate(engine, scheduler_for(engine), conv, reply, GenerationParams(max_tokens=10**7), generation=gen)
    t_end = now()
    await wait_until(lambda: not reply.pending, 5.0)
    stage.flush(reply)
    stage.detach(reply)
    n = reply.chunks - 1          # the finish event is a chunk too
    return n / (t_end - t0), n


async def stop_round(bench: Bench, engine: RemoteEngine, stage: PaintStage, delay_s: float) -> dict[str, float]:
    conv = Conversation(messages=[Message(Role.USER, "go")])
    reply = conv.add(Message(Role.ASSISTANT))
    gen = Generation(reply, conv)
    stage.attach(reply, gen.metrics)
    n_disc = len(bench.server.disconnects)
    task = asyncio.ensure_future(generate(engine, scheduler_for(engine), conv, reply,
                                          GenerationParams(max_tokens=10**7), generation=gen))
    await wait_until(lambda: reply.chunks > 0 or task.done(), 30.0, 0.001)
    await asyncio.sleep(delay_s)
    stage.flush(reply)
    painted_at_click = len(gen.metrics.painted)
    chunks_at_click = reply.chunks
    t_click = now()
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    assert gen.stream is not None
    await gen.stream.wait_closed()
    ok = await asyncio.get_running_loop().run_in_executor(None, bench.server.wait_disconnects, n_disc + 1, 10.0)
    await asyncio.sleep(0.05)
    stage.flush(reply)
    stage.detach(reply)
    t_disc = bench.server.disconnects[n_disc].t if ok else float("nan")
    return {"stop_to_disconnect_ms": (t_disc - t_click) * 1000.0,
            "after": (reply.chunks - chunks_at_click) + (len(gen.metrics.painted) - painted_at_click)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m app.bench remote", description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--events", type=int, default=10000, help="events per round")
    ap.add_argument("--rate", type=float, default=5000.0, help="server events/s")
    ap.add_argument("--stops", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    from app.core.streaming.stream import tune_switch_interval
    tune_switch_interval()

    bench = Bench(args.events, args.rate)
    raw: list[float] = []
    ours: list[float] = []
    raw_fast: list[float] = []
    ours_fast: list[float] = []
    stops: list[dict[str, float]] = []
    threads_before = threading.active_count()
    with bench.server, qt_loop() as loop:
        engine = RemoteEngine(RemoteConnection(bench.server.url))
        engine.load()
        stage = PaintStage()

        async def run_all() -> None:
            ex = asyncio.get_running_loop().run_in_executor
            for i in range(args.rounds):
                for rate, r_list, o_list in ((args.rate, raw, ours), (None, raw_fast, ours_fast)):
                    bench.rate = rate
                    if i % 2 == 0:
                        r_list.append((await ex(None, raw_round, bench.server.url))[0])
                        o_list.append((await ours_round(engine, stage))[0])
                    else:
                        o_list.append((await ours_round(engine, stage))[0])
                        r_list.append((await ex(None, raw_round, bench.server.url))[0])
            bench.rate, bench.endless = args.rate, True
            for _ in range(args.stops):
                stops.append(await stop_round(bench, engine, stage, rng.uniform(0.05, 0.3)))

        t0 = time.perf_counter()
        loop.run_until_complete(run_all())
        wall = time.perf_counter() - t0
        engine.unload()
    lat = [s["stop_to_disconnect_ms"] for s in stops]
    result = {
        "bench": "remote", "paint_stage": stage.kind, "rounds": args.rounds, "events": args.events,
        "rate_events_per_s": args.rate,
        "raw_events_per_s": median(raw), "ours_events_per_s": median(ours),
        "throughput_ratio_remote": (median(ours) or 0) / (median(raw) or 1),
        "raw_unpaced_events_per_s": median(raw_fast), "ours_unpaced_events_per_s": median(ours_fast),
        "throughput_ratio_unpaced": (median(ours_fast) or 0) / (median(raw_fast) or 1),
        "stops": len(stops), "stop_to_disconnect_ms_p50": percentile(lat, 50),
        "stop_to_disconnect_ms_p95": percentile(lat, 95), "stop_to_disconnect_ms_max": max(lat) if lat else None,
        "chunks_after_stop": int(sum(s["after"] for s in stops)),
        "threads_leaked": max(0, threading.active_count() - threads_before),
        "wall_s": wall,
    }
    result["budgets_met"] = bool(result["throughput_ratio_remote"] >= 0.98
                                 and (result["stop_to_disconnect_ms_p95"] or 1e9) <= 50
                                 and result["chunks_after_stop"] == 0)
    emit(result)
    return 0
