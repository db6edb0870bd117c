"""Event-loop watchdog: notice when the Qt/asyncio loop has not turned for longer than a threshold.

A daemon thread pings the loop (``loop.call_soon_threadsafe``) and waits for the answer. A ping that is not
answered within ``threshold_s`` means the loop thread is stuck in one callback (a blocking call, a slow
render, a lexer that backtracks): the thread then takes the loop thread's Python stack *at that moment*
(``sys._current_frames()``), and when the loop answers, logs one warning on ``brook.watchdog`` with the
stall's duration and that stack. Every stall is counted (``stalls``); warnings are rate-limited to one per
``min_interval_s`` (the next warning says how many stalls were not logged). A loop still stuck after
``hang_report_s`` is reported at once (it may never come back), and not again when it does.

The duration is measured from the first unanswered ping, so it is at most one ping period (``threshold_s / 4``)
shorter than the stall. Cost on the loop: one no-op callback per ping, ``threshold_s / 4`` apart (40 per second
at the default 100 ms): a few microseconds each. Qt-free: with qasync the asyncio loop *is* the Qt loop, so a blocked Qt
slot or paint event stalls the pings too.

**Idle is idle.** A ping wakes a sleeping loop (measured: 40 pings a second woke an idle qasync window ~72 times a
second). With ``gated=True`` nothing is sent to a loop that waits for events: the event loop reports, each time
it is about to wait (:meth:`LoopWatchdog.loop_idle`, from Qt's ``QAbstractEventDispatcher.aboutToBlock``), the
Python frame it waits in — the one that called into the event dispatcher. The thread looks at the loop thread's
innermost Python frame (``sys._current_frames``) once per ping period: while it is that frame, the loop waits
(or runs Qt's C++ with no Python on top) and is not pinged; once the loop has run Python since the same wait for
a whole period (a callback, a slot, an event handler: its turn counter has not moved), it is pinged, and a ping
not answered within the threshold is a stall as above, timed from the look that first saw it busy. Between two
looks the thread sleeps: one period while the loop was busy, a whole threshold while it waited (an idle window:
``1000 / threshold_ms`` looks a second of a thread that wakes nothing else; no ping). Qt reports
``aboutToBlock`` *before* a turn's wait and its dispatch, and ``awake`` after both: a watchdog that pinged only
between ``awake`` and ``aboutToBlock`` (how it was) never saw a callback's stall, and woke its thread at every
turn of the loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from types import FrameType

log = logging.getLogger("brook.watchdog")

#: Default threshold (ms): a loop that has not turned for longer than this is stalled (a frame at
#: 60 Hz is 16.7 ms, the worst allowed frame interval 50 ms; 100 ms is a pause a person notices).
DEFAULT_THRESHOLD_MS = 100.0
#: At most one warning per this many seconds; the stalls in between are counted and summed up in the next one.
DEFAULT_MIN_INTERVAL_S = 10.0
#: Frames of the loop thread's stack in a warning, innermost last (where it blocked; the outer ones are the
#: event loop's own and the same every time). Keeps a warning under ~1 KB in the log.
STACK_FRAMES = 6
#: A stall longer than this is reported while it lasts (the loop may never come back), seconds.
DEFAULT_HANG_REPORT_S = 5.0

_clock = time.perf_counter


@dataclass(frozen=True, slots=True)
class Stall:
    """One stall: the loop did not turn for ``duration_ms`` (ms); ``stack`` is the loop thread's Python stack
    taken when the stall passed the threshold (its innermost ``STACK_FRAMES`` frames, innermost call last, by
    ``format_stack``; empty when unavailable);
    ``ended`` is False for a report made while the loop was still stuck."""

    started: float            # perf_counter seconds of the unanswered ping (gated: of the look that saw it busy)
    duration_ms: float
    stack: str
    ended: bool = True


class LoopWatchdog:
    """Watch ``loop`` from a daemon thread. Create and ``start()`` on the loop's thread (its thread id is the
    one whose stack is taken); ``stop()`` from anywhere (idempotent, joins the thread).

    ``threshold_ms``: a loop that did not turn for longer than this (ms, > 0) is a stall. ``stalls`` counts
    them; ``history`` keeps the latest 256 and ``last_stall`` the latest (``Stall`` or None); ``warnings``
    counts the warnings logged.
    ``on_stall`` (optional) is called *on the watchdog thread* with each ended ``Stall``.
    ``gated``: ping only a loop seen running Python for a whole ping period since it last waited for events (it
    reports where it waits: :meth:`loop_idle`; see the module docstring); ``pings`` counts the pings sent,
    ``looks`` the looks at the loop thread's stack (gated).
    Raises ``ValueError`` for a threshold ≤ 0.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, threshold_ms: float = DEFAULT_THRESHOLD_MS, *,
                 min_interval_s: float = DEFAULT_MIN_INTERVAL_S, hang_report_s: float = DEFAULT_HANG_REPORT_S,
                 gated: bool = False) -> None:
        if not threshold_ms > 0:
            raise ValueError(f"the watchdog threshold must be > 0 ms, not {threshold_ms!r}")
        self.loop = loop
        self.threshold_s = threshold_ms / 1000.0
        self.min_interval_s = min_interval_s
        self.hang_report_s = max(hang_report_s, self.threshold_s)
        self.stalls = 0
        self.warnings = 0
        self.suppressed = 0                 # stalls not logged since the last warning (rate limit)
        self.last_stall: Stall | None = None
        self.history: deque[Stall] = deque(maxlen=256)   # the latest stalls, oldest first
        self.longest_stall_ms = 0.0
        self.on_stall: Callable[[Stall], None] | None = None
        self._last_warning = -float("inf")
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._answered = threading.Event()
        self._wake = threading.Event()       # stop() or a new threshold: end the wait between pings now
        self._loop_thread_id: int | None = None
        self.in_stall = False               # True from taking the stack of a stall until it ends
        self.gated = gated
        self.pings = 0
        self.looks = 0
        self._turns = 0                      # gated: times the loop went to wait for events (loop_idle)
        self._wait: tuple[int, object] | None = None   # gated: where the loop waits (see loop_idle)
        self._busy: tuple[int, float] | None = None   # gated: (turns, when) the loop was first seen running Python

    def loop_idle(self, frame: FrameType | None = None) -> None:
        """The loop is about to wait for events (call on the loop thread, e.g. from
        ``QAbstractEventDispatcher.aboutToBlock``), in ``frame``: the Python frame that called into the event
        dispatcher (``sys._getframe(1)`` in that signal's slot). Gated, the loop is seen waiting while that frame
        is its thread's innermost. The frame itself is not kept (a reference dropped on the watchdog's thread
        could free the frame's locals there): its ``id`` and code object are (a later frame at the same address
        runs other code, as a rule; and the next wait reports its frame again). No-op unless ``gated``."""
        if self.gated:
            self._turns += 1
            if frame is not None:
                self._wait = (id(frame), frame.f_code)

    @property
    def threshold_ms(self) -> float:
        return self.threshold_s * 1000.0

    def set_threshold_ms(self, threshold_ms: float) -> None:
        """Change the threshold of a running (or not yet started) watchdog: from the next ping on, at once
        (the thread's wait between pings is cut short). Raises ``ValueError`` for a threshold ≤ 0."""
        if not threshold_ms > 0:
            raise ValueError(f"the watchdog threshold must be > 0 ms, not {threshold_ms!r}")
        self.threshold_s = threshold_ms / 1000.0
        self.hang_report_s = max(self.hang_report_s, self.threshold_s)
        self._wake.set()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        """Start watching (call on the loop's thread). Raises ``RuntimeError`` if already started."""
        if self._thread is not None:
            raise RuntimeError("LoopWatchdog already started")
        self._loop_thread_id = threading.get_ident()
        self._thread = threading.Thread(target=self._run, name="brook-watchdog", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 2.0) -> None:
        """Stop the thread and wait up to ``timeout`` seconds for it; safe to call twice or before start."""
        self._stop.set()
        self._answered.set()
        self._wake.set()
        t = self._thread
        if t is not None and t is not threading.current_thread():
            t.join(timeout)

    # watchdog thread -----------------------------------------------------------------------------------
    def _pong(self) -> None:
        self._answered.set()

    def _run(self) -> None:
        while not self._stop.is_set():
            if self.gated:
                busy_since = self._look()
                if busy_since is None:      # waiting for events, or first seen busy now: look again later
                    self._wake.wait(self.threshold_s if self._busy is None else self.threshold_s / 4)
                    self._wake.clear()
                    continue
                sent = busy_since
            else:
                sent = _clock()
            self._answered.clear()
            self.pings += 1
            try:
                if self.loop.is_closed():
                    return
                self.loop.call_soon_threadsafe(self._pong)
            except RuntimeError:          # the loop was closed under us
                return
            left = self.threshold_s - (_clock() - sent)
            if not self._answered.wait(max(left, 0.001)) and not self._stop.is_set():
                self._stalled(sent)
            self._busy = None                  # answered: the loop turned; it is looked at afresh
            self._wake.wait(self.threshold_s / 4)      # the ping period
            self._wake.clear()

    def _look(self) -> float | None:
        """Gated: look at the loop thread's innermost Python frame. Returns when the loop was first seen running
        Python in this turn (since it last went to wait for events) if that was at an earlier look, else None
        (it waits in its wait frame, has no Python frame, or was first seen busy now)."""
        self.looks += 1
        turns = self._turns
        frame = sys._current_frames().get(self._loop_thread_id or 0)
        wait = self._wait
        waits = frame is None or (wait is not None and id(frame) == wait[0] and frame.f_code is wait[1])
        del frame                              # no frame of the loop thread is kept (see loop_idle)
        if waits:
            self._busy = None
            return None
        busy = self._busy
        if busy is not None and busy[0] == turns:
            return busy[1]
        self._busy = (turns, _clock())
        return None

    def _stalled(self, sent: float) -> None:
        """The ping sent at ``sent`` is late: take the stack now, wait for the answer, then report."""
        stack = self._loop_stack()
        self.in_stall = True
        hung_reported = False
        try:
            while not self._answered.wait(0.05):
                if self._stop.is_set():
                    return
                if not hung_reported and _clock() - sent > self.hang_report_s:
                    hung_reported = True
                    self._report(Stall(sent, (_clock() - sent) * 1000.0, stack, ended=False))
        finally:
            self.in_stall = False
        stall = Stall(sent, (_clock() - sent) * 1000.0, stack)
        self.stalls += 1
        self.last_stall = stall
        self.history.append(stall)
        self.longest_stall_ms = max(self.longest_stall_ms, stall.duration_ms)
        if not hung_reported:
            self._report(stall)
        if self.on_stall is not None:
            try:
                self.on_stall(stall)
            except Exception:  # pragma: no cover - a listener's bug must not kill the watchdog
                log.exception("watchdog listener failed")

    def _loop_stack(self) -> str:
        frame = sys._current_frames().get(self._loop_thread_id or 0)
        if frame is None:
            return ""
        try:
            return format_stack(frame, STACK_FRAMES)
        finally:
            del frame

    def _report(self, stall: Stall) -> None:
        t = _clock()
        if t - self._last_warning < self.min_interval_s:
            self.suppressed += 1
            log.debug("event loop stalled for %.0f ms (warning rate-limited)", stall.duration_ms)
            return
        self._last_warning = t
        self.warnings += 1
        more, self.suppressed = self.suppressed, 0
        extra = f"; {more} more stall(s) since the last warning" if more else ""
        state = "has not turned for" if not stall.ended else "did not turn for"
        log.warning("event loop %s %.0f ms (threshold %.0f ms)%s; loop thread stack at the stall:\n%s",
                    state, stall.duration_ms, self.threshold_ms, extra, stall.stack.rstrip() or "(unavailable)")


def _short_path(path: str) -> str:
    """``path`` without the interpreter's and the project's folders (``app/ui/x.py``, ``asyncio/events.py``)."""
    for marker in ("site-packages/", "/lib/python3"):
        i = path.rfind(marker)
        if i >= 0:
            rest = path[i + len(marker):]
            return rest.split("/", 1)[1] if marker == "/lib/python3" and "/" in rest else rest
    source_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    for root in (os.getcwd() + os.sep, source_root + os.sep):
        if path.startswith(root):
            return path[len(root):]
    return path


def format_stack(frame: FrameType, limit: int = STACK_FRAMES) -> str:
    """The innermost ``limit`` frames of the stack ending at ``frame``, one line each, innermost last:
    ``  app/ui/view.py:149 in refresh: md.render()``; a first line says how many outer frames were left out."""
    frames = traceback.extract_stack(frame)
    shown = frames[-limit:] if limit > 0 else frames
    lines = [f"  ({len(frames) - len(shown)} outer frames not shown)"] if len(frames) > len(shown) else []
    for f in shown:
        code = f" {f.line.strip()}" if f.line else ""
        lines.append(f"  {_short_path(f.filename)}:{f.lineno} in {f.name}:{code}")
    return "\n".join(lines) + "\n"


def retune(watchdog: LoopWatchdog | None, threshold_ms: float,
           loop: asyncio.AbstractEventLoop | None = None, *, gated: bool = False) -> LoopWatchdog | None:
    """Apply a new threshold (the settings' ``watchdog_threshold_ms``) while the app runs: the running
    ``watchdog`` keeps its counts and takes the new threshold; ≤ 0 stops it (returns None); with none running,
    one is started on ``loop`` (see ``start_watchdog``). Returns the watchdog now in use."""
    if threshold_ms <= 0:
        if watchdog is not None:
            watchdog.stop()
        return None
    if watchdog is not None and watchdog.running:
        watchdog.set_threshold_ms(threshold_ms)
        return watchdog
    return start_watchdog(threshold_ms, loop, gated=gated)


def start_watchdog(threshold_ms: float = DEFAULT_THRESHOLD_MS, loop: asyncio.AbstractEventLoop | None = None,
                   *, gated: bool = False) -> LoopWatchdog | None:
    """Start a watchdog on ``loop`` (default: the running or current loop); ``threshold_ms`` ≤ 0 means off
    (returns None). ``gated``: see :class:`LoopWatchdog` (the caller then reports the loop's turns)."""
    if threshold_ms <= 0:
        return None
    if loop is None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            with contextlib.suppress(Exception):
                loop = asyncio.get_event_loop_policy().get_event_loop()
    if loop is None:
        return None
    wd = LoopWatchdog(loop, threshold_ms, gated=gated)
    wd.start()
    return wd
