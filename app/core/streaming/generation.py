"""One reply, end to end on the loop: wait for a slot, stream, time out, stop.

``generate()`` is the coroutine a chat session runs as a task; Stop is ``task.cancel()``. It never renders: it
appends chunks to the reply ``Message`` and reports status changes through ``on_update``; a render tick paints
(it calls ``reply.take_new()`` and then ``generation.metrics.on_painted(...)``).

A ``Generation`` is one run of ``generate`` for one reply: the reply, its conversation, its task, its token
stream, its live metrics and its id, in one object (the ``Message`` itself stays plain data).

``shutdown()`` is the closing-the-window path: cancel every generation, join the workers, unload the engines.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import secrets
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

from app.core.conversation import Conversation, Message, MessageStatus
from app.core.errors import BrookError, GenerationTimeout
from app.core.streaming.metrics import StreamMetrics, now
from app.core.streaming.provenance import runtime_facts
from app.core.streaming.scheduler import FairScheduler, Slot
from app.core.streaming.stream import DEFAULT_MAXSIZE, TokenStream, live_streams
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
    """Budgets for one reply. Defaults suit a CPU: a long prompt can take a minute or two of prefill.

    - ``first_token_timeout_s``: slot acquired → first chunk (seconds; default 120 s);
    - ``total_timeout_s``: slot acquired → last chunk (seconds; default 600 s = 10 min);
    - ``queue_maxsize``: bound of the chunk queue (chunks);
    - ``paint_grace_s``: after the last chunk, how long the per-reply summary waits for the render tick to
      paint the rest before it is logged and stored without those paint stamps (seconds).
    """

    first_token_timeout_s: float = 120.0
    total_timeout_s: float = 600.0
    queue_maxsize: int = DEFAULT_MAXSIZE
    paint_grace_s: float = 1.0


@dataclass(eq=False)
class Generation:
    """One generation of one reply, from the request to the worker's end.

    - ``reply`` / ``conversation``: the assistant ``Message`` being written and the conversation it is in;
    - ``metrics``: its live ``StreamMetrics`` (the render tick stamps paints here);
    - ``stream``: its ``TokenStream`` once the engine slot was acquired (``None`` before); ``await
      generation.stream.wait_closed()`` waits for the worker thread;
    - ``task``: the asyncio task running ``generate`` (set by whoever starts it; ``None`` when awaited directly);
    - ``painted_at_stop``: chunks painted when Stop was pressed (``None`` unless stopped by the user).
    """

    reply: Message
    conversation: Conversation
    metrics: StreamMetrics = field(default_factory=StreamMetrics)
    stream: TokenStream | None = None
    task: asyncio.Task[Message] | None = None
    painted_at_stop: int | None = None
    saved_chunks: int = -1                  # reply.chunks when it was last saved (autosave)
    asked: Asked | None = None              # the request ``ask_now`` made, until ``generate`` takes it over

    @property
    def id(self) -> int | None:
        """The generation id that tags this run's chunks (``None`` until the stream exists)."""
        return self.stream.generation_id if self.stream is not None else None

    @property
    def running(self) -> bool:
        """True until the reply reached a final status."""
        return not self.reply.status.final

    @property
    def worker_alive(self) -> bool:
        """True while the engine's worker thread may still run (a stopped prefill, say)."""
        return self.stream is not None and self.stream.alive

    def chunks_painted_after_stop(self) -> int:
        """Chunks painted after Stop was pressed (0 unless something is wrong, or not stopped)."""
        if self.painted_at_stop is None:
            return 0
        return len(self.metrics.painted) - self.painted_at_stop


def mark_stopped(reply: Message) -> None:
    """The one place a reply becomes STOPPED by the user (stop reason "user"); a final reply is left alone."""
    if not reply.status.final:
        reply.status, reply.stop_reason = MessageStatus.STOPPED, "user"


async def generate(engine: ChunkSource, scheduler: FairScheduler, conversation: Conversation, reply: Message,
                   params: GenerationParams, *, settings: StreamSettings | None = None,
                   on_update: Callable[[Message], None] | None = None,
                   generation: Generation | None = None) -> Message:
    """Generate ``reply`` (an assistant message already in ``conversation``) with ``engine``.

    Status goes [WAITING →] PREFILL → GENERATING → DONE | STOPPED | TIMED_OUT | ERROR (WAITING only when the
    scheduler makes it wait: "waiting for the model"); ``on_update(reply)`` is called on the loop on each
    change, and once more when the render tick has painted the last chunk (``reply.metrics`` then holds the
    final TTFT / tokens/s; that call may come after ``generate`` returned).

    On cancellation (Stop, closing the window) the partial text is kept, the status is STOPPED and
    ``CancelledError`` is re-raised; nothing produced after the cancel reaches ``reply``. Engine errors and
    timeouts end the reply with a readable ``reply.error`` and do not raise. The engine slot is released only
    when the worker thread has returned (a Stop during prefill keeps the model busy until prefill ends).
    ``reply.generation_id`` tags the chunks of this generation. ``generation`` (optional) receives the stream
    and metrics of this run (pass one to watch or paint it; a fresh one is used otherwise).
    """
    settings = settings or StreamSettings()
    notify = on_update or _noop
    loop = asyncio.get_running_loop()
    gen = generation if generation is not None else Generation(reply, conversation)
    metrics = gen.metrics
    asked, gen.asked = gen.asked, None      # a request ``ask_now`` already made: this run takes it over
    slot: Slot | None = None
    stream: TokenStream | None = None
    first_seen = False
    budget: asyncio.Timeout | None = None
    try:
        if asked is not None:
            slot, stream, t0 = asked.slot, asked.stream, asked.t0
            notify(reply)                   # PREFILL, set when it was asked
        else:
            params = _prepare(engine, reply, params)
            if scheduler.would_wait():
                reply.status = MessageStatus.WAITING
                notify(reply)
            slot = await scheduler.acquire()        # cancellable while in line
            metrics.t_slot = now()
            reply.status = MessageStatus.PREFILL
            notify(reply)
            stream = _open_stream(engine, conversation, reply, params, settings, gen, loop)
            t0 = loop.time()
        gid = stream.generation_id
        append = reply.append
        first_budget = min(settings.first_token_timeout_s, settings.total_timeout_s)
        async with asyncio.timeout_at(t0 + first_budget) as budget:   # absolute loop time
            while (batch := await stream.get_batch()) is not None:
                if not first_seen:
                    first_seen = True
                    budget.reschedule(t0 + settings.total_timeout_s)
                    reply.status = MessageStatus.GENERATING
                    notify(reply)
                for chunk in batch:
                    append(chunk.text, gid)
                    if chunk.finish_reason:
                        reply.stop_reason = chunk.finish_reason
                metrics.kept = (metrics.kept or 0) + len(batch)     # what the stored timeline describes
        reply.status = MessageStatus.DONE
        reply.stop_reason = reply.stop_reason or "stop"
    except TimeoutError as exc:
        if budget is None or not budget.expired():   # a TimeoutError of the engine's own (a socket, say)
            _fail(reply, exc)
        else:
            if not first_seen and settings.first_token_timeout_s < settings.total_timeout_s:
                err = GenerationTimeout("first token", settings.first_token_timeout_s)
            else:
                err = GenerationTimeout("total", settings.total_timeout_s)
            reply.status, reply.stop_reason, reply.error = MessageStatus.TIMED_OUT, "timeout", str(err)
            log.warning("reply %s timed out: %s", reply.id, err)
    except asyncio.CancelledError:
        mark_stopped(reply)
        raise
    except Exception as exc:
        _fail(reply, exc)
    finally:
        _end_run(engine, loop, reply, metrics, stream, slot, settings, notify)
    return reply


def _end_run(engine: ChunkSource, loop: asyncio.AbstractEventLoop, reply: Message, metrics: StreamMetrics,
             stream: TokenStream | None, slot: Slot | None, settings: StreamSettings,
             notify: Callable[[Message], None]) -> None:
    """A run's end, however it ended: the worker is told to stop, the slot is freed once it has returned, the
    summary is stored (now and again once painted) and the listener is told."""
    metrics.t_end = now()
    _refresh_hash(engine, reply)
    if stream is not None:
        stream.request_stop()
        assert stream.worker_done is not None and slot is not None
        held = slot
        stream.worker_done.add_done_callback(lambda _f: held.release())
    elif slot is not None:
        slot.release()
    _finish_metrics(loop, reply, metrics, stream, settings, notify)
    notify(reply)


@dataclass(eq=False, slots=True)
class Asked:
    """A request ``ask_now`` made before its ``generate`` ran: the engine slot it holds, the started stream, the
    loop time (``loop.time()`` seconds) it started at (the first-token budget counts from there), and what its
    end needs should its ``generate`` never run."""

    slot: Slot
    stream: TokenStream
    t0: float
    loop: asyncio.AbstractEventLoop
    engine: ChunkSource
    settings: StreamSettings
    on_update: Callable[[Message], None] | None


def _prepare(engine: ChunkSource, reply: Message, params: GenerationParams) -> GenerationParams:
    """The reply's record of how it is made (model, parameters with their seed, provenance), reset for a run."""
    reply.model = engine.name
    params, reply.provenance = _with_provenance(engine, params)
    reply.params = {k: getattr(params, k) for k in params.__dataclass_fields__}
    reply.error = None
    reply.stop_reason = None
    return params


def _open_stream(engine: ChunkSource, conversation: Conversation, reply: Message, params: GenerationParams,
                 settings: StreamSettings, gen: Generation, loop: asyncio.AbstractEventLoop) -> TokenStream:
    """Build the prompt's messages and start the worker thread that streams ``reply`` from ``engine``."""
    messages = conversation.prompt_messages(upto=reply)
    if reply.text:      # Continue: the model goes on from the partial reply (the engine ends the prompt with it)
        messages.append({"role": "assistant", "content": reply.text})
    reply.left_out = 0
    stream = TokenStream(lambda stop: _produce(engine, messages, params, stop, loop, reply),
                         maxsize=settings.queue_maxsize, metrics=gen.metrics)
    reply.generation_id = stream.generation_id
    gen.stream = stream
    gen.metrics.kept = 0
    stream.start()
    return stream


def ask_now(engine: ChunkSource, scheduler: FairScheduler, generation: Generation, params: GenerationParams, *,
            settings: StreamSettings | None = None, on_update: Callable[[Message], None] | None = None) -> bool:
    """Ask the model for ``generation.reply`` at once, on the loop thread, before the caller's own work (the
    window's new widgets, saves, the sidebar: ~10 ms that would otherwise come before the request and add to
    the TTFT; the model's prefill runs meanwhile in its worker thread or process).

    Returns True when the request was made: the scheduler had a free slot, the reply is PREFILL (no update is
    sent: the caller shows the reply next) and its worker thread runs. False when a request made now would wait
    in line (or could not start: ``generate`` then reports why). Either way, ``generate(…, generation=
    generation, on_update=on_update)`` must run next for the same reply, parameters and settings: it takes the
    request over. Cancelling its task before it ran is safe once :func:`let_go_unclaimed` is one of the task's
    done callbacks: that ends the run as ``generate`` would (stopped, summary stored, ``on_update`` called).
    """
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return False
    slot = scheduler.try_acquire()
    if slot is None:
        return False
    settings = settings or StreamSettings()
    reply = generation.reply
    generation.metrics.t_slot = now()
    try:
        params = _prepare(engine, reply, params)
        reply.status = MessageStatus.PREFILL
        stream = _open_stream(engine, generation.conversation, reply, params, settings, generation, loop)
    except Exception:
        log.exception("asking the model at once failed; the reply's run asks again")
        slot.release()
        generation.stream = None
        reply.status = MessageStatus.WAITING
        return False
    generation.asked = Asked(slot, stream, loop.time(), loop, engine, settings, on_update)
    return True


def let_go_unclaimed(generation: Generation) -> None:
    """A task done callback: a request ``ask_now`` made whose ``generate`` never ran (its task was cancelled
    before its first step) ends as a stopped run: the worker is told to stop, the slot is freed once it has
    returned, and the summary is stored."""
    asked, generation.asked = generation.asked, None
    if asked is None:
        return
    mark_stopped(generation.reply)
    _end_run(asked.engine, asked.loop, generation.reply, generation.metrics, asked.stream, asked.slot,
             asked.settings, asked.on_update or _noop)


def _noop(_m: Message) -> None:
    pass


def _refresh_hash(engine: ChunkSource, reply: Message) -> None:
    """The model file's SHA-256 may have become known while the reply streamed (hashed in the background), and
    what the model runs on once it was loaded for this reply (it was not loaded when the reply started)."""
    prov = reply.provenance
    if prov is None:
        return
    if not prov.get("backend"):
        try:
            prov.update(runtime_facts(engine))
        except Exception:
            log.exception("engine runtime facts failed")
    facts = getattr(engine, "provenance", None)
    if prov.get("model_sha256") or not callable(facts):
        return
    try:
        prov["model_sha256"] = facts().get("model_sha256")
    except Exception:
        log.exception("engine provenance failed")


def _with_provenance(engine: ChunkSource, params: GenerationParams) -> tuple[GenerationParams, dict[str, Any]]:
    """``params`` with a drawn seed when it has none (so the reply records the seed it was made with), and the
    engine's model-file facts (``engine.provenance()`` where the engine has one) and what it runs on
    (``runtime_facts``; see ``app.core.streaming.provenance``)."""
    prov: dict[str, Any] = {}
    facts = getattr(engine, "provenance", None)
    if callable(facts):
        try:
            prov.update(facts())
        except Exception:   # provenance must never cost a reply
            log.exception("engine provenance failed")
    try:
        prov.update(runtime_facts(engine))      # the device it runs on, the layers on it
    except Exception:
        log.exception("engine runtime facts failed")
    if params.seed is None:
        params = dataclasses.replace(params, seed=secrets.randbits(31))
        prov["seed_random"] = True
    return params, prov


def _produce(engine: ChunkSource, messages: list[dict[str, str]], params: GenerationParams, stop: threading.Event,
             loop: asyncio.AbstractEventLoop, reply: Message) -> Iterable[Chunk]:
    """In the worker thread: the engine's chunks for ``messages`` fitted to its context window — by the engine
    itself inside ``stream`` where it says so (``fits_in_stream``: the engine host fits in its own process, no
    round trip before the request), else by ``_fitted`` first."""
    if getattr(type(engine), "fits_in_stream", False):      # the class's own: not a wrapper's delegation
        def on_fit(left_out: int, _prompt_tokens: int) -> None:
            if left_out:
                loop.call_soon_threadsafe(setattr, reply, "left_out", left_out)

        return engine.stream(messages, params, stop, on_fit=on_fit)   # type: ignore[call-arg]
    return engine.stream(_fitted(engine, messages, params, loop, reply), params, stop)


def _fitted(engine: ChunkSource, messages: list[dict[str, str]], params: GenerationParams,
            loop: asyncio.AbstractEventLoop, reply: Message) -> Sequence[Mapping[str, str]]:
    """In the worker thread: the messages that fit the engine's context window (engines with a
    ``fit_context``); how many older ones were left out is put on ``reply.left_out`` (on the loop)."""
    fit = getattr(engine, "fit_context", None)
    if fit is None:
        return messages
    fitted = fit(messages, params)
    left = int(getattr(fitted, "left_out", 0))
    if left:
        loop.call_soon_threadsafe(setattr, reply, "left_out", left)
    return cast("Sequence[Mapping[str, str]]", fitted)


def _fail(reply: Message, exc: BaseException) -> None:
    # an error may name its own stop reason (a crashed engine host: "the model process crashed: … (SIGILL)")
    reply.status, reply.stop_reason = MessageStatus.ERROR, str(getattr(exc, "stop_reason", None) or "error")
    if isinstance(exc, BrookError):
        reply.error = str(exc)
        log.warning("reply %s failed: %s", reply.id, exc)          # an expected, explained failure
        log.debug("reply %s failure detail", reply.id, exc_info=exc)
    else:
        reply.error = f"The model failed while generating: {type(exc).__name__}: {exc}"
        log.error("reply %s failed", reply.id, exc_info=exc)


def _finish_metrics(loop: asyncio.AbstractEventLoop, reply: Message, metrics: StreamMetrics,
                    stream: TokenStream | None, settings: StreamSettings,
                    notify: Callable[[Message], None]) -> None:
    """Store the summary now; when chunks are still unpainted or the worker is still running, store it again
    (final: paint stamps, stop latency) once the tick has painted them and the worker has returned, or after
    ``paint_grace_s`` at the latest, then ``notify`` once more. Exactly one debug log line per reply. This is
    the only place a reply's summary is written."""
    gid = reply.generation_id
    reply.metrics = _with_left_out(metrics.summary().as_dict(), reply)
    waiting = {"paint": not metrics.caught_up,
               "worker": stream is not None and stream.worker_done is not None and not stream.worker_done.done()}
    timer: list[asyncio.TimerHandle] = []
    finished = False

    def finalize(renotify: bool) -> None:
        nonlocal finished
        if finished:
            return
        finished = True
        metrics.on_caught_up = None
        for h in timer:
            h.cancel()
        s = metrics.summary()
        metrics.final = True
        current = reply.generation_id == gid     # not already reused for a newer generation (continue)
        if current:
            reply.metrics = _with_left_out(s.as_dict(), reply)
        log.debug("reply %s gen %s %s: %s", reply.id, gid, reply.status.value, s.log_line())
        if renotify and current:
            notify(reply)

    def settled(what: str) -> None:
        waiting[what] = False
        if not any(waiting.values()):
            finalize(True)

    if not any(waiting.values()) or loop.is_closed():
        finalize(False)
        return
    if waiting["paint"]:
        def caught_up() -> None:
            loop.call_soon(settled, "paint")
        metrics.on_caught_up = caught_up
    if waiting["worker"]:
        assert stream is not None and stream.worker_done is not None
        stream.worker_done.add_done_callback(lambda _f: settled("worker"))
    timer.append(loop.call_later(settings.paint_grace_s, finalize, True))


def _with_left_out(summary: dict[str, Any], reply: Message) -> dict[str, Any]:
    if reply.left_out:
        summary["left_out"] = reply.left_out     # kept with the reply's figures in the history
    return summary


async def shutdown(tasks: Iterable[asyncio.Future[Any]], engines: Iterable[Any] = (), *,
                   join_timeout_s: float = 1.5) -> bool:
    """Closing the window mid-reply: cancel every generation task, wait for them to end, wait up
    to ``join_timeout_s`` seconds (in all) for every worker thread to return, then ``unload()`` each engine.

    Returns True when every worker returned. If one is still inside an uninterruptible prefill when the time
    is up, the engines are *not* unloaded (freeing a ``Llama`` under a running decode would crash); its thread
    is a daemon, so the process can exit anyway. Never raises for a task's own error.
    """
    pending = [t for t in tasks if not t.done()]
    for t in pending:
        t.cancel()
    if pending:
        await asyncio.gather(*pending, return_exceptions=True)
    ok = True
    loop = asyncio.get_running_loop()
    streams = live_streams()
    for s in streams:
        s.request_stop()
    mine = [s for s in streams if s.worker_done is not None and s.worker_done.get_loop() is loop]
    if mine:
        try:
            async with asyncio.timeout(join_timeout_s):
                for s in mine:
                    await s.wait_closed()
        except TimeoutError:
            ok = False
            log.warning("shutdown: %d worker(s) still busy after %.1f s (prefill); not unloading",
                        sum(1 for s in streams if s.alive), join_timeout_s)
    if ok:
        for e in engines:
            try:
                e.unload()
            except Exception:
                log.exception("unloading %s failed", getattr(e, "name", e))
    return ok
