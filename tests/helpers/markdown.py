"""Feed markdown to the incremental renderer in chunks, as a stream does (shared by the renderer's tests)."""

from __future__ import annotations

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
