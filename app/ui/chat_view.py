"""The message list: a virtual list that only keeps widgets for the messages in or near the viewport.

Why widgets and not a ``QListView`` delegate: measured here (``/tmp``-free: ``python -m app.bench history``), a
reply's ``MarkdownView.set_text`` costs 1.5-10 ms for typical answers against 0.4-0.7 ms for painting a cached
``QTextDocument`` — but a widget keeps every interaction for free (selection, links, Copy buttons, the Thinking
fold, keyboard navigation inside a message, the streaming reply's incremental patching). Making only the few
visible messages widgets removes the cost that grew with the chat (every message laid out at once); the
per-message difference is paid only for messages that scroll into view.

- Each message is an ``_Item`` with its heights cached per width (measured once with the widget; estimated from
  the text length until then). Positions are prefix sums of the heights.
- ``show_conversation`` lays out the last screen first: only the messages at the bottom get widgets.
- Widgets of messages more than one screen away are dropped; a streaming reply's widget is always kept.
- Follow-the-bottom: the view sticks to the bottom while the user is there and stays put once they scroll up
  (the 24 px slack absorbs a partly visible last line). When a message above the viewport gets its real height,
  the scroll position moves with it so that what is on screen does not jump.
- Wide windows: messages sit in a centred column at most ``MAX_READING_WIDTH`` px wide.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeyEvent, QResizeEvent
from PySide6.QtWidgets import QAbstractScrollArea, QFrame, QLabel, QPlainTextEdit, QSizePolicy, QWidget

from app.core.conversation import Conversation, Message, Role
from app.ui.message_widget import STATUS_TEXT, MessageWidget, PlainTextView, format_figures

__all__ = ["STATUS_TEXT", "ChatInput", "ChatView", "MessageWidget", "PlainTextView", "format_figures"]

STICK_SLACK_PX = 24
#: Widest the message column gets (px): lines of ~90-100 characters, comfortable to read.
MAX_READING_WIDTH = 900
MARGIN_X, MARGIN_Y, SPACING = 16, 12, 10
#: Indents that tell the two sides apart (px, at most a fifth / a tenth of the column).
USER_INDENT, REPLY_INDENT = 80, 24
#: Messages this close to the viewport (px) get their widgets before they scroll in.
OVERSCAN_PX = 120


class ChatInput(QPlainTextEdit):
    """The prompt box: Enter sends, Shift+Enter inserts a new line, Esc asks to stop."""

    submitted = Signal()
    escape = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setPlaceholderText(self.tr("Ask anything…  (Enter to send, Shift+Enter for a new line, Esc to stop)"))
        self.setTabChangesFocus(True)
        self.setMaximumHeight(96)
        self.setMinimumHeight(48)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Maximum)

    def keyPressEvent(self, e: QKeyEvent) -> None:
        if e.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            if e.modifiers() & Qt.KeyboardModifier.ShiftModifier:
                self.insertPlainText("\n")
            else:
                self.submitted.emit()
            return
        if e.key() == Qt.Key.Key_Escape:
            self.escape.emit()
            return
        super().keyPressEvent(e)


@dataclass(eq=False)
class _Item:
    message: Message | None = None
    notice: tuple[str, str] | None = None          # (text, object name) of a notice line
    heights: dict[int, int] = field(default_factory=dict)   # width → measured height (px)
    widget: QWidget | None = None
    _guess: tuple[int, int] = (-1, 0)                # (width, estimated height)

    def estimate(self, width: int) -> int:
        """A height guess before the widget exists (px): ~8 px per character, 19 px a line, plus the header."""
        if self._guess[0] == width:
            return self._guess[1]
        text = self.message.text if self.message is not None else (self.notice or ("", ""))[0]
        per_line = max(20, width // 8)
        lines = sum(1 + len(line) // per_line for line in text.split("\n")) if text else 1
        guess = 40 + 19 * lines
        self._guess = (width, guess)
        return guess


class ChatView(QAbstractScrollArea):
    """The messages of one conversation (see the module docstring). ``widget_added(widget)`` is emitted for
    each message widget made (features decorate it: menu, provenance); ``notice_count`` counts notice lines."""

    widget_added = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("chatView")
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOn)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setMinimumWidth(120)
        self.viewport().setObjectName("chatInner")
        self.items: list[_Item] = []
        self._tops: list[int] = []                   # y of each item (content coordinates)
        self._valid = 0                              # _tops[:_valid] are up to date
        self.stick_to_bottom = True
        self._in_layout = False
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
        return [it.widget for it in self.items if isinstance(it.widget, MessageWidget)]

    def add(self, message: Message) -> MessageWidget:
        """Append ``message`` and scroll to it; returns its widget."""
        self.items.append(_Item(message=message))
        self.stick_to_bottom = True
        self._relayout()
        w = self._materialize(self.items[-1])
        self._relayout()
        assert isinstance(w, MessageWidget)
        return w

    def add_notice(self, text: str, object_name: str = "notice") -> QLabel:
        """Append a notice line (kept as a widget)."""
        item = _Item(notice=(text, object_name))
        self.items.append(item)
        label = self._materialize(item)
        self._relayout()
        assert isinstance(label, QLabel)
        return label

    def remove(self, message: Message) -> None:
        for i, it in enumerate(self.items):
            if it.message is message:
                self._drop(it)
                del self.items[i]
                self._valid = min(self._valid, i)
                self._relayout()
                return

    def clear(self) -> None:
        for it in self.items:
            self._drop(it)
        self.items = []
        self._valid = 0
        self.stick_to_bottom = True
        self._relayout()

    def show_conversation(self, conv: Conversation) -> None:
        """Show ``conv``'s messages, scrolled to the end: only the last screen gets widgets."""
        for it in self.items:
            self._drop(it)
        self.items = [_Item(message=m) for m in conv.messages]
        self._valid = 0
        self.stick_to_bottom = True
        self._relayout()

    def widget_for(self, message: Message) -> MessageWidget | None:
        """The widget showing ``message`` (made now if the message is in the list), or None."""
        for it in reversed(self.items):
            if it.message is message:
                w = it.widget if it.widget is not None else self._materialize(it)
                return w if isinstance(w, MessageWidget) else None
        return None

    def scroll_to(self, message: Message, margin: int = 40) -> MessageWidget | None:
        """Scroll so that ``message`` starts ``margin`` px below the top of the view (following the bottom stops);
        returns its widget, or None when it is not in the list."""
        for i, it in enumerate(self.items):
            if it.message is message:
                self.stick_to_bottom = False
                self._relayout()
                self._update_tops()
                self.verticalScrollBar().setValue(max(0, self._tops[i] - margin))
                self._relayout()
                w = it.widget if it.widget is not None else self._materialize(it)
                self._relayout()
                self.verticalScrollBar().setValue(max(0, self._tops[i] - margin))
                return w if isinstance(w, MessageWidget) else None
        return None

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
        vw = self.viewport().width()
        width = max(60, min(MAX_READING_WIDTH, vw - 2 * MARGIN_X))
        return max(0, (vw - width) // 2), width

    def _box(self, it: _Item, col: tuple[int, int] | None = None) -> tuple[int, int]:
        x, width = col or self.column()
        if it.message is None:
            return x, width
        if it.message.role is Role.USER:
            indent = min(USER_INDENT, width // 5)
            return x + indent, width - indent
        return x, width - min(REPLY_INDENT, width // 10)

    def _height(self, it: _Item, width: int) -> int:
        h = it.heights.get(width)
        if h is not None:
            return h
        w = it.widget
        if w is None:
            return it.estimate(width)
        h = max(1, w.heightForWidth(width)) if w.hasHeightForWidth() else w.sizeHint().height()
        if len(it.heights) > 6:
            it.heights.clear()
        it.heights[width] = h
        return h

    def _update_tops(self) -> int:
        """Recompute stale positions; returns the content height."""
        tops = self._tops
        del tops[self._valid:]
        col = self.column()
        items = self.items
        y = tops[-1] + self._height(items[len(tops) - 1], self._box(items[len(tops) - 1], col)[1]) + SPACING \
            if tops else MARGIN_Y
        height = self._height
        box = self._box
        for it in items[len(tops):]:
            tops.append(y)
            y += height(it, box(it, col)[1]) + SPACING
        self._valid = len(tops)
        if not items:
            return 0
        return tops[-1] + height(items[-1], box(items[-1], col)[1]) + MARGIN_Y

    def _invalidate(self, it: _Item) -> None:
        it.heights.clear()
        try:
            i = self.items.index(it)
        except ValueError:
            return
        self._valid = min(self._valid, i)
        self._relayout()

    # -- widgets -------------------------------------------------------------------------------------------
    def _materialize(self, it: _Item) -> QWidget:
        if it.widget is not None:
            return it.widget
        w: QWidget
        if it.message is not None:
            mw = MessageWidget(it.message, self.viewport())
            if mw.view is not None:
                mw.view.heightChanged.connect(lambda _h, it=it: self._invalidate(it))
            w = mw
        else:
            text, name = it.notice or ("", "notice")
            label = QLabel(text, self.viewport())
            label.setObjectName(name)
            label.setWordWrap(True)
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            w = label
        it.widget = w
        x, width = self._box(it)
        w.setGeometry(x, 0, width, max(1, w.heightForWidth(width)))
        it.heights.clear()
        w.show()
        if isinstance(w, MessageWidget):
            self.widget_added.emit(w)
        return w

    def _drop(self, it: _Item) -> None:
        if it.widget is not None:
            it.widget.hide()
            it.widget.deleteLater()
            it.widget = None

    def _keep(self, it: _Item) -> bool:
        """Widgets kept off screen: notices, a reply that is generating, and one holding the keyboard focus."""
        if it.notice is not None:
            return True
        w = it.widget
        return (it.message is not None and not it.message.status.final) or (w is not None and w.hasFocus())

    # -- layout --------------------------------------------------------------------------------------------
    def _relayout(self) -> None:
        if self._in_layout:
            return
        self._in_layout = True
        try:
            self._layout()
        finally:
            self._in_layout = False

    def _layout(self) -> None:
        bar = self.verticalScrollBar()
        vh = self.viewport().height()
        for _ in range(4):                       # real heights replace estimates, then it settles
            total = self._update_tops()
            bar.setRange(0, max(0, total - vh))
            bar.setPageStep(vh)
            if self.stick_to_bottom:
                bar.setValue(bar.maximum())
            top = bar.value()
            lo, hi = top - OVERSCAN_PX, top + vh + OVERSCAN_PX
            first = max(0, bisect.bisect_right(self._tops, lo) - 1)
            last = bisect.bisect_right(self._tops, hi)
            anchor_i = max(0, bisect.bisect_right(self._tops, top) - 1) if self.items else 0
            anchor_off = top - self._tops[anchor_i] if self.items else 0
            changed = False
            for i in range(first, min(last, len(self.items))):
                it = self.items[i]
                if it.widget is None:
                    before = self._height(it, self._box(it)[1])
                    self._materialize(it)
                    if self._height(it, self._box(it)[1]) != before:
                        self._valid = min(self._valid, i)
                        changed = True
            if not changed:
                break
            if not self.stick_to_bottom and self.items:      # keep what is on screen where it was
                self._update_tops()
                bar.setRange(0, max(0, self._update_tops() - vh))
                bar.setValue(self._tops[anchor_i] + anchor_off)
        top = bar.value()
        lo, hi = top - vh, top + 2 * vh                 # widgets within a screen are kept (scrolling back is free)
        col = self.column()
        for i, it in enumerate(self.items):
            if it.widget is None:
                continue
            y = self._tops[i]
            x, width = self._box(it, col)
            h = self._height(it, width)
            if (y + h < lo or y > hi) and not self._keep(it):
                self._drop(it)
                continue
            it.widget.setGeometry(x, y - top, width, h)

    def _on_scrolled(self, _value: int) -> None:
        if self._in_layout:
            return
        self.stick_to_bottom = self.at_bottom()
        self._relayout()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._valid = 0
        self._relayout()

    def scrollContentsBy(self, dx: int, dy: int) -> None:  # the layout moves the widgets itself
        pass
