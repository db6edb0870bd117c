"""The render tick's budgets and bounds (ms, characters), each with the measurements that chose it.

``app.ui.messages.coalescer`` spends them (its docstring says how a tick slices, catches up, paces and adapts its
interval); the view's patch budget (``app.ui.messages.patch_budget``) spends ``TICK_BUDGET_MS`` too. Free of Qt,
so both can share one number. Figures are from ``python -m app.bench render`` on a shared 2-core machine.
"""

from __future__ import annotations

#: ~60 Hz, a display frame.
MIN_INTERVAL_MS = 16
#: Never slower than ~10 Hz, so streaming still looks live under load.
MAX_INTERVAL_MS = 100
#: Work one tick may do (ms, all replies together), paced: after a paint of ``FRAME_PAINT_MS`` (below), the work
#: ends 14.5 ms after the beat, 2.2 ms before the next; a slice is sized to 80 % of it. At 8 (half a frame), the
#: tables, the long word and the long quote at 5,000 tok/s fell behind their producer with the loop a third idle
#: (render bench, two alternated runs: end-to-end 0.83-0.98 → 0.94-0.99 at 10; frame p99 the same, 17-20 ms).
TICK_BUDGET_MS = 10.0
#: Ticks in a row over the interval (not cut by their budget) that double it: one is a stall (a seal, a
#: collection), and doubling after it made the next frame 32 ms too (render bench at 5,000 tok/s).
OVER_TICKS = 2
#: A reply's first slice (characters), before its ticks have been measured; the slice's bounds.
FIRST_SLICE_CHARS = 2_048
MIN_SLICE_CHARS = 128
MAX_SLICE_CHARS = 1 << 20
#: A backlog is painted within at most this many ticks (~1 s at 60 Hz) whatever a tick costs: a slice is never
#: shorter than the backlog ÷ this. When every patch has a fixed cost over the budget (Qt's cost per change
#: grows with the tables in the document), shrinking the slices would only stretch the backlog out forever.
CATCH_UP_TICKS = 64
#: … but a catch-up slice is never bigger than what is predicted to cost this much (ms; with painting, a frame
#: stays under 50 ms): 1 MB in one chunk made 64 ticks of 100-230 ms each (``python -m app.bench render``,
#: shape ``one_mb_chunk``). A fixed cost per patch over it does not shrink the slice (that would not help).
#: Since a view that lags holds the tick back, the burst's HTML goes in on ticks that only patch, and this bounds
#: the ticks that parse: at 12 ms, that 1 MB's frames were p99 20-21 ms and it was whole after 12.7-13.4 s; at
#: 20 ms, p99 26 ms and 9.5 s (two runs each).
CATCH_UP_TICK_MS = 12.0
#: The catch-up slice is not made smaller than this to fit CATCH_UP_TICK_MS: when ``FIXED_COST_STRIKES`` slices
#: this small in a row still cost more, that is a fixed cost, and the floor applies whole again (until the
#: backlog is painted).
MIN_CATCH_UP_CHARS = 512
#: A catch-up slice of a view that can render without patching is fed and rendered in quarters until this much
#: time is spent (ms); then the view is patched (its patch budget counts that render time).
CATCH_UP_RENDER_MS = 6.0
#: Paced, the time from the beat to the frame's work (the window's paint) the budgets above are sized for (ms; the
#: 1 MB burst: p50 4.7); a frame whose paint took longer gives its work that much less, one whose paint took less
#: gives the tick's budget that much more: the work ends by ``FRAME_PAINT_MS`` + ``TICK_BUDGET_MS`` after the beat
#: either way. (A streaming table's frames paint in 2.4-4.7 ms, p50 3.4.)
FRAME_PAINT_MS = 4.5
#: Paced, a reply's end that comes while a frame waits for its beat is painted at once (shown at that beat) when
#: ``END_COST_FACTOR`` × the reply's last paint's cost still leaves ``FRAME_MARGIN_MS`` before the beat, else by
#: the next frame's work (one frame later): a final render re-renders the unfinished tail, 5-10 ms for a 200 KB
#: code line whose ticks cost 2-4 ms, and made that beat late (the fence shape's last frame: 18-25 ms, 4 runs);
#: always one frame later, the end came 24-36 ms after the last chunk instead of 9-16 (the end-to-end ratio of a
#: 2.5-3 s shape: −0.5 %).
END_COST_FACTOR = 2.0
FRAME_MARGIN_MS = 2.0
FIXED_COST_STRIKES = 3
#: At Stop, what arrived is painted at once only up to this many characters (a burst is shown another way).
STOP_PAINT_CHARS = 8_192
#: A tick that painted asks its window to paint in the next loop turn, not after Qt's update delay (a platform
#: window without vsync delivers its update request 5 ms after the first change: ``QT_QPA_UPDATE_IDLE_TIME``),
#: so the frame's paint follows its tick and is over before the next tick is due.
PRESENT_AT_ONCE = True
#: Frame pacing (``app.ui.messages.pacing``), for a coalescer whose parent is a widget: a tick's work is done in
#: the loop turn after the previous frame's paint, with the window's paints held, and shown at the next firing of
#: the timer, so the frames keep the timer's grid whatever the work costs (below: *the beat*).
PACED = True


def catch_up_chars(chars: int, cost_ms: float) -> int:
    """The next bound of the catch-up floor after a catch-up slice of ``chars`` characters cost ``cost_ms``: the
    size that would fit in 80 % of ``CATCH_UP_TICK_MS`` at that cost per character, at least
    ``MIN_CATCH_UP_CHARS`` and at most twice ``chars``."""
    fit = int(chars * CATCH_UP_TICK_MS * 0.8 / cost_ms) if cost_ms > 0 else MAX_SLICE_CHARS
    return max(MIN_CATCH_UP_CHARS, min(2 * chars, MAX_SLICE_CHARS, fit))
