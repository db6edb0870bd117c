"""What the message list reuses while it scrolls: finished renders of replies (:class:`RenderCache`) and message
widgets (:class:`WidgetPool`).

Measured on a 1,000-pair chat scrolled top to bottom in 40 steps (``python -m app.bench history``), a newly
shown reply cost 20-50 ms: markdown → HTML (markdown-it, ~7 ms a corpus answer, 25 ms a long table), inserting
the HTML into the document (~2 ms), laying the document out for its height (~3 ms), and building and showing
the widget (~2.5 ms: a ``QTextBrowser``, labels, style polish). So the list keeps both:

- the renderer of a finished reply (its HTML blocks, code for the Copy buttons, the reasoning section) per
  message id, theme and font (formulas are drawn for the text size) — never by text, which another message may
  share; an entry is used only while the message's text is still the text it was rendered from (an edit or a
  new version makes it stale);
- widgets that scrolled away, per role, to show the next message that scrolls in (``MessageWidget.bind``);
- the widget of a reply that streams when its chat is left for another (:class:`ParkedWidgets`): shown again as
  it was when the chat is opened again, the render tick then feeds it only what arrived meanwhile (a re-made view
  had to render the whole text so far again: 0.35-0.45 s for 40 KB before it showed the render, 1.8-2 s before
  its document was whole).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING

from PySide6.QtGui import QFont

from app.core.conversation import Message, Role
from app.core.render.markdown import IncrementalMarkdown
from app.core.render.math_render import Font, default_math_pool
from app.ui.messages.markdown_view import reply_math, reply_renderer

if TYPE_CHECKING:
    from PySide6.QtWidgets import QWidget

    from app.core.render.render_ahead import AheadPool
    from app.ui.messages.positions import ListItem
    from app.ui.messages.widget import MessageWidget

#: Finished renders kept (LRU). A corpus answer's renderer holds ~2-3 × its text.
RENDER_CACHE_ENTRIES = 600
#: Widgets kept for reuse, per role (a screen and the screens kept around it hold far fewer).
POOL_PER_ROLE = 24
#: Showing a render costs about 1 ms per this many characters of HTML (measured 2,100-4,200 on the corpus, the
#: 80-row table 3,100; halved for a busy machine): a scroll step shows a cached render only if it fits its budget.
INSTALL_HTML_CHARS_PER_MS = 1500
#: How far past a slice's nominal end :func:`slice_end` looks for a blank line when there is none inside the
#: slice (× the slice's characters): a table or a list longer than a slice is then fed whole, parsed once.
BLANK_LOOK_SLICES = 4


def slice_end(text: str, pos: int, chars: int) -> int:
    """Where the slice of ``text`` that starts at ``pos`` and holds about ``chars`` characters ends (an index).

    The text is fed to an incremental renderer, which re-parses its unfinished tail at every render: a slice that
    ends inside a table or a list makes the next slice parse that block again from its start. So a slice ends
    after the last blank line (a block boundary) inside it; with none, after the first one within
    ``BLANK_LOOK_SLICES`` slices past it; with none either, after a line end. The rest of the text, if not much
    longer than a slice, is one slice. Measured on 40 corpus replies of ~7 KB, most with an 80-row table, same
    run: 500-character slices cut at line ends cost 41-49 ms of markdown a reply, cut this way 13-15 ms (one piece:
    12-16 ms). Most of that gap was a stream's rule that held every block after pending code in the tail
    (``IncrementalMarkdown``'s ``final_text``, which the render cache now sets): without it, line cuts cost
    15-23 ms, with slices of 5-13 ms against 10-15 ms here, in ~14 slices against ~5.
    """
    end = pos + chars
    if len(text) - pos <= chars * 3 // 2:
        return len(text)
    blank = text.rfind("\n\n", pos + 1, end)
    if blank < 0:
        blank = text.find("\n\n", end, end + chars * BLANK_LOOK_SLICES)
    if blank >= 0:
        return blank + 2
    nl = text.find("\n", end, end + chars // 2)
    return nl + 1 if nl >= 0 else end


class RenderCache:
    """Finished ``IncrementalMarkdown`` renderers by ``(message.id, theme, font)`` (LRU, ``max_entries``).

    ``ahead``: a worker pool that renders replies off the UI loop (:mod:`app.core.render.render_ahead`; None:
    every render is made here), asked through :meth:`take_ahead`. ``hits`` and ``misses`` count :meth:`get`
    answers (tests and the benchmark read them).
    """

    def __init__(self, max_entries: int = RENDER_CACHE_ENTRIES, ahead: AheadPool | None = None) -> None:
        self.ahead = ahead
        if ahead is not None:
            ahead.start()      # its thread now (it waits on a queue: no wake-ups), its process at the first job
        self._max = max_entries
        self._entries: OrderedDict[tuple[int, str, str], tuple[str, IncrementalMarkdown, int]] = OrderedDict()
        self._building: tuple[Message, str, str, IncrementalMarkdown, int, str] | None = None   # render_slice's
        self.font: QFont | None = None               # the views' font (formulas are drawn for it): use_font
        self._font_key = ""
        self.hits = 0
        self.misses = 0
        self._formula: tuple[Font, float] | None = None     # _formula_font's answer for the font key _formula_for
        self._formula_for = ""

    def use_font(self, font: QFont) -> None:
        """Render for views in ``font`` from now on (formulas are images drawn for a font's size: renders made
        for another font, before a zoom, are not used)."""
        key = font.key()
        if key != self._font_key:
            self.font, self._font_key = QFont(font), key

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, message: Message, theme: str, max_ms: float | None = None) -> IncrementalMarkdown | None:
        """The finished render of ``message`` in ``theme``, or None (never made, evicted, or its text changed;
        or, with ``max_ms``, showing it would take longer than that: ``INSTALL_HTML_CHARS_PER_MS``)."""
        key = (message.id, theme, self._font_key)
        hit = self._entries.get(key)
        if hit is not None:
            text = message.text
            if max_ms is not None and hit[2] > max_ms * INSTALL_HTML_CHARS_PER_MS:
                self.misses += 1
                return None
            if hit[0] is text or hit[0] == text:
                self._entries.move_to_end(key)
                self.hits += 1
                return hit[1]
            del self._entries[key]          # the message was edited or shows another version
        self.misses += 1
        return None

    def has(self, message: Message, theme: str) -> bool:
        """Whether :meth:`get` would answer a render (counts neither a hit nor a miss)."""
        hit = self._entries.get((message.id, theme, self._font_key))
        return hit is not None and (hit[0] is message.text or hit[0] == message.text)

    def render(self, message: Message, theme: str) -> IncrementalMarkdown:
        """Render ``message``'s text in ``theme`` now (markdown → HTML; code colours arrive later from the
        lexer pool) and keep it; returns the renderer."""
        text = message.text
        renderer = new_renderer(theme, self.font)
        renderer.feed(text)
        renderer.finish()
        self.put(message, theme, text, renderer)
        return renderer

    def put(self, message: Message, theme: str, text: str, renderer: IncrementalMarkdown) -> None:
        """Keep ``renderer``, the finished render of ``text`` (``message``'s text when it was made) in ``theme``."""
        key = (message.id, theme, self._font_key)
        self._entries[key] = (text, renderer, len(renderer.html))
        self._entries.move_to_end(key)
        while len(self._entries) > self._max:
            self._entries.popitem(last=False)

    def render_slice(self, message: Message, theme: str, chars: int) -> bool:
        """Render about ``chars`` more characters of ``message`` (cut at a block boundary: :func:`slice_end`) into a
        renderer kept between calls; True once it is finished and in the cache. A message whose text changed
        meanwhile starts again."""
        text = message.text
        b = self._building
        if b is None or b[0] is not message or b[1] != theme or b[2] is not text or b[5] != self._font_key:
            b = (message, theme, text, new_renderer(theme, self.font), 0, self._font_key)
        renderer, pos = b[3], b[4]
        end = slice_end(text, pos, chars)
        renderer.feed(text[pos:end])
        if end >= len(text):
            renderer.finish()
            self.put(message, theme, text, renderer)
            self._building = None
            return True
        renderer.render()
        self._building = (message, theme, text, renderer, end, self._font_key)
        return False

    def take_ahead(self, message: Message, theme: str, ask: bool = True) -> bool | None:
        """Whether the worker pool's render of ``message`` in ``theme`` is in the cache now (True: it was there or
        it arrived), is being made (None: asked now or before; the pool's news tells when it comes), or must be
        made here (False: no pool, a formula, a deadline missed). Asks the pool once (``ask=False``: not; None
        then also means not asked yet); costs a dict look-up."""
        if self.has(message, theme):
            return True
        pool = self.ahead
        if pool is None:
            return False
        text = message.text
        font, dpr = self._formula_font()
        key = (theme, text, font, dpr)
        out = pool.lookup(key)
        if out is None:
            if ask:
                pool.ask(key)
            return None
        if not isinstance(out, tuple):
            return False
        renderer, images = out
        math_pool = default_math_pool()
        for math_key, image in images:            # the formulas its HTML names, drawn by the worker
            math_pool.store(math_key, image)
        self.put(message, theme, text, renderer)
        return True

    def keep_ahead(self, messages: list[Message], theme: str) -> None:
        """Only ``messages`` are still wanted from the worker pool: jobs it has not started for others are dropped
        (a list scrolled past them)."""
        if self.ahead is not None and self.ahead.pending():     # (a layout while nothing is queued: nothing)
            font, dpr = self._formula_font()
            self.ahead.retain({(theme, m.text, font, dpr) for m in messages})

    def _formula_font(self) -> tuple[Font, float]:
        """What formulas are drawn for in a reply shown in the views' font: ``MathCache``'s font and ratio."""
        if self._formula_for != self._font_key or self._formula is None:
            math = reply_math(self.font)
            self._formula, self._formula_for = (math.font, math.dpr), self._font_key
        return self._formula

    def get_or_render(self, message: Message, theme: str) -> IncrementalMarkdown:
        hit = self.get(message, theme)
        return hit if hit is not None else self.render(message, theme)

    def clear(self) -> None:
        self._entries.clear()


def new_renderer(theme: str, font: QFont | None = None) -> IncrementalMarkdown:
    """A renderer as a ``MarkdownView`` makes one (code lexed in the shared lexer pool, formulas drawn in the math
    pool for a view's font), for a finished message (``final_text``: fed in slices, its blocks are stable at once)."""
    return reply_renderer(theme, font, final_text=True)


class WidgetPool:
    """Message widgets not showing anything, per role (at most ``per_role`` each); ``made`` counts widgets
    created, ``reused`` widgets handed out again."""

    def __init__(self, per_role: int = POOL_PER_ROLE) -> None:
        self._per_role = per_role
        self._free: dict[Role, list[MessageWidget]] = {}
        self.made = 0
        self.reused = 0

    def take(self, message: Message, parent: QWidget, body: str, renderer: IncrementalMarkdown | None = None
             ) -> MessageWidget:
        """A widget showing ``message`` (``body``, ``renderer`` as in ``MessageWidget.bind``): a free one
        re-bound, or a new one."""
        from app.ui.messages.widget import MessageWidget

        free = self._free.get(message.role)
        if free:
            w = free.pop()
            w.bind(message, body=body, renderer=renderer)
            self.reused += 1
            return w
        self.made += 1
        return MessageWidget(message, parent, body=body, renderer=renderer)

    def give_back(self, widget: MessageWidget) -> None:
        """``widget`` shows nothing any more: keep it (its document emptied) or delete it when enough are kept."""
        widget.hide()
        widget.clearFocus()
        free = self._free.setdefault(widget.role, [])
        if len(free) >= self._per_role:
            widget.deleteLater()
            return
        if widget.view is not None:
            widget.view.reset(fresh=False)     # frees the document (and stops its highlight polling)
        free.append(widget)

    def clear(self) -> None:
        for free in self._free.values():
            for w in free:
                w.deleteLater()
        self._free.clear()


#: Widgets of streaming replies kept while their chats are not shown (the oldest is given back beyond this).
PARKED_MAX = 4


class ParkedWidgets:
    """The widgets of replies that stream in chats not shown, hidden, by message id (at most ``PARKED_MAX``): a
    chat opened again shows its streaming reply in the widget it had, document and renderer as they were.

    A widget whose reply ended meanwhile is not shown again (its view lacks the end: the reply is shown as a
    finished one); ``give_back`` returns widgets to the :class:`WidgetPool`."""

    def __init__(self, pool: WidgetPool, max_widgets: int = PARKED_MAX) -> None:
        self._pool = pool
        self._max = max_widgets
        self._widgets: OrderedDict[int, MessageWidget] = OrderedDict()

    def __len__(self) -> int:
        return len(self._widgets)

    def park(self, item: ListItem) -> bool:
        """Keep the widget of row ``item`` hidden, off the row, if it shows a reply that streams; returns whether
        it did (else the caller gives the widget back as usual)."""
        from app.ui.messages.widget import MessageWidget

        w, msg = item.widget, item.message
        if not isinstance(w, MessageWidget) or msg is None or msg.status.final or w.view is None:
            return False
        item.widget = None
        w.list_item = None               # type: ignore[attr-defined]
        w.hide()
        self._widgets[msg.id] = w
        while len(self._widgets) > self._max:
            self._pool.give_back(self._widgets.popitem(last=False)[1])
        return True

    def take(self, item: ListItem) -> MessageWidget | None:
        """The parked widget of row ``item``'s message while it still streams, now the row's (None otherwise;
        one whose reply ended is given back to the pool)."""
        msg = item.message
        w = self._widgets.pop(msg.id, None) if msg is not None and self._widgets else None
        if w is None:
            return None
        if w.message is not msg or msg is None or msg.status.final:
            self._pool.give_back(w)
            return None
        w.list_item = item               # type: ignore[attr-defined]
        return w

    def clear(self) -> None:
        """Give every parked widget back (a new language or text size: widgets are made anew)."""
        while self._widgets:
            self._pool.give_back(self._widgets.popitem()[1])
