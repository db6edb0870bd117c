"""Incremental markdown → Qt-compatible HTML for streamed LLM replies (DESIGN §3).

Parsing: markdown-it-py's ``commonmark`` preset with ``html=False`` (raw HTML in model output is shown as
escaped text, never interpreted) plus tables, strikethrough, task lists and dollar math (``$…$`` inline,
``$$…$$`` blocks; ``allow_space=False, allow_digits=False`` so "Prices like $5 and $10" stays text).

Safety policy of the HTML made here:

* links are clickable (``<a href>``) only for ``http:``, ``https:`` and ``mailto:`` addresses; any other
  address (``javascript:``, ``file:``, ``data:``, relative, ``brook-copy:`` …) is inert text: the label, then
  the address in parentheses;
* images never load anything: ``![alt](url)`` shows ``alt`` and the address (a link when http/https);
* no ``<img>``, ``<script>``, ``<input>`` or event attribute is ever emitted.

**Incremental algorithm** (:class:`IncrementalMarkdown`): the text is kept as a *stable prefix* of finished
top-level blocks, whose HTML is emitted once, and an *open tail* of complete lines plus one partial line. Each
render parses only the tail. A top-level block boundary at tail line ``k`` moves lines ``< k`` into the stable
prefix when nothing after line ``k`` can change them. CommonMark closes blocks line by line, so that holds when

(a) line ``k`` is complete, starts a top-level block and line ``k - 1`` is blank (a link reference title,
    a ``$$`` math block — built with ``allow_blank_lines=False`` — or a setext underline cannot cross a blank
    line); or
(b) line ``k`` ends a top-level closed fence, ATX/setext heading or thematic break whose lines are complete
    (and no ``$$`` precedes it in the tail: dollarmath's block rule looks ahead past other blocks); or
(c) line ``k`` is the complete opening line of a top-level fence (same ``$$`` condition); or
(d) line ``k - 1`` is a complete blank line right after a top-level table (a blank line ends a table, and a
    ``$$`` block cannot cross it), even while line ``k`` is still partial.

Re-parsing from such a boundary is equivalent to parsing the whole text. Link reference definitions are
collected into an ``env`` shared from block to block, so a definition seen earlier resolves later references.
A definition that arrives *after* a stable block that uses it cannot change what was already emitted while
streaming; :meth:`IncrementalMarkdown.finish` re-renders exactly the stable chunks that might be affected and
returns the index of the first block whose HTML changed, so the final HTML always equals the one-shot render.

Costs per render: an open top-level fence takes a fast path that never re-parses (new complete lines are
checked for the closing fence and highlighted, see :mod:`app.core.highlight`); any other tail is re-parsed,
but once it is longer than :data:`BIG_TAIL_CHARS` it is re-parsed only after it grew by a fraction
:data:`BIG_TAIL_GROWTH` of its size, or after :data:`BIG_TAIL_MIN_S` (and at least 4 × the last render's
cost) passed — amortised O(1) per character, at most ~20 % of the time spent rendering one block; a long table
shows its new rows in steps. Throttling only delays what is shown: the final HTML is unaffected.
"""

from __future__ import annotations

import codecs
import html
import re
import time
from collections.abc import Sequence
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.dollarmath import dollarmath_plugin
from mdit_py_plugins.tasklists import tasklists_plugin

from app.core.highlight import CodeTheme, IncrementalHighlighter, SegmentCache, get_theme, highlight_code

__all__ = [
    "BIG_TAIL_CHARS",
    "BIG_TAIL_GROWTH",
    "PIECE",
    "TABLE_GROUP_ROWS",
    "TABLE_WIDTH_ROWS",
    "IncrementalMarkdown",
    "is_safe_url",
    "render_markdown",
    "split_thinking",
]

#: Tails longer than this (characters) are re-parsed only after growing by BIG_TAIL_GROWTH of their size.
BIG_TAIL_CHARS = 2_000
#: Fraction of the tail's size that must arrive before a big tail is re-parsed again …
BIG_TAIL_GROWTH = 0.2
#: … unless this long (seconds) and 4 × the last render's cost have passed (keeps a slow stream fresh).
BIG_TAIL_MIN_S = 0.25

THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"
SAFE_SCHEMES = ("http:", "https:", "mailto:")
_CLICKABLE_IMAGE_SCHEMES = ("http:", "https:")


def is_safe_url(url: str, schemes: Sequence[str] = SAFE_SCHEMES) -> bool:
    """Whether ``url`` may be a clickable link: its scheme (case-insensitive) is one of ``schemes``."""
    return url.strip().lower().startswith(tuple(schemes))


# ---------------------------------------------------------------------------------------------------------
# markdown-it setup and Qt-friendly render rules
# ---------------------------------------------------------------------------------------------------------


def _build_parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False})
    md.enable(["table", "strikethrough"])
    md.use(tasklists_plugin)
    md.use(dollarmath_plugin, allow_space=False, allow_digits=False, allow_blank_lines=False)
    md.add_render_rule("fence", _render_fence)
    md.add_render_rule("code_block", _render_code_block)
    md.add_render_rule("link_open", _render_link_open)
    md.add_render_rule("link_close", _render_link_close)
    md.add_render_rule("image", _render_image)
    md.add_render_rule("html_inline", _render_html_inline)
    md.add_render_rule("html_block", _render_html_block)
    md.add_render_rule("math_inline", _render_math_inline)
    md.add_render_rule("math_block", _render_math_block)
    md.add_render_rule("math_block_label", _render_math_block)
    md.add_render_rule("table_open", _render_table_open)
    md.add_render_rule("table_close", _render_table_close)
    md.add_render_rule("tbody_open", _render_tbody_open)
    md.add_render_rule("tr_open", _render_tr_open)
    md.add_render_rule("tr_close", _render_tr_close)
    md.add_render_rule("th_open", _render_cell_open)
    md.add_render_rule("td_open", _render_cell_open)
    md.add_render_rule("code_inline", _render_code_inline)
    md.add_render_rule("blockquote_open", _render_blockquote_open)
    md.block.ruler.before("table", "brook_too_deep", _too_deep, {"alt": []})
    return md


#: Block nesting level (a list level counts 2: list + item; a quote 1) from which the rest of a nested block
#: is shown as literal text. markdown-it's own guard (``maxNesting`` = 20 in the CommonMark preset) silently
#: DROPS everything past it — the rest of the nested block and, for lists, what follows the list.
DEEP_LEVEL = 16


def _too_deep(state: Any, start_line: int, end_line: int, silent: bool) -> bool:
    """Block rule: at ``DEEP_LEVEL`` and deeper, keep the remaining lines of this nested range as a literal code
    block instead of parsing (and, past ``maxNesting``, losing) them."""
    if state.level < DEEP_LEVEL or silent:
        return False
    lines = []
    for n in range(start_line, end_line):
        first = state.bMarks[n] + min(state.tShift[n], state.blkIndent)
        lines.append(state.src[first:state.eMarks[n]])
    token = state.push("code_block", "code", 0)
    token.content = "\n".join(lines) + "\n"
    token.map = [start_line, end_line]
    state.line = end_line
    return True


_esc = html.escape

#: Font families for code and math (Qt picks the first installed one).
MONO = "'JetBrains Mono','DejaVu Sans Mono','Noto Sans Mono','Consolas','Menlo',monospace"


def _theme(env: dict[str, Any]) -> CodeTheme:
    return env["brook_theme"]


#: Separates the *pieces* of a block's HTML: an HTML comment (invisible to any HTML reader). The view patches
#: its document piece by piece and re-inserts only the pieces that changed since the last refresh.
PIECE = "<!--brook-piece-->"
#: Code lines per piece of a top-level code block (only the last, growing piece changes while it streams).
#: Smaller pieces make each tick's re-insert cheaper (``python -m app.bench render``, frame interval p99 on this
#: 2-core machine, code lines / table rows per piece: 16/8 → 24.9 ms, 8/4 → 22.2–22.7, 8/3 → 21.4, 4/2 → 19.5,
#: 8/2 → 18.5).
CODE_PIECE_LINES = 8
#: Body rows per ``<table>`` piece of a top-level markdown table (the groups share explicit column widths):
#: Qt re-lays out a whole table on any change, so the open piece is kept small.
TABLE_GROUP_ROWS = 2
#: Body rows whose cell lengths set a split table's column widths (and the least rows a table needs to be split).
TABLE_WIDTH_ROWS = 8


def code_block_html(inner: str, lang: str, copy_href: str, theme: CodeTheme, pieces: bool = True) -> str:
    """A code block: a header (language, "Copy" link) then the code as tinted ``<pre>`` blocks.

    ``inner`` is already-escaped/highlighted HTML whose lines are separated by ``\n`` (every styled span closes
    at the end of its line); one trailing newline is dropped (Qt would show an empty line). With ``pieces`` the
    header and every :data:`CODE_PIECE_LINES` lines of code are separate pieces (joined by :data:`PIECE`), so
    appending lines to an open fence only changes its last piece. Qt paints the background of consecutive
    ``<pre>`` blocks (margin 0) as one box; the left margin pads the code inside it.
    """
    if inner.endswith("\n"):
        inner = inner[:-1]
    label = _esc(lang) if lang else "code"
    header = (
        f'<table width="100%" cellspacing="0" cellpadding="4" border="0" bgcolor="{theme.header_background}" '
        f'style="margin-top:6px">'
        f'<tr><td style="color:{theme.header_color}">'
        f'<span style="font-family:{MONO};font-size:small">{label}</span></td>'
        f'<td align="right" style="font-size:small">'
        f'<a href="{copy_href}" style="color:{theme.link}">Copy</a></td></tr></table>\n'
    )
    style = (
        f"font-family:{MONO};white-space:pre-wrap;margin-top:0;margin-left:10px;margin-right:0;"
        f"background-color:{theme.background};color:{theme.plain_color}"
    )
    if not pieces:
        return f'{header}<pre style="{style};margin-bottom:8px">{inner}</pre>\n'
    groups = _code_groups(inner.split("\n"))
    out = [header]
    for n, group in enumerate(groups):
        bottom = "8px" if n == len(groups) - 1 else "0"
        body = "\n".join(group)
        out.append(f'<pre style="{style};margin-bottom:{bottom}">{body}</pre>\n')
    return PIECE.join(out)


#: Plain (unhighlighted) code lines longer than this many characters are shown wrapped into blocks of this size
#: (the copy button still copies the real line): Qt lays a paragraph out in time that grows faster than its
#: length (~3.5 ms for 1 KB, ~83 ms for 32 KB here), and a streaming line is laid out again every tick — a
#: 200 KB line took ~900 ms per tick. Blocks of this size keep each tick bounded.
CODE_WRAP_CHARS = 1_000
#: A code piece ends after :data:`CODE_PIECE_LINES` lines or once it holds this many characters of plain text.
CODE_PIECE_CHARS = 2_000


def _code_groups(lines: list[str]) -> list[list[str]]:
    """Group the (escaped/highlighted) lines of a code block into pieces, greedily from the first line, so a
    growing last line only ever changes the last piece. Long plain lines are cut into blocks first."""
    groups: list[list[str]] = []
    group: list[str] = []
    size = 0
    for line in lines:
        for part in _wrap_plain(line):
            if group and (len(group) >= CODE_PIECE_LINES or size + len(part) > CODE_PIECE_CHARS):
                groups.append(group)
                group, size = [], 0
            group.append(part)
            if "<" not in part:            # plain text: its length is what Qt lays out (tags would inflate it)
                size += len(part)
    groups.append(group)
    return groups


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


def _add_code(env: dict[str, Any], code: str) -> str:
    codes: list[str] = env["brook_codes"]
    n = env["brook_code_base"] + len(codes)
    codes.append(code)
    return f"brook-copy:{env['brook_copy_prefix']}{n}"


def _fence_lang(info: str) -> str:
    return info.strip().split(maxsplit=1)[0] if info.strip() else ""


def _render_fence(self: Any, tokens: list[Token], idx: int, options: Any, env: dict[str, Any]) -> str:
    tok = tokens[idx]
    lang = _fence_lang(html.unescape(tok.info))
    theme = _theme(env)
    href = _add_code(env, tok.content)
    inner = highlight_code(tok.content, lang, theme.name, env["brook_hl_cache"])
    return code_block_html(inner, lang, href, theme, pieces=tok.level == 0)


def _render_code_block(self: Any, tokens: list[Token], idx: int, options: Any, env: dict[str, Any]) -> str:
    tok = tokens[idx]
    href = _add_code(env, tok.content)
    return code_block_html(_esc(tok.content, quote=False), "", href, _theme(env), pieces=tok.level == 0)


def _render_link_open(self: Any, tokens: list[Token], idx: int, options: Any, env: dict[str, Any]) -> str:
    tok = tokens[idx]
    href = str(tok.attrGet("href") or "")
    stack: list[str | None] = env.setdefault("brook_links", [])
    if is_safe_url(href):
        stack.append(None)
        title = tok.attrGet("title")
        t = f' title="{_esc(str(title))}"' if title else ""
        return f'<a href="{_esc(href)}"{t} style="color:{_theme(env).link}">'
    stack.append(href)
    return "<span>"


def _render_link_close(self: Any, tokens: list[Token], idx: int, options: Any, env: dict[str, Any]) -> str:
    stack: list[str | None] = env.setdefault("brook_links", [])
    href = stack.pop() if stack else None
    if href is None:
        return "</a>"
    return f'</span> <span style="color:{_theme(env).muted}">({_esc(href)})</span>'


def _render_image(self: Any, tokens: list[Token], idx: int, options: Any, env: dict[str, Any]) -> str:
    tok = tokens[idx]
    alt = self.renderInlineAsText(tok.children or [], options, env)
    src = str(tok.attrGet("src") or "")
    theme = _theme(env)
    label = f'<span style="color:{theme.muted}">[image: </span>{_esc(alt)}<span style="color:{theme.muted}">]</span>'
    if is_safe_url(src, _CLICKABLE_IMAGE_SCHEMES):
        addr = f'<a href="{_esc(src)}" style="color:{theme.link}">{_esc(src)}</a>'
    else:
        addr = f'<span style="color:{theme.muted}">{_esc(src)}</span>'
    return f"{label} ({addr})"


_TASK_RE = re.compile(r'^<input class="task-list-item-checkbox"[^>]*>$')


def _render_html_inline(self: Any, tokens: list[Token], idx: int, options: Any, env: dict[str, Any]) -> str:
    content = tokens[idx].content
    if _TASK_RE.match(content):
        return "☑" if 'checked="checked"' in content else "☐"
    return _esc(content)


def _render_html_block(self: Any, tokens: list[Token], idx: int, options: Any, env: dict[str, Any]) -> str:
    return f"<p>{_esc(tokens[idx].content)}</p>\n"


def _render_math_inline(self: Any, tokens: list[Token], idx: int, options: Any, env: dict[str, Any]) -> str:
    t = _theme(env)
    return (
        f'<span style="font-family:{MONO};background-color:{t.math_background};color:{t.math_color}">'
        f"{_esc(tokens[idx].content)}</span>"
    )


def _render_math_block(self: Any, tokens: list[Token], idx: int, options: Any, env: dict[str, Any]) -> str:
    t = _theme(env)
    content = tokens[idx].content.strip("\n")
    return (
        f'<table width="100%" cellspacing="0" cellpadding="8" border="0" bgcolor="{t.math_background}" '
        f'style="margin-top:6px;margin-bottom:8px"><tr><td align="center">'
        f'<pre style="font-family:{MONO};white-space:pre-wrap;margin:0;color:{t.math_color}">'
        f"{_esc(content)}</pre></td></tr></table>\n"
    )


def _table_layout(tokens: list[Token], idx: int) -> tuple[list[int] | None, int]:
    """Column widths (percent) of the table opening at ``idx`` and its number of body rows.

    The widths depend only on the header and the first :data:`TABLE_WIDTH_ROWS` body rows (source length of
    each cell, clamped), so they are final once those rows are complete: a streamed table and the one-shot
    render give the same groups. A table of fewer body rows gets no widths (natural layout, one piece).
    """
    lengths: list[int] = []
    rows = -1  # the header row is row -1 … body rows count from 0
    col = 0
    for j in range(idx + 1, len(tokens)):
        tok = tokens[j]
        if tok.type == "table_close":
            break
        if tok.type == "tr_open":
            rows += 1
            col = 0
        elif tok.type == "inline" and rows < TABLE_WIDTH_ROWS:
            n = min(max(len(tok.content), 3), 48)
            if col < len(lengths):
                lengths[col] = max(lengths[col], n)
            else:
                lengths.append(n)
            col += 1
    if rows < TABLE_WIDTH_ROWS or not lengths:
        return None, rows + 1
    total = sum(lengths)
    widths = [max(4, 100 * n // total) for n in lengths]
    return widths, rows + 1


def _table_start(widths: list[int] | None, first: bool, last: bool) -> str:
    width = ' width="100%"' if widths else ""
    top = "6px" if first else "0"
    bottom = "8px" if last else "0"
    return (
        f'<table{width} border="0" cellspacing="0" cellpadding="5" '
        f'style="border-collapse:collapse;margin-top:{top};margin-bottom:{bottom}">\n'
    )


def _render_table_open(self: Any, tokens: list[Token], idx: int, options: Any, env: dict[str, Any]) -> str:
    ov = env.pop("brook_table_override", None)
    if ov is not None:
        # The row groups of a split table from body row ``row_offset`` (a multiple of TABLE_GROUP_ROWS) on, given
        # without the header: exactly the pieces a full render gives for those groups (the open-table fast path
        # re-renders only these; the earlier groups can no longer change).
        r0, n_rows, widths = ov["row_offset"], ov["n_rows"], ov["widths"]
        state = {"widths": widths, "split": True, "col": 0, "rows": r0, "body": False, "n_rows": n_rows}
        env.setdefault("brook_tables", []).append(state)
        return _table_start(widths, r0 == 0, r0 + TABLE_GROUP_ROWS >= n_rows)
    widths, n_rows = _table_layout(tokens, idx)
    split = widths is not None and tokens[idx].level == 0
    state = {"widths": widths, "split": split, "col": 0, "rows": 0, "body": False, "n_rows": n_rows}
    env.setdefault("brook_tables", []).append(state)
    return _table_start(widths, True, not split or n_rows <= TABLE_GROUP_ROWS)


def _render_table_close(self: Any, tokens: list[Token], idx: int, options: Any, env: dict[str, Any]) -> str:
    env["brook_tables"].pop()
    return "</table>\n"


def _render_tbody_open(self: Any, tokens: list[Token], idx: int, options: Any, env: dict[str, Any]) -> str:
    env["brook_tables"][-1]["body"] = True
    return "<tbody>\n"


def _render_tr_open(self: Any, tokens: list[Token], idx: int, options: Any, env: dict[str, Any]) -> str:
    env["brook_tables"][-1]["col"] = 0
    return "<tr>\n"


def _render_tr_close(self: Any, tokens: list[Token], idx: int, options: Any, env: dict[str, Any]) -> str:
    st = env["brook_tables"][-1]
    out = "</tr>\n"
    if st["body"]:
        st["rows"] += 1
        nxt = tokens[idx + 1] if idx + 1 < len(tokens) else None
        if st["split"] and st["rows"] % TABLE_GROUP_ROWS == 0 and nxt is not None and nxt.type == "tr_open":
            # next row group: a new table piece with the same column widths
            last = st["rows"] + TABLE_GROUP_ROWS >= st["n_rows"]
            out += "</tbody>\n</table>\n" + PIECE + _table_start(st["widths"], False, last) + "<tbody>\n"
    return out


def _render_cell_open(self: Any, tokens: list[Token], idx: int, options: Any, env: dict[str, Any]) -> str:
    tok = tokens[idx]
    st = env["brook_tables"][-1]
    t = _theme(env)
    col = st["col"]
    st["col"] = col + 1
    widths = st["widths"]
    width = f' width="{widths[col]}%"' if widths and col < len(widths) else ""
    align = str(tok.attrGet("style") or "")
    align = align + ";" if align else ""
    if tok.tag == "th":
        style = f"{align}background-color:{t.header_background};border-bottom:2px solid {t.border}"
    else:
        style = f"{align}border-bottom:1px solid {t.border}"
    return f'<{tok.tag}{width} style="{style}">'


def _render_code_inline(self: Any, tokens: list[Token], idx: int, options: Any, env: dict[str, Any]) -> str:
    t = _theme(env)
    return (
        f'<code style="font-family:{MONO};background-color:{t.background}">'
        f"{_esc(tokens[idx].content)}</code>"
    )


def _render_blockquote_open(self: Any, tokens: list[Token], idx: int, options: Any, env: dict[str, Any]) -> str:
    return f'<blockquote style="color:{_theme(env).muted}">\n'


_PARSER: MarkdownIt | None = None


def _parser() -> MarkdownIt:
    global _PARSER
    if _PARSER is None:
        _PARSER = _build_parser()
    return _PARSER


def _normalize(text: str) -> str:
    """The input normalisation markdown-it applies (CR LF / CR → LF, NUL → U+FFFD), done up front."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if "\0" in text:
        text = text.replace("\0", "\ufffd")
    return text


def _group_blocks(tokens: list[Token]) -> list[list[Token]]:
    """Split a token stream into top-level blocks (each group starts at a level-0 opening/standalone token)."""
    groups: list[list[Token]] = []
    for tok in tokens:
        if (tok.level == 0 and tok.nesting >= 0) or not groups:
            groups.append([tok])
        else:
            groups[-1].append(tok)
    return groups


class _Renderer:
    """Renders token groups to HTML strings with Brook's rules; collects raw code of code blocks."""

    def __init__(self, theme: str, copy_prefix: str, cache: SegmentCache) -> None:
        self.theme = get_theme(theme)
        self.copy_prefix = copy_prefix
        self.cache = cache

    def render(self, groups: list[list[Token]], code_base: int,
               table_override: dict[str, Any] | None = None) -> tuple[list[str], list[str]]:
        """HTML of each group and the raw code of the code blocks among them (numbered from ``code_base``).

        ``table_override`` (``widths``, ``row_offset``, ``n_rows``) renders the first table as the row groups of
        a longer table from body row ``row_offset`` on (see ``_render_table_open``)."""
        md = _parser()
        codes: list[str] = []
        env: dict[str, Any] = {
            "brook_theme": self.theme,
            "brook_codes": codes,
            "brook_code_base": code_base,
            "brook_copy_prefix": self.copy_prefix,
            "brook_hl_cache": self.cache,
        }
        if table_override is not None:
            env["brook_table_override"] = table_override
        out = [md.renderer.render(g, md.options, env) for g in groups]
        return out, codes


def _parse(src: str, env: dict[str, Any]) -> list[Token]:
    return _parser().parse(src, env)


# ---------------------------------------------------------------------------------------------------------
# thinking section
# ---------------------------------------------------------------------------------------------------------


def split_thinking(text: str) -> tuple[str | None, str, bool]:
    """Split a reply into ``(thinking, answer, thinking_done)``.

    A reply that starts with ``<think>`` (after optional whitespace) carries reasoning up to ``</think>``;
    ``thinking`` is None when it does not. Without a closing tag all the rest is reasoning and ``answer`` is "".
    """
    stripped = text.lstrip()
    if not stripped.startswith(THINK_OPEN):
        return None, text, False
    rest = stripped[len(THINK_OPEN) :]
    end = rest.find(THINK_CLOSE)
    if end < 0:
        return rest, "", False
    return rest[:end], rest[end + len(THINK_CLOSE) :], True


def thinking_section_html(inner_html: str, done: bool) -> str:
    """The dimmed section that holds the reasoning HTML, placed before the answer."""
    title = "Thinking" if done else "Thinking…"
    return (
        f'<div class="brook-thinking" style="color:#888888"><p><i>{title}</i></p>\n{inner_html}</div>\n'
    )


# ---------------------------------------------------------------------------------------------------------
# one-shot render
# ---------------------------------------------------------------------------------------------------------


def _render_answer(text: str, theme: str, copy_prefix: str = "") -> tuple[list[str], list[str]]:
    tokens = _parse(_normalize(text), {})
    return _Renderer(theme, copy_prefix, SegmentCache(64)).render(_group_blocks(tokens), 0)


def render_markdown(text: str, theme: str = "light") -> str:
    """Render a whole reply to Qt-compatible HTML in one go (what a finished :class:`IncrementalMarkdown` gives).

    ``theme`` is ``"light"`` or ``"dark"`` (``ValueError`` otherwise). A leading ``<think>…</think>`` section is
    rendered separately as a dimmed thinking section before the answer.
    """
    get_theme(theme)
    thinking, answer, done = split_thinking(text)
    blocks, _ = _render_answer(answer, theme)
    out = "".join(blocks)
    if thinking is not None:
        inner, _ = _render_answer(thinking, theme, "t")
        out = thinking_section_html("".join(inner), done) + out
    return out


# ---------------------------------------------------------------------------------------------------------
# incremental render
# ---------------------------------------------------------------------------------------------------------

_CLOSING_PARTIAL = re.compile(r"^[ \t>]*(?:`+|~+)[ \t]*$")


class _Chunk:
    """A stretch of stable source: its text, the blocks it produced and the references known when rendered."""

    __slots__ = ("code_base", "first_block", "n_blocks", "n_codes", "refs_seen", "src")

    def __init__(self, src: str, first_block: int, n_blocks: int, code_base: int, n_codes: int, refs: int) -> None:
        self.src = src
        self.first_block = first_block
        self.n_blocks = n_blocks
        self.code_base = code_base
        self.n_codes = n_codes
        self.refs_seen = refs


class _OpenFence:
    """State of the fast path for a top-level fence that is the whole tail and still open."""

    __slots__ = ("char", "checked", "closer", "hl", "indent", "lang", "length")

    def __init__(self, char: str, length: int, indent: int, lang: str, hl: IncrementalHighlighter) -> None:
        self.char = char
        self.length = length
        self.indent = indent
        self.lang = lang
        self.hl = hl
        self.checked = 1  # tail line index up to which lines were examined (line 0 is the opener)
        self.closer = re.compile(r"^ {0,3}" + re.escape(char) + "{" + str(length) + r",}[ \t]*$")


class _OpenTable:
    """State of the fast path for a top-level table that is the whole tail (its rows are parsed once each)."""

    __slots__ = ("cols", "head", "pieces", "rows", "tail_close", "tbody_open", "widths")

    def __init__(self, head: list[Token], tbody_open: Token, tail_close: list[Token], cols: int) -> None:
        self.head = head  # table_open … thead_close
        self.tbody_open = tbody_open
        self.tail_close = tail_close  # tbody_close, table_close
        self.rows: list[list[Token]] = []  # tokens (tr_open … tr_close) of each complete body line
        self.cols = cols
        self.widths: list[int] | None = None  # column widths, final once TABLE_WIDTH_ROWS rows are complete
        self.pieces: list[str] = []  # the table's HTML pieces at the last render


def _split_table(tokens: list[Token]) -> tuple[list[Token], list[list[Token]], Token | None, list[Token]] | None:
    """(head tokens, body rows, tbody_open, closing tokens) of a token list that is exactly one table, else None."""
    if not tokens or tokens[0].type != "table_open" or tokens[-1].type != "table_close":
        return None
    head: list[Token] = []
    rows: list[list[Token]] = []
    tbody: Token | None = None
    i = 0
    while i < len(tokens) and tokens[i].type != "tbody_open":
        head.append(tokens[i])
        i += 1
    if i == len(tokens):
        return head[:-1], rows, None, head[-1:]
    tbody = tokens[i]
    i += 1
    while tokens[i].type == "tr_open":
        j = i
        while tokens[j].type != "tr_close":
            j += 1
        rows.append(tokens[i : j + 1])
        i = j + 1
    return head, rows, tbody, tokens[i:]


class IncrementalMarkdown:
    """Streaming markdown renderer: stable prefix + open tail (see the module docstring for the algorithm).

    Usage::

        md = IncrementalMarkdown(theme="light")
        for chunk in stream:
            md.feed(chunk)                       # O(len(chunk))
            view.patch(md.stable_blocks, md.tail_html)   # first access renders: O(open tail)
        first_changed = md.finish()

    Attributes (read-only properties):

    * ``stable_blocks`` — ``list[str]``, HTML of finished top-level blocks, each a self-contained fragment;
      append-only while streaming (only :meth:`finish` may replace entries, see its return value);
    * ``tail_html`` — ``str``, HTML of the open tail, replaced on every render ("" after :meth:`finish`);
    * ``html`` — thinking section (if any) + ``"".join(stable_blocks) + tail_html``;
    * ``text`` — the raw text fed so far; ``code_blocks`` — raw code of every code block so far, in order
      (``brook-copy:N`` links index it; the thinking renderer's links read ``brook-copy:tN``);
    * ``thinking`` — the nested renderer of a leading ``<think>…</think>`` section, or None;
      ``thinking_done`` — whether ``</think>`` was seen.

    Rendering is lazy: :meth:`feed` only stores text and cuts complete lines; the parse happens on the first
    read of ``stable_blocks``/``tail_html``/``html``/``code_blocks`` after a feed, so several feeds in one UI
    tick cost one render. ``theme`` is ``"light"`` or ``"dark"`` (``ValueError`` otherwise).
    """

    def __init__(self, theme: str = "light", *, detect_thinking: bool = True, copy_prefix: str = "") -> None:
        get_theme(theme)
        self.theme = theme
        self._copy_prefix = copy_prefix
        self._cache = SegmentCache()
        self._renderer = _Renderer(theme, copy_prefix, self._cache)
        self._raw: list[str] = []
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._pending_cr = False
        # thinking routing: "detect" → "think" → "answer" (or "detect" → "answer")
        self._mode = "detect" if detect_thinking else "answer"
        self._detect_buf: list[str] = []
        self._think_hold = ""
        self.thinking: IncrementalMarkdown | None = None
        self.thinking_done = False
        # answer state
        self._stable: list[str] = []
        self._chunks: list[_Chunk] = []
        self._stable_codes: list[str] = []
        self._env: dict[str, Any] = {"references": {}}
        self._lines: list[str] = []  # complete lines of the tail
        self._partial: list[str] = []  # pieces of the incomplete last line
        self._tail_chars = 0
        self._dirty = False
        self._rendered_chars = -1  # tail size at the last full tail parse
        self._tail_html = ""
        self._tail_parts: list[str] = []
        self._tail_codes: list[str] = []
        self._fence: _OpenFence | None = None
        self._table: _OpenTable | None = None
        self._finished = False
        self._render_t = 0.0
        self._render_cost = 0.0
        self._version = 0

    # -- input ---------------------------------------------------------------------------------------------

    def feed(self, text: str) -> None:
        """Append a chunk of the reply (any size, may be ""). O(len(text)); rendering is deferred to the next read.

        Raises ``RuntimeError`` after :meth:`finish`.
        """
        if self._finished:
            raise RuntimeError("feed() after finish()")
        if not text:
            return
        self._raw.append(text)
        if self._mode == "answer":
            self._feed_answer(text)
        elif self._mode == "think":
            self._feed_think(text)
        else:
            self._feed_detect(text)

    def feed_bytes(self, data: bytes) -> None:
        """Append raw UTF-8 bytes; a multi-byte character split across calls is decoded once it is whole.

        Invalid bytes become U+FFFD (``errors="replace"``), as the one-shot ``bytes.decode(errors="replace")``.
        """
        self.feed(self._decoder.decode(data))

    def _feed_detect(self, text: str) -> None:
        self._detect_buf.append(text)
        buf = "".join(self._detect_buf)
        stripped = buf.lstrip()
        if not stripped or (len(stripped) < len(THINK_OPEN) and THINK_OPEN.startswith(stripped)):
            self._detect_buf = [buf]
            return
        self._detect_buf = []
        if stripped.startswith(THINK_OPEN):
            self._mode = "think"
            self.thinking = IncrementalMarkdown(self.theme, detect_thinking=False, copy_prefix="t")
            self._feed_think(stripped[len(THINK_OPEN) :])
        else:
            self._mode = "answer"
            self._feed_answer(buf)

    def _feed_think(self, text: str) -> None:
        assert self.thinking is not None
        buf = self._think_hold + text
        end = buf.find(THINK_CLOSE)
        if end >= 0:
            self._think_hold = ""
            self.thinking.feed(buf[:end])
            self.thinking.finish()
            self.thinking_done = True
            self._mode = "answer"
            self._feed_answer(buf[end + len(THINK_CLOSE) :])
            return
        hold = 0
        for n in range(min(len(THINK_CLOSE) - 1, len(buf)), 0, -1):
            if THINK_CLOSE.startswith(buf[-n:]):
                hold = n
                break
        self._think_hold = buf[len(buf) - hold :] if hold else ""
        self.thinking.feed(buf[: len(buf) - hold])

    def _feed_answer(self, text: str) -> None:
        if not text:
            return
        if self._pending_cr:
            text = "\r" + text
            self._pending_cr = False
        if text.endswith("\r"):
            self._pending_cr = True
            text = text[:-1]
        text = _normalize(text)
        if not text:
            return
        self._dirty = True
        self._tail_chars += len(text)
        if "\n" not in text:
            self._partial.append(text)
            return
        parts = text.split("\n")
        self._partial.append(parts[0])
        self._lines.append("".join(self._partial))
        self._lines.extend(parts[1:-1])
        self._partial = [parts[-1]] if parts[-1] else []

    # -- output --------------------------------------------------------------------------------------------

    @property
    def text(self) -> str:
        """The whole raw text fed so far (joined on demand)."""
        if len(self._raw) > 1:
            self._raw = ["".join(self._raw)]
        return self._raw[0] if self._raw else ""

    @property
    def stable_blocks(self) -> list[str]:
        """HTML of the finished top-level blocks of the answer (append-only while streaming)."""
        self._sync()
        return self._stable

    @property
    def tail_html(self) -> str:
        """HTML of the open tail of the answer (the last unfinished block or blocks)."""
        self._sync()
        return self._tail_html

    @property
    def tail_blocks(self) -> list[str]:
        """The open tail split into its top-level blocks: ``"".join(tail_blocks) == tail_html``."""
        self._sync()
        return self._tail_parts

    @property
    def version(self) -> int:
        """A counter that grows whenever ``stable_blocks``, ``tail_html`` or the thinking section may have changed."""
        self._sync()
        v = self._version
        if self.thinking is not None:
            v += self.thinking.version
        return v

    @property
    def html(self) -> str:
        """Thinking section (if any) + answer HTML; equals :func:`render_markdown` of :attr:`text` once finished."""
        self._sync()
        out = "".join(self._stable) + self._tail_html
        if self.thinking is not None:
            out = thinking_section_html(self.thinking.html, self.thinking_done) + out
        return out

    @property
    def code_blocks(self) -> list[str]:
        """Raw code of every code block of the answer so far, in order (what a "Copy" link copies)."""
        self._sync()
        if self._fence is not None:
            tail_code = "".join(line + "\n" for line in self._fence.hl.lines)
            return [*self._stable_codes, tail_code]
        return self._stable_codes + self._tail_codes

    @property
    def finished(self) -> bool:
        """Whether :meth:`finish` was called."""
        return self._finished

    def finish(self) -> int:
        """End of stream: render everything as final; returns the index of the first changed stable block.

        After it, ``stable_blocks`` holds every block and ``tail_html`` is "". Blocks emitted while streaming
        are normally final; only a link reference definition that arrived after a block using it makes an
        already-emitted block change: then the return value is that block's index (< the number of stable
        blocks before the call), else it is the number of stable blocks before the call. Idempotent.
        """
        if self._finished:
            return len(self._stable)
        self._sync()
        before = len(self._stable)
        tail = self._decoder.decode(b"", final=True)
        if tail:
            self.feed(tail)
        if self._mode == "detect":
            buf = "".join(self._detect_buf)
            self._detect_buf = []
            self._mode = "answer"
            self._feed_answer(buf)
        elif self._mode == "think":
            assert self.thinking is not None
            self.thinking.feed(self._think_hold)
            self._think_hold = ""
            self.thinking.finish()
        if self._pending_cr:
            self._pending_cr = False
            self._feed_answer("\n")
        self._finished = True
        # Final parse of the whole tail; its blocks become stable.
        src = self._tail_source(include_partial=True)
        self._lines, self._partial, self._tail_chars, self._fence, self._table = [], [], 0, None, None
        if src:
            self._stabilize(src)
        self._tail_html, self._tail_codes, self._tail_parts = "", [], []
        self._version += 1
        first_changed = self._fix_late_references()
        return min(first_changed, before)

    # -- internals -----------------------------------------------------------------------------------------

    def _tail_source(self, include_partial: bool) -> str:
        partial = "".join(self._partial) if include_partial else ""
        if self._lines:
            return "\n".join(self._lines) + "\n" + partial
        return partial

    def _stabilize(self, src: str, tokens: list[Token] | None = None) -> None:
        """Parse ``src`` (complete stable lines) with the shared env and append its blocks.

        ``tokens``: the tokens of ``src`` already parsed (with no new link reference definitions), or None.
        """
        if tokens is None:
            tokens = _parse(src, self._env)
        groups = _group_blocks(tokens)
        blocks, codes = self._renderer.render(groups, len(self._stable_codes))
        self._chunks.append(
            _Chunk(src, len(self._stable), len(blocks), len(self._stable_codes), len(codes),
                   len(self._env.get("references", {})))
        )
        self._stable.extend(blocks)
        self._stable_codes.extend(codes)

    def _fix_late_references(self) -> int:
        refs = len(self._env.get("references", {}))
        first = len(self._stable)
        for ch in self._chunks:
            if ch.refs_seen >= refs or "[" not in ch.src:
                continue
            env = {"references": dict(self._env["references"])}
            groups = _group_blocks(_parse(ch.src, env))
            blocks, _codes = self._renderer.render(groups, ch.code_base)
            for i, h in enumerate(blocks):
                j = ch.first_block + i
                if self._stable[j] != h:
                    self._stable[j] = h
                    first = min(first, j)
            ch.refs_seen = refs
        return first

    def _sync(self) -> None:
        if not self._dirty or self._finished:
            return
        self._dirty = False
        if self._fence is not None:
            self._version += 1
            if self._sync_fence():
                return
        elif self._table is not None:
            self._version += 1
            if self._sync_table():
                return
        else:
            size = self._tail_chars
            if (
                size > BIG_TAIL_CHARS
                and self._rendered_chars >= 0
                and size - self._rendered_chars < BIG_TAIL_GROWTH * size
                and time.perf_counter() - self._render_t < max(BIG_TAIL_MIN_S, 4 * self._render_cost)
            ):
                self._dirty = True  # rendered later: once enough arrived, a little later, or at finish
                return
        t0 = time.perf_counter()
        self._version += 1
        self._render_tail()
        self._render_t = time.perf_counter()
        self._render_cost = self._render_t - t0

    def _render_tail(self) -> None:
        n_complete = len(self._lines)
        partial = "".join(self._partial)
        show_partial = bool(partial) and not _CLOSING_PARTIAL.match(partial)
        src = "\n".join(self._lines) + "\n" if self._lines else ""
        if show_partial:
            src += partial
        env = {"references": dict(self._env["references"])}
        tokens = _parse(src, env) if src else []
        k, cut_index = self._find_boundary(tokens, n_complete)
        if k > 0:
            # The blocks before line k parse the same alone (that is what makes k safe), so the tail's tokens
            # are reused unless the tail defined link references (the stable env must only get lines < k's).
            same_refs = len(env["references"]) == len(self._env["references"])
            self._stabilize("\n".join(self._lines[:k]) + "\n", tokens[:cut_index] if same_refs else None)
            self._tail_chars -= sum(len(line) + 1 for line in self._lines[:k])
            del self._lines[:k]
            tokens = tokens[cut_index:]
            for tok in tokens:
                if tok.map is not None and tok.level == 0:
                    tok.map = [tok.map[0] - k, tok.map[1] - k]
        groups = _group_blocks(tokens)
        htmls, codes = self._renderer.render(groups, len(self._stable_codes))
        self._tail_parts = htmls
        self._tail_html = "".join(htmls)
        self._tail_codes = codes
        self._rendered_chars = self._tail_chars
        self._maybe_enter_fence(tokens, partial)
        self._maybe_enter_table(tokens, show_partial)

    def _find_boundary(self, tokens: list[Token], n_complete: int) -> tuple[int, int]:
        """Largest safe split line k (0 if none) and the index of the first token at or after it."""
        lines = self._lines
        best_k, best_i = 0, 0
        dollars_before: bool | None = None
        for i, tok in enumerate(tokens):
            if tok.level != 0 or tok.nesting < 0 or tok.map is None:
                continue
            start, end = tok.map
            # (a) a block starting on a complete line after a blank line
            if 0 < start < n_complete and not lines[start - 1].strip(" \t"):
                best_k, best_i = start, i
            # (d) a table followed by a complete blank line: nothing after a blank line can continue it
            if tok.type == "table_open" and end < n_complete and end + 1 > best_k and not lines[end].strip(" \t"):
                best_k, best_i = end + 1, self._next_level0(tokens, i)
            # (b)/(c) need no "$$" before the boundary in the tail (dollarmath looks past other blocks)
            if tok.type in ("fence", "heading_open", "hr"):
                if dollars_before is None:
                    dollars_before = any("$$" in line for line in lines[:n_complete])
                if dollars_before:
                    continue
                if tok.type == "fence" and 0 < start < n_complete:
                    best_k, best_i = start, i  # (c)
                if end <= n_complete and end > best_k and self._block_closed(tok, end):
                    best_k, best_i = end, self._next_level0(tokens, i)  # (b)
        return best_k, best_i

    def _block_closed(self, tok: Token, end: int) -> bool:
        if tok.type != "fence":
            return True
        start = tok.map[0] if tok.map else 0
        if end - start < 2:
            return False
        last = self._lines[end - 1]
        m = re.match(r"^ {0,3}(`{3,}|~{3,})[ \t]*$", last)
        return m is not None and m.group(1)[0] == tok.markup[0] and len(m.group(1)) >= len(tok.markup)

    @staticmethod
    def _next_level0(tokens: list[Token], i: int) -> int:
        for j in range(i + 1, len(tokens)):
            if tokens[j].level == 0 and tokens[j].nesting >= 0:
                return j
        return len(tokens)

    def _maybe_enter_fence(self, tokens: list[Token], partial: str) -> None:
        self._fence = None
        if len(tokens) != 1 or tokens[0].type != "fence" or not self._lines:
            return
        tok = tokens[0]
        if tok.map is None or tok.map[0] != 0:
            return
        if len(self._lines) > 1 and self._block_closed(tok, len(self._lines)):
            return
        opener = self._lines[0]
        indent = len(opener) - len(opener.lstrip(" "))
        lang = _fence_lang(html.unescape(tok.info))
        hl = IncrementalHighlighter(lang, self.theme, self._cache)
        fence = _OpenFence(tok.markup[0], len(tok.markup), indent, lang, hl)
        self._fence = fence
        self._sync_fence()

    def _maybe_enter_table(self, tokens: list[Token], partial_shown: bool) -> None:
        """Enter the table fast path when the tail is exactly one top-level table over all its lines."""
        self._table = None
        n = len(self._lines)
        if self._fence is not None or n < 2 or not tokens or tokens[0].type != "table_open":
            return
        tok = tokens[0]
        if tok.map is None or tok.map[0] != 0 or tok.map[1] != n + (1 if partial_shown else 0):
            return
        if _group_blocks(tokens) != [tokens] or any("$$" in line for line in self._lines):
            return
        parts = _split_table(tokens)
        if parts is None:
            return
        head, rows, tbody, close = parts
        if tbody is None:
            return
        cols = sum(1 for t in head if t.type == "th_open")
        table = _OpenTable(head, tbody, close, cols)
        table.rows = rows[: n - 2]  # complete body lines only (a partial last line may still change)
        self._table = table

    def _sync_table(self) -> bool:
        """Fast path for an open top-level table: parse only the new lines (below the header and delimiter row).

        Every body line of a table is parsed on its own (its cells depend only on the header's column count and
        the delimiter row's alignments; whether it ends the table depends only on the line itself), so the rows
        parsed this way equal a parse of the whole table. False when the table ended or anything is unusual:
        the caller then re-parses the whole tail.
        """
        table = self._table
        assert table is not None
        self._table = None
        lines = self._lines
        done = len(table.rows)
        new = lines[2 + done :]
        partial = "".join(self._partial)
        show_partial = bool(partial) and not _CLOSING_PARTIAL.match(partial)
        if (
            any("$$" in line for line in new)
            or "$$" in partial
            or (done + len(new) + 1) * max(1, table.cols) > 0x8000  # far from markdown-it's autocomplete cap
        ):
            return False
        src = lines[0] + "\n" + lines[1] + "\n" + "".join(line + "\n" for line in new)
        if show_partial:
            src += partial
        n_src = 2 + len(new) + (1 if show_partial else 0)
        env = {"references": dict(self._env["references"])}
        tokens = _parse(src, env)
        if not tokens or tokens[0].map != [0, n_src] or _group_blocks(tokens) != [tokens]:
            return False
        parts = _split_table(tokens)
        if parts is None:
            return False
        _head, rows, _tbody, _close = parts
        table.rows.extend(rows[: len(new)])
        shown = table.rows + rows[len(new) :]
        g = TABLE_GROUP_ROWS
        # groups before the last complete one can no longer change (their rows are complete, the widths final and
        # they are not the last group): reuse their pieces, render only the rest — O(new rows), not O(table)
        k = min(len(table.rows) // g - 1, len(table.pieces) - 1)   # the last piece of the last render may change
        if table.widths is not None and k >= 1:
            r0 = k * g
            subset = [table.head[0], table.tbody_open, *(t for r in shown[r0:] for t in r), *table.tail_close]
            ov = {"widths": table.widths, "row_offset": r0, "n_rows": len(shown)}
            htmls, codes = self._renderer.render([subset], len(self._stable_codes), table_override=ov)
            table.pieces = table.pieces[:k] + htmls[0].split(PIECE)
            htmls = [PIECE.join(table.pieces)]
        else:
            if shown:
                all_tokens = [*table.head, table.tbody_open, *(t for r in shown for t in r), *table.tail_close]
            else:
                all_tokens = [*table.head, *table.tail_close[-1:]]
            htmls, codes = self._renderer.render([all_tokens], len(self._stable_codes))
            if table.widths is None and len(table.rows) >= TABLE_WIDTH_ROWS:
                table.widths = _table_layout(all_tokens, 0)[0]
            table.pieces = htmls[0].split(PIECE) if table.widths is not None else []
        self._tail_parts = htmls
        self._tail_html = "".join(htmls)
        self._tail_codes = codes
        self._rendered_chars = self._tail_chars
        self._table = table
        return True

    def _strip_indent(self, line: str, indent: int) -> str:
        if not indent:
            return line
        n = 0
        while n < indent and n < len(line) and line[n] == " ":
            n += 1
        return line[n:]

    def _sync_fence(self) -> bool:
        """Fast path for an open top-level fence; False when the fence closed (the caller re-parses)."""
        fence = self._fence
        assert fence is not None
        lines = self._lines
        new: list[str] = []
        for idx in range(fence.checked, len(lines)):
            if fence.closer.match(lines[idx]):
                self._fence = None
                fence.hl.add_lines(new)
                return False
            new.append(self._strip_indent(lines[idx], fence.indent))
        fence.checked = len(lines)
        fence.hl.add_lines(new)
        partial = "".join(self._partial)
        if partial and re.match(r"^ {0,3}" + re.escape(fence.char) + r"*[ \t]*$", partial):
            partial = ""  # could become the closing fence: hold it back
        partial = self._strip_indent(partial, fence.indent)
        inner = fence.hl.html(partial)
        href = f"brook-copy:{self._copy_prefix}{len(self._stable_codes)}"
        self._tail_html = code_block_html(inner, fence.lang, href, self._renderer.theme)
        self._tail_parts = [self._tail_html]
        self._tail_codes = []
        self._rendered_chars = self._tail_chars
        return True


def decode_stream(chunks: Sequence[bytes]) -> str:
    """Decode UTF-8 byte chunks the way :meth:`IncrementalMarkdown.feed_bytes` does (for tests and tools)."""
    dec = codecs.getincrementaldecoder("utf-8")(errors="replace")
    return "".join(dec.decode(c) for c in chunks) + dec.decode(b"", final=True)
