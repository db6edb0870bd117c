"""Feed markdown to the incremental renderer in chunks, as a stream does (shared by the renderer's tests)."""

from __future__ import annotations

from typing import Any

import pytest

from app.core.render.markdown import IncrementalMarkdown


def stream_markdown(text: str, sizes: list[int], reads: list[bool], theme: str = "light") -> IncrementalMarkdown:
    """A finished :class:`IncrementalMarkdown` fed ``text`` in chunks of ``sizes`` characters (cycled), reading the
    HTML (``render()``) after the feeds where ``reads`` (cycled) is true."""
    md = IncrementalMarkdown(theme=theme)
    i = n = 0
    while i < len(text):
        size = sizes[n % len(sizes)]
        md.feed(text[i : i + size])
        if reads[n % len(reads)]:
            md.render()
        i += size
        n += 1
    md.finish()
    return md


def record_closes(monkeypatch: pytest.MonkeyPatch, block_class: Any) -> list[bool]:
    """Spy on ``block_class.close`` (an open block's fast path: ``OpenTable``, ``OpenList``, ``OpenQuote``): one
    entry per call, True when it made the block stable, False when it left it to a parse of the tail."""
    closed: list[bool] = []
    real = block_class.close

    def spy(self: Any, *a: Any, **k: Any) -> Any:
        out = real(self, *a, **k)
        closed.append(out is not None)
        return out

    monkeypatch.setattr(block_class, "close", spy)
    return closed
