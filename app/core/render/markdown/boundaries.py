"""Where a streamed text's top-level blocks are stable: pure functions over tokens and lines.

The incremental renderer keeps the text as a *stable prefix* of finished top-level blocks, whose HTML is made
once, and an *open tail* of complete lines plus one partial line. Each render parses only the tail. A top-level
block boundary at tail line ``k`` moves lines ``< k`` into the stable prefix when nothing after line ``k`` can
change them. CommonMark closes blocks line by line, so that holds when

(a) line ``k`` is complete, starts a top-level block and line ``k - 1`` is blank (a link reference title,
    a ``$$`` math block — built with ``allow_blank_lines=False`` —, a ``\\[`` block (:mod:`.brackets`) or a
    setext underline cannot cross a blank line); or
(b) line ``k`` ends a top-level closed fence, ATX/setext heading or thematic break whose lines are complete
    (and no ``$$`` or ``\\[`` precedes it in the tail: the display math block rules look ahead past other
    blocks); or
(c) line ``k`` is the complete opening line of a top-level fence (same ``$$`` / ``\\[`` condition); or
(d) line ``k - 1`` is a complete blank line right after a top-level table (a blank line ends a table, and a
    ``$$`` or ``\\[`` block cannot cross it), even while line ``k`` is still partial.

Re-parsing from such a boundary is equivalent to parsing the whole text (the invariant tests check it over
every CommonMark example and the corpus, at any chunking).

A partial last line is not shown while it could still change how the lines above it render
(:func:`holds_back`): a closing fence (for a tick it would be a stray ``\\``` paragraph), a setext underline
(``Here are the options:`` then a partial ``-`` showed an ``<h2>`` for a tick before the list came) or a table's
delimiter row (the paragraph above would turn into a table header and back).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from markdown_it.token import Token

#: A partial line that could still become the closing line of a fence (also inside a quote).
_CLOSING_PARTIAL = re.compile(r"^[ \t>]*(?:`+|~+)[ \t]*$")
#: A complete closing fence line: up to 3 spaces, 3+ backticks or tildes, trailing blanks.
_CLOSING_LINE = re.compile(r"^ {0,3}(`{3,}|~{3,})[ \t]*$")


#: A partial line that could still re-type the lines above: a setext underline or a table delimiter row.
_RETYPING_PARTIAL = re.compile(r"^[ \t>]*[-=|:][-=|: \t]*$")


def holds_back(partial: str) -> bool:
    """Whether the partial last line ``partial`` is kept off the screen until it is complete (see the module
    docstring): it could still close a fence or re-type the block above it."""
    return _CLOSING_PARTIAL.match(partial) is not None or _RETYPING_PARTIAL.match(partial) is not None


def may_close_fence(partial: str) -> bool:
    """Whether the partial line ``partial`` could still become a closing fence (so it is held back)."""
    return _CLOSING_PARTIAL.match(partial) is not None


def is_blank(line: str) -> bool:
    """A blank line in CommonMark's sense (spaces and tabs only)."""
    return not line.strip(" \t")


def fence_closed(tok: Token, lines: Sequence[str], end: int) -> bool:
    """Whether the block ``tok`` (mapped onto ``lines``, ending before line ``end``) is finished: any block but a
    fence is; a fence is when its last line is a closing fence of its kind and at least its length."""
    if tok.type != "fence":
        return True
    start = tok.map[0] if tok.map else 0
    if end - start < 2:
        return False
    m = _CLOSING_LINE.match(lines[end - 1])
    return m is not None and m.group(1)[0] == tok.markup[0] and len(m.group(1)) >= len(tok.markup)


def next_top_level(tokens: Sequence[Token], i: int) -> int:
    """Index of the first top-level opening/standalone token after ``tokens[i]`` (``len(tokens)`` if none)."""
    for j in range(i + 1, len(tokens)):
        if tokens[j].level == 0 and tokens[j].nesting >= 0:
            return j
    return len(tokens)


def find_boundary(tokens: Sequence[Token], lines: Sequence[str]) -> tuple[int, int]:
    """The largest safe split line ``k`` (0 if none) of a tail and the index of the first token at or after it.

    ``tokens`` are the tail's tokens (maps relative to the tail), ``lines`` its complete lines (a partial line,
    if one was parsed, comes after them).
    """
    n_complete = len(lines)
    best_k, best_i = 0, 0
    dollars_before: bool | None = None
    for i, tok in enumerate(tokens):
        if tok.level != 0 or tok.nesting < 0 or tok.map is None:
            continue
        start, end = tok.map
        # (a) a block starting on a complete line after a blank line
        if 0 < start < n_complete and is_blank(lines[start - 1]):
            best_k, best_i = start, i
        # (d) a table followed by a complete blank line: nothing after a blank line can continue it
        if tok.type == "table_open" and end < n_complete and end + 1 > best_k and is_blank(lines[end]):
            best_k, best_i = end + 1, next_top_level(tokens, i)
        # (b)/(c) need no "$$" / "\\[" before the boundary in the tail (dollarmath looks past other blocks)
        if tok.type in ("fence", "heading_open", "hr"):
            if dollars_before is None:
                dollars_before = any("$$" in line or "\\[" in line for line in lines)
            if dollars_before:
                continue
            if tok.type == "fence" and 0 < start < n_complete:
                best_k, best_i = start, i  # (c)
            if end <= n_complete and end > best_k and fence_closed(tok, lines, end):
                best_k, best_i = end, next_top_level(tokens, i)  # (b)
    return best_k, best_i


def open_display_math(first: Token, lines: list[str]) -> str | None:
    """The TeX of a ``$$`` or ``\\[`` block still open at the end of the stream (the last top-level block, from
    ``first`` on ``lines``), else None: until its ``$$`` / ``\\]`` closes it, markdown sees a paragraph (and would
    eat TeX's backslashes and underscores), so the stream shows its source as TeX."""
    if first.type != "paragraph_open" or first.level != 0 or first.map is None:
        return None
    src = lines[first.map[0] : first.map[1]]
    head = src[0] if src else ""
    opener = head.lstrip(" ")[:2]
    if len(head) - len(head.lstrip(" ")) > 3 or opener not in ("$$", "\\["):
        return None
    body = "\n".join([head.lstrip(" ")[2:], *src[1:]])
    if opener == "$$":
        return None if "$$" in body else body.strip("\n")
    return None if "\\]" in body else body.strip()
