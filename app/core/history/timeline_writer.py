"""Stores finished replies' stream timelines in the history without holding up the event loop.

``ChatSession`` hands over a reply once its figures are final (``save``). The timeline is encoded on a worker
thread (``app.core.history.timelines.encode_metrics``: ~40 ms for a 20,000-token reply, which on the loop would be a
stall another chat's streaming reply could see) and handed to the history's writer thread (``save_timeline``'s
``behind``: after the reply's own save, which may still be indexing its text). A reply deleted meanwhile is not
written. ``drain()`` waits for the encodings in flight (closing; the store's ``close`` then writes what is left).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
from typing import Any

from app.core.history import timelines as timeline_store

log = logging.getLogger("brook.timeline")


class TimelineWriter:
    """Writes into ``store`` (an ``app.core.history.store.Store``); ``pending`` holds the encodings in flight."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self.pending: set[asyncio.Future[bytes]] = set()

    def save(self, gen: Any) -> None:
        """Store ``gen``'s (an ``app.core.streaming.generation.Generation``) timeline with its reply, once its
        figures are final. On the loop it is encoded on a worker thread; where no loop runs any more or its
        executor is shut down (the window closing mid-reply) it is encoded and written at once. Failures are
        logged, never raised (a timeline is a diagnostic)."""
        reply = gen.reply
        if reply.db_id is None:
            return
        try:
            loop = asyncio.get_running_loop()
            job = loop.run_in_executor(None, timeline_store.encode_metrics, gen.metrics, reply.created)
        except RuntimeError:        # no running event loop, or its executor is shut down: closing
            done: concurrent.futures.Future[bytes] = concurrent.futures.Future()
            try:
                done.set_result(timeline_store.encode_metrics(gen.metrics, reply.created))
            except Exception as exc:
                done.set_exception(exc)
            self._write(gen, done)
            return
        self.pending.add(job)
        job.add_done_callback(lambda f: self._write(gen, f))

    def _write(self, gen: Any, job: asyncio.Future[bytes] | concurrent.futures.Future[bytes]) -> None:
        self.pending.discard(job)
        reply = gen.reply
        if job.cancelled() or reply.db_id is None or not any(m is reply for m in gen.conversation.messages):
            return
        try:
            size = self.store.save_timeline(reply.db_id, job.result(), behind=_failed(reply.id))
            log.debug("reply %s: timeline stored (%d bytes, %d chunks)", reply.id, size, len(gen.metrics.produced))
        except (Exception, concurrent.futures.CancelledError) as exc:   # a closed or read-only history, a bug
            log.warning("storing the timeline of reply %s failed: %s", reply.id, exc)

    async def drain(self) -> None:
        """Wait until every timeline handed over has been written (or failed)."""
        while self.pending:
            await asyncio.wait(list(self.pending))
            await asyncio.sleep(0)           # the write callbacks run


def _failed(reply_id: int) -> Any:
    def failed(exc: BaseException) -> None:        # on the history's writer thread
        log.warning("storing the timeline of reply %s failed: %s", reply_id, exc)
    return failed
