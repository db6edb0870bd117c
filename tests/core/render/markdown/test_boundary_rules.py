"""Edges of the renderer's boundary rules (``app.core.render.markdown.boundaries``) that mutation testing found
unguarded:
the token index that goes with a boundary, fences that start further down a tail, blank lines, "$$" tails."""

from __future__ import annotations

from app.core.render.markdown.boundaries import fence_closed, find_boundary, is_blank, next_top_level
from app.core.render.markdown.parser import parse


def _tail(src: str) -> tuple[list, list[str]]:
    complete, _, _partial = src.rpartition("\n")
    return parse(src, {"references": {}}), complete.split("\n") if complete else []


def test_is_blank_means_spaces_and_tabs_only() -> None:
    assert is_blank("") and is_blank("   \t ")
    assert not is_blank("\u00a0") and not is_blank("\u3000")      # other Unicode spaces are text
    assert not is_blank("X") and not is_blank(" x ")


def test_no_boundary_gives_the_first_token() -> None:
    tokens, lines = _tail("para one\npara two\n")
    assert find_boundary(tokens, lines) == (0, 0)


def test_the_boundary_comes_with_the_index_of_its_first_token() -> None:
    tokens, lines = _tail("para one\n\npara two\n")
    k, i = find_boundary(tokens, lines)
    assert k == 2 and tokens[i].type == "paragraph_open" and tokens[i].map == [2, 3]


def test_a_block_on_the_second_line_after_a_blank_first_line() -> None:
    tokens, lines = _tail("\npara\nmore\n")
    k, i = find_boundary(tokens, lines)
    assert k == 1 and tokens[i].map == [1, 3]


def test_a_fence_further_down_closes_only_with_a_closing_line() -> None:
    src = "intro\n\n```\n"
    tokens, lines = _tail(src)
    fence = next(t for t in tokens if t.type == "fence")
    assert fence.map == [2, 3]
    assert not fence_closed(fence, lines, 3)           # only its opening line: still open
    src = "intro\n\n```\n```\n"
    tokens, lines = _tail(src)
    fence = next(t for t in tokens if t.type == "fence")
    assert fence_closed(fence, lines, 4)               # an empty fence: opener and closer, two lines


def test_next_top_level_stops_at_a_standalone_block() -> None:
    tokens, _ = _tail("| a |\n|---|\n| 1 |\n\n```\ncode\n```\n")
    table = next(i for i, t in enumerate(tokens) if t.type == "table_open")
    j = next_top_level(tokens, table)
    assert tokens[j].type == "fence"                   # a fence is one token (nesting 0), still a block
    assert next_top_level(tokens, len(tokens) - 1) == len(tokens)


def test_a_dollar_tail_still_splits_at_a_blank_line_after_a_heading() -> None:
    src = "$$ x $$ inline\n\n# Head\n\npara two\n"
    tokens, lines = _tail(src)
    k, i = find_boundary(tokens, lines)
    assert k == 4 and tokens[i].type == "paragraph_open"   # (b) is off after "$$", (a) goes on
