"""Shared pieces of the streaming benchmarks: statistics, RSS, the JSON result line, a Qt + qasync loop, and
the paint stage (the app's ``Coalescer`` feeding the app's renderer, offscreen)."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import math
import os
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from app.core.conversation import Message, MessageStatus


def percentile(values: Sequence[float], p: float) -> float | None:
    """The ``p``-th percentile (0-100) by linear interpolation between closest ranks (numpy's default)."""
    if not values:
        return None
    xs = sorted(values)
    k = (len(xs) - 1) * p / 100.0
    lo, hi = math.floor(k), math.ceil(k)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def median(values: Sequence[float]) -> float | None:
    return percentile(values, 50)


def rss_mb() -> float:
    """Resident set size of this process in MiB (``/proc/self/statm``; peak RSS where that is missing)."""
    try:
        with open("/proc/self/statm") as fh:
            pages = int(fh.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):  # pragma: no cover - not Linux
        import resource
        r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return r / 2**20 if sys.platform == "darwin" else r / 1024


async def wait_until(pred: Callable[[], bool], timeout_s: float = 10.0, poll_s: float = 0.002) -> bool:
    """Poll ``pred`` on the loop every ``poll_s`` seconds until it is true (True) or ``timeout_s`` passed."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while True:
        if pred():
            return True
        if loop.time() > deadline:
            return False
        await asyncio.sleep(poll_s)


def thread_count() -> int:
    gc.collect()
    return threading.active_count()


def emit(result: dict[str, Any]) -> None:
    """Print the result as the last line (one JSON object, floats rounded)."""
    def clean(v: Any) -> Any:
        if isinstance(v, float):
            return round(v, 4)
        if isinstance(v, dict):
            return {k: clean(x) for k, x in v.items()}
        return v
    sys.stdout.flush()
    print(json.dumps(clean(result)), flush=True)


@contextlib.contextmanager
def qt_loop() -> Iterator[asyncio.AbstractEventLoop]:
    """A QApplication (offscreen unless a platform is set) with a qasync event loop, as in the app."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    import qasync
    from PySide6.QtWidgets import QApplication

    from app.ui.window.gui_thread import GuiThreadCollections, close_loop

    app = QApplication.instance() or QApplication([])
    collections = GuiThreadCollections()      # as the launcher does: cyclic garbage is freed on this thread
    collections.install()
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    try:
        yield loop
    finally:
        with contextlib.suppress(Exception):
            loop.run_until_complete(asyncio.sleep(0))
        asyncio.set_event_loop(None)
        close_loop(loop)        # its Qt objects deleted here, on the GUI thread (see app.ui.window.gui_thread)
        gc.collect()            # and what the scenario left behind
        collections.uninstall()   # the caller's collector as it was (a test process goes on with it)


def timer_floor(interval_ms: int, seconds: float = 5.0) -> list[float]:
    """Intervals (ms) of a ``PreciseTimer`` of ``interval_ms`` whose slot does nothing, in a shown, empty window on
    a qasync loop: the floor under a render tick's frame interval on this machine, now (Qt's millisecond timer
    wait, the loop waking, other processes' time), before any work. A reference, not a budget."""
    import itertools
    import time

    from PySide6.QtCore import Qt, QTimer
    from PySide6.QtWidgets import QWidget

    stamps: list[float] = []
    with qt_loop() as loop:
        window = QWidget()
        window.resize(1040, 760)
        window.show()
        timer = QTimer(window)
        timer.setTimerType(Qt.TimerType.PreciseTimer)
        timer.setInterval(interval_ms)
        timer.timeout.connect(lambda: stamps.append(time.perf_counter()))
        timer.start()
        loop.run_until_complete(asyncio.sleep(seconds))
        timer.stop()
        window.close()
        window.deleteLater()
    return [(b - a) * 1e3 for a, b in itertools.pairwise(stamps)]


class PaintStage:
    """The coalescer → renderer stage, offscreen: the app's ``Coalescer`` (``app.ui.messages.coalescer``) painting into
    the app's ``MarkdownView`` (``app.ui.messages.markdown_view``) when they exist, else a stand-in of the same shape: a
    16 ms QTimer tick that feeds ``IncrementalMarkdown`` (``app.core.render.markdown``, when present) and appends the
    new text to a ``QTextDocument``. ``kind`` says which one ran.
    """

    def __init__(self) -> None:
        self.kind = "stand-in"
        self._coalescer: Any = None
        self._widgets: list[Any] = []
        try:
            from app.ui.messages.coalescer import Coalescer
            self._coalescer = Coalescer()
            self.kind = "coalescer"
        except ImportError:
            self._coalescer = _StandInTick()
        self._view_factory: Callable[[], tuple[Callable[[str], Any], Callable[[], Any], Any]]
        try:
            from app.ui.messages.markdown_view import MarkdownView

            def view() -> tuple[Callable[[str], Any], Callable[[], Any], Any]:
                v = MarkdownView()
                v.resize(700, 400)
                return v.append_text, v.refresh, v
            self._view_factory = view
            self.kind += "+markdown_view"
        except ImportError:
            self._view_factory = _stand_in_view
            self.kind += "+incremental_markdown_stand_in"

    def attach(self, reply: Message, metrics: Any = None) -> None:
        """Paint ``reply`` each tick, stamping ``metrics`` (its ``Generation.metrics``)."""
        feed, paint, keep = self._view_factory()
        self._widgets.append(keep)
        self._coalescer.attach(reply, feed, paint, metrics)

    def changed(self, reply: Message) -> None:
        """A reply's update (``generate``'s ``on_update``), handled as the window does
        (``app.ui.window.replies.Replies.changed``): its first chunk is painted in the next loop turn."""
        if reply.status is MessageStatus.GENERATING and hasattr(self._coalescer, "paint_soon"):
            self._coalescer.paint_soon(reply)

    def flush(self, reply: Message) -> None:
        self._coalescer.flush(reply)

    def detach(self, reply: Message) -> None:
        self._coalescer.detach(reply)
        self._widgets.clear()


def _stand_in_view() -> tuple[Callable[[str], Any], Callable[[], Any], Any]:
    from PySide6.QtGui import QTextCursor, QTextDocument

    doc = QTextDocument()
    cursor = QTextCursor(doc)
    md: Any = None
    with contextlib.suppress(ImportError):
        from app.core.render.markdown import IncrementalMarkdown
        md = IncrementalMarkdown()

    def feed(text: str) -> None:
        if md is not None:
            md.feed(text)
        cursor.insertText(text)

    def paint() -> bool:
        return True
    return feed, paint, (doc, cursor, md)


class _StandInTick:
    """Minimal coalescer: one 16 ms QTimer; each tick takes the new text of each reply, feeds and paints it,
    and stamps ``on_painted`` (the same calls ``app.ui.messages.coalescer.Coalescer`` makes)."""

    def __init__(self) -> None:
        from PySide6.QtCore import Qt, QTimer

        self._timer = QTimer()
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.setInterval(16)
        self._timer.timeout.connect(self.tick)
        self._targets: dict[int, tuple[Message, Callable[[str], Any], Callable[[], Any], Any]] = {}

    def attach(self, reply: Message, feed: Callable[[str], Any], paint: Callable[[], Any],
               metrics: Any = None) -> None:
        self._targets[reply.id] = (reply, feed, paint, metrics)
        self._timer.start()

    def detach(self, reply: Message) -> None:
        self._targets.pop(reply.id, None)
        if not self._targets:
            self._timer.stop()

    def flush(self, reply: Message) -> None:
        t = self._targets.get(reply.id)
        if t is not None:
            self._paint(*t)

    def _paint(self, reply: Message, feed: Callable[[str], Any], paint: Callable[[], Any], metrics: Any) -> None:
        from app.core.streaming.metrics import now
        text, n = reply.take_new()
        if not n:
            return
        t0 = now()
        if text:
            feed(text)
        paint()
        t1 = now()
        if metrics is not None:
            metrics.on_painted(t1, n, t1 - t0)

    def tick(self) -> None:
        for t in list(self._targets.values()):
            self._paint(*t)
