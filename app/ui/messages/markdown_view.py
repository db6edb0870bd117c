"""MarkdownView: the widget that shows one message's rendered markdown and patches it while it streams.

The view owns an :class:`~app.core.render.markdown.IncrementalMarkdown`. :meth:`MarkdownView.append_text` only feeds
it; :meth:`MarkdownView.refresh` (called once per UI tick) has the view show what changed: the reasoning section's
header and fold, the phase (reasoning or answer), and the answer's blocks, which :class:`~.patched_view.PatchedView`
patches into the document piece by piece (a long message in sealed segments, :mod:`.segments`). The whole
message is never re-set with ``setHtml`` while streaming. Each block's HTML is inserted with the same procedure
whether it streams in or a finished message is loaded with :meth:`MarkdownView.set_text`, so both give the same
document.

Formulas are images the math pool (:mod:`app.core.render.math_render`, a worker process) draws at the screen's
device pixel ratio in the theme's text colour; :meth:`MarkdownView.loadResource` hands Qt the image an
``<img src="brook-math:…">`` names (so the HTML stays small: no ``data:`` URI), and a copied selection holds the
formula's TeX (``$…$``), not an object character. Until the image is known the formula shows as TeX.

Links follow :mod:`.view_links` (what is opened, asked about, copied, folded).
"""

from __future__ import annotations

import time

from PySide6.QtCore import QEvent, QMimeData, Qt, QTimer, QUrl
from PySide6.QtGui import (
    QFont,
    QGuiApplication,
)
from PySide6.QtWidgets import QApplication, QFrame, QSizePolicy, QTextBrowser, QWidget

from app.core.render.lexer_pool import LexerPool, default_pool
from app.core.render.markdown import PIECE, IncrementalMarkdown
from app.core.render.math_render import MathCache, MathPool, default_math_pool
from app.ui.messages.arrivals import pool_arrivals
from app.ui.messages.collector import freeze_startup_heap
from app.ui.messages.formulas import formula_image, math_cache
from app.ui.messages.patch_budget import PatchBudget
from app.ui.messages.reasoning_view import ReasoningView
from app.ui.messages.rich_text import (
    RUN_BREAK_CHARS,
    UI_FONT_FAMILIES,
    break_long_runs,
    height_for_width,
    palette_theme,
    selection_mime,
    view_pieces,
)

__all__ = ["RUN_BREAK_CHARS", "UI_FONT_FAMILIES", "MarkdownView", "break_long_runs", "height_for_width",
           "palette_theme", "reply_renderer", "warm_up"]

_BLANK: dict[str, IncrementalMarkdown] = {}

#: A refresh that left pieces for later (its patch budget: ``patch_budget``) shows them at the next tick, or this
#: long after it without one (longer than a tick, so that it never adds a second patch to a frame).
MORE_DELAY_MS = 50
#: A finished reply built in slices (:meth:`MarkdownView.start_build`) inserts this many HTML characters per call
#: (~1.3 ms here, p99 3; the caller makes as many calls as fit its slice).
BUILD_CHUNK_CHARS = 2_000
#: A finished reply's renderer frees its open tail's state this long after the end (ms; ``release_spent``): in
#: the reply's last frame, freeing a streamed 2,000-row table's took 6-10 ms of a 38-57 ms frame.
RELEASE_AFTER_MS = 100


def _blank_renderer(theme: str) -> IncrementalMarkdown:
    """A finished renderer of no text in ``theme``, shared by every empty view (never fed)."""
    blank = _BLANK.get(theme)
    if blank is None:
        blank = _BLANK[theme] = IncrementalMarkdown(theme=theme)
        blank.finish()
    return blank


def reply_math(font: QFont | None = None, dpr: float | None = None) -> MathCache:
    """What a reply's formulas are drawn with: the math pool, for ``font`` at ``dpr`` (default: a view's font,
    the primary screen's device pixel ratio)."""
    if font is None:
        font = QFont(QApplication.font())
        font.setFamilies(UI_FONT_FAMILIES)
    if dpr is None:
        screen = QGuiApplication.primaryScreen()
        dpr = screen.devicePixelRatio() if screen is not None else 1.0
    return math_cache(font, dpr)


def reply_renderer(theme: str, font: QFont | None = None, dpr: float | None = None, *,
                   final_text: bool = False) -> IncrementalMarkdown:
    """A renderer for a reply shown in ``theme``: code lexed by the lexer pool, formulas drawn by the math pool
    for ``font`` at ``dpr`` (:func:`reply_math`); ``final_text``: a finished message fed in slices
    (``IncrementalMarkdown``)."""
    return IncrementalMarkdown(theme=theme, pool=MarkdownView.lexer_pool(), math=reply_math(font, dpr),
                               final_text=final_text)


class MarkdownView(ReasoningView):
    """Read-only rich-text view of one message, patched incrementally while the reply streams.

    ``theme`` is ``"light"``, ``"dark"`` or None (follow the palette, also when it changes while the app runs).
    The view has no background of its own: it shows the bubble it sits in.
    The height follows the document (no vertical scroll bar): :meth:`heightForWidth` is the document height
    and :attr:`heightChanged` (pixels) is emitted when it changes, so the view sits in a scroll area of messages.
    """

    #: Milliseconds between looks at the lexer pool while code colours are pending (a streaming reply's ticks
    #: take them: see :meth:`_poll_highlights`); a finished message also looks as soon as the pools have nothing
    #: left to do (:meth:`_on_pool_results`).
    HIGHLIGHT_POLL_MS = 40

    @staticmethod
    def lexer_pool() -> LexerPool:
        """The pool that lexes code for every view (pygments never runs on the UI loop)."""
        return default_pool()

    @staticmethod
    def math_pool() -> MathPool:
        """The pool that draws formulas for every view (mathtext never runs on the UI loop)."""
        return default_math_pool()

    def __init__(self, parent: QWidget | None = None, *, theme: str | None = None) -> None:
        super().__init__(parent)
        self._follow_palette = theme is None
        self.theme = theme or palette_theme()   # the app's palette: the view's own is transparent
        self.renderer = self._new_renderer()
        self._hl_timer = QTimer(self)
        self._hl_timer.setSingleShot(True)
        self._hl_timer.setInterval(self.HIGHLIGHT_POLL_MS)
        self._hl_timer.timeout.connect(self._poll_highlights)
        self._refreshed = False               # refresh ran since the last poll of the lexer pool
        self._render_ms_unpatched = 0.0       # render time (ms) of ``render_fed`` since the last refresh
        self._lagging = False                 # the last refresh's patch left pieces for later (``lagging``)
        self._budget = PatchBudget()          # HTML characters a streaming refresh inserts at most
        pool_arrivals().results.connect(self._on_pool_results)
        self._more_timer = QTimer(self)       # a patch left pieces for later (its budget)
        self._more_timer.setSingleShot(True)
        self._more_timer.setInterval(MORE_DELAY_MS)
        self._more_timer.timeout.connect(self.refresh)
        self.setOpenLinks(False)
        self.setOpenExternalLinks(False)
        self.setReadOnly(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.viewport().setAutoFillBackground(False)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setLineWrapMode(QTextBrowser.LineWrapMode.WidgetWidth)
        policy = QSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        policy.setHeightForWidth(True)
        self.setSizePolicy(policy)
        self.anchorClicked.connect(self.open_anchor)
        self._expanded = True  # thinking section shown while the model reasons
        self._later_expanded = False  # reasoning sections inside the answer: folded
        self._user_toggled = False
        self.placeholder = False  # plain text shown until the full render (show_placeholder)
        self._catching_up = False  # a re-made streaming view renders the text so far behind its preview
        self._build_budget: int | None = None   # set_renderer's insert budget while built in slices (start_build)
        # the first stable block whose colours or formula images a render brought and the view has not applied
        # (``_took_restyle``): a render outside ``refresh`` (``finish``, ``render_fed``) must not lose it
        self._restyled: int | None = None
        self._reset_state()
        self._version = self.renderer.version
        # no lighter box in a dark bubble; set last: under a zoomed window (a ``font-size`` rule) it sends this
        # view a FontChange at once, and ``changeEvent`` reads the state above
        self.setStyleSheet("QTextBrowser { background: transparent; }")

    # -- public API ----------------------------------------------------------------------------------------

    def append_text(self, text: str) -> None:
        """Feed a chunk of the reply to the renderer; nothing is drawn until :meth:`refresh`."""
        if (self.renderer is _BLANK.get(self.theme) or self.placeholder) and not self._catching_up:
            self.reset()
        self.renderer.feed(text)

    def render_fed(self) -> None:
        """Render what was fed, without patching the document (a catch-up slice rendered in parts): the next
        :meth:`refresh` patches it, its patch budget less the time spent here."""
        t_render = time.perf_counter()
        self.renderer.render()
        self._took_restyle()
        self._render_ms_unpatched += (time.perf_counter() - t_render) * 1000.0

    def spend(self, ms: float) -> None:
        """The frame spent ``ms`` before the next :meth:`refresh` (a paint that ran over): its patch budget less."""
        self._render_ms_unpatched += ms

    def refresh(self) -> bool:
        """Patch the document with what arrived since the last call; True if anything changed.

        Only the pieces that differ from what is painted (from the first differing one on) are re-inserted.
        """
        md = self.renderer
        self._refreshed = True
        self._lagging = False
        t_render = time.perf_counter()
        md.render()
        self._took_restyle()
        render_ms = (time.perf_counter() - t_render) * 1000.0 + self._render_ms_unpatched
        self._render_ms_unpatched = 0.0
        if self._catching_up:
            return False               # the preview stays until the text so far is rendered (end_catch_up)
        if md.highlights_pending and not self._hl_timer.isActive():
            self._hl_timer.start()
        version = md.version
        if version == self._version and not self.behind:
            return False
        self._version = version
        if md.thinking_restyled and self._has_header and self._phase == "answer" and md.thinking_done:
            if self._expanded and not self._refold():     # folded: its new colours are not on screen
                self._rebuild()
                return True
        elif md.thinking_restyled or (md.thinking is None and self._has_header):
            self._rebuild()   # reasoning restyled, or it never closed and turned out to be the answer
            return True
        restyled, self._restyled = self._restyled, None
        if restyled is not None and self._phase == "answer":
            self._restyle_from(restyled)
        thinking_active = md.thinking is not None and not md.thinking_done
        phase = "think" if thinking_active else "answer"
        if md.thinking is not None and (self._phase != phase or not self._has_header):
            if phase == "answer" and not self._user_toggled:
                self._expanded = False  # fold the reasoning once the answer starts
            self._rebuild()
            return True
        if thinking_active and not self._expanded:
            return False  # reasoning folded: nothing to show until the answer starts
        active = md.thinking if thinking_active else md
        assert active is not None
        t0 = time.perf_counter()
        self._patch(active.stable_blocks, active.tail_blocks, dim=thinking_active,
                    tail_final=0 if thinking_active else md.tail_final_pieces,
                    budget=self._budget.chars(render_ms))   # also at the end: the rest comes on the next ticks
        cost = time.perf_counter() - t0
        md.charge(cost)                       # the big-tail throttle counts the document's cost too
        self._budget.measured(self.inserted, cost)
        self._lagging = self.behind
        if self.behind:
            self._more_timer.start()          # the rest in the next tick, or soon if none comes
        return True

    def _took_restyle(self) -> None:
        """Keep the block the renderer's last render restyled (``restyled_from``: the next render forgets it) until
        :meth:`refresh` applies it. Lost, a formula whose image came between a stream's last refresh and its
        end stayed TeX in the view for good (its piece is stable: not compared again)."""
        first = self.renderer.restyled_from
        if first is not None:
            self._restyled = first if self._restyled is None else min(self._restyled, first)

    def lagging(self) -> bool:
        """Whether the last :meth:`refresh` left rendered pieces out of the document (its patch budget): the
        render tick then patches it again before it feeds it more (``Coalescer``)."""
        return self._lagging

    def saturated(self) -> bool:
        """Whether the pieces the last :meth:`refresh` left out hold a whole patch budget (``chars(0)``): the
        render tick then only patches; with less left it also feeds the next slice, and the patch inserts the
        rest first, then the new pieces (patches of the rest alone, 1-3 ms, were half the ticks of a fast remote
        reply's catch-up)."""
        return self._lagging and self.behind_chars >= self._budget.chars(0.0)

    def end_cost_ms(self) -> float:
        """What :meth:`finish` is reckoned to cost (ms): the renderer's estimate of its final parse and showing
        (``IncrementalMarkdown.end_cost_s``). The render tick uses it to put the end in the next frame when it
        would make the frame waiting for its beat late (``Coalescer.finish``)."""
        return self.renderer.end_cost_s * 1000.0

    def finish(self) -> None:
        """End of stream: the renderer's final blocks are shown (a late link reference may re-render all)."""
        first_changed = self.renderer.finish()
        self._took_restyle()       # (finish renders: a formula's image that came just now is taken there)
        if first_changed < self._n_stable and self._phase == "answer":
            self._rebuild()
        else:
            self._version = -1
            self.refresh()
        if self.renderer.highlights_pending and not self._hl_timer.isActive():
            self._hl_timer.start()
        QTimer.singleShot(RELEASE_AFTER_MS, self.renderer.release_spent)   # not in the reply's last frame

    def set_text(self, text: str) -> None:
        """Show a finished message (e.g. loaded from history) in one go."""
        renderer = self._new_renderer()
        renderer.feed(text)
        renderer.finish()
        self.set_renderer(renderer)

    def set_renderer(self, renderer: IncrementalMarkdown) -> None:
        """Show a finished message whose renderer was fed and finished elsewhere (the message list's cache or
        its idle time; same theme as this view): like :meth:`set_text` without the markdown work."""
        self.placeholder = False
        self._probe_heights.clear()
        self.renderer = renderer
        self._expanded = False
        self._user_toggled = False
        self._rebuild()
        if renderer.highlights_pending:
            self._hl_timer.start()

    def start_build(self, renderer: IncrementalMarkdown) -> bool:
        """:meth:`set_renderer` in slices: the first ``BUILD_CHUNK_CHARS`` of HTML now, the rest at each
        :meth:`continue_build`; True once all is in. The slices go into a detached document (:meth:`detach`),
        shown once all is in; meanwhile the view shows nothing of it (the message widget builds in a spare view,
        off-screen: ``MessageWidget.build_rendered``). The documents equal set_renderer's."""
        self.detach()
        self._build_budget = BUILD_CHUNK_CHARS
        try:
            self.set_renderer(renderer)
        finally:
            self._build_budget = None
        return self._built()

    def continue_build(self) -> bool:
        """The next ``BUILD_CHUNK_CHARS`` of HTML of the render :meth:`start_build` began; True once all is in."""
        if self.behind:
            md = self.renderer
            self._patch(md.stable_blocks, md.tail_blocks, dim=False, budget=BUILD_CHUNK_CHARS)
        return self._built()

    def _built(self) -> bool:
        if self.behind:
            return False
        self.attach()
        return True

    def begin_catch_up(self, preview: str) -> None:
        """A re-made view of a reply that streams (its chat was opened again): show ``preview`` (the text so far
        without markup) while a fresh renderer is fed the text so far in slices (:meth:`append_text`, with
        :meth:`refresh` only rendering); :meth:`end_catch_up` then lets the next :meth:`refresh` show it all."""
        self.show_placeholder(preview)
        self.renderer = self._new_renderer()
        self._version = self.renderer.version
        self._catching_up = True

    @property
    def catching_up(self) -> bool:
        """Whether the view shows a preview while its renderer is fed the text so far (:meth:`begin_catch_up`)."""
        return self._catching_up

    def end_catch_up(self) -> None:
        """The renderer has the text so far: the next :meth:`refresh` replaces the preview by the render."""
        if not self._catching_up:
            return
        self._catching_up = False
        self.placeholder = False
        self.document().clear()
        self._reset_state()

    def show_placeholder(self, text: str) -> None:
        """Show ``text`` as plain text (no markdown, no links) until :meth:`set_renderer` or :meth:`reset`; the
        message list's quick first look at a message scrolling into view. :attr:`placeholder` is True meanwhile."""
        self.reset(fresh=False)
        self.placeholder = True
        self.document().setPlainText(text)

    def reset(self, fresh: bool = True) -> None:
        """An empty view (a reused view about to show another message, or stream one). ``fresh=False``: its
        renderer is a shared empty one until :meth:`append_text`, :meth:`set_text` or :meth:`set_renderer`
        (making a renderer costs ~0.25 ms)."""
        self._drop_detached()
        self._hl_timer.stop()
        self.placeholder = False
        self._catching_up = False
        self._probe_heights.clear()
        self.renderer = self._new_renderer() if fresh else _blank_renderer(self.theme)
        self._expanded = True
        self._user_toggled = False
        self._restyled = None
        self._reset_state()
        self.document().clear()
        self._version = self.renderer.version

    def set_theme(self, theme: str) -> None:
        """Show the message in ``"light"`` or ``"dark"`` colours (re-renders it; a streaming reply goes on)."""
        if theme == self.theme:
            return
        if self.placeholder:       # plain text has no colours; the full render will use the new theme
            self.theme = theme
            return
        self.theme = theme
        self._render_again()

    def _render_again(self) -> None:
        """A new renderer (theme, text size) fed the text so far; the document is built again."""
        old = self.renderer
        self.renderer = self._new_renderer()
        if old.text:
            self.renderer.feed(old.text)
        if old.finished:
            self.renderer.finish()
        else:
            self.renderer.render()
        self._rebuild()
        if self.renderer.highlights_pending and not self._hl_timer.isActive():
            self._hl_timer.start()     # code colours of the new theme come from the lexer pool: poll for them

    def changeEvent(self, event: QEvent) -> None:
        """Follow a live switch of the system theme (light ↔ dark) when no theme was given; keep the UI font
        families on a font change (zoom)."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:     # Qt sets the widget's font on the document: keep our families
            font = QFont(self.document().defaultFont())
            font.setFamilies(UI_FONT_FAMILIES)
            self.document().setDefaultFont(font)
        if self._follow_palette and event.type() in (QEvent.Type.ApplicationPaletteChange,
                                                      QEvent.Type.PaletteChange):
            self.set_theme(palette_theme())   # the app's palette (this view's own is transparent)
        elif (event.type() == QEvent.Type.FontChange and not self.placeholder and "$" in self.renderer.text
              and self.renderer.math is not None
              and math_cache(self.document().defaultFont(), self.devicePixelRatioF()).font != self.renderer.math.font):
            self._render_again()              # formulas follow the text size (zoom)

    def _new_renderer(self) -> IncrementalMarkdown:
        return reply_renderer(self.theme, self.document().defaultFont(), self.devicePixelRatioF())

    def loadResource(self, kind: int, name: QUrl) -> object:
        """Qt asks for an image the HTML names: a formula's (``brook-math:…``) comes from the math pool, drawn at
        its device pixel ratio; nothing else is ever loaded (no files, no network)."""
        return formula_image(self.math_pool(), name)

    def createMimeDataFromSelection(self) -> QMimeData:
        """The selection as text, with each formula's TeX where the document holds its image (Qt's own text has
        an object character there)."""
        return selection_mime(self, super().createMimeDataFromSelection())

    def _poll_highlights(self) -> None:
        """Pick up code colours the lexer pool delivered (the stream may have ended: nobody else refreshes) —
        unless the reply streams and a tick refreshed it since the last look: then look again later (a refresh
        of its own was a second patch in a frame, outside the tick's budget: 4-8 ms in 15 % of 1 MB's frames)."""
        if self._refreshed and not self.renderer.finished:
            self._refreshed = False
            self._hl_timer.start()
            return
        self.refresh()

    def _on_pool_results(self) -> None:
        """The lexer or math pool stored results (:mod:`.arrivals`). A finished message waiting for its code colours
        or formulas shows them once the pools have nothing left to do (one patch with all of them, not one per
        result), at once instead of at its next poll; a streaming one takes them at its next tick."""
        if (self._hl_timer.isActive() and self.renderer.finished
                and not self.lexer_pool().pending() and not self.math_pool().pending()):
            self._hl_timer.stop()
            self.refresh()

    def _restyle_from(self, block: int) -> None:
        """Stable block ``block`` and later ones changed (code colours arrived): compare them again."""
        if block < self._n_stable:
            self._stable_pieces = [p for html in self.renderer.stable_blocks[:block] for p in view_pieces(html, PIECE)]
            self._n_stable = block
            self._n_frozen = min(self._n_frozen, len(self._stable_pieces))

    def code_for(self, key: str) -> str | None:
        """Raw code of block ``key`` (``"N"`` in the answer, ``"tN"`` in the reasoning), or None."""
        md = self.renderer
        if key.startswith("t"):
            md = md.thinking  # type: ignore[assignment]
            key = key[1:]
        if md is None or not key.isdigit():
            return None
        codes = md.code_blocks
        n = int(key)
        return codes[n] if n < len(codes) else None


def warm_up() -> None:
    """Pay the view's one-time costs (monospace font and layout set-up: ~30 ms here; the math worker's matplotlib
    import) now, e.g. while a model loads, not in the first render tick of the first reply. Call on the GUI
    thread; ``app.core.render.highlight.warm_up`` does the lexers' part off it."""
    view = MarkdownView(None)
    view.resize(400, 200)
    view.append_text("Warm **up** `x` $x^2$\n\n```python\ndef f(x):\n    return x\n```\n\n| a |\n|---|\n| 1 |\n")
    view.refresh()
    view.finish()
    view.document().size()
    view.deleteLater()
    freeze_startup_heap()      # later full garbage collections skip start-up's objects (see .collector)
