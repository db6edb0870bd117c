"""Syntax highlighting of code blocks into Qt-compatible HTML, with a segment cache for open fences.

Qt's rich text (``QTextDocument``) understands only a subset of HTML 4 and CSS, so the HTML made here uses
inline styles only (pygments ``HtmlFormatter(noclasses=True, nowrap=True)``): no CSS classes, no ``<style>``.

**Segments.** Lexing a long code block in one piece costs O(block) (pygments' Python lexer does roughly
0.3 MB/s), which is far too much to redo on every streaming tick while a fence is still open. So the canonical
rendering of a code block, in the one-shot render *and* while streaming, lexes it in *segments*: a segment
ends after a blank line that is followed by a line starting in column 0, once the segment has at least
:data:`SEGMENT_MIN_LINES` lines, and in any case after :data:`SEGMENT_MAX_LINES` lines (see
:func:`split_segments`). Each segment is lexed from the lexer's initial state. Because the boundaries depend
only on the code's lines, a streamed fence whose segments were frozen one by one gives exactly the HTML of the
one-shot render. The cost is that a multi-line string or comment spanning such a boundary is coloured as if it
restarted there (rare: the boundary needs a blank line followed by an unindented line).

Code with a line longer than :data:`MAX_LINE_CHARS` characters or more than :data:`MAX_CODE_CHARS` characters
in total is not highlighted at all (escaped plain text), so a pathological 200 KB line never reaches a lexer.

**Off the loop.** A :class:`SegmentCache` made with a :class:`~app.core.render.lexer_pool.LexerPool` never lexes in
the calling thread: a segment not lexed yet is *pending* — shown as plain text and handed to the pool's worker
process — and its HTML is used once the worker answers (a segment whose lexer runs past the pool's deadline
stays plain). Without a pool (one-shot renders, tests, tools) segments are lexed at once, in the caller.
"""

from __future__ import annotations

import html
from collections import OrderedDict
from typing import TYPE_CHECKING

from app.core.render.lexers import (  # noqa: F401 - CodeTheme, get_theme, get_lexer: part of this module's API
    THEMES,
    CodeTheme,
    format_segment,
    get_lexer,
    get_theme,
    known_language,
)

if TYPE_CHECKING:
    from app.core.render.lexer_pool import LexerPool

#: A segment may end at a blank line once it has at least this many lines.
SEGMENT_MIN_LINES = 24
#: A segment always ends after this many lines (bounds the cost of one segment: ~8 KB of code).
SEGMENT_MAX_LINES = 160
#: Code with a line longer than this (characters) is shown unhighlighted.
MAX_LINE_CHARS = 4_000
#: Code longer than this in total (characters) is shown unhighlighted.
MAX_CODE_CHARS = 400_000


#: Fence languages seen most in chat replies; their lexers are built ahead of time by ``warm_up``.
COMMON_LANGUAGES = ("python", "bash", "sh", "javascript", "js", "typescript", "ts", "json", "yaml", "html", "css",
                    "sql", "rust", "go", "c", "cpp", "java", "csharp", "kotlin", "ruby", "php", "diff", "toml",
                    "markdown", "text")


def warm_up(langs: tuple[str, ...] = COMMON_LANGUAGES) -> None:
    """Start the lexer pool's worker process and have it build the lexers of ``langs`` (pygments compiles a
    lexer's regexes on first use: 20–100 ms each on this 2-core machine), so the first code block of a reply
    gets its colours at once. Nothing is lexed or compiled in this process (that would hold the GIL, stalling
    the loop); only pygments' static table of language names is loaded. Safe to call from any thread."""
    from app.core.render.lexer_pool import default_pool

    pool = default_pool()
    for lang in langs:
        if known_language(lang):
            pool.request(lang, "light", "x = 1\n")


def _is_boundary(lines: list[str], start: int, i: int) -> bool | None:
    """Whether a segment that began at line ``start`` ends after line ``i``; None if line ``i + 1`` is needed."""
    length = i - start + 1
    if length >= SEGMENT_MAX_LINES:
        return True
    if length < SEGMENT_MIN_LINES or lines[i].strip():
        return False
    if i + 1 >= len(lines):
        return None
    nxt = lines[i + 1]
    return bool(nxt) and not nxt[0].isspace()


def split_segments(lines: list[str]) -> list[tuple[int, int]]:
    """Split code lines into highlighting segments: a list of ``(start, end)`` line ranges covering all lines.

    The rule (see the module docstring) looks at most one line ahead, so :class:`IncrementalHighlighter` can
    apply it line by line while a fence streams and reach the same boundaries.
    """
    segments: list[tuple[int, int]] = []
    start = 0
    for i in range(len(lines)):
        if _is_boundary(lines, start, i):
            segments.append((start, i + 1))
            start = i + 1
    if start < len(lines):
        segments.append((start, len(lines)))
    return segments


def _plain(code: str) -> str:
    return html.escape(code, quote=False)


class SegmentCache:
    """An LRU cache of highlighted segments, keyed by (language, theme, segment text).

    Shared by the streaming highlighter and the final render of the same message, so a fence that closes does
    not lex its frozen segments again. ``max_entries`` bounds memory (each entry holds one segment's HTML).
    ``hits`` / ``misses`` count lookups answered from the cache / lexed anew (plain-text segments count neither).
    ``pool``: lex in that pool's worker process instead of the calling thread (see the module docstring).
    """

    def __init__(self, max_entries: int = 512, pool: LexerPool | None = None) -> None:
        self._data: OrderedDict[tuple[str, str, str], str] = OrderedDict()
        self._max = max_entries
        self.hits = 0
        self.misses = 0
        self.pool = pool
        #: HTML to show for a pending segment meanwhile (the provisional colours an open fence already had).
        self.meanwhile: OrderedDict[tuple[str, str, str], str] = OrderedDict()

    def highlight(self, code: str, lang: str, theme: str) -> str:
        """HTML (inline-styled spans, newlines kept) of one segment ``code`` (lines ending in ``\\n``); plain
        escaped text while the segment is pending in the pool."""
        out = self.lookup(code, lang, theme)
        return _plain(code) if out is None else out

    def lookup(self, code: str, lang: str, theme: str) -> str | None:
        """:meth:`highlight`, but None while the segment is pending in the pool (asked for once)."""
        if not known_language(lang):
            return _plain(code)
        key = (lang, theme, code)
        hit = self._data.get(key)
        if hit is not None:
            self.hits += 1
            self._data.move_to_end(key)
            return hit
        self.misses += 1
        if self.pool is not None:
            found = self.pool.request(lang, theme, code)
            if found is None:
                return None
            out = found
        else:
            lexer = get_lexer(lang)
            out = format_segment(code, lexer, theme) if lexer is not None else _plain(code)
        self._data[key] = out
        if len(self._data) > self._max:
            self._data.popitem(last=False)
        return out


def highlightable(lines: list[str], lang: str) -> bool:
    """Whether code of these lines in language ``lang`` is highlighted at all (size limits, known lexer)."""
    if not known_language(lang):
        return False
    total = 0
    for line in lines:
        n = len(line)
        if n > MAX_LINE_CHARS:
            return False
        total += n + 1
    return total <= MAX_CODE_CHARS


def highlight_code(code: str, lang: str, theme: str = "light", cache: SegmentCache | None = None) -> str:
    """Highlight ``code`` (a fence's raw content, lines ending in ``\\n``) as Qt-compatible HTML.

    Returns the inner HTML of a ``<pre>``: inline ``<span style=…>`` runs with the newlines kept. Unknown
    languages, an empty ``lang`` and oversized code give escaped plain text. Deterministic: the same input gives
    the same string, whether or not ``cache`` is warm (segments pending in a pool are plain text).
    """
    return highlight_code_status(code, lang, theme, cache)[0]


def highlight_code_status(code: str, lang: str, theme: str = "light",
                          cache: SegmentCache | None = None) -> tuple[str, bool]:
    """:func:`highlight_code` and whether any segment is still pending in the cache's pool (shown plain)."""
    lines = code.split("\n")
    trailing = lines[-1] == ""
    if trailing:
        lines.pop()
    if not highlightable(lines, lang):
        return _plain(code), False
    cache = cache or SegmentCache(max_entries=64)
    parts = []
    pending = False
    for start, end in split_segments(lines):
        seg = "\n".join(lines[start:end]) + "\n"
        found = cache.lookup(seg, lang, theme)
        if found is None:
            pending = True
            found = cache.meanwhile.get((lang, theme, seg)) or _plain(seg)
        parts.append(found)
    out = "".join(parts)
    if not trailing and out.endswith("\n"):
        out = out[:-1]
    return out, pending


class IncrementalHighlighter:
    """Highlights the content of an open fence as its lines complete; the cost per call is O(new lines).

    Lines arrive through :meth:`add_lines`. Finished segments (see :func:`split_segments`) are lexed once,
    exactly, and their HTML is cached (also into the shared :class:`SegmentCache`). Lines of the still-open
    segment are lexed provisionally in the batches they arrived in; their colours may differ slightly from the
    final ones until the segment closes (or the block is rendered in full at the end). :meth:`html` gives the
    current inner ``<pre>`` HTML, plus an optional escaped partial last line. With a pool in the cache, parts
    still pending show as plain text and :meth:`html` picks up their colours once the worker has answered.
    """

    def __init__(self, lang: str, theme: str, cache: SegmentCache) -> None:
        self.lang = lang
        self.theme = theme
        self._cache = cache
        self._lines: list[str] = []
        self._frozen: list[list[str | None]] = []  # [segment text, its HTML or None while pending]
        self._seg_start = 0
        self._check = 0
        self._prov: list[list[str | None]] = []
        self._prov_upto = 0
        self._plain_mode = not known_language(lang)
        self._chars = 0
        self.epoch = 0   # counts the times the finished segments were made again (plain mode, below)

    @property
    def lines(self) -> list[str]:
        """The complete code lines seen so far (without newlines)."""
        return self._lines

    @property
    def pending(self) -> bool:
        """Whether any part is still waiting for the pool's worker (shown plain meanwhile)."""
        return any(p[1] is None for p in self._frozen) or any(p[1] is None for p in self._prov)

    def _hl(self, lines: list[str], exact: bool) -> list[str | None]:
        seg = "\n".join(lines) + "\n"
        if self._plain_mode:
            return [seg, _plain(seg)]
        if exact or self._cache.pool is not None:
            return [seg, self._cache.lookup(seg, self.lang, self.theme)]
        lexer = get_lexer(self.lang)
        return [seg, format_segment(seg, lexer, self.theme) if lexer is not None else _plain(seg)]

    def add_lines(self, new: list[str]) -> None:
        """Append complete code lines (no newlines) and highlight what became highlightable."""
        if not new:
            return
        lines = self._lines
        lines.extend(new)
        if not self._plain_mode:
            for line in new:
                self._chars += len(line) + 1
                if len(line) > MAX_LINE_CHARS or self._chars > MAX_CODE_CHARS:
                    # The final render will not highlight this block at all: switch to plain text now.
                    self._plain_mode = True
                    self.epoch += 1
                    done = "\n".join(lines[: self._seg_start]) + "\n"
                    self._frozen = [[done, _plain(done)]] if self._seg_start else []
                    self._prov = []
                    self._prov_upto = self._seg_start
                    break
        while self._check < len(lines):
            verdict = _is_boundary(lines, self._seg_start, self._check)
            if verdict is None:
                break
            if verdict:
                end = self._check + 1
                self._frozen.append(self._hl(lines[self._seg_start : end], exact=True))
                self._seg_start = end
                self._prov = []
                self._prov_upto = end
            self._check += 1
        if self._prov_upto < len(lines):
            self._prov.append(self._hl(lines[self._prov_upto :], exact=False))
            self._prov_upto = len(lines)

    def _resolve(self, parts: list[list[str | None]]) -> str:
        out = []
        for part in parts:
            if part[1] is None:
                part[1] = self._cache.lookup(str(part[0]), self.lang, self.theme)
            out.append(part[1] if part[1] is not None else _plain(str(part[0])))
        return "".join(out)

    def offer_open_segment(self) -> None:
        """The fence closed: let a full render of the block show the open segment's provisional colours while
        its exact ones are pending in the pool (instead of plain text for a few ticks)."""
        if self._cache.pool is None or self._plain_mode or self._seg_start >= len(self._lines):
            return
        seg = "\n".join(self._lines[self._seg_start :]) + "\n"
        meanwhile = self._cache.meanwhile
        meanwhile[(self.lang, self.theme, seg)] = self._resolve(self._prov)
        if len(meanwhile) > 16:
            meanwhile.popitem(last=False)
        self._cache.lookup(seg, self.lang, self.theme)  # ask for the exact colours now

    @property
    def frozen_html(self) -> str:
        """HTML of the finished segments (exact: a prefix of the one-shot ``highlight_code`` of the block)."""
        return self._resolve(self._frozen)

    def html(self, partial: str = "") -> str:
        """Inner ``<pre>`` HTML of all lines so far, then ``partial`` (an incomplete line) escaped, unstyled."""
        out = self.html_from(0, partial)
        if not partial and out.endswith("\n"):
            out = out[:-1]
        return out

    def html_from(self, segment: int, partial: str = "") -> str:
        """:meth:`html` without the HTML of the first ``segment`` finished segments, and with its last newline
        (which :meth:`html` drops when there is no ``partial``)."""
        out = self._resolve(self._frozen[segment:]) + self._resolve(self._prov)
        return out + _plain(partial) if partial else out

    def settled(self, segment: int) -> list[str]:
        """HTML of the finished segments from index ``segment`` on whose colours are known, in order up to the
        first one still pending in the pool: final until :attr:`epoch` changes (O(those segments))."""
        out: list[str] = []
        for part in self._frozen[segment:]:
            if part[1] is None:
                part[1] = self._cache.lookup(str(part[0]), self.lang, self.theme)
                if part[1] is None:
                    break
            out.append(part[1])
        return out
