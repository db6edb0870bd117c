"""A long paragraph of a top-level quote is cut into pieces (``quote_html``), and while the quote streams only the
lines after its last cut are parsed again (``quotes.OpenQuote``) — any chunking still gives the one-shot render,
and a cut never changes what the text means (the pieces read as the uncut quote's lines)."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.render.markdown import PIECE, IncrementalMarkdown, quote_html, render_markdown
from app.core.render.markdown import parser as parser_mod
from app.core.render.markdown import quotes as quotes_mod
from app.core.render.markdown.quote_html import QUOTE_CUT_SPAN, QUOTE_PIECE_LINES
from tests.helpers.markdown import record_closes, stream_markdown

N = QUOTE_PIECE_LINES


def _quote(n: int, line: str = "line {i} of a long quote, with `code` and *emphasis*") -> str:
    return "".join("> " + line.format(i=i) + "\n" for i in range(n))


#: Shapes whose later lines change what the earlier lines of the quote mean, or end it oddly.
CASES = {
    "the bench's quote": _quote(5 * N) + "\nAfter the quote.\n",
    "a setext underline late": _quote(3 * N) + "> ===\n\nafter\n",
    "a dash underline late": _quote(3 * N) + "> ---\n",
    "emphasis across lines": _quote(N - 1) + "> *open\n" + _quote(2 * N) + "> close* here\n" + _quote(N),
    "a lone star": _quote(N) + "> a * b and *c\n" + _quote(QUOTE_CUT_SPAN + N),
    "a code span across lines": _quote(N - 2) + "> `code\n> span` end\n" + _quote(3 * N),
    "a link across lines": _quote(N) + "> [link\n> text](https://example.org) x\n" + _quote(2 * N),
    "a reference link": _quote(N) + "> see [ref] here\n" + _quote(2 * N) + "\n[ref]: /url\n",
    "lazy lines": "".join(f"> quoted {i}\nlazy {i}\n" for i in range(2 * N)) + "\nafter\n",
    "list-like lines": _quote(N) + "> 2. not a list\n> - a list\n" + _quote(2 * N),
    "indented lines": _quote(N) + ">     four spaces\n" + _quote(2 * N),
    "a table inside": _quote(N) + "> a | b\n> --|--\n> 1 | 2\n" + _quote(2 * N),
    "a table header after a cut line": _quote(N) + "> head | x\n> --|--\n" + _quote(2 * N),
    "hard breaks": "".join(f"> line {i}  \n" if i % 3 else f"> line {i}\\\n" for i in range(4 * N)),
    "a backslash at a cut": _quote(N - 1) + "> end\\\n" + _quote(2 * N),
    "blank lines and paragraphs": (_quote(2 * N) + ">\n") * 3 + "after\n",
    "nested quotes": _quote(N) + "> > inner\n> > more\n" + _quote(2 * N),
    "code in the quote": _quote(2 * N) + "> ```py\n> x = 1\n> ```\n" + _quote(2 * N),
    "a quote in a list": "- item\n" + "".join(f"  > q {i}\n" for i in range(3 * N)),
    "ends while open": _quote(4 * N),
    "a heading after": _quote(3 * N) + "# Head\ntext\n",
    "formulas": _quote(N) + "> a $x^2$ formula\n" + _quote(2 * N),
    "underscores": _quote(3 * N, "snake_case words {i} and _emphasis_ here"),
    "escapes and entities": _quote(3 * N, r"a \* star {i} &amp; more"),
    "digits first": _quote(3 * N, "{i} starts with a digit"),
    "two quotes": _quote(2 * N) + "\n" + _quote(3 * N),
    "a reasoning tag": _quote(N) + "> <think>\n" + _quote(2 * N),
}


def test_a_long_quote_is_pieces_of_quote_tables_with_the_quote_margins_at_the_ends() -> None:
    out = render_markdown(_quote(3 * N))
    pieces = out.split(PIECE)
    assert len(pieces) == 3
    assert all(p.startswith("<table") and p.endswith("</td></tr></table>\n") for p in pieces)
    assert "margin-top:4px;margin-bottom:0" in pieces[0] and '<p style="margin-bottom:0">' in pieces[0]
    assert "margin-top:0;margin-bottom:0" in pieces[1].split("\n")[0]
    assert '<p style="margin-top:0;margin-bottom:0">' in pieces[1]
    assert "margin-top:0;margin-bottom:6px" in pieces[2] and '<p style="margin-top:0">' in pieces[2]
    assert [p.count("<br />") for p in pieces] == [N - 1, N - 1, N - 1]    # a cut replaces a line break
    assert PIECE not in render_markdown(_quote(N))                          # short: one piece
    assert PIECE not in render_markdown("- item\n" + "".join(f"  > q {i}\n" for i in range(3 * N)))  # nested


def _uncut(html: str) -> str:
    """The HTML with every cut put back as the line break it replaced."""
    html = re.sub(r"</p>\n</td></tr></table>\n" + PIECE + r"<table [^>]*><tr><td [^>]*></td><td [^>]*>\n"
                  r'<p style="margin-top:0(?:;margin-bottom:0)?">', "<br />\n", html)
    html = html.replace('<p style="margin-bottom:0">', "<p>")
    return re.sub(r"margin-top:4px;margin-bottom:0", "margin-top:4px;margin-bottom:6px", html)


def test_a_cut_never_changes_what_the_quote_says(monkeypatch: pytest.MonkeyPatch) -> None:
    cut = {name: render_markdown(text) for name, text in CASES.items()}
    monkeypatch.setattr(quote_html, "QUOTE_PIECE_LINES", 10 ** 6)
    for name, text in CASES.items():
        whole = render_markdown(text)
        assert _uncut(cut[name]) == whole, name
    assert sum(PIECE in h for h in cut.values()) > 15        # most shapes were cut somewhere


@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(sizes=st.lists(st.integers(min_value=1, max_value=64), min_size=1, max_size=12),
       reads=st.lists(st.booleans(), min_size=1, max_size=6))
def test_streamed_quotes_equal_the_one_shot_render_at_any_chunking(sizes: list[int], reads: list[bool]) -> None:
    for name, text in CASES.items():
        assert stream_markdown(text, sizes, reads).html == render_markdown(text), name


def test_streamed_quotes_equal_the_one_shot_render_line_by_line() -> None:
    for name, text in CASES.items():
        md = IncrementalMarkdown(theme="light")
        for line in text.splitlines(keepends=True):
            md.feed(line)
            md.render()
        md.finish()
        assert md.html == render_markdown(text), name


_line = st.sampled_from([
    "> line {i} with *em*\n", "> word {i} `code`\n", "> *open {i}\n", "> close* {i}\n", "> `tick {i}\n",
    "> [link {i}\n", "> ](/u) {i}\n", ">\n", "lazy {i}\n", "> - item {i}\n", "> ===\n", "\n", "> > deep {i}\n",
    "> a | b\n", "> --|--\n", "> 3. three\n", "> end {i}  \n", "> x {i}\\\n", "> [r] {i}\n",
])


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(lines=st.lists(_line, min_size=1, max_size=80),
       sizes=st.lists(st.integers(min_value=1, max_value=48), min_size=1, max_size=12),
       reads=st.lists(st.booleans(), min_size=1, max_size=6))
def test_random_quotes_equal_the_one_shot_render(lines: list[str], sizes: list[int], reads: list[bool]) -> None:
    text = _quote(N + 2) + "".join(line.format(i=i) for i, line in enumerate(lines)) + "\n[r]: /r\n"
    assert stream_markdown(text, sizes, reads).html == render_markdown(text)


def test_an_open_quote_parses_its_new_lines_per_render_not_all_of_them(monkeypatch: pytest.MonkeyPatch) -> None:
    text = _quote(400) + "\nAfter the quote.\n"
    parsed: list[int] = []
    real = parser_mod.parse

    def spy(src: str, env: dict) -> list:  # type: ignore[type-arg]
        parsed.append(src.count("\n"))
        return real(src, env)

    monkeypatch.setattr(parser_mod, "parse", spy)      # the fast paths parse through ParseMemo
    closed = record_closes(monkeypatch, quotes_mod.OpenQuote)
    md = IncrementalMarkdown(theme="light")
    for line in text.splitlines(keepends=True):
        md.feed(line)
        md.render()
    md.finish()
    assert md.html == render_markdown(text)
    assert len(parsed) > 390 and max(parsed) <= 2 * N + 3     # the lines after the last cut, not the quote
    assert closed and closed[-1]                               # it ended while streaming: made from its pieces


def test_the_pieces_before_the_last_cut_are_final_pieces_of_the_tail() -> None:
    md = IncrementalMarkdown(theme="light")
    md.feed("Intro:\n\n" + _quote(6 * N) + "> the last")
    md.render()
    pieces = md.tail_html.split(PIECE)
    final = md.tail_final_pieces
    assert 1 + 4 <= final < len(pieces)          # the intro and every piece before the last cut
    md.feed(" line\n" + _quote(3 * N))
    md.render()
    assert md.tail_html.split(PIECE)[:final] == pieces[:final]     # final pieces never changed
    assert md.tail_final_pieces > final


@pytest.mark.parametrize("size", [5, 64])
def test_final_pieces_never_change_while_a_quote_streams(size: int) -> None:
    """What the renderer calls final (stable blocks, the tail's first ``tail_final_pieces``) is what the view seals:
    it must not change later — except where a setext underline turns the whole paragraph into a heading."""
    for name, text in CASES.items():
        if "underline" in name:
            continue
        md = IncrementalMarkdown(theme="light")
        final: list[str] = []
        for i in range(0, len(text), size):
            md.feed(text[i:i + size])
            md.render()
            shown = [p for b in md.stable_blocks for p in b.split(PIECE)] + md.tail_html.split(PIECE)
            assert shown[:len(final)] == final, name
            final = shown[:len(shown) - len(md.tail_html.split(PIECE)) + md.tail_final_pieces]
