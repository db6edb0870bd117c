"""A streamed reply: reasoning routing (:mod:`.thinking`) + the answer's :class:`~.incremental.MarkdownStream`."""

from __future__ import annotations

import codecs
import time
from typing import TYPE_CHECKING

from app.core.render.highlight import get_theme
from app.core.render.markdown.incremental import Clock, MarkdownStream
from app.core.render.markdown.thinking import (
    LATE_THINK_CLOSE,
    LATE_THINK_OPEN,
    THINK_CLOSE,
    THINK_OPEN,
    Route,
    ThinkingRouter,
    thinking_section_html,
)

if TYPE_CHECKING:
    from app.core.render.lexer_pool import LexerPool
    from app.core.render.math_render import MathCache


class IncrementalMarkdown:
    """Streaming markdown renderer of a reply: reasoning routing + the answer's :class:`MarkdownStream`.

    Usage::

        md = IncrementalMarkdown(theme="light")
        for chunk in stream:
            md.feed(chunk)                                   # O(len(chunk)), renders nothing
            if md.render():                                  # once per UI tick: O(open tail)
                view.patch(md.stable_blocks, md.tail_blocks)
        first_changed = md.finish()

    Properties only read what the last :meth:`render`/:meth:`finish` made:

    * ``stable_blocks`` — ``list[str]``, HTML of finished top-level blocks of the answer, each a self-contained
      fragment; append-only while streaming (only :meth:`finish` may replace entries, see its return value —
      and a :meth:`render` that brings a formula's image, see :attr:`restyled_from`);
    * ``tail_blocks``/``tail_html`` — HTML of the open tail ("" after :meth:`finish`);
    * ``html`` — thinking section (if any) + ``"".join(stable_blocks) + tail_html``;
    * ``text`` — the raw text fed so far; ``code_blocks`` — raw code of every code block of the answer so far
      (``brook-copy:N`` links index it; the reasoning's links read ``brook-copy:tN``);
    * ``thinking`` — the :class:`MarkdownStream` of a leading ``<think>…</think>`` section, or None;
      ``thinking_done`` — whether ``</think>`` was seen.

    ``theme`` is ``"light"`` or ``"dark"`` (``ValueError`` otherwise); ``clock`` (seconds) drives the throttle;
    ``pool``: lex code in that :class:`~app.core.render.lexer_pool.LexerPool`'s worker, never in the caller (the UI
    passes one; see :attr:`highlights_pending` and :attr:`restyled_from`). ``reasoning_open``: the reply starts
    inside a reasoning section (the chat template's generation prompt ended with ``<think>``, see
    :func:`~.thinking.prompt_opens_reasoning`); :attr:`text` then starts with ``<think>``, so a stored
    :attr:`text` renders the same later. Reasoning that arrives apart from the answer (a remote server's
    ``reasoning_content``) goes in through :meth:`feed_reasoning`. ``math``: draw formulas as images with that
    :class:`~app.core.render.math_render.MathCache` (None: TeX source); with a pool they are pending like code colours.
    ``final_text``: the text is a finished message fed in slices (the message list's idle work), not a stream:
    a block whose code colours are pending becomes stable at once and is restyled when they come, as after
    :meth:`finish` (a stream keeps it, and all after it, in the tail, so stable blocks never change: the tail then
    held the rest of a 7 KB reply, an 80-row table included, parsed again at every slice and at the end — 25-37 ms
    for the last 30 characters).

    A reasoning section that never closes is shown as the answer once the stream ends; a lone ``</think>``
    (no opening tag) makes everything before it reasoning, folded (the view then rebuilds the message).
    """

    def __init__(self, theme: str = "light", *, detect_thinking: bool = True, copy_prefix: str = "",
                 clock: Clock = time.perf_counter, pool: LexerPool | None = None,
                 reasoning_open: bool = False, math: MathCache | None = None, final_text: bool = False) -> None:
        get_theme(theme)
        self._final_text = final_text
        self.theme = theme
        self._clock = clock
        self._pool = pool
        self._math = math
        self._answer = MarkdownStream(theme, copy_prefix, clock, pool, math, hold_pending=not final_text)
        self._copy_prefix = copy_prefix
        self._router = ThinkingRouter(detect_thinking, reasoning_open)
        self._raw: list[str] = [THINK_OPEN] if reasoning_open and detect_thinking else []
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._version_base = 0  # versions of answer streams replaced by a late "</think>"
        self._external: list[str] | None = None  # reasoning fed through feed_reasoning, while still open
        self._late = False  # a later reasoning section (feed_reasoning after answer text) is open
        self.thinking: MarkdownStream | None = None
        self.thinking_done = False
        self._route(self._router.start())

    # -- input ---------------------------------------------------------------------------------------------

    def feed(self, text: str) -> None:
        """Append a chunk of the reply (any size, may be ""). O(len(text)); nothing is rendered until
        :meth:`render`. Raises ``RuntimeError`` after :meth:`finish`."""
        if self._answer.finished:
            raise RuntimeError("feed() after finish()")
        if not text:
            return
        if self._external is not None:
            self._external = None
            self._raw.append(THINK_CLOSE)
            self._route([Route("close")])
        if self._late:
            self._late = False
            self._feed_answer(LATE_THINK_CLOSE)
        self._raw.append(text)
        self._route(self._router.feed(text))

    def feed_reasoning(self, text: str) -> None:
        """Append reasoning that arrives apart from the answer (a remote server's ``reasoning_content``): before
        any answer text it goes to the reasoning section, which the next :meth:`feed` of answer text closes;
        :attr:`text` wraps it in ``<think>…</think>``. After answer text (vLLM may send it so) it is a later
        reasoning section where it stands: :attr:`text` gets ``<think>`` on a line of its own, closed by the
        next :meth:`feed`, and the answer folds it there. Nothing is dropped."""
        if self._answer.finished:
            raise RuntimeError("feed_reasoning() after finish()")
        if not text:
            return
        if self._late:
            self._feed_answer(text)
            return
        if self.thinking_done or (self.thinking is None and self.text):
            self._late = True
            self._feed_answer(LATE_THINK_OPEN + text)
            return
        if self.thinking is None:
            self._router.mode = "final"
            self._external = []
            self._raw.append(THINK_OPEN)
            self._route([Route("open")])
        if self._external is None:
            return
        self._external.append(text)
        self._raw.append(text)
        self._route([Route("think", text)])

    def _feed_answer(self, text: str) -> None:
        """Answer text that bypasses reasoning detection (a later reasoning section, already marked)."""
        self._raw.append(text)
        if self._router.mode == "final":
            self._answer.feed(text)
        else:
            self._route(self._router.feed(text))

    def feed_bytes(self, data: bytes) -> None:
        """Append raw UTF-8 bytes; a multi-byte character split across calls is decoded once it is whole.

        Invalid bytes become U+FFFD (``errors="replace"``), as the one-shot ``bytes.decode(errors="replace")``.
        """
        self.feed(self._decoder.decode(data))

    def _new_answer(self) -> None:
        self._version_base += self._answer.version + 1
        self._answer = MarkdownStream(self.theme, self._copy_prefix, self._clock, self._pool, self._math,
                                      hold_pending=not self._final_text)

    def _route(self, routes: list[Route]) -> None:
        for r in routes:
            if r.kind == "answer":
                self._answer.feed(r.text)
            elif r.kind == "think":
                assert self.thinking is not None
                self.thinking.feed(r.text)
            elif r.kind == "open":
                self.thinking = MarkdownStream(self.theme, "t", self._clock, self._pool, self._math,
                                               hold_pending=not self._final_text)
            elif r.kind == "close":
                assert self.thinking is not None
                self.thinking.finish()
                self.thinking_done = True
            elif r.kind == "retro":  # a lone "</think>": the answer so far was reasoning
                self._new_answer()
                self.thinking = MarkdownStream(self.theme, "t", self._clock, self._pool, self._math,
                                               hold_pending=not self._final_text)
                self.thinking.feed(r.text)
                self.thinking.finish()
                self.thinking_done = True
            elif r.kind == "unclosed":  # the stream ended inside reasoning: it is the answer after all
                self.thinking = None
                self._new_answer()
                self._answer.feed(r.text)

    # -- work ----------------------------------------------------------------------------------------------

    def render(self) -> bool:
        """Render what arrived since the last call; True if anything shown may have changed (``version`` grew)."""
        before = self.version
        if self.thinking is not None:
            self.thinking.render()
        self._answer.render()
        return self.version != before

    def charge(self, seconds: float) -> bool:
        """Charge what showing the last :meth:`render` cost (seconds) to the stream that re-parsed its tail in it
        (the answer's, else the reasoning's): see :meth:`MarkdownStream.charge`. Returns whether one took it."""
        if self._answer.charge(seconds):
            return True
        return self.thinking is not None and self.thinking.charge(seconds)

    @property
    def end_cost_s(self) -> float:
        """What :meth:`finish` is reckoned to cost (seconds): the open tails' (:attr:`MarkdownStream.end_cost_s`)."""
        cost = self._answer.end_cost_s
        if self.thinking is not None:
            cost += self.thinking.end_cost_s
        return cost

    def finish(self) -> int:
        """End of stream: render everything as final; returns the index of the first changed stable block of the
        answer (see :meth:`MarkdownStream.finish`). Idempotent."""
        if self._answer.finished:
            return len(self._answer.stable_blocks)
        tail = self._decoder.decode(b"", final=True)
        if tail:
            self.feed(tail)
        if self._late:
            self._late = False
            self._feed_answer(LATE_THINK_CLOSE)
        if self._external is not None:  # only reasoning came: it is the answer
            self._route([Route("unclosed", "".join(self._external))])
            self._external = None
        self._route(self._router.finish())
        if self.thinking is not None and not self.thinking.finished:
            self.thinking.finish()
        return self._answer.finish()

    def release_spent(self) -> None:
        """Free what :meth:`finish` kept of the open tails (:meth:`MarkdownStream.release_spent`): once the
        reply's last frame is shown."""
        self._answer.release_spent()
        if self.thinking is not None:
            self.thinking.release_spent()

    # -- output --------------------------------------------------------------------------------------------

    @property
    def text(self) -> str:
        """The whole raw text fed so far (joined on demand)."""
        if len(self._raw) > 1:
            self._raw = ["".join(self._raw)]
        return self._raw[0] if self._raw else ""

    @property
    def stable_blocks(self) -> list[str]:
        """HTML of the finished top-level blocks of the answer (append-only while streaming, but for formula
        images: see :attr:`restyled_from`)."""
        return self._answer.stable_blocks

    @property
    def tail_html(self) -> str:
        """HTML of the open tail of the answer (the last unfinished block or blocks)."""
        return self._answer.tail_html

    @property
    def tail_blocks(self) -> list[str]:
        """The open tail split into its top-level blocks: ``"".join(tail_blocks) == tail_html``."""
        return self._answer.tail_blocks

    @property
    def tail_final_pieces(self) -> int:
        """Leading pieces of the answer's tail that are final (see :attr:`MarkdownStream.tail_final_pieces`)."""
        return self._answer.tail_final_pieces

    @property
    def rows_rendered(self) -> int:
        """Table rows rendered so far by the answer and the reasoning section (a public counter)."""
        return self._answer.rows_rendered + (self.thinking.rows_rendered if self.thinking is not None else 0)

    @property
    def items_rendered(self) -> int:
        """Top-level list items rendered so far by the answer and the reasoning section (a public counter)."""
        return self._answer.items_rendered + (self.thinking.items_rendered if self.thinking is not None else 0)

    @property
    def version(self) -> int:
        """A counter that grows whenever the answer or the reasoning section may have changed."""
        v = self._version_base + self._answer.version
        if self.thinking is not None:
            v += self.thinking.version + 1
        return v + self.thinking_done

    @property
    def html(self) -> str:
        """Thinking section (if any) + answer HTML; equals :func:`render_markdown` of :attr:`text` once finished."""
        out = self._answer.html
        if self.thinking is not None:
            out = thinking_section_html(self.thinking.html, self.thinking_done) + out
        return out

    @property
    def code_blocks(self) -> list[str]:
        """Raw code of every code block of the answer so far, in order (what a "Copy" link copies)."""
        return self._answer.code_blocks

    @property
    def finished(self) -> bool:
        """Whether :meth:`finish` was called."""
        return self._answer.finished

    @property
    def math(self) -> MathCache | None:
        """What formulas are drawn with (None: shown as TeX); ``render_markdown(text, math=…)`` gives the same."""
        return self._math

    @property
    def highlights_pending(self) -> bool:
        """Whether some code (answer or reasoning) shows as plain text while the lexer pool works on it."""
        return self._answer.highlights_pending or (self.thinking is not None and self.thinking.highlights_pending)

    @property
    def restyled_from(self) -> int | None:
        """The first stable block of the answer that the last :meth:`render` changed (its code colours arrived,
        after :meth:`finish`; or its formula images, at any time), else None."""
        return self._answer.restyled_from

    @property
    def thinking_restyled(self) -> bool:
        """Whether the last :meth:`render` changed finished blocks of the reasoning section."""
        return self.thinking is not None and self.thinking.restyled_from is not None
