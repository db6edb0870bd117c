"""The message list: one widget per message in a scroll area that follows the stream.

The view sticks to the bottom while the user is there and stays put once they scroll up (the rule every chat
app uses; the 24 px slack absorbs a partially visible last line).
"""

from __future__ import annotations

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, QSize, Qt, Signal
from PySide6.QtGui import QAccessible, QAccessibleEvent, QKeyEvent
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QScrollArea,
    QSizePolicy,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from app.core.attachments import split_attachments
from app.core.conversation import Conversation, Message, MessageStatus, Role
from app.ui.markdown_view import MarkdownView, height_for_width

STICK_SLACK_PX = 24

STATUS_TEXT = {
    MessageStatus.WAITING: QT_TRANSLATE_NOOP("MessageStatus", "waiting for the model…"),
    MessageStatus.PREFILL: QT_TRANSLATE_NOOP("MessageStatus", "reading the prompt…"),
    MessageStatus.GENERATING: QT_TRANSLATE_NOOP("MessageStatus", "generating…"),
    MessageStatus.DONE: "",
    MessageStatus.STOPPED: QT_TRANSLATE_NOOP("MessageStatus", "stopped"),
    MessageStatus.TIMED_OUT: QT_TRANSLATE_NOOP("MessageStatus", "timed out"),
    MessageStatus.ERROR: QT_TRANSLATE_NOOP("MessageStatus", "error"),
}


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


class PlainTextView(QTextBrowser):
    """The user's own words, shown exactly as typed (no markdown), selectable, as tall as its text.

    A ``QLabel`` with word wrap re-lays out its whole text each time the message list's layout asks for its
    height — on every render tick of a streaming reply below it, so a pasted 300 KB log froze streaming. A
    document view measured by ``height_for_width`` keeps its layout: asking again costs nothing.
    """

    def __init__(self, text: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setOpenLinks(False)
        self.setStyleSheet("background: transparent")
        self.document().setDocumentMargin(0)
        self._heights: dict[int, int] = {}
        self.setPlainText(text)
        policy = QSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        policy.setHeightForWidth(True)
        self.setSizePolicy(policy)
        self.document().documentLayout().documentSizeChanged.connect(lambda _s: self.updateGeometry())

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        return height_for_width(self, width, self._heights, lay_out_unset=False)

    def sizeHint(self) -> QSize:
        width = self.width() if self.width() > 0 else 400
        return QSize(width, self.heightForWidth(width))


class MessageWidget(QFrame):
    """One message: a header (who, status) and its body (a ``MarkdownView`` for replies, plain text for the
    user's own words, which are shown exactly as typed)."""

    def __init__(self, message: Message, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.message = message
        self.setObjectName("assistantMessage" if message.role is Role.ASSISTANT else "userMessage")
        self.setFrameShape(QFrame.Shape.NoFrame)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(12, 8, 12, 8)
        lay.setSpacing(2)
        head = QHBoxLayout()
        who = self.tr("You") if message.role is Role.USER else (message.model or self.tr("Assistant"))
        self.who = QLabel(f"<b>{_escape(who)}</b>")
        self.status = QLabel("")
        self.status.setObjectName("messageStatus")
        head.addWidget(self.who)
        head.addStretch(1)
        head.addWidget(self.status)
        lay.addLayout(head)
        self.view: MarkdownView | None = None
        if message.role is Role.ASSISTANT:
            self.view = MarkdownView(self)
            lay.addWidget(self.view)
            if message.text and message.status.final:
                self.view.set_text(message.text)
        else:
            own, attachments = split_attachments(message.text)
            lay.addWidget(PlainTextView(own if attachments else message.text, self))
            for att in attachments:          # shown folded: name and token count; the text in the tooltip
                tokens = f" · {att.tokens:,} tokens" if att.tokens is not None else ""
                chip = QLabel(f"⎘ {_escape(att.name)}{tokens} · {len(att.text):,} characters")
                chip.setObjectName("attachmentChip")
                chip.setToolTip(att.text[:2000] + ("…" if len(att.text) > 2000 else ""))
                lay.addWidget(chip)
        self.error = QLabel("")
        self.error.setObjectName("messageError")
        self.error.setWordWrap(True)
        self.error.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error.hide()
        lay.addWidget(self.error)
        self.figures = QLabel("")
        self.figures.setObjectName("messageFigures")
        self.figures.hide()
        lay.addWidget(self.figures)
        self.update_status()

    def set_model(self, name: str) -> None:
        self.who.setText(f"<b>{_escape(name)}</b>")

    def update_status(self) -> None:
        m = self.message
        text = QCoreApplication.translate("MessageStatus", STATUS_TEXT.get(m.status, m.status.value))
        if m.status is MessageStatus.DONE and m.stop_reason == "length":
            limit = (m.params or {}).get("max_tokens")
            made = (m.metrics or {}).get("decode_tokens") or 0
            text = self.tr("cut at the token limit") if limit is None or made >= limit else \
                self.tr("cut: the context window is full")
        if text != self.status.text():
            self.status.setText(text)
            announce(self.status, text)
        if m.error:
            self.error.setText(m.error)
            self.error.show()
        elif m.status is MessageStatus.DONE and not m.text.strip():
            self.error.setText(self.tr("The model ended its reply without any text. Try again, rephrase, or start "
                                       "a new chat if this one is long."))
            self.error.show()
        if m.status.final and m.metrics:
            line, tip = format_figures(m.metrics)
            wait = m.metrics.get("wait_ms") or 0
            if line and wait > 500:
                line += " · " + self.tr("waited %1 s for the model").replace("%1", f"{wait / 1000:.1f}")
            if line:
                self.figures.setText(line)
                self.figures.setToolTip(tip)
                self.figures.show()


def announce(label: QLabel, text: str) -> None:
    """Tell assistive technology (screen readers) that ``label`` now says ``text`` (a reply's status change)."""
    label.setAccessibleName(text)
    QAccessible.updateAccessibility(QAccessibleEvent(label, QAccessible.Event.NameChanged))


def format_figures(metrics: dict) -> tuple[str, str]:
    """A reply's timing as one short line (TTFT · tokens/s · tokens) and a full tooltip (ms, counts)."""
    parts = []
    if metrics.get("ttft_ms") is not None:
        parts.append(f"TTFT {metrics['ttft_ms']:.0f} ms")
    if metrics.get("decode_tokens_per_s"):
        parts.append(f"{metrics['decode_tokens_per_s']:.1f} tok/s")
    if metrics.get("decode_tokens"):
        parts.append(f"{metrics['decode_tokens']} tokens")
    labels = [("prefill_ms", "prefill", "ms"), ("first_paint_ms", "first paint", "ms"),
              ("wait_ms", "waited for the model", "ms"),
              ("queue_high_water", "queue high-water mark", "chunks"),
              ("backpressure_waits", "backpressure waits > 100 ms", ""),
              ("backpressure_wait_ms", "backpressure wait total", "ms"), ("ticks", "render ticks", ""),
              ("longest_tick_ms", "longest tick", "ms"), ("total_ms", "total", "ms")]
    tip = []
    for key, label, unit in labels:
        v = metrics.get(key)
        if v is None:
            continue
        tip.append(f"{label}: {v:.1f} {unit}".rstrip() if isinstance(v, float) else f"{label}: {v} {unit}".rstrip())
    return " · ".join(parts), "\n".join(tip)


class ChatView(QScrollArea):
    """Vertical list of ``MessageWidget``s; follows new content while the user is at the bottom.
    ``widget_added(MessageWidget)`` lets features decorate each message (menu, provenance)."""

    widget_added = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWidgetResizable(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._inner = QWidget()
        self._inner.setObjectName("chatInner")
        self._layout = QVBoxLayout(self._inner)
        self._layout.setContentsMargins(16, 12, 16, 12)
        self._layout.setSpacing(10)
        self._layout.addStretch(1)
        self.setWidget(self._inner)
        self.stick_to_bottom = True
        bar = self.verticalScrollBar()
        bar.valueChanged.connect(self._on_scrolled)
        bar.rangeChanged.connect(self._on_range)
        self.widgets: list[MessageWidget] = []
        self.notice_count = 0

    def add(self, message: Message) -> MessageWidget:
        w = MessageWidget(message, self._inner)
        self._layout.insertWidget(self._layout.count() - 1, w)
        self.widgets.append(w)
        self.stick_to_bottom = True
        self.widget_added.emit(w)
        return w

    def widget_for(self, message: Message) -> MessageWidget | None:
        """The widget showing ``message``, or None when it is not shown."""
        for w in reversed(self.widgets):
            if w.message is message:
                return w
        return None

    def show_conversation(self, conv: Conversation) -> None:
        """Show ``conv``'s messages (and nothing else), scrolled to the end."""
        self.clear()
        for m in conv.messages:
            self.add(m)
        self.scroll_to_bottom()

    def remove(self, message: Message) -> None:
        """Take ``message``'s widget out of the list."""
        for i, w in enumerate(self.widgets):
            if w.message is message:
                self.widgets.pop(i)
                self._layout.removeWidget(w)
                w.deleteLater()
                return

    def add_notice(self, text: str, object_name: str = "notice") -> QLabel:
        label = QLabel(text)
        label.setObjectName(object_name)
        label.setWordWrap(True)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self._layout.insertWidget(self._layout.count() - 1, label)
        self.notice_count += 1
        return label

    def clear(self) -> None:
        while self._layout.count() > 1:
            item = self._layout.takeAt(0)
            w = item.widget()
            if w is not None:
                w.deleteLater()
        self.widgets.clear()
        self.notice_count = 0
        self.stick_to_bottom = True

    def at_bottom(self) -> bool:
        bar = self.verticalScrollBar()
        return bar.value() >= bar.maximum() - STICK_SLACK_PX

    def _on_scrolled(self, _value: int) -> None:
        self.stick_to_bottom = self.at_bottom()

    def _on_range(self, _lo: int, hi: int) -> None:
        if self.stick_to_bottom:
            self.verticalScrollBar().setValue(hi)

    def scroll_to_bottom(self) -> None:
        self.stick_to_bottom = True
        bar = self.verticalScrollBar()
        bar.setValue(bar.maximum())


def _escape(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
