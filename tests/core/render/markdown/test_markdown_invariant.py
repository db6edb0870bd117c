"""The invariant that guards the incremental renderer.

For any text and any chunking, a finished :class:`IncrementalMarkdown` gives exactly ``render_markdown(text)``.
Checked with hypothesis over all 652 CommonMark spec examples and every realistic reply of the corpus (tests/data).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.render.markdown import IncrementalMarkdown, render_markdown
from tests.helpers import ANSWERS, CORPUS
from tests.helpers.markdown import stream_markdown

_SPEC = CORPUS / "commonmark.json"
_EXAMPLES = json.loads(_SPEC.read_text(encoding="utf-8"))
_ANSWERS = ANSWERS

# markdown-it-py raises the recursion limit on first use; do it before hypothesis starts watching it.
render_markdown("*warm up*")

_QUICK = settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
_MORE = settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))


_sizes = st.lists(st.integers(min_value=1, max_value=16), min_size=1, max_size=24)
_reads = st.lists(st.booleans(), min_size=1, max_size=8)


@pytest.mark.parametrize("example", _EXAMPLES, ids=lambda e: f"ex{e['example']}")
@_QUICK
@given(sizes=_sizes, reads=_reads)
def test_commonmark_examples_any_chunking(example: dict, sizes: list[int], reads: list[bool]) -> None:
    text = example["markdown"]
    assert stream_markdown(text, sizes, reads).html == render_markdown(text)


def test_commonmark_examples_one_char_at_a_time() -> None:
    for example in _EXAMPLES:
        text = example["markdown"]
        assert stream_markdown(text, [1], [True]).html == render_markdown(text), example["example"]


def test_commonmark_examples_with_crlf() -> None:
    for example in _EXAMPLES[::7]:
        text = example["markdown"].replace("\n", "\r\n")
        assert stream_markdown(text, [1, 2, 3], [True]).html == render_markdown(text), example["example"]


@pytest.mark.parametrize("path", _ANSWERS, ids=lambda p: p.stem)
@pytest.mark.parametrize("theme", ["light", "dark"])
def test_answers_one_char_at_a_time(path: Path, theme: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert stream_markdown(text, [1], [True], theme).html == render_markdown(text, theme=theme)


@pytest.mark.parametrize("path", _ANSWERS, ids=lambda p: p.stem)
@_MORE
@given(sizes=st.lists(st.integers(min_value=1, max_value=64), min_size=1, max_size=40), reads=_reads)
def test_answers_any_chunking(path: Path, sizes: list[int], reads: list[bool]) -> None:
    text = path.read_text(encoding="utf-8")
    assert stream_markdown(text, sizes, reads).html == render_markdown(text)


@_MORE
@given(order=st.permutations(list(range(9))), sizes=_sizes, reads=_reads)
def test_concatenated_answers_any_chunking(order: list[int], sizes: list[int], reads: list[bool]) -> None:
    texts = [p.read_text(encoding="utf-8") for p in _ANSWERS]
    text = "\n\n".join(texts[i % len(texts)] for i in order)
    assert stream_markdown(text, sizes, reads).html == render_markdown(text)


@_MORE
@given(cuts=st.lists(st.integers(min_value=0, max_value=10_000), max_size=60))
def test_feed_bytes_split_inside_characters(cuts: list[int]) -> None:
    text = (CORPUS / "answers" / "02_zh_mixed.md").read_text(encoding="utf-8")
    data = text.encode("utf-8")
    points = sorted({c % (len(data) + 1) for c in cuts})
    md = IncrementalMarkdown()
    prev = 0
    for p in [*points, len(data)]:
        md.feed_bytes(data[prev:p])
        md.render()
        prev = p
    md.finish()
    assert "\ufffd" not in md.html
    assert md.text == text
    assert md.html == render_markdown(text)


def test_feed_bytes_every_byte_alone() -> None:
    text = "中文 **粗体** 和 emoji 👩‍👩‍👧\n\n```\n代码 ✓\n```\n"
    md = IncrementalMarkdown()
    for b in text.encode("utf-8"):
        md.feed_bytes(bytes([b]))
    md.finish()
    assert md.text == text
    assert md.html == render_markdown(text)


def test_feed_bytes_invalid_bytes_are_replaced() -> None:
    data = b"ok \xff\xfe and \xe4\xb8"
    md = IncrementalMarkdown()
    for b in data:
        md.feed_bytes(bytes([b]))
    md.finish()
    assert md.html == render_markdown(data.decode("utf-8", errors="replace"))


@_MORE
@given(
    text=st.text(alphabet=st.sampled_from(list("ab #>-*_`~|:[]()!$\\\n\r\t 1.")), max_size=80),
    sizes=_sizes,
    reads=_reads,
)
def test_random_markdown_soup(text: str, sizes: list[int], reads: list[bool]) -> None:
    assert stream_markdown(text, sizes, reads).html == render_markdown(text)


_TABLE_HEAD = "| n | name | `a|b` |\n|--:|:-:|---|\n"
_TABLE_ROWS = [
    "| 1 | one | x |",
    "| 2 | **two** | `y \\| z` |",
    "3 | three",
    "| 4 | 4 | 4 | 4 | 4 |",
    "|",
    "| 6 | [link](https://example.org) | $x$ |",
    "| $$ | 7 | 7 |",
    "| [r] | 8 | 8 |",
]
_TABLE_ENDS = ["", "\n", "\nAfter.\n", "\n\nAfter.\n", "\n> quote\n", "\n# Heading\n", "\n```\ncode\n```\n",
               "\n- item\n", "\n    indented\n", "\n$$\nx\n$$\n", "\n***\n", "\n[r]: https://example.org\n"]


@_MORE
@given(
    rows=st.lists(st.sampled_from(_TABLE_ROWS), min_size=0, max_size=40),
    end=st.sampled_from(_TABLE_ENDS),
    sizes=_sizes,
    reads=_reads,
)
def test_tables_any_chunking(rows: list[str], end: str, sizes: list[int], reads: list[bool]) -> None:
    """Open tables take a fast path (each new row parsed alone): it must agree with the whole-table parse."""
    text = "Intro [r].\n\n" + _TABLE_HEAD + "\n".join(rows) + end
    assert stream_markdown(text, sizes, reads).html == render_markdown(text)
    assert stream_markdown(text, [1], [True]).html == render_markdown(text)
