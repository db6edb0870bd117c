"""LaTeX's bracket delimiters as markdown-it rules: ``\\( … \\)`` inline, ``\\[ … \\]`` display.

Models (and the system prompts written for them) use these as often as dollars. Plain CommonMark reads them as
backslash escapes — ``\\(\\theta\\)`` shows as ``(\\theta)`` — so these rules run before the escape rule:

* ``\\( … \\)`` anywhere in inline text is an inline formula (token ``math_inline``, markup ``\\(``) when its
  content has something besides spaces and backslashes (``\\(\\)`` and ``\\(\\\\\\)`` stay escapes);
* ``\\[ … \\]`` inside a paragraph is a display formula set in the line (``math_inline_double``, markup ``\\[``)
  when its content looks like TeX — a backslash, ``^``, ``_``, ``=``, ``+``, ``{``, ``}``, ``<``, ``>`` or
  ``|`` — so escaped brackets (``\\[1\\]``, ``\\[sic\\]``, ``\\[foo]``) stay text;
* a line starting with ``\\[`` up to a line ending with ``\\]`` (the same or a later one, never across a blank
  line, which :mod:`.boundaries` relies on) is a display block (``math_block``, markup ``\\[``); it may
  interrupt a paragraph, as models write "The formula is:" right above it.

A closing ``\\)`` / ``\\]`` is one preceded by an odd run of backslashes (``\\\\)`` is TeX's line break then
a parenthesis). Code spans and code blocks are untouched: their rules consume them before these run.
"""

from __future__ import annotations

import re

from markdown_it import MarkdownIt
from markdown_it.rules_block import StateBlock
from markdown_it.rules_inline import StateInline

#: Content that makes ``\[ … \]`` inside a paragraph a formula rather than escaped brackets.
_TEXISH = re.compile(r"[\\^_=+{}<>|]")
#: Content with something to draw (not only blanks and backslashes).
_SUBSTANCE = re.compile(r"[^\s\\]")


def _odd_backslashes_before(src: str, pos: int) -> bool:
    """Whether an odd number of backslashes ends right before ``src[pos]``."""
    n = 0
    while pos - n - 1 >= 0 and src[pos - n - 1] == "\\":
        n += 1
    return n % 2 == 1


def _find_closer(src: str, start: int, end: int, char: str) -> int:
    """Index of the backslash of the first ``\\<char>`` closer in ``src[start:end]`` (see the module docstring),
    or -1."""
    pos = start
    while True:
        i = src.find(char, pos, end)
        if i < 0:
            return -1
        if i - 1 >= start and _odd_backslashes_before(src, i):
            return i - 1
        pos = i + 1


def bracket_inline(state: StateInline, silent: bool) -> bool:
    """Inline rule: ``\\( … \\)`` and ``\\[ … \\]`` (see the module docstring)."""
    src, pos = state.src, state.pos
    if src[pos] != "\\" or pos + 1 >= state.posMax:
        return False
    opener = src[pos + 1]
    if opener not in "([" or _odd_backslashes_before(src, pos):
        return False
    close = _find_closer(src, pos + 2, state.posMax, ")" if opener == "(" else "]")
    if close < 0:
        return False
    content = src[pos + 2 : close]
    if not _SUBSTANCE.search(content) or (opener == "[" and not _TEXISH.search(content)):
        return False
    if not silent:
        token = state.push("math_inline" if opener == "(" else "math_inline_double", "math", 0)
        token.content = content.strip()
        token.markup = "\\" + opener
    state.pos = close + 2
    return True


def _closes(line: str) -> bool:
    r"""Whether a line (right-stripped) ends with a ``\]`` closer."""
    return line.endswith("\\]") and _odd_backslashes_before(line, len(line) - 1)


def bracket_block(state: StateBlock, start_line: int, end_line: int, silent: bool) -> bool:
    """Block rule: a ``\\[`` line up to a line ending with ``\\]`` (see the module docstring)."""
    if state.is_code_block(start_line):
        return False
    first = state.bMarks[start_line] + state.tShift[start_line]
    line = state.src[first : state.eMarks[start_line]].rstrip()
    if not line.startswith("\\["):
        return False
    parts: list[str] = []
    last = start_line
    if len(line) >= 4 and _closes(line):
        parts.append(line[2:-2])
    else:
        parts.append(line[2:])
        while True:
            last += 1
            if last >= end_line:
                return False
            text = state.src[state.bMarks[last] + state.tShift[last] : state.eMarks[last]].rstrip()
            if not text or state.sCount[last] < state.blkIndent:
                return False  # a blank line (or the end of the container) before the closer
            if _closes(text):
                parts.append(text[:-2])
                break
            parts.append(text)
    content = "\n".join(parts)
    if not _SUBSTANCE.search(content):
        return False
    if silent:
        return True
    state.line = last + 1
    token = state.push("math_block", "math", 0)
    token.block = True
    token.content = content.strip()
    token.markup = "\\["
    token.map = [start_line, state.line]
    return True


def brackets_plugin(md: MarkdownIt) -> None:
    """Add the bracket rules (after dollarmath's, before the escape rule and fences)."""
    md.inline.ruler.before("escape", "math_inline_bracket", bracket_inline)
    md.block.ruler.before("fence", "math_block_bracket", bracket_block,
                          {"alt": ["paragraph", "reference", "blockquote", "list"]})
