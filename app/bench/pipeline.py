"""Throughput of the whole streaming path against the raw loop over the same iterator, in the same run.

``python -m app.bench pipeline [--tokens N] [--rate TOK_S] [--rounds R] [--model-tokens N] [--no-model]``

*Ours* is the app's path: worker thread → bounded queue → consumer coroutine (``generate``) → coalescer tick →
renderer, offscreen, on a qasync loop. *Raw* is ``for chunk in engine.stream(...)`` on the main thread, the
least any app could do. Both run on the same engine with the same prompt and parameters, alternating (raw,
ours, ours, raw, …) so that drift in machine load hits both.

Throughput = decode tokens ÷ (time the last token reached the end of the path − time the first token left
the engine): for raw, the loop body; for ours, the tick that painted it (so the final tick's lag counts
against us). ``throughput_ratio_*`` is the median over rounds of ours ÷ raw (budget ≥ 0.99).

Added TTFT: ``ttft_added_ms_p95`` = p95 of ours (request → first chunk painted) − median of raw (call → first
chunk returned), over short replies on the scripted engine with a fixed prefill (budget ≤ 25 ms).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import threading
from typing import Any

from app.bench._util import PaintStage, emit, median, percentile, qt_loop, wait_until
from app.core.conversation import Conversation, Message, MessageStatus, Role
from app.core.streaming.generation import Generation, StreamSettings, generate
from app.core.streaming.metrics import now
from app.core.streaming.scheduler import FairScheduler
from app.core.streaming.stream import GIL_SWITCH_INTERVAL_S, tune_switch_interval
from app.core.types import GenerationParams
from app.engine.base import Engine
from app.engine.scripted import DEFAULT_REPLY, ScriptedEngine

log = logging.getLogger("brook.bench.pipeline")

PROMPT = "Write a long story about a lighthouse keeper and the ships she guides, with a few lists and code."


def raw_run(engine: Engine, messages: list[dict[str, str]], params: GenerationParams) -> dict[str, Any]:
    """The baseline: iterate the engine on this thread, join the text, nothing else."""
    parts: list[str] = []
    tokens = 0
    first = last = None
    t_call = now()
    for chunk in engine.stream(messages, params, threading.Event()):
        t = now()
        if first is None:
            first = t
        last = t
        tokens += chunk.n_tokens
        parts.append(chunk.text)
    assert first is not None and last is not None
    return {"tokens": tokens, "span": last - first, "ttft": first - t_call, "text": "".join(parts)}


async def ours_run(engine: Engine, stage: PaintStage, params: GenerationParams,
                   settings: StreamSettings) -> dict[str, Any]:
    """The app's path end to end; waits until the last chunk is painted."""
    c = Conversation()
    c.add(Message(Role.USER, PROMPT))
    reply = c.add(Message(Role.ASSISTANT, status=MessageStatus.WAITING))
    gen = Generation(reply, c)
    stage.attach(reply, gen.metrics)
    t_call = now()
    await generate(engine, FairScheduler(), c, reply, params, settings=settings, generation=gen)
    m = gen.metrics
    await wait_until(lambda: len(m.painted) >= len(m.dequeued), 5.0)
    stage.detach(reply)
    assert reply.status is MessageStatus.DONE, (reply.status, reply.error)
    return {"tokens": m.tokens, "span": m.painted[-1] - m.produced[0], "ttft": m.painted[0] - t_call,
            "first_paint": m.painted[0] - m.produced[0], "text": reply.text,
            "queue_high_water": m.queue_high_water, "ticks": m.ticks, "longest_tick_ms": m.longest_tick_s * 1e3,
            "backpressure_waits": m.backpressure_waits}


async def compare(engine: Engine, stage: PaintStage, params: GenerationParams, rounds: int) -> dict[str, Any]:
    messages = [{"role": "user", "content": PROMPT}]
    settings = StreamSettings()
    ratios: list[float] = []
    same_text = True
    details: list[dict[str, Any]] = []
    for r in range(rounds):
        order = ("raw", "ours") if r % 2 == 0 else ("ours", "raw")
        res: dict[str, dict[str, Any]] = {}
        for which in order:
            if which == "raw":
                res["raw"] = raw_run(engine, messages, params)
            else:
                res["ours"] = await ours_run(engine, stage, params, settings)
            await asyncio.sleep(0.05)
        raw_tps = (res["raw"]["tokens"] - 1) / res["raw"]["span"]
        ours_tps = (res["ours"]["tokens"] - 1) / res["ours"]["span"]
        ratios.append(ours_tps / raw_tps)
        same_text = same_text and res["raw"]["text"] == res["ours"]["text"]
        details.append({"raw_tok_s": raw_tps, "ours_tok_s": ours_tps,
                        "queue_high_water": res["ours"]["queue_high_water"], "ticks": res["ours"]["ticks"],
                        "longest_tick_ms": res["ours"]["longest_tick_ms"],
                        "backpressure_waits": res["ours"]["backpressure_waits"],
                        "first_paint_ms": res["ours"]["first_paint"] * 1e3})
        log.info("round %d: raw %.1f tok/s, ours %.1f tok/s, ratio %.4f", r, raw_tps, ours_tps, ratios[-1])
    return {"ratio": median(ratios), "ratios": ratios, "same_text": same_text, "rounds": details}


async def ttft(stage: PaintStage, runs: int) -> dict[str, Any]:
    prefill = 0.02
    engine = ScriptedEngine(DEFAULT_REPLY, tokens_per_s=5000, prefill_s=prefill)
    engine.load()
    params = GenerationParams(max_tokens=40)
    messages = [{"role": "user", "content": PROMPT}]
    raw: list[float] = []
    ours: list[float] = []
    for _ in range(runs):
        raw.append(raw_run(engine, messages, params)["ttft"])
        ours.append((await ours_run(engine, stage, params, StreamSettings()))["ttft"])
        await asyncio.sleep(0.003)
    base = median(raw) or 0.0
    added = [(o - base) * 1e3 for o in ours]
    return {"p50": percentile(added, 50), "p95": percentile(added, 95), "raw_ttft_ms": base * 1e3}


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m app.bench pipeline")
    ap.add_argument("--tokens", type=int, default=20_000, help="tokens per scripted reply")
    ap.add_argument("--rate", type=float, default=5000.0, help="scripted decode rate, tokens/s")
    ap.add_argument("--rounds", type=int, default=5,
                    help="rounds of raw vs ours (the median ratio is reported; single rounds vary by ±5%%)")
    ap.add_argument("--model-tokens", type=int, default=200)
    ap.add_argument("--ttft-runs", type=int, default=40)
    ap.add_argument("--no-model", action="store_true", help="skip the real bundled model")
    ap.add_argument("--no-scripted", action="store_true", help="skip the scripted engine (model only)")
    ap.add_argument("--switch-interval-ms", type=float, default=GIL_SWITCH_INTERVAL_S * 1000.0,
                    help="sys.setswitchinterval for the run (GIL hand-over; the app's setting by default, "
                         "CPython's default is 5 ms)")
    args = ap.parse_args(argv)
    tune_switch_interval(args.switch_interval_ms / 1000.0)
    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
    result: dict[str, Any] = {"bench": "pipeline"}
    with qt_loop() as loop:
        stage = PaintStage()
        result["paint_stage"] = stage.kind
        scripted = ScriptedEngine(DEFAULT_REPLY, tokens_per_s=args.rate, repeat=10**6)
        scripted.load()
        params = GenerationParams(max_tokens=args.tokens)
        if not args.no_scripted:
            s = loop.run_until_complete(compare(scripted, stage, params, args.rounds))
            result["throughput_ratio_scripted"] = s["ratio"]
            result["scripted"] = {"tokens": args.tokens, "rate": args.rate, **s}
            t = loop.run_until_complete(ttft(stage, args.ttft_runs))
            result["ttft_added_ms_p95"] = t["p95"]
            result["ttft_added_ms_p50"] = t["p50"]
        if not args.no_model:
            from app.engine.llama import LlamaEngine
            from app.engine.models import bundled_model_path
            model = LlamaEngine(bundled_model_path())
            model.load()
            try:
                mparams = GenerationParams(temperature=0.0, seed=42, max_tokens=args.model_tokens)
                raw_run(model, [{"role": "user", "content": "Hi"}], GenerationParams(max_tokens=8))  # warm-up
                mres = loop.run_until_complete(compare(model, stage, mparams, args.rounds))
            finally:
                model.unload()
            result["throughput_ratio_model"] = mres["ratio"]
            result["model"] = {"name": model.name, "tokens": args.model_tokens, **mres}
    result["budget_ok"] = bool(
        (args.no_scripted or (result["throughput_ratio_scripted"] >= 0.99 and result["ttft_added_ms_p95"] <= 25.0))
        and (args.no_model or result["throughput_ratio_model"] >= 0.99))
    emit(result)
    return 0
