"""Stop at random moments: latency, chunks after Stop, threads left behind.

``python -m app.bench stop [--stops 50] [--rate TOK_S] [--seed S] [--model | --model-stops N]``

Each round sends a prompt in a new chat of the shown, styled window (``app.bench.window_path.BenchWindow``: the
chat session, the window's render tick, the reply's view; history in a SQLite file), on the scripted engine
(decode phase, ``--rate`` tokens/s), waits a random time after the first chunk, then stops it the way the UI
does (``MainWindow.stop``, Esc: what had arrived is painted at once, then the reply is frozen). Measured per stop:

- ``stop_latency_ms``: click → the worker thread has returned (``StreamMetrics.t_worker_done``, stamped by the
  worker itself). Budget: ≤ one token interval + 50 ms (scripted), + 10 ms (``--model``);
- ``chunks_after_stop``: chunks that reached the message after the click (its chunk count and text must not
  change) plus chunks painted after the click; must be 0;
- ``threads_leaked``: live threads after all rounds − before them (after one stop not counted); must be 0.

With ``--model`` the bundled model runs on the default path, its engine host process (``--in-process``: a
``LlamaEngine`` in this process instead); a stop then travels over the pipe and the host ends its decode within
a token. Also measured: ``rss_added_after_unload_mb`` (this process's RSS after File → Unload model, the window
still open, − before the first load, the window already shown; budget < 30 MB) and ``host_gone`` (the host
process has exited after the unload). ``--model-stops N`` runs both: the scripted engine's stops, then N of the
bundled model in its engine host, whose figures come under the same keys ending in ``_model`` (the report's
plan: the scripted run alone is met by construction, the engine returning the moment it is asked).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import logging
import random
from pathlib import Path
from typing import Any

from app.bench._util import emit, percentile, qt_loop, rss_mb, thread_count, wait_until
from app.bench.window_path import BenchWindow, bench_home
from app.core.streaming.metrics import now
from app.core.streaming.stream import live_streams
from app.core.types import GenerationParams
from app.engine.base import Engine
from app.engine.scripted import DEFAULT_REPLY, ScriptedEngine


async def one_stop(window: BenchWindow, delay_s: float, model: bool) -> dict[str, Any]:
    """One reply in a new chat of the shown window, stopped ``delay_s`` after its first chunk the way the UI
    does (``MainWindow.stop``, Esc: what arrived is painted at once, then the reply is frozen)."""
    params = GenerationParams(max_tokens=4096 if model else 10**6)
    run = window.send("Tell me everything.", params)
    reply, gen = run.reply, run.generation
    # wait for decode to start (the first chunk), then the random moment
    await wait_until(lambda: reply.chunks > 0 or reply.status.final, 60.0, 0.001)
    await asyncio.sleep(delay_s)
    chunks_at_click = reply.chunks
    t_click = now()
    window.window.stop()
    t_idle = now()                        # the click's handler has returned: the window takes input again
    stream = gen.stream
    assert stream is not None
    await stream.wait_closed()
    await wait_until(lambda: reply.status.final, 10.0)
    text_at_stop = reply.text
    await asyncio.sleep(0.05)             # three more ticks: anything that reached the reply or was painted now
    after = (reply.chunks - chunks_at_click) + gen.chunks_painted_after_stop()   # would be a bug
    if reply.text != text_at_stop:
        after += 1
    m = gen.metrics
    assert m.t_worker_done is not None
    return {"latency_ms": (m.t_worker_done - t_click) * 1e3, "idle_ms": (t_idle - t_click) * 1e3,
            "after": after, "status": reply.status.value, "tok_s": m.summary().decode_tokens_per_s}


def _gone(pid: int | None) -> bool | None:
    """Whether process ``pid`` has exited (None: there was none)."""
    if pid is None:
        return None
    import os

    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def run_stops(home: Path, loop: asyncio.AbstractEventLoop, rng: random.Random, stops: int, *, model: bool,
              in_process: bool = False, rate: float = 50.0, max_delay_ms: float = 300.0) -> dict[str, Any]:
    """``stops`` stops (after one not counted) in a shown window on the scripted engine at ``rate`` tokens/s, or
    on the bundled model (``model``; its engine host, or ``in_process``), then File → Unload model. Returns the
    figures (module docstring) and ``latency_ms``/``idle_ms``, each stop's (ms)."""
    engine: Engine
    if model:
        from app.engine.open import EngineSpec, open_engine
        engine = open_engine(EngineSpec(in_process=in_process))
    else:
        engine = ScriptedEngine(DEFAULT_REPLY, tokens_per_s=rate, repeat=10**6)
    window = BenchWindow(engine, home)
    loop.run_until_complete(asyncio.sleep(0.2))
    gc.collect()
    rss_before = rss_mb()                 # the window shown, before the first load

    async def run() -> tuple[list[dict[str, Any]], int | None, int, float]:
        await window.start()
        pid = getattr(engine, "host_pid", None)
        # one stop first, not counted: the workers a window starts at its first reply and keeps (the
        # history's writer thread, the lexer and formula pools) are not threads a Stop leaves behind
        await one_stop(window, rng.uniform(0, max_delay_ms / 1000.0), model)
        before = thread_count()
        results = [await one_stop(window, rng.uniform(0, max_delay_ms / 1000.0), model) for _ in range(stops)]
        await asyncio.sleep(0.05)
        leaked = max(0, thread_count() - before)   # the window's own workers (a warm-up) may end meanwhile
        await window.window.session.unload()   # File → Unload model, the window still open
        await asyncio.sleep(0.2)
        gc.collect()
        rss = rss_mb()
        await window.close()
        return results, pid, leaked, rss

    results, host_pid, threads_leaked, rss_after = loop.run_until_complete(run())
    lat = [r["latency_ms"] for r in results]
    idle = [r["idle_ms"] for r in results]
    rates = [r["tok_s"] for r in results if r["tok_s"]]
    token_ms = 1000.0 / (percentile(rates, 50) or rate)
    out = {"engine": engine.name, "stops": len(results),
           "stop_latency_ms_p50": percentile(lat, 50), "stop_latency_ms_p95": percentile(lat, 95),
           "stop_latency_ms_max": max(lat), "ui_idle_ms_p95": percentile(idle, 95),
           "token_interval_ms": token_ms,
           "chunks_after_stop": sum(r["after"] for r in results),
           "threads_leaked": threads_leaked, "live_streams": len(live_streams()),
           "all_stopped": all(r["status"] == "stopped" for r in results),
           "engine_class": type(engine).__name__, "rss_before_load_mb": rss_before, "rss_after_unload_mb": rss_after,
           "rss_added_after_unload_mb": rss_after - rss_before, "host_gone": _gone(host_pid)}
    slack = 10.0 if model else 50.0
    out["latency_budget_ms"] = token_ms + slack
    out["budget_ok"] = bool(out["stop_latency_ms_p95"] is not None
                            and out["stop_latency_ms_p95"] <= token_ms + slack
                            and out["chunks_after_stop"] == 0 and threads_leaked == 0
                            and (not model or in_process
                                 or (out["rss_added_after_unload_mb"] < 30 and out["host_gone"])))
    out["latency_ms"], out["idle_ms"] = lat, idle
    return out


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m app.bench stop")
    ap.add_argument("--stops", type=int, default=50)
    ap.add_argument("--rate", type=float, default=50.0, help="decode rate, tokens/s (a CPU-sized model)")
    ap.add_argument("--max-delay-ms", type=float, default=300.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--series", type=Path, default=None, metavar="PATH",
                    help="also write each stop's latency (ms) to this JSON file")
    ap.add_argument("--model", action="store_true",
                    help="stop the real bundled model instead (stop latency then includes the token in decode)")
    ap.add_argument("--in-process", action="store_true",
                    help="with --model: the model in this process (LlamaEngine), not in its engine host")
    ap.add_argument("--model-stops", type=int, default=0, metavar="N",
                    help="after the scripted engine's stops, N stops of the bundled model in its engine host, "
                         "its figures under the same keys ending in _model")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    rng = random.Random(args.seed)
    with bench_home() as home, qt_loop() as loop:
        out = run_stops(home, loop, rng, args.stops, model=args.model, in_process=args.in_process,
                        rate=args.rate, max_delay_ms=args.max_delay_ms)
        extra = (run_stops(home, loop, rng, args.model_stops, model=True, max_delay_ms=args.max_delay_ms)
                 if args.model_stops > 0 and not args.model else None)
    lat, idle = out.pop("latency_ms"), out.pop("idle_ms")
    out = {"bench": "stop", "paint_stage": "window", **out}
    series: dict[str, Any] = {"stop_latency_ms": lat, "ui_idle_ms": idle}
    if extra is not None:
        series["stop_latency_ms_model"] = extra.pop("latency_ms")
        extra.pop("idle_ms")
        out.update({f"{k}_model": v for k, v in extra.items()})
        out["budget_ok"] = out["budget_ok"] and out["budget_ok_model"]
    if args.series:
        args.series.write_text(json.dumps(series), "utf-8")
    emit(out)
    return 0
