"""Attachments of the message being typed: a 📎 button (pick text files), drag and drop onto the input, and a very
long paste turned into an attachment instead of a 300 KB bubble. Each shows as a chip ("📎 main.py · 1,234
tokens ✕") above the input; on send they are added to the message (``app.core.chat.attachments.compose``).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QEvent, QObject, Qt
from PySide6.QtGui import QDropEvent, QGuiApplication, QKeyEvent, QKeySequence
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QStyle,
    QToolButton,
    QWidget,
)

from app.core.chat.attachments import LONG_PASTE_CHARS, Attachment, AttachmentError, compose, read_attachment
from app.core.chat.session import ChatSession

#: Count tokens right away only below this many characters (the count runs on the loop thread).
COUNT_LIMIT = 200_000


class AttachmentsBar(QWidget):
    """The chips of the message being typed; ``button`` (📎) is placed beside the input by the window.

    Args:
        session: its engine counts an attachment's tokens (when loaded and it has ``count_tokens``).
        input: the message box the attachments are composed into on send.
    """

    def __init__(self, session: ChatSession, input: QPlainTextEdit, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("attachments")
        self.session = session
        self.input = input
        self.items: list[Attachment] = []
        self.reading: set[asyncio.Future[Attachment]] = set()     # files being read on a worker thread
        self.row = QHBoxLayout(self)
        self.row.setContentsMargins(12, 4, 12, 0)
        self.row.addStretch(1)
        self.button = QToolButton()
        self.button.setIcon(self.style().standardIcon(QStyle.StandardPixmap.SP_FileIcon))
        self.button.setToolTip(self.tr("Attach text files (code, markdown, logs, CSV)…"))
        self.button.setAccessibleName(self.tr("Attach files"))
        self.button.clicked.connect(self.pick)
        self.error = QLabel()
        self.error.setObjectName("errorNotice")
        self.error.hide()
        self.row.insertWidget(0, self.error)
        self.hide()

    # adding ----------------------------------------------------------------------------------------------
    def pick(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(self.window(), self.tr("Attach text files"), str(Path.home()))
        for p in paths:
            self.add_file(p)

    def add_file(self, path: str | Path) -> asyncio.Future[Attachment | None]:
        """Read the file at ``path`` on a worker thread (``read_attachment``: regular files only, at most
        ``MAX_BYTES``; a FIFO or a device is refused without blocking) and add it as a chip when read; a file
        that cannot be attached shows its reason above the input. Returns a future of the attachment added (None
        when refused). The UI thread never reads a file."""
        loop = asyncio.get_event_loop()
        added: asyncio.Future[Attachment | None] = loop.create_future()
        job = loop.run_in_executor(None, read_attachment, path)
        self.reading.add(job)

        def done(f: asyncio.Future[Attachment]) -> None:
            self.reading.discard(f)
            try:
                att: Attachment | None = self.add(f.result())
            except AttachmentError as exc:
                self.error.setText("⚠ " + str(exc))
                self.error.show()
                self.show()
                att = None
            except Exception as exc:        # never into the crash dialog for a file
                self.error.setText("⚠ " + self.tr("Cannot attach %1: %2").replace("%1", Path(path).name)
                                   .replace("%2", str(exc)))
                self.error.show()
                self.show()
                att = None
            if not added.done():
                added.set_result(att)

        job.add_done_callback(done)
        return added

    def add(self, att: Attachment) -> Attachment:
        engine = self.session.engine
        count = getattr(engine, "count_tokens", None)
        if att.tokens is None and callable(count) and len(att.text) <= COUNT_LIMIT and engine.loaded:
            try:
                att = Attachment(att.name, att.text, att.language, count(att.text))
            except Exception:
                pass
        self.items.append(att)
        self.error.hide()
        self._redraw()
        return att

    def take(self) -> list[Attachment]:
        items, self.items = self.items, []
        self._redraw()
        return items

    def _redraw(self) -> None:
        while self.row.count() > 2:                   # keep the error label and the stretch
            item = self.row.takeAt(1)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.deleteLater()
        for i, att in enumerate(self.items):
            tokens = f" · {att.tokens:,} tokens" if att.tokens is not None else ""
            chip = QPushButton(f"{att.name}{tokens}  ✕")
            chip.setIcon(self.style().standardIcon(QStyle.StandardPixmap.SP_FileIcon))
            chip.setObjectName("attachmentChip")
            chip.setToolTip(self.tr("Remove this attachment") + f"\n{len(att.text):,} " + self.tr("characters"))
            chip.setAccessibleName(self.tr("Attachment %1, press to remove").replace("%1", att.name))
            chip.clicked.connect(lambda _c=False, k=i: self._remove(k))
            self.row.insertWidget(1 + i, chip)
        self.setVisible(bool(self.items) or not self.error.isHidden())

    def _remove(self, index: int) -> None:
        if 0 <= index < len(self.items):
            del self.items[index]
            self._redraw()

    # sending ---------------------------------------------------------------------------------------------
    def compose_into_input(self) -> None:
        """Put the attachments into the input's text just before the window reads it to send."""
        if self.items:
            text = compose(self.input.toPlainText(), self.take())
            self.input.setPlainText(text)


class InputFilter(QObject):
    """On the message box: Enter sends the attachments too; dropped files and very long pastes become
    attachments."""

    def __init__(self, bar: AttachmentsBar) -> None:
        super().__init__(bar)
        self.bar = bar

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        t = event.type()
        if t == QEvent.Type.KeyPress:
            assert isinstance(event, QKeyEvent)
            if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) \
                    and not event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
                self.bar.compose_into_input()
            elif event.matches(QKeySequence.StandardKey.Paste):
                text = QGuiApplication.clipboard().text()
                if len(text) > LONG_PASTE_CHARS:
                    self.bar.add(Attachment(QCoreApplication.translate("AttachmentsBar", "pasted text"), text))
                    return True
        elif t in (QEvent.Type.DragEnter, QEvent.Type.DragMove):
            assert isinstance(event, QDropEvent)
            if event.mimeData().hasUrls():
                event.acceptProposedAction()
                return True
        elif t == QEvent.Type.Drop:
            assert isinstance(event, QDropEvent)
            urls = [u for u in event.mimeData().urls() if u.isLocalFile()]
            if urls:
                for u in urls:
                    self.bar.add_file(u.toLocalFile())
                event.acceptProposedAction()
                return True
        return False
