"""Links in a message's view: which are opened and how, their tooltips, the view's own link schemes.

Only ``http``/``https``/``mailto`` are opened (by the desktop, never inside the view), after asking when the link's
text names another address (``links.misleading``); a link's tooltip is its real target; ``brook-copy:N`` copies
the raw code of code block N to the clipboard; ``brook-think:toggle`` folds the reasoning section,
``brook-think:later`` the reasoning sections inside the answer; anything else is ignored. A click in a sealed
segment (:mod:`.segments`) comes here too (:meth:`LinkedView.open_anchor`).
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QEvent, QUrl
from PySide6.QtGui import QDesktopServices, QGuiApplication, QHelpEvent, QTextDocument
from PySide6.QtWidgets import QTextBrowser, QToolTip, QWidget

from app.core.render.markdown.links import COPY_SCHEME, THINK_SCHEME, is_safe_url, misleading
from app.core.render.markdown.thinking import LATER_TOGGLE


class LinkedView(QTextBrowser):
    """A message's ``QTextBrowser`` with Brook's link policy. Subclasses give the code of a copy link
    (:meth:`code_for`), the fold toggles and every document of the message (:meth:`documents`)."""

    def documents(self) -> list[QTextDocument]:
        """The message's documents, top to bottom (here: the view's own)."""
        return [self.document()]

    def code_for(self, key: str) -> str | None:
        """Raw code of code block ``key`` (None: unknown)."""
        return None

    def toggle_thinking(self) -> None:
        """Fold or unfold the reasoning section."""

    def toggle_later_thinking(self) -> None:
        """Fold or unfold the reasoning sections inside the answer."""

    @staticmethod
    def confirm_link(parent: QWidget, text: str, href: str) -> bool:
        """Ask before opening a link whose text names another address (``links.misleading``); default: no."""
        from PySide6.QtWidgets import QMessageBox

        box = QMessageBox(QMessageBox.Icon.Warning, QCoreApplication.translate("MarkdownView", "Open this link?"),
                          QCoreApplication.translate("MarkdownView", "The link says %1 but opens %2.\n\nOpen %2?")
                          .replace("%1", text).replace("%2", href),
                          QMessageBox.StandardButton.Open | QMessageBox.StandardButton.Cancel, parent)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        return box.exec() == QMessageBox.StandardButton.Open

    def anchor_texts(self, href: str) -> list[str]:
        """The shown texts of every link to ``href`` in the view (a link split by bold or code is one text)."""
        out: list[str] = []
        for doc in self.documents():
            out.extend(_anchor_texts(doc, href))
        return out

    def viewportEvent(self, e: QEvent) -> bool:
        """A link's tooltip is the address it really opens (its text may say another)."""
        if e.type() == QEvent.Type.ToolTip and isinstance(e, QHelpEvent):
            href = self.anchorAt(e.pos())
            if href and is_safe_url(href):
                QToolTip.showText(e.globalPos(), href, self.viewport())
                return True
        return super().viewportEvent(e)

    def open_anchor(self, url: QUrl) -> None:
        """A link in the message was clicked (in the view or a sealed segment): see the module docstring."""
        scheme = url.scheme().lower()
        if is_safe_url(url.toString()):
            href = url.toString()
            lying = next((t for t in self.anchor_texts(href) if misleading(t, href)), None)
            if lying is None and misleading("", href):
                lying = href
            if lying is not None and not self.confirm_link(self, lying, href):
                return
            QDesktopServices.openUrl(url)
        elif scheme == COPY_SCHEME:
            code = self.code_for(url.path())
            if code is not None:
                QGuiApplication.clipboard().setText(code)
        elif url.toString() == LATER_TOGGLE:
            self.toggle_later_thinking()
        elif scheme == THINK_SCHEME:
            self.toggle_thinking()
        # anything else: ignored (inert)

    def setSource(self, url: QUrl | str, *args: object) -> None:
        """Never navigate inside the view (links go through :meth:`open_anchor`)."""


def _anchor_texts(doc: QTextDocument, href: str) -> list[str]:
    """The texts of every link to ``href`` in ``doc`` (a link split by bold or code is one text)."""
    out: list[str] = []
    block = doc.firstBlock()
    while block.isValid():
        run: list[str] = []
        it = block.begin()
        while not it.atEnd():
            frag = it.fragment()
            if frag.isValid() and frag.charFormat().anchorHref() == href:
                run.append(frag.text())
            elif run:
                out.append("".join(run))
                run = []
            it += 1
        if run:
            out.append("".join(run))
        block = block.next()
    return out
