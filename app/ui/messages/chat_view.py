"""The message list: a virtual list that only keeps widgets for the messages in or near the viewport.

Why widgets and not a ``QListView`` delegate: measured here (``/tmp``-free: ``python -m app.bench history``), a
reply's ``MarkdownView.set_text`` costs 1.5-10 ms for typical answers against 0.4-0.7 ms for painting a cached
``QTextDocument`` — but a widget keeps every interaction for free (selection, links, Copy buttons, the Thinking
fold, keyboard navigation inside a message, the streaming reply's incremental patching). Making only the few
visible messages widgets removes the cost that grew with the chat (every message laid out at once); the
per-message difference is paid only for messages that scroll into view.

- Each message is a :class:`~.positions.ListItem` with its heights cached per width (measured once with the
  widget; estimated from the text length until then); :class:`~.positions.Positions` keeps their y as prefix sums
  of the heights. The idle work (previews becoming full renders, rendering ahead) is :mod:`.idle_render`.
- ``show_conversation`` lays out the last screen first: only the messages at the bottom get widgets.
- Widgets of messages more than one screen away are dropped; a streaming reply's widget is always kept.
- Follow-the-bottom: the view sticks to the bottom while the user is there and stays put once they scroll up
  (the 24 px slack absorbs a partly visible last line). When a message above the viewport gets its real height,
  the scroll position moves with it so that what is on screen does not jump.
- Wide windows: messages sit in a centred column at most ``MAX_READING_WIDTH`` px wide.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QFont, QPainter, QPaintEvent, QPen, QResizeEvent, QShowEvent
from PySide6.QtWidgets import QAbstractScrollArea, QApplication, QFrame, QLabel, QSizePolicy, QWidget

from app.core.conversation import Conversation, Message, Role
from app.core.render.render_ahead import default_ahead_pool
from app.ui.compose.chat_input import ChatInput
from app.ui.look.style import border_color
from app.ui.messages import keys as message_keys
from app.ui.messages import positions as rows
from app.ui.messages.idle_render import IDLE_DELAY_MS, OVERSCAN_PX, RENDER_SLICE_CHARS, IdleWork
from app.ui.messages.markdown_view import UI_FONT_FAMILIES, palette_theme, pool_arrivals
from app.ui.messages.pool import ParkedWidgets, RenderCache, WidgetPool
from app.ui.messages.positions import MARGIN_Y, MAX_READING_WIDTH, SPACING, ListItem, Positions, column, row_box
from app.ui.messages.scroll_blit import blit_shift
from app.ui.messages.widget import STATUS_TEXT, MessageWidget, PlainTextView, format_figures

__all__ = ["IDLE_DELAY_MS", "MARGIN_Y", "MAX_READING_WIDTH", "OVERSCAN_PX", "RENDER_SLICE_CHARS", "SPACING",
           "STATUS_TEXT", "ChatInput", "ChatView", "MessageWidget", "PlainTextView", "format_figures"]

STICK_SLACK_PX = 24
#: Within one layout (a scroll step), replies whose render is cached are shown in full if that fits in what is
#: left of this (ms); the others show their plain-text preview until the idle work renders them. In a scroll
#: step a row is given a widget at all only while its cost (``PREVIEW_CHARS_PER_MS``) fits what is left (the
#: first row of a step always): the others stay blank until the idle work, so a step that uncovers several long
#: messages at once costs about this much.
STEP_BUDGET_MS = 6.0
#: A row's widget costs about 1 ms per this many characters of its text shown as a preview (plain-text preview
#: ~1.3 ms, its layout ~2 ms, binding ~0.3 ms for a 6.4 KB reply: ``python -m app.bench history``'s replies).
PREVIEW_CHARS_PER_MS = 1700


class ChatView(QAbstractScrollArea):
    """The messages of one conversation (see the module docstring). ``widget_added(widget)`` is emitted for
    each message widget made (features decorate it: menu, provenance); ``notice_count`` counts notice lines."""

    message_spacing = SPACING

    widget_added = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("chatView")
        self.verticalScrollBar().setObjectName("chatScrollBar")     # drawn by the style sheet: cheap to repaint
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOn)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setMinimumWidth(120)
        self.viewport().setObjectName("chatInner")
        self.items: list[ListItem] = []
        self.positions = Positions()                 # y of each item (content coordinates)
        self.shown = rows.ShownRows()                # the rows that have widgets (a layout walks only them)
        self.stick_to_bottom = True
        self._in_layout = False
        self.renders = RenderCache(ahead=default_ahead_pool())   # replies rendered in a worker (render_ahead)
        self.pool = WidgetPool()
        self.parked = ParkedWidgets(self.pool)       # streaming replies' widgets of the chats not shown
        self._conv: Conversation | None = None       # the chat shown (show_conversation)
        self._render_now = False                     # replies get their full render at once (else previews)
        self._budget_until = 0.0                     # perf_counter() deadline of a layout's cached renders
        self._placed_at = 0                          # the scroll bar value the rows were last placed at
        self._overscan = OVERSCAN_PX                 # a scroll step builds only what shows (0)
        self._open_pending = False                   # a chat was opened while the view was hidden
        self.idle = IdleWork(self)                   # previews → full renders, rendering ahead (.idle_render)
        pool_arrivals().results.connect(self._pool_results)
        self.idle_slices_ms = self.idle.slices_ms    # duration of each idle slice (the benchmark reads it)
        message_keys.install(self)
        bar = self.verticalScrollBar()
        bar.setSingleStep(40)
        bar.valueChanged.connect(self._on_scrolled)

    # -- public API ----------------------------------------------------------------------------------------
    @property
    def notice_count(self) -> int:
        return sum(1 for it in self.items if it.notice is not None)

    @property
    def widgets(self) -> list[MessageWidget]:
        """The message widgets that exist now (the messages in or near the viewport), in order."""
        return [it.widget for _i, it in self.shown_rows() if isinstance(it.widget, MessageWidget)]

    def shown_rows(self) -> list[tuple[int, ListItem]]:
        """``(index, row)`` of the rows that have a widget now, in list order (``positions.ShownRows``)."""
        return self.shown.rows(self.items)

    def add(self, message: Message) -> MessageWidget:
        """Append ``message`` and scroll to it; returns its widget."""
        self.items.append(ListItem(message=message))
        self.shown.changed()
        self.stick_to_bottom = True
        with self._rendering_now():
            self._relayout()
            w = self._materialize(self.items[-1])
            self._relayout()
        assert isinstance(w, MessageWidget)
        return w

    @contextlib.contextmanager
    def _rendering_now(self) -> Iterator[None]:
        """Within: replies that get a widget are rendered in full at once (opening a chat, a message asked for)."""
        was, self._render_now = self._render_now, True
        try:
            yield
        finally:
            self._render_now = was

    def add_notice(self, text: str, object_name: str = "notice") -> QLabel:
        """Append a notice line (kept as a widget)."""
        item = ListItem(notice=(text, object_name))
        self.items.append(item)
        self.shown.changed()
        label = self._materialize(item)
        self._relayout()
        assert isinstance(label, QLabel)
        return label

    def remove(self, message: Message) -> None:
        for i, it in enumerate(self.items):
            if it.message is message:
                self._drop(it)
                del self.items[i]
                self.shown.changed()
                self.positions.invalidate(i)
                self._relayout()
                return

    def clear(self) -> None:
        for it in self.items:
            self._drop(it)
        self.items = []
        self.shown.changed()
        self.positions.invalidate()
        self.stick_to_bottom = True
        self._relayout()

    def show_conversation(self, conv: Conversation) -> None:
        """Show ``conv``'s messages, scrolled to the end: only the last screen gets widgets, and its replies show
        from the render cache within the step's budget, else as previews that the idle slices render at once
        (opening a chat never renders a screen of markdown in one go: ``python -m app.bench history``). Leaving a
        chat for another keeps the widgets of its streaming replies (:class:`~.pool.ParkedWidgets`); the same
        chat shown again (a new language or text size) makes every widget anew."""
        leaving, self._conv = conv is not self._conv, conv
        for it in self.items:
            if not (leaving and self.parked.park(it)):
                self._drop(it)
        self.items = [ListItem(message=m) for m in conv.messages]
        self.shown.changed()
        self.positions.invalidate()
        self.stick_to_bottom = True
        if not self.isVisible():      # (the first chat opened: the view is shown after this, at its size) laid
            self._open_pending = True  # out once it is shown, not at a size it never shows and again at its own
            return
        self._open()

    def _open(self) -> None:
        self._open_pending = False
        self._relayout()
        if self.idle.previews():
            self.idle.start(0)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._open_pending:
            self._open()

    def widget_for(self, message: Message) -> MessageWidget | None:
        """The widget showing ``message`` (made now if the message is in the list), or None."""
        for it in reversed(self.items):
            if it.message is message:
                with self._rendering_now():
                    w = it.widget if it.widget is not None else self._materialize(it)
                return self._in_full(w)
        return None

    def existing_widget(self, message: Message) -> MessageWidget | None:
        """The widget showing ``message`` if it has one now (none is made, a preview is not rendered)."""
        for it in reversed(self.items):
            if it.message is message:
                return it.widget if isinstance(it.widget, MessageWidget) else None
        return None

    def _in_full(self, w: QWidget | None) -> MessageWidget | None:
        """``w`` showing its message in full (a preview is rendered now): asked for by name, it is wanted now."""
        if not isinstance(w, MessageWidget):
            return None
        if w.preview and w.message.status.final:       # a streaming reply's preview: it catches up by itself
            self._show_rendered(w, self.renders.get_or_render(w.message, self._style()))
        return w

    def _style(self) -> str:
        """The theme the views show (the application palette's); the render cache is told their font."""
        font = QFont(self.viewport().font())
        font.setFamilies(UI_FONT_FAMILIES)             # as MarkdownView sets its document's font
        self.renders.use_font(font)
        return palette_theme()

    def _show_rendered(self, w: MessageWidget, renderer: Any) -> None:
        """Replace ``w``'s preview by the full render (the document is emptied first: an intermediate height
        would move the view's anchor)."""
        self._replace_preview(lambda: w.set_rendered(renderer))

    def _show_built(self, w: MessageWidget) -> None:
        """Put the render ``w`` built off-screen (``MessageWidget.build_rendered``) in place of its preview."""
        self._replace_preview(w.show_built)

    def _replace_preview(self, show: Callable[[], None]) -> None:
        """Run ``show`` (a preview replaced by its render), then lay the list out once, with the final height."""
        was, self._in_layout = self._in_layout, True
        try:
            show()
        finally:
            self._in_layout = was
        self._relayout()

    def scroll_to(self, message: Message, margin: int = 40) -> MessageWidget | None:
        """Scroll so that ``message`` starts ``margin`` px below the top of the view (following the bottom stops);
        returns its widget, or None when it is not in the list."""
        for i, it in enumerate(self.items):
            if it.message is message:
                self.stick_to_bottom = False
                self._relayout()
                self._update_tops()
                self.verticalScrollBar().setValue(max(0, self.positions.tops[i] - margin))
                self._relayout()
                with self._rendering_now():
                    w = self._in_full(it.widget if it.widget is not None else self._materialize(it))
                self._relayout()
                self.verticalScrollBar().setValue(max(0, self.positions.tops[i] - margin))
                return w
        return None

    def reshow(self, message: Message) -> None:
        """Show finished ``message`` again as a finished message is shown when it scrolls in: from the render
        cache within the step's budget, else its preview, rendered by the idle slices (a reply stopped in the
        middle of a burst the render tick had not painted)."""
        for it in reversed(self.items):
            if it.message is message:
                self._drop(it)
                it.heights.clear()
                self.positions.dirty.add(self.items.index(it))
                self._relayout()
                if self.idle.previews():
                    self.idle.start(0)
                return

    def message_changed(self, message: Message) -> None:
        """``message``'s widget changed height (status, error or figures shown): measure it again."""
        for it in reversed(self.items):
            if it.message is message:
                self._invalidate(it)
                return

    def at_bottom(self) -> bool:
        bar = self.verticalScrollBar()
        return bar.value() >= bar.maximum() - STICK_SLACK_PX

    def scroll_to_bottom(self) -> None:
        self.stick_to_bottom = True
        self._relayout()

    # -- geometry ------------------------------------------------------------------------------------------
    def column(self) -> tuple[int, int]:
        """x and width of the message column (centred, at most ``MAX_READING_WIDTH``)."""
        return column(self.viewport().width())

    def _box(self, it: ListItem, col: tuple[int, int] | None = None) -> tuple[int, int]:
        return row_box(it, col or self.column())

    def _update_tops(self) -> int:
        """Place the rows whose position is stale (:meth:`Positions.update`); returns the content height."""
        return self.positions.update(self.items, rows.heights_in(self.column()))

    def _invalidate(self, it: ListItem) -> None:
        it.heights.clear()
        try:
            i = self.items.index(it)
        except ValueError:
            return
        self.positions.dirty.add(i)
        self._relayout()

    # -- widgets -------------------------------------------------------------------------------------------
    def _materialize(self, it: ListItem) -> QWidget:
        """Give ``it`` a widget. A finished reply is shown in full when asked for (``_rendering_now``: opening a
        chat, ``widget_for``, ``scroll_to``, ``add``); otherwise (scrolling, resizing, idle work) from the render
        cache if that fits what is left of the layout's budget, else as the plain-text preview, rendered in full
        by the idle work once the scrolling pauses."""
        if it.widget is not None:
            return it.widget
        w: QWidget
        parked = self.parked.take(it)
        if parked is not None:           # a streaming reply shown again as it was (the tick feeds it the rest)
            w = parked
        elif it.message is not None:
            msg = it.message
            renderer = None
            body = "rich"
            if msg.role is Role.ASSISTANT and msg.status.final and msg.text:
                theme = self._style()
                if self._render_now:
                    renderer = self.renders.get_or_render(msg, theme)
                else:
                    # the worker's render, or asked for now; a scroll step asks at its layout's end (_ask_ahead)
                    self.renders.take_ahead(msg, theme, ask=bool(self._overscan))
                    left_ms = (self._budget_until - time.perf_counter()) * 1000.0
                    renderer = self.renders.get(msg, theme, max_ms=left_ms) if left_ms > 0 else None
                    if renderer is None:
                        body = "preview"
                        self.idle.start(IDLE_DELAY_MS)
            made = self.pool.made
            mw = self.pool.take(msg, self.viewport(), body, renderer)
            if self.pool.made != made and mw.view is not None:
                mw.bodyHeightChanged.connect(lambda _h, mw=mw: self._on_widget_height(mw))
            mw.list_item = it            # type: ignore[attr-defined]
            w = mw
        else:
            text, name = it.notice or ("", "notice")
            label = QLabel(text, self.viewport())
            label.setObjectName(name)
            label.setWordWrap(True)
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            w = label
        it.widget = w
        self.shown.add(it)
        x, width = self._box(it)
        w.setGeometry(x, 0, width, max(1, w.heightForWidth(width)))
        it.heights.clear()
        w.show()
        if isinstance(w, MessageWidget):
            self.widget_added.emit(w)
        return w

    def _drop(self, it: ListItem) -> None:
        w = it.widget
        if w is None:
            return
        it.widget = None
        if isinstance(w, MessageWidget):
            w.list_item = None           # type: ignore[attr-defined]
            self.pool.give_back(w)
        else:
            w.hide()
            w.deleteLater()

    def _on_widget_height(self, w: MessageWidget) -> None:
        it = getattr(w, "list_item", None)
        if it is not None and it.widget is w:
            self._invalidate(it)

    def _keep(self, it: ListItem) -> bool:
        """Widgets kept off screen (never reused for another message): notices, a reply that is generating, and
        one holding the keyboard focus (or a selection's focus inside it)."""
        if it.notice is not None:
            return True
        w = it.widget
        if it.message is not None and not it.message.status.final:
            return True
        focus = QApplication.focusWidget()
        return w is not None and focus is not None and (focus is w or w.isAncestorOf(focus))

    # -- layout --------------------------------------------------------------------------------------------
    def _relayout(self) -> None:
        if self._in_layout:
            return
        self._budget_until = time.perf_counter() + STEP_BUDGET_MS / 1000.0
        self._in_layout = True
        try:
            self._layout()
        finally:
            self._in_layout = False

    def _layout(self) -> None:
        bar = self.verticalScrollBar()
        vh = self.viewport().height()
        anchor: tuple[int, int] | None = None   # the item at the top of the view and how far into it, so that a
        pos = self.positions
        if not self.stick_to_bottom and pos.dirty and pos.valid:   # height changing above it moves nothing
            i = pos.index_at(bar.value())
            if i < pos.valid:
                anchor = (i, bar.value() - pos.tops[i])
        made = 0                                 # widgets given in this layout
        blank: list[tuple[int, Message]] = []    # rows left without one: the render-ahead worker starts on them
        for _ in range(4):                       # real heights replace estimates, then it settles
            total = self._update_tops()
            bar.setRange(0, max(0, total - vh))
            bar.setPageStep(vh)
            if self.stick_to_bottom:
                bar.setValue(bar.maximum())
            elif anchor is not None:
                bar.setValue(pos.tops[anchor[0]] + anchor[1])
                anchor = None
            top = bar.value()
            first, last = pos.span(top - self._overscan, top + vh + self._overscan, len(self.items))
            anchor_i = pos.index_at(top)
            anchor_off = top - pos.tops[anchor_i] if self.items else 0
            self._drop_far(top, vh)              # first, so that the widgets they free show the new messages
            changed = False
            for i in range(first, last):
                it = self.items[i]
                if it.widget is None:
                    if made and not self._fits(it):
                        self.idle.start(IDLE_DELAY_MS)    # the step's budget is spent: blank until the idle work
                        msg = it.message
                        if msg is not None and all(m is not msg for _i, m in blank):
                            blank.append((i, msg))
                        continue
                    made += 1
                    before = it.height(self._box(it)[1])
                    self._materialize(it)
                    if it.height(self._box(it)[1]) != before:
                        self.positions.dirty.add(i)
                        changed = True
            if not changed:
                break
            if not self.stick_to_bottom and self.items:      # keep what is on screen where it was
                self._update_tops()
                bar.setRange(0, max(0, self._update_tops() - vh))
                bar.setValue(pos.tops[anchor_i] + anchor_off)
        top = bar.value()
        self._drop_far(top, vh)
        col = self.column()
        previews = [(i, m) for i, m in blank if m.text]
        shown = self.shown_rows()
        blit_shift(self.viewport(), ((it.widget, pos.tops[i] - top) for i, it in shown if it.widget is not None),
                   top - self._placed_at)
        self._placed_at = top                    # (a pure scroll moves the pixels: .scroll_blit)
        for i, it in shown:
            assert it.widget is not None
            x, width = self._box(it, col)
            it.widget.setGeometry(x, pos.tops[i] - top, width, it.height(width))
            if isinstance(it.widget, MessageWidget) and it.widget.preview and it.message is not None:
                previews.append((i, it.message))
        self._ask_ahead(previews, top, vh)

    def _ask_ahead(self, previews: list[tuple[int, Message]], top: int, vh: int) -> None:
        """Ask the render-ahead worker for the finished replies of ``previews`` (rows shown as a preview or left
        blank: (index, message)), those in the viewport first, top down; it drops its queued jobs for others.

        A scroll step asks here, where its layout has settled, not as each row gets its widget: its first pass
        places rows by estimated heights, and a reply it placed in view, then pushed out by the real heights, was
        the worker's first job — the reply in view waited 20-30 ms behind it (history bench, 1,000 pairs). Other
        layouts (opening a chat, the idle work's) ask as each row gets its widget too: opening a 1,000-pair chat,
        asking at the end put the worker's start 14 ms later."""
        first, last = self.positions.span(top, top + vh, len(self.items))
        theme = self._style()
        for _i, msg in sorted(previews, key=lambda p: (not first <= p[0] < last, p[0])):
            if msg.role is Role.ASSISTANT and msg.status.final and msg.text:
                self.renders.take_ahead(msg, theme)      # (reads its text: ~0.1 ms)
        self.renders.keep_ahead([m for _i, m in previews], palette_theme())  # the others' queued jobs dropped

    def _fits(self, it: ListItem) -> bool:
        """Whether giving ``it`` a widget fits what is left of a scroll step's budget (any other layout, e.g.
        opening a chat or the idle work, gives every row in view its widget)."""
        if self._render_now or self._overscan or it.message is None:     # not a scroll step
            return True
        left_ms = (self._budget_until - time.perf_counter()) * 1000.0
        shape = it.message.stored_shape()       # (a saved message not read yet: its stored size, nothing read)
        return left_ms * PREVIEW_CHARS_PER_MS >= (shape[0] if shape is not None else len(it.message.text))

    def _drop_far(self, top: int, vh: int) -> None:
        """Give back the widgets more than a screen away from the viewport (scrolling back a little is free)."""
        keep = max(vh, 2 * OVERSCAN_PX)          # more than the overscan: what the idle work makes stays
        lo, hi = top - keep, top + vh + keep
        tops = self.positions.tops
        for i, it in self.shown_rows():
            if i < len(tops):
                y = tops[i]
                if (y + it.height(self._box(it)[1]) < lo or y > hi) and not self._keep(it):
                    self._drop(it)

    def _on_scrolled(self, _value: int) -> None:
        if self._in_layout:
            return
        self.stick_to_bottom = self.at_bottom()
        self._overscan = 0
        try:
            self._relayout()
        finally:
            self._overscan = OVERSCAN_PX
        self.idle.start(IDLE_DELAY_MS)              # (again) after a pause: full renders, the overscan

    # -- what is in view, and whether it is rendered (the idle work is .idle_render) ------------------------------
    def _visible_range(self, margin: int = 0) -> tuple[int, int]:
        """Indexes ``[first, last)`` of the items within ``margin`` px of the viewport."""
        top = self.verticalScrollBar().value()
        return self.positions.span(top - margin, top + self.viewport().height() + margin, len(self.items))

    def _pool_results(self) -> None:
        self.idle.pool_results()

    def fully_rendered(self) -> bool:
        """Whether every message in the viewport shows its full render with its code colours (no preview, none
        left blank by a step's budget): :meth:`IdleWork.done`."""
        return self.idle.done()

    # -- keyboard: Alt+Up / Alt+Down move between messages (app/ui/messages/keys.py) ---------------------------
    def focused_message(self) -> Message | None:
        """The message whose widget holds the keyboard focus (or a focused part of it), or None."""
        return message_keys.focused_message(self)

    def move_focus(self, step: int) -> MessageWidget | None:
        """Alt+Up (``step`` -1) / Alt+Down (+1): see :func:`app.ui.messages.keys.move_focus`."""
        return message_keys.move_focus(self, step)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.positions.invalidate()
        if not self._open_pending:     # a chat opened while hidden is laid out when shown (showEvent)
            self._relayout()

    def paintEvent(self, event: QPaintEvent) -> None:
        """The viewport: a row that a scroll step left without its widget (the step's budget was spent) shows as
        a reply's outline until the idle work gives it one."""
        first, last = self._visible_range()
        blank = [i for i in range(first, last) if self.items[i].widget is None and self.items[i].message is not None]
        if not blank:
            return
        p = QPainter(self.viewport())
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.setPen(QPen(QColor(border_color()), 1))
        top, col, pos = self.verticalScrollBar().value(), self.column(), self.positions
        for i in blank:
            x, width = self._box(self.items[i], col)
            p.drawRoundedRect(x, pos.tops[i] - top, width - 1, pos.placed[i] - 1, 10, 10)
        p.end()

    def scrollContentsBy(self, dx: int, dy: int) -> None:  # the layout moves the widgets itself
        pass
