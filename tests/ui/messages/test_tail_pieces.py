"""The view's pieces of an open tail are split again only where the tail changed (``ui.messages.tail_pieces``)."""

from __future__ import annotations

from typing import Any

import pytest

from app.core.render.markdown import PIECE, IncrementalMarkdown
from app.ui.messages import tail_pieces
from app.ui.messages.rich_text import split_paragraph
from app.ui.messages.tail_pieces import TailPieces


def naive(tail: list[str], tail_final: int) -> tuple[list[str], int]:
    """The split the view made before, at every tick: every part split at PIECE (a part that ends with it has no
    empty last piece), every piece into the view's pieces."""
    pieces: list[str] = []
    n_final = 0
    rpieces = [p for html in tail for p in _pieces(html)]
    for k, piece in enumerate(rpieces):
        subs = split_paragraph(piece)
        if k < tail_final:
            n_final += len(subs)
        elif k == len(rpieces) - 1 and n_final == len(pieces) and len(subs) > 2:
            n_final += len(subs) - 2
        pieces.extend(subs)
    return pieces, n_final


def _pieces(html: str) -> list[str]:
    out = html.split(PIECE)
    return out[:-1] if len(out) > 1 and not out[-1] else out


def table(rows: int) -> str:
    return "| # | name | value |\n|---:|:---|---|\n" + "".join(f"| {i} | row *{i}* | `v{i}` |\n" for i in range(rows))


def stream(text: str, step: int) -> list[tuple[list[str], int]]:
    md = IncrementalMarkdown()
    tails = []
    for i in range(0, len(text), step):
        md.feed(text[i:i + step])
        md.render()
        tails.append((list(md.tail_blocks), md.tail_final_pieces))
    return tails


def test_an_open_tables_row_groups_are_parts_that_stay_the_same_objects() -> None:
    tails = stream(table(200), 97)
    before, _ = tails[40]
    after, final = tails[41]
    assert len(before) > 10
    assert final >= len(before) - 2
    assert all(a is b for a, b in zip(after[: len(before) - 2], before[: len(before) - 2], strict=True))
    assert all(part.endswith(PIECE) for part in after[:-1])


def test_the_parts_join_to_the_tails_html() -> None:
    md = IncrementalMarkdown()
    text = table(150)
    for i in range(0, len(text), 131):
        md.feed(text[i:i + 131])
        md.render()
        assert "".join(md.tail_blocks) == md.tail_html


@pytest.mark.parametrize(("text", "reuse"), [
    (table(300) + "\nAfter the table.\n", 100),
    ("Intro paragraph.\n\n" + table(120) + "\n" + "word " * 900 + "\n\n- a\n- b\n", 40),
    ("word " * 2000 + "\n\n" + table(60), 0),      # the open paragraph and the table: no fast path, no reuse
    ("```python\n" + "".join(f"def f{i}(x):\n    return x * {i}\n\n" for i in range(300)), 100),   # an open fence
], ids=["table", "table-then-paragraph", "paragraph-then-table", "fence"])
def test_the_split_equals_a_split_of_the_whole_tail_at_every_tick(text: str, reuse: int) -> None:
    tp = TailPieces()
    reused = 0
    for tail, final in stream(text, 97):
        assert tp.split(tail, final) == naive(tail, final)
        reused = max(reused, tp.same)
    assert reused >= reuse            # the row groups were not split again


def test_a_tick_splits_only_the_new_row_groups(monkeypatch: Any) -> None:
    calls = [0]
    real = tail_pieces.split_paragraph

    def counted(html: str, *a: Any) -> list[str]:
        calls[0] += 1
        return real(html, *a)

    monkeypatch.setattr(tail_pieces, "split_paragraph", counted)
    tp = TailPieces()
    per_tick = []
    for tail, final in stream(table(1200), 320):
        calls[0] = 0
        tp.split(tail, final)
        per_tick.append(calls[0])
    assert len(per_tick) > 100
    assert max(per_tick[-20:]) <= 12          # ~6 row groups arrive a tick; 600 are in the tail by then


def test_the_parts_before_the_first_that_changed_are_kept() -> None:
    """A part in the middle that changed (an open fence's lines whose colours came: ``fences``) keeps the pieces
    of the parts before it, not none of them."""
    a, b, c, d = (f"<p>part {k}</p>\n{PIECE}" for k in "abcd")
    tp = TailPieces()
    first, _ = tp.split([a, b, c, d, "<p>open</p>\n"], 0)
    again, _ = tp.split([a, b, "<p>changed</p>\n" + PIECE, d, "<p>open</p>\n"], 0)
    assert tp.same == 2 and again[:2] == first[:2] and again[2] == "<p>changed</p>\n"
    tp.split([a, b, "<p>changed</p>\n" + PIECE, d, "<p>open, longer</p>\n"], 0)
    assert tp.same == 4                                  # equal strings count as the same part
