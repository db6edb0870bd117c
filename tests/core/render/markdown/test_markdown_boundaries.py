"""The stability rules of :mod:`app.core.render.markdown.boundaries`, one by one, on hand-made tails."""

from __future__ import annotations

import pytest

from app.core.render.markdown.boundaries import fence_closed, find_boundary, may_close_fence
from app.core.render.markdown.parser import parse


def _boundary(src: str) -> int:
    complete, _, _partial = src.rpartition("\n")
    lines = complete.split("\n") if complete else []
    return find_boundary(parse(src, {"references": {}}), lines)[0]


@pytest.mark.parametrize(("src", "k"), [
    ("para one\n\npara two\n", 2),              # (a) a block after a blank line
    ("para one\npara two\n", 0),                # one paragraph: nothing is stable
    ("Title\n\nnext", 0),                       # (a) needs the new block's line complete
    ("# Head\nnext\n", 1),                      # (b) an ATX heading ends on its line
    ("Title\n===\nnext\n", 2),                  # (b) a setext heading
    ("---\nnext\n", 1),                         # (b) a thematic break
    ("```\ncode\n```\nnext\n", 3),              # (b) a closed fence
    ("```\ncode\n", 0),                         # an open fence: its opener is line 0, nothing before it
    ("intro\n```\ncode\n", 1),                  # (c) the opening line of a fence
    ("| a |\n|---|\n| 1 |\n\nnext", 4),         # (d) a blank line after a table, next line partial
    ("| a |\n|---|\n| 1 |\n", 0),               # a table may still grow
    ("$$\nx\n$$\n# Head\nnext\n", 0),           # (b) off after "$$" in the tail
])
def test_find_boundary(src: str, k: int) -> None:
    assert _boundary(src) == k


def test_fence_closed_needs_a_closer_of_the_same_kind_and_length() -> None:
    def closed(src: str) -> bool:
        lines = src.rstrip("\n").split("\n")
        return fence_closed(parse(src, {})[0], lines, len(lines))

    assert closed("````\nx\n````\n") and closed("```\nx\n`````\n")
    assert not closed("````\nx\n```\n") and not closed("```\nx\n~~~\n") and not closed("```\n")


def test_may_close_fence() -> None:
    assert may_close_fence("``") and may_close_fence("> ~~~ ") and not may_close_fence("`x")
