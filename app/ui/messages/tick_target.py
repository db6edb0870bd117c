"""One reply attached to the render tick (``app.ui.messages.coalescer``): its view's callbacks and its backlog.

The backlog is the text taken from the reply (``Message.take_new``) and not fed to the view yet; the tick feeds it
in slices cut at line ends where one is near (the renderer gives the same result for any cut: its invariant), and
counts the chunks a slice stands for in proportion to its characters.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from app.core.conversation import Message
from app.core.streaming.metrics import StreamMetrics
from app.ui.messages.tick_budget import FIRST_SLICE_CHARS


@dataclass(eq=False)
class Target:
    """A reply attached to the render tick: the callbacks of its view and its *backlog*, the text taken from the
    reply and not fed yet (``app.ui.messages.coalescer``)."""

    reply: Message
    feed: Callable[[str], None]          # hand new text to the renderer (no repaint)
    paint: Callable[[], bool]            # patch the view; True when something changed
    metrics: StreamMetrics | None = None  # the generation's metrics: each paint is stamped there
    frozen: bool = False
    backlog: str = ""                    # text taken from the reply, not fed yet (from ``offset``)
    offset: int = 0
    backlog_chunks: int = 0              # chunks the backlog's text came in (painted in proportion)
    slice_chars: int = FIRST_SLICE_CHARS
    min_slice: int = 0                   # the backlog ÷ CATCH_UP_TICKS when it was largest (reset once painted)
    on_finished: Callable[[], None] | None = None   # the reply ended: call once the backlog is painted
    catch_chars: int = FIRST_SLICE_CHARS  # the catch-up floor's bound: sized to CATCH_UP_TICK_MS (0: none)
    strikes: int = 0                      # catch-up slices in a row as small as can be and still over it
    caught_up: Callable[[], None] | None = None     # a re-made view: call once the text so far is fed
    lagging: Callable[[], bool] | None = None       # the view shows less than it was fed (patched on, fed nothing)
    held: int = 0                         # chunks fed while the view lags: painted once it shows them
    paint_end: Callable[[], object] | None = None   # the reply ended: the last slice's paint (the final render)
    render: Callable[[], object] | None = None       # render what was fed, without patching (catch-up, timed)
    spend: Callable[[float], object] | None = None   # the frame spent this many ms before the paint (its budget)
    saturated: Callable[[], bool] | None = None     # the view lags by a whole patch (None: whenever it lags)
    end_cost: Callable[[], float] | None = None     # what the view's final render is reckoned to cost (ms)
    cost_ms: float = 0.0                  # what its last paint cost (ms)

    @property
    def waiting(self) -> int:
        """Characters taken from the reply and not fed yet."""
        return len(self.backlog) - self.offset

    def take(self, text: str, n: int) -> None:
        """Add ``text`` (``n`` chunks) taken from the reply to the backlog."""
        if text:
            self.backlog = self.backlog[self.offset:] + text if self.offset else self.backlog + text
            self.offset = 0
        self.backlog_chunks += n

    def next_slice(self, limit: int | None) -> tuple[str, int]:
        """The next slice of the backlog (at most ``limit`` characters, cut after a line end in its second
        half when there is one) and the chunks it stands for (in proportion to its characters; all of them with
        the backlog's end)."""
        waiting = self.waiting
        if limit is None or waiting <= limit:
            piece, n = self.backlog[self.offset:], self.backlog_chunks
            self.backlog, self.offset, self.backlog_chunks = "", 0, 0
            return piece, n
        end = self.offset + limit
        nl = self.backlog.rfind("\n", end - limit // 2, end)
        if nl >= 0:
            end = nl + 1
        elif self.backlog[end - 1] == "\r":
            end -= 1                      # keep a CR LF pair together
        piece = self.backlog[self.offset:end]
        n = self.backlog_chunks * len(piece) // waiting
        self.offset = end
        self.backlog_chunks -= n
        return piece, n

    def lags(self) -> bool:
        """The view shows less than it was fed."""
        return self.lagging is not None and self.lagging()
