"""One-shot rendering of a whole reply: what a finished :class:`~.incremental.IncrementalMarkdown` gives."""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.core.render.highlight import SegmentCache, get_theme
from app.core.render.markdown.html import HtmlRenderer
from app.core.render.markdown.parser import group_blocks, normalize, parse
from app.core.render.markdown.thinking import split_thinking, thinking_section_html

if TYPE_CHECKING:
    from app.core.render.math_render import MathCache


def render_blocks(text: str, theme: str, copy_prefix: str = "",
                  math: MathCache | None = None) -> tuple[list[str], list[str]]:
    """HTML of each top-level block of ``text`` (no reasoning routing) and the raw code of its code blocks."""
    tokens = parse(normalize(text), {})
    return HtmlRenderer(theme, copy_prefix, SegmentCache(64), math).render_groups(group_blocks(tokens), 0)


def render_markdown(text: str, theme: str = "light", reasoning_open: bool = False,
                    math: MathCache | None = None) -> str:
    """Render a whole reply to Qt-compatible HTML in one go (what a finished ``IncrementalMarkdown`` gives).

    ``theme`` is ``"light"`` or ``"dark"`` (``ValueError`` otherwise). Reasoning (see
    :func:`~.thinking.split_thinking`, ``reasoning_open`` included) is rendered separately as a dimmed thinking
    section before the answer. ``math``: formulas as images drawn by that cache (without a pool it draws them
    here, in the caller); None shows their TeX source.
    """
    get_theme(theme)
    thinking, answer, done = split_thinking(text, reasoning_open)
    blocks, _ = render_blocks(answer, theme, math=math)
    out = "".join(blocks)
    if thinking is not None:
        inner, _ = render_blocks(thinking, theme, "t", math)
        out = thinking_section_html("".join(inner), done) + out
    return out
