"""Fast path for an open top-level fence that is the whole tail: new lines are never re-parsed.

While a fence is open, each complete line is only checked for the closing fence and handed to an
:class:`~app.core.render.highlight.IncrementalHighlighter` (O(new lines) per tick). Its HTML is the code block's
pieces (:mod:`.code_html`), and the pieces of lines whose colours are final are made once and kept, the same string
objects from tick to tick (the view splits only the parts that changed: ``TailPieces``): making every piece again
cost O(lines) a tick — 1.2 ms at the start of a 5,000-line block, 2.9 ms at its end, most of it grouping lines.
Once the closing line arrives the caller re-parses the tail as usual.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

from markdown_it.token import Token

from app.core.render.highlight import CodeTheme, IncrementalHighlighter, SegmentCache
from app.core.render.markdown.boundaries import fence_closed
from app.core.render.markdown.code_html import add_code_lines, code_header, code_piece, code_style
from app.core.render.markdown.parser import fence_lang
from app.core.render.markdown.piece import PIECE


def _strip_indent(line: str, indent: int) -> str:
    n = 0
    while n < indent and n < len(line) and line[n] == " ":
        n += 1
    return line[n:]


class OpenFence:
    """An open top-level fence: ``advance(lines, partial)`` gives its HTML as parts, or None once it has closed.

    Made by :meth:`open`; ``href`` is its "Copy" address; ``colors`` the code theme.
    """

    def __init__(self, char: str, length: int, indent: int, lang: str, hl: IncrementalHighlighter,
                 href: str, colors: CodeTheme) -> None:
        self.char = char
        self.indent = indent
        self.lang = lang
        self.hl = hl
        self.href = href
        self.colors = colors
        self.checked = 1  # tail line index up to which lines were examined (line 0 is the opener)
        self.closer = re.compile(r"^ {0,3}" + re.escape(char) + "{" + str(length) + r",}[ \t]*$")
        self._maybe_closer = re.compile(r"^ {0,3}" + re.escape(char) + r"*[ \t]*$")
        self._style = code_style(colors)
        self._drop_kept()

    def _drop_kept(self) -> None:
        """Forget the pieces kept (the highlighter made its finished segments again)."""
        self._epoch = self.hl.epoch
        self._segment = 0                 # the highlighter's finished segments taken in
        self._buf = ""                    # their HTML after the last line end
        self._held: str | None = None     # their last complete line: not grouped yet (see ``_parts``)
        self._grouped = False             # lines were grouped (their text precedes the held line)
        self._kept = [code_header(self.lang, self.href, self.colors) + PIECE]   # + closed groups, each + PIECE
        self._group: list[str] = []       # the open group of grouped lines and its plain characters
        self._size = 0

    @classmethod
    def open(cls, tokens: Sequence[Token], lines: Sequence[str], href: str, colors: CodeTheme,
             cache: SegmentCache) -> OpenFence | None:
        """The fast path for a tail whose tokens are exactly one open fence starting at line 0, else None."""
        if len(tokens) != 1 or tokens[0].type != "fence" or not lines:
            return None
        tok = tokens[0]
        if tok.map is None or tok.map[0] != 0:
            return None
        if len(lines) > 1 and fence_closed(tok, lines, len(lines)):
            return None
        opener = lines[0]
        indent = len(opener) - len(opener.lstrip(" "))
        lang = fence_lang(html.unescape(tok.info))
        hl = IncrementalHighlighter(lang, colors.name, cache)
        return cls(tok.markup[0], len(tok.markup), indent, lang, hl, href, colors)

    @property
    def code(self) -> str:
        """The raw code of the complete lines so far (what "Copy" copies)."""
        return "".join(line + "\n" for line in self.hl.lines)

    def advance(self, lines: Sequence[str], partial: str) -> list[str] | None:
        """HTML of the fence given the tail's complete ``lines`` and ``partial`` last line, as the parts of
        :meth:`_parts`; None if it closed.

        Only lines not seen before are examined. A partial line that could become the closing fence is held back.
        """
        new: list[str] = []
        for idx in range(self.checked, len(lines)):
            if self.closer.match(lines[idx]):
                self.hl.add_lines(new)
                self.hl.offer_open_segment()
                return None
            new.append(_strip_indent(lines[idx], self.indent))
        self.checked = len(lines)
        self.hl.add_lines(new)
        if partial and self._maybe_closer.match(partial):
            partial = ""
        return self._parts(_strip_indent(partial, self.indent))

    def _parts(self, partial: str) -> list[str]:
        """The block's HTML as parts: ``"".join`` of them is ``code_block_html(self.hl.html(partial), …)``.

        The lines of finished segments whose colours are known are grouped once (``add_code_lines`` resumes the
        greedy grouping); the groups they close are kept as parts. The last such line is held back, so a group
        kept is always followed by a line in the block (a closed group is never the last, whose bottom margin
        differs) whatever the block's end drops: ``html`` drops its last newline when there is no partial line,
        ``code_block_html`` one more. The rest — held line, pending segments, the open segment, the partial
        line — is grouped again at each call, on from a copy of the open group. O(new lines + the rest).
        """
        hl = self.hl
        if hl.epoch != self._epoch:
            self._drop_kept()
        settled = hl.settled(self._segment)
        if settled:
            self._segment += len(settled)
            lines = (self._buf + "".join(settled)).split("\n")
            self._buf = lines.pop()
            if lines:
                if self._held is not None:
                    lines.insert(0, self._held)
                self._held = lines.pop()
                if lines:
                    closed: list[list[str]] = []
                    self._group, self._size = add_code_lines(lines, closed, self._group, self._size)
                    self._kept.extend(code_piece(g, self._style, False) + PIECE for g in closed)
                    self._grouped = True
        rest = ("" if self._held is None else self._held + "\n") + self._buf + hl.html_from(self._segment, partial)
        cut = False                       # the block's end drops the newline before the held line too
        for strip in (not partial, True):  # ``html``'s strip (no partial line), then ``code_block_html``'s
            if not strip:
                continue
            if rest.endswith("\n"):
                rest = rest[:-1]
            elif not rest and self._grouped:
                cut = True
                break
        closed = []
        group, _ = add_code_lines([] if cut else rest.split("\n"), closed, list(self._group), self._size)
        return [*self._kept, *(code_piece(g, self._style, False) + PIECE for g in closed),
                code_piece(group, self._style, True)]
