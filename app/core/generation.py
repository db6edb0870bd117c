"""One reply, end to end on the loop: wait for a slot, stream, time out, stop (DESIGN §1-§2).

``generate()`` is the coroutine the UI runs as a task; Stop is ``task.cancel()``. It never renders: it appends
chunks to the reply ``Message`` and reports status changes through ``on_update``; a render tick paints.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from app.core.conversation import Conversation, Message, MessageStatus
from app.core.errors import BrookError, GenerationTimeout
from app.core.metrics import StreamMetrics, now
from app.core.scheduler import FairScheduler
from app.core.stream import DEFAULT_MAXSIZE, TokenStream
from app.core.types import Chunk, GenerationParams

log = logging.getLogger("brook.generation")


class ChunkSource(Protocol):
    """What ``generate`` needs of an engine (``app.engine.base.Engine`` satisfies it)."""

    @property
    def name(self) -> str: ...

    def stream(self, messages: Sequence[Mapping[str, str]], params: GenerationParams,
               stop: threading.Event) -> Iterable[Chunk]: ...


@dataclass(frozen=True, slots=True)
class StreamSettings:
    """Budgets for one reply. Defaults suit a CPU: a long prompt can take a minute of prefill.

    ``first_token_timeout_s``: request start (slot acquired) → first chunk; ``total_timeout_s``: slot acquired
    → last chunk; ``queue_maxsize``: bound of the chunk queue (chunks).
    """

    first_token_timeout_s: float = 120.0
    total_timeout_s: float = 600.0
    queue_maxsize: int = DEFAULT_MAXSIZE


async def generate(engine: ChunkSource, scheduler: FairScheduler, conversation: Conversation, reply: Message,
                   params: GenerationParams, *, settings: StreamSettings | None = None,
                   on_update: Callable[[Message], None] | None = None) -> Message:
    """Generate ``reply`` (an assistant message already in ``conversation``) with ``engine``.

    Status goes WAITING → PREFILL → STREAMING → DONE | STOPPED | TIMED_OUT | ERROR; ``on_update(reply)`` is
    called on each change. On cancellation the partial text is kept, the status is STOPPED and
    ``CancelledError`` is re-raised. Engine errors and timeouts end the reply with a readable ``reply.error``
    and do not raise. The engine slot is released only when the worker thread has returned.
    """
    settings = settings or StreamSettings()
    notify = on_update or (lambda _m: None)
    metrics = StreamMetrics()
    reply.stream_metrics = metrics
    reply.model = engine.name
    reply.params = {k: getattr(params, k) for k in params.__dataclass_fields__}
    reply.status = MessageStatus.WAITING
    notify(reply)
    slot = await scheduler.acquire()        # cancellable while in line; nothing to clean up then
    stream: TokenStream | None = None
    first_seen = False
    try:
        metrics.t_slot = now()
        reply.status = MessageStatus.PREFILL
        notify(reply)
        messages = conversation.prompt_messages(upto=reply)
        stream = TokenStream(lambda stop: engine.stream(messages, params, stop),
                             maxsize=settings.queue_maxsize, metrics=metrics)
        reply.generation_id = stream.generation_id
        stream.start()
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        first_budget = min(settings.first_token_timeout_s, settings.total_timeout_s)
        async with asyncio.timeout(t0 + first_budget) as budget:
            async for tagged in stream:
                if not first_seen:
                    first_seen = True
                    budget.reschedule(t0 + settings.total_timeout_s)
                    reply.status = MessageStatus.STREAMING
                    notify(reply)
                chunk = tagged.chunk
                reply.append(chunk.text, tagged.generation_id)
                if chunk.finish_reason:
                    reply.stop_reason = chunk.finish_reason
        reply.status = MessageStatus.DONE
        reply.stop_reason = reply.stop_reason or "stop"
    except TimeoutError:
        if not first_seen and settings.first_token_timeout_s < settings.total_timeout_s:
            err = GenerationTimeout("first token", settings.first_token_timeout_s)
        else:
            err = GenerationTimeout("total", settings.total_timeout_s)
        reply.status, reply.stop_reason, reply.error = MessageStatus.TIMED_OUT, "timeout", str(err)
        log.warning("reply %s timed out: %s", reply.id, err)
    except asyncio.CancelledError:
        reply.status, reply.stop_reason = MessageStatus.STOPPED, "user"
        raise
    except BrookError as exc:
        reply.status, reply.stop_reason, reply.error = MessageStatus.ERROR, "error", str(exc)
        log.warning("reply %s failed: %s", reply.id, exc)
    except Exception as exc:
        reply.status, reply.stop_reason = MessageStatus.ERROR, "error"
        reply.error = f"The model failed while generating: {exc}"
        log.error("reply %s failed", reply.id, exc_info=exc)
    finally:
        metrics.t_end = now()
        if stream is None:
            slot.release()
        else:
            stream.request_stop()
            assert stream.worker_done is not None
            stream.worker_done.add_done_callback(lambda _f: slot.release())
            reply.stream = stream
        reply.metrics = metrics.summary().as_dict()
        s = metrics.summary()
        log.debug("reply %s: status=%s ttft=%s ms prefill=%s ms tok/s=%s chunks=%d queue_hw=%d "
                  "backpressure_waits=%d (%.0f ms)", reply.id, reply.status.value,
                  _fmt(s.ttft_ms), _fmt(s.prefill_ms), _fmt(s.decode_tokens_per_s), s.chunks,
                  s.queue_high_water, s.backpressure_waits, s.backpressure_wait_ms)
        notify(reply)
    return reply


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.1f}"
