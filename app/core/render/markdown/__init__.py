"""Incremental markdown → Qt-compatible HTML for streamed LLM replies.

The public API is :class:`IncrementalMarkdown` (streaming) and :func:`render_markdown` (one shot); a finished
``IncrementalMarkdown`` gives exactly ``render_markdown`` of its text, at any chunking. The package's rooms:

* :mod:`.parser` — the markdown-it parser (syntax, the too-deep rule), normalisation, grouping into blocks;
* :mod:`.html` — tokens → HTML: a ``RendererHTML`` subclass, one method per token type; code blocks, tables,
  math, links (the link policy is :mod:`.links`);
* :mod:`.boundaries` — where a streamed block is stable (the rules and their reasoning), pure functions;
* :mod:`.fences`, :mod:`.tables` — fast paths for an open fence / table at the end of the stream;
* :mod:`.thinking` — reasoning sections (``<think>…</think>``): routing and the header;
* :mod:`.incremental` — the line buffer, the stable prefix, late link references, throttling;
* :mod:`.reply` — :class:`IncrementalMarkdown`: a reply's reasoning and answer;
* :mod:`.oneshot` — :func:`render_markdown`.
"""

from app.core.render.markdown.html import (
    CODE_PIECE_CHARS,
    CODE_PIECE_LINES,
    PIECE,
    TABLE_GROUP_ROWS,
    TABLE_WIDTH_ROWS,
)
from app.core.render.markdown.incremental import (
    BIG_TAIL_CHARS,
    BIG_TAIL_GROWTH,
    BIG_TAIL_MIN_S,
    MarkdownStream,
)
from app.core.render.markdown.links import is_safe_url
from app.core.render.markdown.oneshot import render_markdown
from app.core.render.markdown.reply import IncrementalMarkdown
from app.core.render.markdown.thinking import prompt_opens_reasoning, split_thinking

__all__ = [
    "BIG_TAIL_CHARS",
    "BIG_TAIL_GROWTH",
    "BIG_TAIL_MIN_S",
    "CODE_PIECE_CHARS",
    "CODE_PIECE_LINES",
    "PIECE",
    "TABLE_GROUP_ROWS",
    "TABLE_WIDTH_ROWS",
    "IncrementalMarkdown",
    "MarkdownStream",
    "is_safe_url",
    "prompt_opens_reasoning",
    "render_markdown",
    "split_thinking",
]
