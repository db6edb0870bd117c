"""How much HTML a streaming refresh of a message view inserts: a budget kept in characters, sized in time.

A refresh (``MarkdownView.refresh``) inserts the changed pieces only until they hold its budget; the rest waits for
the next tick (the render tick patches a view that lags before it feeds it more: ``Coalescer``), or
``MORE_DELAY_MS`` without one. Before any patch was timed the budget is ``PATCH_BUDGET_CHARS``; after, it is what
fits ``PATCH_BUDGET_MS`` less the refresh's own render (its parse) at the measured cost per character, between
``PATCH_BUDGET_MIN_CHARS`` and ``PATCH_BUDGET_MAX_CHARS``. Each refresh that inserted at least
``PATCH_BUDGET_CHARS`` is a measurement (smaller ones are mostly the patch's fixed cost); the estimate is the
mean of the last one and the estimate before it.
"""

from __future__ import annotations

#: The first budget (HTML characters; about 4-10 ms of ``insertHtml`` and layout here). A long open paragraph is
#: re-parsed by the renderer once it grew by a fifth, so a 500,000-character word brought up to 100 KB in one
#: refresh (150-180 ms) before there was a budget.
PATCH_BUDGET_CHARS = 8_000
#: What a refresh may spend, its render and its patch together (ms): the render tick's own budget.
PATCH_BUDGET_MS = 8.0
#: The bounds of a measured budget (HTML characters). A lagging view is patched at every tick and fed nothing,
#: so this sets how fast a burst of tables and coloured code reaches the screen: 1 MB of the render bench's reply
#: is 8.1 MB of HTML, 1,000 patches of 8 KB (16 s at 60 Hz); a tick that parsed a big slice patches little.
PATCH_BUDGET_MIN_CHARS = 2_000
PATCH_BUDGET_MAX_CHARS = 64_000


class PatchBudget:
    """The budget of one view's streaming refreshes (see the module docstring)."""

    def __init__(self) -> None:
        self.ms_per_char: float | None = None   # measured cost of a patch per HTML character (ms)

    def chars(self, render_ms: float) -> int:
        """HTML characters a refresh inserts at most, after a render of ``render_ms`` (ms)."""
        if self.ms_per_char is None:
            return PATCH_BUDGET_CHARS
        fit = int((PATCH_BUDGET_MS - render_ms) / self.ms_per_char)
        return max(PATCH_BUDGET_MIN_CHARS, min(PATCH_BUDGET_MAX_CHARS, fit))

    def measured(self, inserted: int, cost_s: float) -> None:
        """A patch inserted ``inserted`` HTML characters in ``cost_s`` seconds."""
        if inserted >= PATCH_BUDGET_CHARS and cost_s > 0:
            per_char = cost_s * 1000.0 / inserted
            self.ms_per_char = per_char if self.ms_per_char is None else (self.ms_per_char + per_char) / 2
