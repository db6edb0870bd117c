"""The reasoning section's fold: what a message view shows again when it is folded or unfolded.

A reply may open with a reasoning section (``<think>…</think>`` and the other notations:
:mod:`app.core.render.markdown.thinking`), shown under a header that folds it; later sections inside the answer
are folded apart. Once the answer streams, folding the first section re-inserts only its part at the top of the
first document (:meth:`ReasoningView._refold`), leaving the answer's pieces where they are; otherwise the whole
document is built again (:meth:`ReasoningView._rebuild`, also after a phase change, ``set_text`` or late link
references).
"""

from __future__ import annotations

from PySide6.QtGui import QTextCursor

from app.core.render.markdown import PIECE, IncrementalMarkdown
from app.core.render.markdown.thinking import thinking_header_html
from app.ui.messages.patched_view import PatchedView
from app.ui.messages.rich_text import view_pieces


class ReasoningView(PatchedView):
    """A patched view that folds a reply's reasoning sections; ``MarkdownView`` sets the state below."""

    renderer: IncrementalMarkdown
    placeholder: bool        # a plain-text preview is shown
    _expanded: bool          # the first reasoning section is unfolded
    _later_expanded: bool    # the reasoning sections inside the answer are unfolded
    _user_toggled: bool      # the user folded or unfolded it (the answer's start no longer folds it)
    _catching_up: bool       # a re-made streaming view renders the text so far behind its preview
    _build_budget: int | None
    _restyled: int | None    # the first stable block restyled and not applied yet (MarkdownView)

    def toggle_thinking(self) -> None:
        """Fold or unfold the reasoning section: once the answer streams, only the section is shown again (the
        answer's documents stay as they are); before, the document is built again."""
        self._expanded = not self._expanded
        self._user_toggled = True
        if not self._refold():
            self._rebuild()

    def _refold(self) -> bool:
        """Show the finished reasoning section again at the top of the first document (its header, and its
        content when unfolded), leaving the answer's pieces where they are; False when there is no such section
        on screen (the caller rebuilds)."""
        md = self.renderer
        if (md.thinking is None or not md.thinking_done or self._phase != "answer" or not self._has_header
                or self.placeholder or self._catching_up):
            return False
        doc = self.documents()[0]
        cursor = QTextCursor(doc)
        cursor.beginEditBlock()
        try:
            cursor.setPosition(self._thinking_end, QTextCursor.MoveMode.KeepAnchor)
            cursor.removeSelectedText()
            header = thinking_header_html(self._expanded, False)
            cursor.insertHtml(header)
            if self._expanded:
                start, prev = cursor.position(), header
                for block in [*md.thinking.stable_blocks, *md.thinking.tail_blocks]:
                    for html in view_pieces(block, PIECE):
                        self._insert_piece(cursor, html, prev)
                        prev = html
                self._dim(start, cursor.position(), doc)
        finally:
            cursor.endEditBlock()
        self._shift_first_document(cursor.position() - self._thinking_end)
        return True

    def toggle_later_thinking(self) -> None:
        """Fold or unfold the reasoning sections inside the answer (a model that thought again later; folded
        at first); re-renders the document."""
        self._later_expanded = not self._later_expanded
        self._rebuild()


    def _rebuild(self) -> None:
        """Re-create the whole document (thinking fold toggled, phase change, set_text, late references)."""
        md = self.renderer
        self.document().clear()
        self._reset_state()
        self._restyled = None            # all inserted again, as rendered now
        thinking_active = md.thinking is not None and not md.thinking_done
        self._phase = "think" if thinking_active else "answer"
        cursor = QTextCursor(self.document())
        if md.thinking is not None:
            header = thinking_header_html(self._expanded, thinking_active)
            self._insert_piece(cursor, header, "")
            prev = header
            self._has_header = True
            if self._expanded and not thinking_active:
                start = cursor.position()
                thinking = md.thinking
                for block in [*thinking.stable_blocks, *thinking.tail_blocks]:
                    for html in view_pieces(block, PIECE):
                        self._insert_piece(cursor, html, prev)
                        prev = html
                self._dim(start, cursor.position())
            self._base = self._thinking_end = cursor.position()
            self._base_prev = prev
            if not self._expanded and thinking_active:
                # folded while reasoning: only the header shows; stream nothing below it yet
                self._n_stable = 0
                self._version = md.version
                return
        active = md.thinking if thinking_active else md
        assert active is not None
        self._patch(active.stable_blocks, active.tail_blocks, dim=thinking_active, budget=self._build_budget)
        self._version = md.version
