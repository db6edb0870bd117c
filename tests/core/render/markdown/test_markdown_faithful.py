"""What is shown while streaming is what the model wrote: a partial line never re-types the lines above it."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.render.markdown import IncrementalMarkdown
from app.core.render.markdown.boundaries import holds_back
from app.core.render.markdown.parser import build_parser

_BLOCKS = build_parser()  # Brook's block syntax; inline parsing is not needed to know the block types
_BLOCKS.core.ruler.disable(["inline", "github-tasklists"])

CORPUS = Path(__file__).resolve().parents[4] / "tests" / "data"
_ANSWERS = sorted((CORPUS / "answers").glob("*.md")) if CORPUS.is_dir() else []


#: Only the last lines of each prefix are compared (a partial line can only re-type the block just above it).
_WINDOW = 24


def _line_types(src: str, n_complete: int) -> dict[int, tuple[str, ...]]:
    """For each of the last complete lines, the block tokens (all levels) whose lines cover it, e.g.
    ('bullet_list_open', 'list_item_open', 'paragraph_open')."""
    lo = max(0, n_complete - _WINDOW)
    types: dict[int, list[str]] = {line: [] for line in range(lo, n_complete)}
    for tok in _BLOCKS.parse(src, {"references": {}}):
        if tok.nesting >= 0 and tok.map is not None and tok.type != "inline":
            for line in range(max(lo, tok.map[0]), min(tok.map[1], n_complete)):
                types[line].append(tok.type)
    return {line: tuple(t) for line, t in types.items()}


def _shown_source(text: str) -> tuple[str, int]:
    """What the renderer parses for ``text`` so far: complete lines, plus the partial line unless held back."""
    complete, _, partial = text.rpartition("\n")
    n = complete.count("\n") + 1 if complete else 0
    src = complete + "\n" if complete else ""
    if partial and not holds_back(partial):
        src += partial
    return src, n


def _flip_backs(text: str, cuts: list[int]) -> list[tuple[int, tuple[str, ...], tuple[str, ...]]]:
    """(line, type, type before) where a complete line went back to a type it had before another one."""
    history: dict[int, list[tuple[str, ...]]] = {}
    bad = []
    for cut in cuts:
        src, n = _shown_source(text[:cut])
        for line, kind in _line_types(src, n).items():
            seen = history.setdefault(line, [])
            if seen and seen[-1] != kind:
                if kind in seen:
                    bad.append((line, kind, seen[-1]))
                seen.append(kind)
            elif not seen:
                seen.append(kind)
    return bad


@pytest.mark.parametrize("text", [
    "Here are the options:\n- one\n- two\n",
    "Title line\n=====\n",
    "| a | b |\n|---|---|\n| 1 | 2 |\n",
    "1. Install:\n   - pip\n   - uv\n",
])
def test_partial_lines_never_retype_the_block_above_one_char_at_a_time(text: str) -> None:
    assert _flip_backs(text, list(range(1, len(text) + 1))) == []


@pytest.mark.parametrize("path", _ANSWERS, ids=lambda p: p.stem)
@settings(max_examples=2, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(sizes=st.lists(st.integers(min_value=5, max_value=24), min_size=1, max_size=16))
def test_partial_lines_never_retype_the_block_above_in_the_corpus(path: Path, sizes: list[int]) -> None:
    text = path.read_text(encoding="utf-8")
    cuts, i, n = [], 0, 0
    while i < len(text):
        i = min(len(text), i + sizes[n % len(sizes)])
        cuts.append(i)
        n += 1
    assert _flip_backs(text, cuts) == []


def test_the_renderer_shows_no_heading_for_a_list_being_typed() -> None:
    md = IncrementalMarkdown()
    for ch in "Here are the options:\n- one\n- two\n":
        md.feed(ch)
        md.render()
        assert "<h2>" not in md.html
    md.finish()
    assert "<ul>" in md.html and "<h2>" not in md.html
