"""How much HTML a streaming refresh of a message view inserts: a budget kept in characters, sized in time.

A refresh (``MarkdownView.refresh``) inserts the changed pieces only until they hold its budget; the rest waits for
the next tick (the render tick patches a view that lags before it feeds it more: ``Coalescer``), or
``MORE_DELAY_MS`` without one. Before any patch was timed the budget is ``PATCH_BUDGET_CHARS``; after, it is what
fits ``PATCH_BUDGET_MS`` less the refresh's own render (its parse) at the measured cost per character, between
``PATCH_BUDGET_MIN_CHARS`` and ``PATCH_BUDGET_MAX_CHARS``. Each refresh that inserted at least
``PATCH_BUDGET_CHARS`` is a measurement (smaller ones are mostly the patch's fixed cost); the estimate is the
dearest of the last ``PATCH_COST_WINDOW`` (the cost a character of HTML moves 1.5-2× with the content: tables
and coloured code are dearer than prose; with the mean of the last two, a patch of the 1 MB burst cost 1.6× its
estimate at p99, and those patches were half its frames over 16.7 ms; with the dearest of four the burst's
frame p99 went from 19.5-19.9 to 18.1-18.4 ms, two alternated runs each).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

from app.ui.messages.tick_budget import TICK_BUDGET_MS

#: The first budget (HTML characters; about 4-10 ms of ``insertHtml`` and layout here). A long open paragraph is
#: re-parsed by the renderer once it grew by a fifth, so a 500,000-character word brought up to 100 KB in one
#: refresh (150-180 ms) before there was a budget.
PATCH_BUDGET_CHARS = 8_000
#: What a refresh may spend, its render and its patch together (ms): the render tick's own budget. At 8 (the
#: tick's budget before it became 10), a table streamed at 5,000 tok/s left pieces out at 223 of its 254 refreshes
#: and fell behind its producer. Render bench, runs alternated 8 → 10: the long table's end-to-end 0.61 / 0.75 /
#: 0.85 / 0.98 → 0.78 / 0.81 / 0.88 / 0.99, the table at the end 0.87 → 0.91, the 1 MB burst whole after 26.4-33.5
#: → 23.0-29.8 s (four runs; frame p99 20.1-22.5 → 21.3-21.9 ms, and 42.7 in one run).
PATCH_BUDGET_MS = TICK_BUDGET_MS
#: The bounds of a measured budget (HTML characters). A lagging view is patched at every tick and fed nothing,
#: so this sets how fast a burst of tables and coloured code reaches the screen: 1 MB of the render bench's reply
#: is 8.1 MB of HTML, 1,000 patches of 8 KB (16 s at 60 Hz); a tick that parsed a big slice patches little.
PATCH_BUDGET_MIN_CHARS = 2_000
PATCH_BUDGET_MAX_CHARS = 64_000
#: The estimate is the dearest cost per character of the last this many measured patches.
PATCH_COST_WINDOW = 4


class PatchBudget:
    """The budget of one view's streaming refreshes (see the module docstring)."""

    def __init__(self) -> None:
        self.ms_per_char: float | None = None   # measured cost of a patch per HTML character (ms)
        self._recent: deque[float] = deque(maxlen=PATCH_COST_WINDOW)

    def chars(self, render_ms: float) -> int:
        """HTML characters a refresh inserts at most, after a render of ``render_ms`` (ms)."""
        if self.ms_per_char is None:
            return PATCH_BUDGET_CHARS
        fit = int((PATCH_BUDGET_MS - render_ms) / self.ms_per_char)
        return max(PATCH_BUDGET_MIN_CHARS, min(PATCH_BUDGET_MAX_CHARS, fit))

    def measured(self, inserted: int, cost_s: float) -> None:
        """A patch inserted ``inserted`` HTML characters in ``cost_s`` seconds."""
        if inserted >= PATCH_BUDGET_CHARS and cost_s > 0:
            self._recent.append(cost_s * 1000.0 / inserted)
            self.ms_per_char = max(self._recent)


def chars_left(new: Callable[[int], str], i: int, n: int) -> int:
    """HTML characters of the pieces ``new(i)`` … ``new(n - 1)``, counted only until they reach the largest patch
    budget (``PATCH_BUDGET_MAX_CHARS``): counting what a cut patch left costs no more than inserting what it did,
    not the whole rest of a long reply built in slices."""
    total = 0
    for k in range(i, n):
        total += len(new(k))
        if total >= PATCH_BUDGET_MAX_CHARS:
            break
    return total
