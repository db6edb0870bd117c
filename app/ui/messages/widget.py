"""One message on screen: ``MessageWidget`` (a header with who and status, the body, an error line and the
reply's figures) and ``PlainTextView`` (the user's own words, exactly as typed)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QCoreApplication, QLineF, QRect, QSize, Qt, Signal
from PySide6.QtGui import (
    QAccessible,
    QAccessibleEvent,
    QColor,
    QFocusEvent,
    QPainter,
    QPaintEvent,
    QPalette,
    QPen,
    QResizeEvent,
)
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QStyle,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from app.core.chat import versions
from app.core.chat.attachments import split_attachments
from app.core.chat.notes import RESEND_LINK, message_notes, unanswered_note
from app.core.conversation import Message, MessageStatus, Role
from app.core.render.preview import plain_preview
from app.core.text import QT_TRANSLATE_NOOP
from app.ui.look.retranslate import core_text
from app.ui.look.style import border_color
from app.ui.messages.markdown_view import MarkdownView, height_for_width

#: The links of a reply's ‹ k/n › version switcher.
VERSION_PREV, VERSION_NEXT = "version:prev", "version:next"

STATUS_TEXT = {
    MessageStatus.WAITING: QT_TRANSLATE_NOOP("MessageStatus", "waiting for the model…"),
    MessageStatus.PREFILL: QT_TRANSLATE_NOOP("MessageStatus", "reading the prompt…"),
    MessageStatus.GENERATING: QT_TRANSLATE_NOOP("MessageStatus", "generating…"),
    MessageStatus.DONE: "",
    MessageStatus.STOPPED: QT_TRANSLATE_NOOP("MessageStatus", "stopped"),
    MessageStatus.TIMED_OUT: QT_TRANSLATE_NOOP("MessageStatus", "timed out"),
    MessageStatus.ERROR: QT_TRANSLATE_NOOP("MessageStatus", "error"),
}


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

    def set_plain(self, text: str) -> None:
        """Show ``text`` instead (a reused message widget): the measured heights are forgotten."""
        self._heights.clear()
        self.setPlainText(text)

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        return height_for_width(self, width, self._heights, lay_out_unset=False)

    def sizeHint(self) -> QSize:
        width = self.width() if self.width() > 0 else 400
        return QSize(width, self.heightForWidth(width))

    def minimumSizeHint(self) -> QSize:
        return QSize(50, 16)       # a scroll area's 100 px default left blank space under short messages


#: Where a spare view is built (px above its widget): never in sight, never painted.
OFF_SCREEN_PX = 100_000


#: The band above a message's bottom edge its border's rounded corners and line are drawn in (px): the radius and
#: the pen, rounded up.
EDGE_BAND_PX = 14


def _stroke_outline(p: QPainter, rect: QRect, band: QRect) -> None:
    """Stroke ``rect``'s rounded outline (radius 10 px) where a paint of ``band`` shows it (:func:`_outline`): the
    rounded rectangle only in the ``EDGE_BAND_PX`` rows at each of its ends that ``band`` comes near (clipped
    there), the straight sides between them as two lines — the same pixels. Stroked whole, the rounded rectangle
    cost 0.66-0.72 ms of each frame of a streaming reply (its bottom edge is always near what changed), 9 times
    what it costs on an image (``python -m app.bench render``, a table at 5,000 tok/s); clipped to 15 rows,
    0.07 ms."""
    outline = _outline(rect, band)
    top, bottom = outline.top(), outline.bottom()
    mid_top = top + EDGE_BAND_PX if top == rect.top() else top
    mid_bottom = bottom - EDGE_BAND_PX if bottom == rect.bottom() else bottom
    if mid_top > mid_bottom:
        p.drawRoundedRect(outline, 10, 10)        # a short one: its ends meet
        return
    # (a QRect's path runs along x and x + width, y and y + height: QPainter strokes it as a QRectF)
    left, right = outline.x(), outline.x() + outline.width()
    x, width = left - 2, outline.width() + 5      # the columns a pen of 2 px touches on either side
    parts = [(mid_top, mid_bottom)]
    # (the rows a pen of 2 px touches past the path's top and bottom too: it runs along y + height)
    if mid_top > top:
        parts.append((top - 2, mid_top - 1))
    if mid_bottom < bottom:
        parts.append((mid_bottom + 1, bottom + 3))
    for k, (y0, y1) in enumerate(parts):
        p.save()
        p.setClipRect(QRect(x, y0, width, y1 - y0 + 1), Qt.ClipOperation.IntersectClip)
        if k == 0:         # the sides
            p.drawLines([QLineF(left, top, left, bottom + 1), QLineF(right, top, right, bottom + 1)])
        else:
            p.drawRoundedRect(outline, 10, 10)
        p.restore()


def _outline(rect: QRect, band: QRect) -> QRect:
    """The rounded rectangle to stroke for a paint of ``band`` (``rect``'s outline, corner radius 10 px, pen ≤ 2 px):
    ``rect`` with its top moved down to ``EDGE_BAND_PX`` above ``band`` and its bottom up to as far below it, where
    ``band`` does not come that near to them (the corners of the shorter one fall outside ``band``)."""
    top = max(rect.top(), band.top() - EDGE_BAND_PX)
    bottom = min(rect.bottom(), band.bottom() + EDGE_BAND_PX)
    return QRect(rect.left(), top, rect.width(), bottom - top + 1)


class MessageWidget(QFrame):
    """One message: a header (who, status) and its body (a ``MarkdownView`` for replies, plain text for the
    user's own words, which are shown exactly as typed). ``resend_requested(Message)``: the "Resend" link of a
    reply that ended without any text (``app.core.chat.notes``).

    The message list reuses widgets (:meth:`bind` shows another message of the same role in this one). A
    finished reply's body is rendered in full (``body="rich"``), shown from a renderer made elsewhere
    (:meth:`set_rendered`), or shown as a plain-text preview without markup (``body="preview"``, see
    :attr:`preview`) until :meth:`set_rendered` replaces it — or, built a slice at a time in a spare view
    off-screen (:meth:`build_rendered`), until :meth:`show_built` puts that view in its place. The widget takes the
    keyboard focus when the person moves between messages (Alt+Up / Alt+Down): it then draws a focus ring and
    tells assistive technology. ``bodyHeightChanged(px)``: the shown view's document height changed.
    """

    resend_requested = Signal(object)
    bodyHeightChanged = Signal(int)
    #: ‹ or › of a reply's version switcher was clicked: the version index (0-based) to show
    version_requested = Signal(int)

    def __init__(self, message: Message, parent: QWidget | None = None, *, body: str = "rich",
                 renderer: Any = None) -> None:
        super().__init__(parent)
        self.message = message
        self.role = message.role
        self.setObjectName("assistantMessage" if message.role is Role.ASSISTANT else "userMessage")
        self.setFrameShape(QFrame.Shape.NoFrame)
        # a reply that grows at its bottom paints only the new strip (the list scrolls the rest by a blit:
        # .scroll_blit); resizeEvent repaints what a resize could leave stale
        self.setAttribute(Qt.WidgetAttribute.WA_StaticContents)
        self.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
        self.setAccessibleName(self.tr("Reply") if message.role is Role.ASSISTANT else self.tr("Your message"))
        lay = QVBoxLayout(self)
        lay.setContentsMargins(12, 8, 12, 8)
        lay.setSpacing(2)
        head = QHBoxLayout()
        self.who = QLabel("")
        self.status = QLabel("")
        self.status.setObjectName("messageStatus")
        self.status.linkActivated.connect(self._version_link)
        head.addWidget(self.who)
        head.addStretch(1)
        head.addWidget(self.status)
        lay.addLayout(head)
        self.view: MarkdownView | None = None
        self.plain: PlainTextView | None = None
        self._chips: list[QWidget] = []
        self._spare: MarkdownView | None = None      # where build_rendered builds, off-screen
        self._building: Any = None                   # the renderer being built there
        if message.role is Role.ASSISTANT:
            self.view = self._new_view()
            lay.addWidget(self.view)
        else:
            self.plain = PlainTextView("", self)
            lay.addWidget(self.plain)
        self.error = QLabel("")
        self.error.setObjectName("messageError")
        self.error.setWordWrap(True)
        self.error.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lay.addWidget(self.error)
        self.note = QLabel("")                 # left-out messages, an unanswered question (app.core.chat.notes)
        self.note.setObjectName("messageNote")
        self.note.setWordWrap(True)
        self.note.linkActivated.connect(lambda _link: self.resend_requested.emit(self.message))
        lay.addWidget(self.note)
        self.figures = QLabel("")
        self.figures.setObjectName("messageFigures")
        lay.addWidget(self.figures)
        self.bind(message, body=body, renderer=renderer)

    @property
    def preview(self) -> bool:
        """Whether the body shows the plain-text preview (the full render has not been set yet)."""
        return self.view is not None and self.view.placeholder

    def bind(self, message: Message, *, body: str = "rich", renderer: Any = None) -> None:
        """Show ``message`` (same role as the widget's first message) in this widget, replacing all it showed.

        ``body``: ``"rich"`` renders a finished reply now; ``"preview"`` shows its text without markup until
        :meth:`set_rendered`; a ``renderer`` (a finished ``IncrementalMarkdown`` of the text, in the view's theme)
        is shown instead of rendering again. A reply that is not finished starts empty (the render tick streams
        into it).
        ``ValueError`` if the role differs (a user message's widget has no markdown view).
        """
        if message.role is not self.role:
            raise ValueError(f"a {self.role.value} message widget cannot show a {message.role.value} message")
        self._drop_build()
        self.message = message
        who = self.tr("You") if message.role is Role.USER else (message.model or self.tr("Assistant"))
        self.who.setText(f"<b>{_escape(who)}</b>")
        self.who.setToolTip("")
        self.status.setText("")
        self.status.setToolTip("")
        self.error.setText("")
        self.error.hide()
        self.note.setText("")
        self.note.hide()
        self.figures.setText("")
        self.figures.setToolTip("")
        self.figures.hide()
        if self.view is not None:
            if not (message.text and message.status.final):
                self.view.reset()
            elif renderer is not None:
                self.view.set_renderer(renderer)
            elif body == "preview":
                self.view.show_placeholder(plain_preview(message.text))
            else:
                self.view.set_text(message.text)
        else:
            assert self.plain is not None
            for chip in self._chips:
                chip.deleteLater()
            self._chips = []
            own, attachments = split_attachments(message.text)
            self.plain.set_plain(own if attachments else message.text)
            lay = self.layout()
            assert isinstance(lay, QVBoxLayout)
            for k, att in enumerate(attachments):   # shown folded: name and token count; the text in the tooltip
                tokens = " · " + self.tr("%1 tokens").replace("%1", f"{att.tokens:,}") if att.tokens is not None else ""
                chars = self.tr("%1 characters").replace("%1", f"{len(att.text):,}")
                row = QWidget(self)                 # the style's file icon: a "⎘"/"📎" needs a symbol font
                row_lay = QHBoxLayout(row)
                row_lay.setContentsMargins(0, 0, 0, 0)
                row_lay.setSpacing(4)
                icon = QLabel(row)
                icon.setObjectName("attachmentIcon")
                side = max(12, self.fontMetrics().height())
                icon.setPixmap(self.style().standardIcon(QStyle.StandardPixmap.SP_FileIcon).pixmap(side, side))
                chip = QLabel(f"{_escape(att.name)}{tokens} · {chars}", row)
                chip.setObjectName("attachmentChip")
                row.setToolTip(att.text[:2000] + ("…" if len(att.text) > 2000 else ""))
                row_lay.addWidget(icon)
                row_lay.addWidget(chip, 1)
                lay.insertWidget(2 + k, row)
                self._chips.append(row)
        self.update_status()

    def set_rendered(self, renderer: Any) -> None:
        """Show the reply's full render from ``renderer`` (a finished ``IncrementalMarkdown`` of this message's
        text in the view's theme), replacing the preview."""
        assert self.view is not None
        self._drop_build()
        self.view.set_renderer(renderer)

    def _new_view(self) -> MarkdownView:
        view = MarkdownView(self)
        for w in (view, view.viewport()):   # growing at the bottom: the new strip alone is painted (its document's
            w.setAttribute(Qt.WidgetAttribute.WA_StaticContents)   # changes repaint themselves: .repaint)
        view.heightChanged.connect(lambda h, v=view: self._view_height(v, h))
        return view

    def _view_height(self, view: MarkdownView, height: int) -> None:
        if view is self.view:
            self.bodyHeightChanged.emit(height)

    def build_rendered(self, renderer: Any) -> bool:
        """Build the full render of ``renderer`` (as :meth:`set_rendered`) in a spare view placed off-screen at the
        shown view's width, ``BUILD_CHUNK_CHARS`` of HTML per call; True once it is built (then
        :meth:`show_built`). A call with another renderer, or once the width changed, starts again.

        Why: showing a 7 KB reply in one go (:meth:`set_rendered`) took 30-65 ms of ``insertHtml`` and layout in one
        loop turn — the longest slice of the message list's idle work, which a wheel turn or a key waited for."""
        assert self.view is not None
        spare = self._spare
        if spare is None:
            spare = self._spare = self._new_view()
        width = self.view.width()
        if self._building is renderer and spare.width() == width:
            return spare.continue_build()
        spare.setGeometry(self.view.x(), -OFF_SCREEN_PX, width, max(1, self.view.height()))
        spare.show()
        self._building = renderer
        return spare.start_build(renderer)

    def show_built(self) -> None:
        """Show the render :meth:`build_rendered` finished in place of the preview (the old view becomes the
        spare, emptied); ``bodyHeightChanged`` tells the new height."""
        old, new = self.view, self._spare
        assert old is not None and new is not None and self._building is not None
        lay = self.layout()
        assert lay is not None
        lay.replaceWidget(old, new)
        self.view, self._spare, self._building = new, old, None
        old.hide()
        old.reset(fresh=False)
        self.bodyHeightChanged.emit(new.heightForWidth(new.width()))

    def _drop_build(self) -> None:
        if self._building is not None and self._spare is not None:
            self._spare.hide()
            self._spare.reset(fresh=False)
        self._building = None

    def focusInEvent(self, event: QFocusEvent) -> None:
        super().focusInEvent(event)
        self.update()
        text = self.message.text
        self.setAccessibleDescription(plain_preview(text[:400]) if self.view is not None else text[:400])
        QAccessible.updateAccessibility(QAccessibleEvent(self, QAccessible.Event.Focus))

    def focusOutEvent(self, event: QFocusEvent) -> None:
        super().focusOutEvent(event)
        self.update()

    def resizeEvent(self, event: QResizeEvent) -> None:
        """With static contents Qt paints only what a resize uncovers: a new width repaints everything (the text
        wraps again, the border moves); a new height, the band of the old and new bottom edges too (the
        border's rounded corners)."""
        super().resizeEvent(event)
        old, new = event.oldSize(), event.size()
        if old.width() != new.width():
            self.update()
        elif old.height() != new.height():
            low = min(old.height(), new.height())
            self.update(0, low - EDGE_BAND_PX, new.width(), abs(new.height() - old.height()) + EDGE_BAND_PX)

    def paintEvent(self, event: QPaintEvent) -> None:
        """A reply's 1 px border, drawn here rather than by the stylesheet: a stylesheet border (or margin) makes
        the layout ask the body's height at a width wider than the body, which cost a document clone per tick.

        A paint of a band of the reply strokes only the outline's part around it (``_outline``): the straight
        sides there are the same pixels, and the shorter outline's own corners lie outside what is painted.
        Stroking the whole reply's outline (thousands of px tall) with antialiasing cost 0.4 ms of each frame of
        a streaming reply (its new lines: ``python -m app.bench render``, 1,000 tokens/s)."""
        super().paintEvent(event)
        focused = self.hasFocus()
        if self.message.role is Role.ASSISTANT or focused:
            p = QPainter(self)
            p.setRenderHint(QPainter.RenderHint.Antialiasing)
            if focused:        # the message Alt+Up / Alt+Down moved to: a 2 px ring in the highlight colour
                p.setPen(QPen(self.palette().color(QPalette.ColorRole.Highlight), 2))
                _stroke_outline(p, self.rect().adjusted(1, 1, -1, -1), event.rect())
            else:
                p.setPen(QPen(QColor(border_color()), 1))
                _stroke_outline(p, self.rect().adjusted(0, 0, -1, -1), event.rect())
            p.end()

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
        n = versions.count(m) if m.role is Role.ASSISTANT and m.status.final else 1
        if n > 1:
            k = m.version_index
            prev = f'<a href="{VERSION_PREV}">‹</a>' if k > 0 else "‹"
            nxt = f'<a href="{VERSION_NEXT}">›</a>' if k < n - 1 else "›"
            rich = f"{_escape(text)}&nbsp;&nbsp;{prev}&nbsp;{k + 1}/{n}&nbsp;{nxt}"
            self.status.setToolTip(self.tr("Click ‹ or › to see the other versions of this reply"))
            which = self.tr("version %1 of %2").replace("%1", str(k + 1)).replace("%2", str(n))
            spoken = f"{text} {which}"
        else:
            rich, spoken = "", text
            self.status.setToolTip("")
        shown = rich or text
        if shown != self.status.text():
            self.status.setTextFormat(Qt.TextFormat.RichText if rich else Qt.TextFormat.PlainText)
            self.status.setText(shown)
            announce(self.status, spoken.strip())
        if m.error:
            self.error.setText(m.error)
            self.error.show()
        notes = [core_text(n) for n in message_notes(m)]      # the core's English notes in the UI language
        if notes:
            html = "<br>".join(_escape(n) for n in notes)
            if unanswered_note(m):
                link = self.tr("Resend")          # not inside the f-string: lupdate does not look there
                html += f' <a href="{RESEND_LINK}">{link}</a>'
            self.note.setText(html)
            self.note.show()
        else:
            self.note.hide()
        if m.status.final and m.metrics:
            line, tip = format_figures(m.metrics)
            wait = m.metrics.get("wait_ms") or 0
            if line and wait > 500:
                line += " · " + self.tr("waited %1 s for the model").replace("%1", f"{wait / 1000:.1f}")
            if line:
                self.figures.setText(line)
                self.figures.setToolTip(tip)
                self.figures.show()


    def _version_link(self, link: str) -> None:
        k = self.message.version_index + (-1 if link == VERSION_PREV else 1 if link == VERSION_NEXT else 0)
        if 0 <= k < versions.count(self.message) and k != self.message.version_index:
            self.version_requested.emit(k)


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
        parts.append(QCoreApplication.translate("Figures", "%1 tokens").replace("%1", str(metrics["decode_tokens"])))
    labels = [("prefill_ms", QT_TRANSLATE_NOOP("Figures", "prefill"), "ms"),
              ("first_paint_ms", QT_TRANSLATE_NOOP("Figures", "first paint"), "ms"),
              ("wait_ms", QT_TRANSLATE_NOOP("Figures", "waited for the model"), "ms"),
              ("queue_high_water", QT_TRANSLATE_NOOP("Figures", "queue high-water mark"), "chunks"),
              ("backpressure_waits", QT_TRANSLATE_NOOP("Figures", "backpressure waits > 100 ms"), ""),
              ("backpressure_wait_ms", QT_TRANSLATE_NOOP("Figures", "backpressure wait total"), "ms"),
              ("ticks", QT_TRANSLATE_NOOP("Figures", "render ticks"), ""),
              ("longest_tick_ms", QT_TRANSLATE_NOOP("Figures", "longest tick"), "ms"),
              ("total_ms", QT_TRANSLATE_NOOP("Figures", "total"), "ms")]
    tip = []
    for key, english, unit in labels:
        v = metrics.get(key)
        if v is None:
            continue
        label = QCoreApplication.translate("Figures", english)
        unit = QCoreApplication.translate("Figures", "chunks") if unit == "chunks" else unit
        tip.append(f"{label}: {v:.1f} {unit}".rstrip() if isinstance(v, float) else f"{label}: {v} {unit}".rstrip())
    return " · ".join(parts), "\n".join(tip)


def _escape(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
