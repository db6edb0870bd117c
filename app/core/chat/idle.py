"""Idle unload: after N minutes without a reply, unload the model (frees its memory: weights and KV cache); the
next message loads it again (a few seconds). Off by default (``AppSettings.idle_unload_minutes`` = 0).

``IdleUnloader`` is a timer on the event loop: ``touch()`` (after each reply, and after a load) restarts it; when
it fires while a reply is generating, it waits another period. ``unload`` is the session's ``ChatSession.unload``;
``unloaded`` tells the caller to load again (``ChatSession.load``) before the next send.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

log = logging.getLogger("brook.idle")


class IdleUnloader:
    def __init__(self, minutes: float, busy: Callable[[], bool], unload: Callable[[], Awaitable[Any]]) -> None:
        self.minutes = minutes
        self.busy = busy
        self.unload = unload
        self.unloaded = False
        self._handle: asyncio.TimerHandle | None = None
        self._task: asyncio.Future[Any] | None = None

    def touch(self) -> None:
        """Restart the countdown (no timer when ``minutes`` ≤ 0)."""
        self.cancel()
        if self.minutes > 0:
            self._handle = asyncio.get_event_loop().call_later(self.minutes * 60.0, self._fire)

    def cancel(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _fire(self) -> None:
        self._handle = None
        if self.busy():
            self.touch()
            return
        log.info("no reply for %.1f min: unloading the model", self.minutes)
        self.unloaded = True
        self._task = asyncio.ensure_future(self.unload())

