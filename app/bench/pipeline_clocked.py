"""The pipeline bench's timed paths (``python -m app.bench pipeline``): an engine whose decode thread is timed,
and the raw llama-cpp-python loop timed alone and painted by the app's view and tick (``--painted-raw``)."""

from __future__ import annotations

import asyncio
import threading
from typing import Any, Protocol

from app.bench._util import wait_until
from app.bench.window_path import BenchWindow
from app.core.conversation import Message, MessageStatus, Role
from app.core.streaming.metrics import now
from app.core.types import GenerationParams
from app.engine.base import Engine


class Streams(Protocol):
    """What the raw loop offers (``pipeline.RawLlama``): chunks of a reply to ``messages``."""

    def stream(self, messages: Any, params: GenerationParams, stop: threading.Event) -> Any: ...


class ClockedEngine:
    """An engine whose ``stream`` also times its decode thread (``app.engine.host.DecodeClock``): for the
    in-process path, where the decode thread is the streaming core's worker thread. One generator frame more
    per chunk (≈ 0.1 µs); every other attribute is the engine's."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.figures: dict[str, Any] | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.engine, name)

    def stream(self, messages: Any, params: GenerationParams, stop: threading.Event) -> Any:
        from app.engine.host import DecodeClock

        clock = DecodeClock()
        first = True
        for chunk in self.engine.stream(messages, params, stop):
            if first:
                clock.start()
                first = False
            yield chunk
            clock.tokens += chunk.n_tokens
        self.figures = clock.stop()


def raw_clocked(raw: Streams, messages: list[dict[str, str]], params: GenerationParams) -> dict[str, Any]:
    """``raw_run`` with the decode thread (this one) timed from its first token."""
    from app.engine.host import DecodeClock

    clock = DecodeClock()
    parts: list[str] = []
    first = last = None
    for chunk in raw.stream(messages, params, threading.Event()):
        t = now()
        if first is None:
            first = t
            clock.start()
        last = t
        clock.tokens += chunk.n_tokens
        parts.append(chunk.text)
    assert first is not None and last is not None
    return {"tokens": clock.tokens, "span": last - first, "text": "".join(parts), "decode": clock.stop()}


async def raw_painted_run(raw: Streams, window: BenchWindow, messages: list[dict[str, str]],
                          params: GenerationParams) -> dict[str, Any]:
    """The raw loop as the least a windowed app could do: ``raw.stream`` on a plain thread (timed from its first
    token), each chunk handed to the loop thread (``call_soon_threadsafe``) and painted by a message view in the
    same shown window, with the same render tick, as ours. The same window state as ours' paths (the window
    paints while the model decodes), none of Brook's pipeline (no queue, no coalescing consumer, no process
    boundary). Measured as ours: first token produced → last token painted."""
    from app.core.streaming.metrics import StreamMetrics
    from app.engine.host import DecodeClock

    loop = asyncio.get_running_loop()
    reply = Message(Role.ASSISTANT, status=MessageStatus.WAITING)
    metrics = StreamMetrics()
    detach = window.paint_foreign(reply, metrics)
    done: asyncio.Future[dict[str, Any]] = loop.create_future()

    def work() -> None:
        clock = DecodeClock()
        try:
            for chunk in raw.stream(messages, params, threading.Event()):
                if not metrics.produced:
                    clock.start()
                metrics.on_produced(now(), chunk.n_tokens)
                clock.tokens += chunk.n_tokens
                loop.call_soon_threadsafe(reply.append, chunk.text)
            figures = clock.stop()
            loop.call_soon_threadsafe(done.set_result, figures)
        except BaseException as exc:      # re-raised on the loop
            loop.call_soon_threadsafe(done.set_exception, exc)

    threading.Thread(target=work, name="bench-raw-painted", daemon=True).start()
    decode = await done
    await wait_until(lambda: len(metrics.painted) >= len(metrics.produced), 5.0)
    detach()
    return {"tokens": metrics.tokens, "span": metrics.painted[-1] - metrics.produced[0], "text": reply.text,
            "decode": decode}
