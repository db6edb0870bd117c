"""A code block's HTML: its header (language, "Copy" link), then its lines in ``<pre>`` pieces of a few lines each.

The one-shot render (:mod:`.html`) makes a block's pieces at once (:func:`code_block_html`); an open fence
(:mod:`.fences`) makes them as its lines arrive, keeping the pieces of its finished lines
(:func:`add_code_lines` resumes the same grouping).
"""

from __future__ import annotations

import html
from collections.abc import Iterable

from app.core.render.highlight import CodeTheme
from app.core.render.markdown.links import COPY_SCHEME
from app.core.render.markdown.piece import PIECE

_esc = html.escape

#: Font families for code and math (Qt picks the first installed one).
MONO = "'JetBrains Mono','DejaVu Sans Mono','Noto Sans Mono','Consolas','Menlo',monospace"
#: Code lines per piece of a top-level code block (only the last, growing piece changes while it streams).
#: Smaller pieces make each tick's re-insert cheaper (``python -m app.bench render``, frame interval p99 on this
#: 2-core machine, code lines / table rows per piece: 16/8 → 24.9 ms, 8/4 → 22.2–22.7, 8/3 → 21.4, 4/2 → 19.5,
#: 8/2 → 18.5).
CODE_PIECE_LINES = 8
#: Plain (unhighlighted) code lines longer than this many characters are shown wrapped into blocks of this size
#: (the copy button still copies the real line): Qt lays a paragraph out in time that grows faster than its
#: length (~3.5 ms for 1 KB, ~83 ms for 32 KB here), and a streaming line is laid out again every tick — a
#: 200 KB line took ~900 ms per tick. Blocks of this size keep each tick bounded.
CODE_WRAP_CHARS = 1_000
#: A code piece ends after :data:`CODE_PIECE_LINES` lines or once it holds this many characters of plain text.
CODE_PIECE_CHARS = 2_000


#: The text of a code block's Copy link, in the UI's language (``set_copy_label``; the core has no translations).
_COPY_LABEL = ["Copy"]


def set_copy_label(text: str) -> None:
    """Name the code blocks' Copy link ``text`` in renders made from now on (the UI calls this when it installs
    a language)."""
    _COPY_LABEL[0] = text or "Copy"


def copy_href(prefix: str, n: int) -> str:
    """The address of the "Copy" link of code block ``n`` of a renderer whose links carry ``prefix``."""
    return f"{COPY_SCHEME}:{prefix}{n}"


def code_block_html(inner: str, lang: str, href: str, colors: CodeTheme, pieces: bool = True) -> str:
    """A code block: a header (language, "Copy" link) then the code as tinted ``<pre>`` blocks.

    ``inner`` is already-escaped/highlighted HTML whose lines are separated by ``\n`` (every styled span closes
    at the end of its line); one trailing newline is dropped (Qt would show an empty line). With ``pieces`` the
    header and every :data:`CODE_PIECE_LINES` lines of code are separate pieces (joined by :data:`PIECE`), so
    appending lines to an open fence only changes its last piece. Qt paints the background of consecutive
    ``<pre>`` blocks (margin 0) as one box; the left margin pads the code inside it.
    """
    if inner.endswith("\n"):
        inner = inner[:-1]
    header = code_header(lang, href, colors)
    style = code_style(colors)
    if not pieces:
        return f'{header}<pre style="{style};margin-bottom:8px">{_pre_body(inner)}</pre>\n'
    groups = _code_groups(inner.split("\n"))
    return PIECE.join([header, *(code_piece(g, style, n == len(groups) - 1) for n, g in enumerate(groups))])


def code_header(lang: str, href: str, colors: CodeTheme) -> str:
    """The piece a code block starts with: its language and its "Copy" link (``href``)."""
    label = _esc(lang) if lang else "code"
    return (
        f'<table width="100%" cellspacing="0" cellpadding="4" border="0" bgcolor="{colors.header_background}" '
        f'style="margin-top:6px">'
        f'<tr><td style="color:{colors.header_color}">'
        f'<span style="font-family:{MONO};font-size:small">{label}</span></td>'
        f'<td align="right" style="font-size:small">'
        f'<a href="{href}" style="color:{colors.link};background-color:{colors.button_background};'
        f'text-decoration:none">&nbsp;{_esc(_COPY_LABEL[0])}&nbsp;</a></td></tr></table>\n'
    )


def code_style(colors: CodeTheme) -> str:
    """The style of a code block's ``<pre>`` pieces, without their bottom margin."""
    return (
        f"font-family:{MONO};white-space:pre-wrap;margin-top:0;margin-left:10px;margin-right:0;"
        f"background-color:{colors.background};color:{colors.plain_color}"
    )


def code_piece(group: list[str], style: str, last: bool) -> str:
    """One ``<pre>`` piece of a code block: the (escaped/highlighted) lines of ``group``; ``last``: the block's
    last piece, which carries the block's bottom margin."""
    body = _pre_body("\n".join(group))
    return f'<pre style="{style};margin-bottom:{"8px" if last else "0"}">{body}</pre>\n'


def _pre_body(text: str) -> str:
    """``text`` (lines joined by newlines) as the content of a ``<pre>`` that shows every line: an HTML reader
    drops a newline right after ``<pre>`` and Qt also one right before ``</pre>``, which lost a blank first or
    last line of a piece (blank lines vanished from code on screen). So one newline is added at each end."""
    return "\n" + text + "\n" if text.endswith("\n") or not text else "\n" + text


def _code_groups(lines: list[str]) -> list[list[str]]:
    """Group the (escaped/highlighted) lines of a code block into pieces, greedily from the first line, so a
    growing last line only ever changes the last piece. Long plain lines are cut into blocks first."""
    groups: list[list[str]] = []
    group, _ = add_code_lines(lines, groups, [], 0)
    groups.append(group)
    return groups


def add_code_lines(lines: Iterable[str], closed: list[list[str]], group: list[str],
                   size: int) -> tuple[list[str], int]:
    """One step of :func:`_code_groups`, resumable: add ``lines`` to the open ``group`` (holding ``size``
    characters of plain text), appending each group they close to ``closed``; returns the open group and its
    size. A group closes only when the next line (or block of a long line) does not fit, so a closed group is
    never the block's last."""
    for line in lines:
        for part in _wrap_plain(line):
            if group and (len(group) >= CODE_PIECE_LINES or size + len(part) > CODE_PIECE_CHARS):
                closed.append(group)
                group, size = [], 0
            group.append(part)
            if "<" not in part:            # plain text: its length is what Qt lays out (tags would inflate it)
                size += len(part)
    return group, size


def _wrap_plain(line: str) -> list[str]:
    """``line`` cut into :data:`CODE_WRAP_CHARS`-character blocks if it is long plain escaped text (no tags);
    never inside an HTML entity such as ``&amp;``."""
    if len(line) <= CODE_WRAP_CHARS or "<" in line:
        return [line]
    parts = []
    start = 0
    while len(line) - start > CODE_WRAP_CHARS:
        cut = start + CODE_WRAP_CHARS
        amp = line.rfind("&", cut - 8, cut)
        if amp != -1 and line.find(";", amp, cut) == -1:
            cut = amp                      # an entity straddles the cut: cut before it
        parts.append(line[start:cut])
        start = cut
    parts.append(line[start:])
    return parts
