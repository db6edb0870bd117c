"""Incremental markdown → Qt-compatible HTML for streamed LLM replies.

The public API is :class:`IncrementalMarkdown` (streaming) and :func:`render_markdown` (one shot); a finished
``IncrementalMarkdown`` gives exactly ``render_markdown`` of its text, at any chunking. The package's rooms:

* :mod:`.parser` — the markdown-it parser (syntax, the too-deep rule), normalisation, grouping into blocks;
* :mod:`.html` — tokens → HTML: a ``RendererHTML`` subclass, one method per token type; code blocks, tables,
  math, links (the link policy is :mod:`.links`);
* :mod:`.boundaries` — where a streamed block is stable (the rules and their reasoning), pure functions;
* :mod:`.list_html` — a long top-level list as pieces of a few items each;
* :mod:`.fences`, :mod:`.tables`, :mod:`.lists` — fast paths for an open fence / table / list at the end of the
  stream;
* :mod:`.thinking` — reasoning sections (``<think>…</think>``): routing and the header;
* :mod:`.incremental` — the line buffer, the stable prefix, late link references, throttling;
* :mod:`.reply` — :class:`IncrementalMarkdown`: a reply's reasoning and answer;
* :mod:`.oneshot` — :func:`render_markdown`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from app.core.render.markdown.code_html import CODE_PIECE_CHARS, CODE_PIECE_LINES
    from app.core.render.markdown.html import (
        PIECE,
        TABLE_GROUP_ROWS,
        TABLE_WIDTH_ROWS,
    )
    from app.core.render.markdown.incremental import MarkdownStream
    from app.core.render.markdown.links import is_safe_url
    from app.core.render.markdown.list_html import LIST_GROUP_ITEMS
    from app.core.render.markdown.oneshot import render_markdown
    from app.core.render.markdown.reply import IncrementalMarkdown
    from app.core.render.markdown.thinking import prompt_opens_reasoning, split_thinking
    from app.core.render.markdown.throttle import BIG_TAIL_CHARS, BIG_TAIL_GROWTH, BIG_TAIL_MIN_S

#: Where each public name lives. They are imported at first use (PEP 562), so importing one light room (e.g.
#: ``.thinking``, which the scripted engine and the previews use) does not import markdown-it, pygments and the
#: formula worker with the package: the window's start-up imports none of them (``tests/test_startup_imports.py``).
_WHERE = {
    "CODE_PIECE_CHARS": "code_html", "CODE_PIECE_LINES": "code_html", "PIECE": "html", "TABLE_GROUP_ROWS": "html",
    "TABLE_WIDTH_ROWS": "html", "BIG_TAIL_CHARS": "throttle", "BIG_TAIL_GROWTH": "throttle",
    "BIG_TAIL_MIN_S": "throttle", "MarkdownStream": "incremental", "is_safe_url": "links",
    "LIST_GROUP_ITEMS": "list_html",
    "render_markdown": "oneshot", "IncrementalMarkdown": "reply", "prompt_opens_reasoning": "thinking",
    "split_thinking": "thinking",
}


def __getattr__(name: str) -> Any:
    room = _WHERE.get(name)
    if room is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{room}"), name)
    globals()[name] = value          # the next lookup is a plain module attribute
    return value


__all__ = [
    "BIG_TAIL_CHARS",
    "BIG_TAIL_GROWTH",
    "BIG_TAIL_MIN_S",
    "CODE_PIECE_CHARS",
    "CODE_PIECE_LINES",
    "LIST_GROUP_ITEMS",
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
