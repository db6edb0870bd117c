"""A reply's markdown as plain text without markup characters: the quick first look the message list shows for a
moment while a message scrolls into view, before its full render (``app/ui/messages/chat_view.py``).

:func:`plain_preview` is line-based regular expressions: headings, emphasis, code spans and fences, links, quotes,
list markers and table pipes lose their markup; code keeps its text. A line is only tried against the markup its
first character can start (prose and code lines skip the block patterns): 0.74 ms for the history bench's
realistic replies (6.9 KB, 207 lines, in the window's process), 2.9 ms when every line went through every pattern.
A reasoning section (``<think>…</think>``) is shown folded, as the full render shows it — a later one in the
answer too, where it stands.
"""

from __future__ import annotations

import re

from app.core.render.markdown.thinking import THINK_CLOSE, THINK_OPEN, split_thinking

#: The line the preview shows for a folded reasoning section (the full render's header says the same).
THINKING_LINE = "▸ Thinking"

_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"^\s{0,3}#{1,6}(\s+|$)")
_QUOTE = re.compile(r"^(\s*>)+\s?")
_TASK = re.compile(r"^(\s*)[-*+]\s+\[([ xX])\]\s+")
_BULLET = re.compile(r"^(\s*)[-*+]\s+")
_RULE = re.compile(r"^\s{0,3}([-*_])(\s*\1){2,}\s*$")
_TABLE_SEP = re.compile(r"^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$")   # also a setext underline
_MATH_FENCE = re.compile(r"^\s*\$\$\s*$")
_URL = r"\((?:[^()]|\([^()]*\))*\)"
_IMAGE = re.compile(r"!\[([^\]]*)\]" + _URL)
_LINK = re.compile(r"\[([^\]]+)\]" + _URL)
_STRONG = re.compile(r"(\*\*|__|~~)(?=\S)(.+?)(?<=\S)\1")
_EM = re.compile(r"(?<!\*)\*(?=[^\s*])(.+?)(?<=[^\s*])\*(?!\*)|(?<![\w_])_(?=\S)(.+?)(?<=\S)_(?![\w_])")
_CODE_SPAN = re.compile(r"`+([^`]*)`+")


def _group1(m: re.Match[str]) -> str:
    return m.group(1)


def _group2(m: re.Match[str]) -> str:
    return m.group(2)


def _bullet(m: re.Match[str]) -> str:
    return m.group(1) + "• "


# (replacements are functions, not templates such as r"\1": ``re`` imports itself again for each call with a
# template, and under PySide6 every import runs its import hook — a third of the preview's time)


def _cells(line: str) -> str:
    """A table row's cells, three spaces apart, without its pipes."""
    return "   ".join(cell.strip() for cell in line.strip().strip("|").split("|"))


def _inline(line: str) -> str:
    if "](" in line:
        line = _LINK.sub(_group1, _IMAGE.sub(_group1, line))
    if "`" in line:
        line = _CODE_SPAN.sub(_group1, line)
    if "*" in line or "_" in line or "~" in line:
        line = _EM.sub(lambda m: m.group(1) or m.group(2), _STRONG.sub(_group2, line))
    return line


#: Characters of a streaming reply's end its preview shows when its chat is opened again (a screen or two): the
#: whole text so far took ~25 ms to preview and lay out at 45 KB (``python -m app.bench history``).
TAIL_PREVIEW_CHARS = 6000
_FENCE_LINE = re.compile(r"^[ ]{0,3}(`{3,}|~{3,})(.*)$", re.M)


def tail_preview(text: str, chars: int = TAIL_PREVIEW_CHARS) -> str:
    """The end of ``text`` (a reply that streams) as :func:`plain_preview` shows it: its last ``chars`` characters
    or so (from a line start when there is one), after a line "…" when cut. A code block open where it is cut
    stays code (its fence is looked for in the part left out); a reasoning section that closes in the tail is
    folded, as ``plain_preview`` folds one that only closes. ``plain_preview(text)`` for a text of at most
    ``chars``. Never raises."""
    if len(text) <= chars:
        return plain_preview(text)
    start = len(text) - chars
    nl = text.find("\n", start)
    cut = nl + 1 if 0 <= nl < len(text) - 1 else start
    head, tail = text[:cut], text[cut:]
    fence = ""
    for m in _FENCE_LINE.finditer(head):
        marker = m.group(1)
        if not fence:
            fence = marker
        elif marker[0] == fence[0] and len(marker) >= len(fence) and not m.group(2).strip():
            fence = ""
    if fence:
        tail = fence + "\n" + tail
    return "…\n" + plain_preview(tail)


def plain_preview(text: str) -> str:
    """``text`` (a reply's markdown) as plain text without markup characters, same lines, same order.

    Never raises; an empty text gives ``""``. Not a renderer: nested emphasis or reference links may keep a
    character, and math stays as written.
    """
    thinking, answer, _done = split_thinking(text)
    out: list[str] = [THINKING_LINE, ""] if thinking is not None else []
    fence = ""
    math = False
    later = False            # inside a later reasoning section (a <think> block in the answer): folded
    for line in answer.strip("\n").split("\n"):
        lead = line.lstrip()[:1]     # every markup below starts with a character that is not a letter or digit
        if later or (not fence and lead == "<" and line.lstrip(" ").startswith(THINK_OPEN)
                     and len(line) - len(line.lstrip(" ")) < 4):
            if not later:
                out.append(THINKING_LINE)
            later = THINK_CLOSE not in line
            line = line.split(THINK_CLOSE, 1)[1] if THINK_CLOSE in line else ""
            if not line.strip():
                continue
            lead = line.lstrip()[:1]
        m = _FENCE.match(line) if lead in ("`", "~") else None
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not line.strip(fence[0]).strip():
                fence = ""
                continue
            out.append(line)
            continue
        if m:
            fence = m.group(1)
            continue
        if lead == "$" and _MATH_FENCE.match(line):
            math = not math
            continue
        if math:
            out.append(line)
            continue
        if lead.isalnum():           # prose, a table cell, a numbered item: inline markup only
            out.append(_inline(line))
            continue
        if lead == "|":              # a table's row (or its delimiter row)
            if not (_TABLE_SEP.match(line) and "-" in line):
                out.append(_inline(_cells(line)))
            continue
        if _RULE.match(line) or (_TABLE_SEP.match(line) and "-" in line):
            continue
        line = _HEADING.sub("", line)
        line = _QUOTE.sub("", line)
        task = _TASK.match(line)
        if task:
            box = "☐" if task.group(2) == " " else "☑"
            line = f"{task.group(1)}{box} {line[task.end():]}"
        else:
            line = _BULLET.sub(_bullet, line)
        if line.lstrip().startswith("|"):
            line = _cells(line)
        out.append(_inline(line))
    return "\n".join(out).strip("\n")
