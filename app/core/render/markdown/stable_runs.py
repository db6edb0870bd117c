"""The stable prefix's source, kept in runs, so that blocks already emitted can be rendered again.

A stable block's HTML is made once, while streaming. Two things can change it later, and only these: code colours
or a formula's image that a worker pool delivered after the block became stable (``pending``), and a link
reference definition that arrived after a block using it (``refs_seen``: how many references were known when the
run was rendered). :func:`render_again` re-renders one run with the references known now and replaces its blocks.
"""

from __future__ import annotations

from typing import Any

from app.core.render.markdown.html import HtmlRenderer
from app.core.render.markdown.parser import group_blocks, parse


class StableRun:
    """A stretch of stable source: its text, its first block and code numbers, the references known then."""

    __slots__ = ("code_base", "first_block", "pending", "refs_seen", "src")

    def __init__(self, src: str, first_block: int, code_base: int, refs_seen: int, pending: bool) -> None:
        self.src = src
        self.first_block = first_block
        self.code_base = code_base
        self.refs_seen = refs_seen
        self.pending = pending  # holds code or formulas the worker pools have not delivered yet


def render_again(run: StableRun, stable: list[str], references: dict[str, Any], renderer: HtmlRenderer) -> int:
    """Render ``run`` again with ``references`` (a copy is parsed with) and put its blocks in ``stable`` (the stable
    prefix's HTML, one string per block); returns the index of the first block that changed, ``len(stable)``
    when none did. ``renderer.context`` is then that render's (what is still pending)."""
    tokens = parse(run.src, {"references": dict(references)})
    blocks, _codes = renderer.render_groups(group_blocks(tokens), run.code_base)
    first = len(stable)
    for i, html in enumerate(blocks):
        j = run.first_block + i
        if stable[j] != html:
            stable[j] = html
            first = min(first, j)
    return first
