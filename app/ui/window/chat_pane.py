"""The window's chat pane (``ChatPane``): the welcome page while the shown chat is empty, else the message list
(``app.ui.messages.chat_view.ChatView``).

The message list is made the first time it is needed (``chat``): its modules bring the markdown renderer,
pygments and the formula worker (~60 ms of imports on a small machine), so the window is shown without them and
makes it right after its first paint (``MainWindow.finish_start``), or earlier when a chat or a notice has to be
shown (``tests/test_startup_imports.py`` checks that none of them is imported before the window is shown).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import QVBoxLayout, QWidget

from app.core.chat.session import ChatSession
from app.ui.window.welcome import WelcomeView

if TYPE_CHECKING:
    from app.ui.messages.chat_view import ChatView
    from app.ui.messages.widget import MessageWidget


class ChatPane:
    """The welcome page (``welcome``, in ``layout`` at ``index``) and, once made, the message list after it.

    Args:
        session: the chat shown and the model's name and state (for the welcome page).
        layout: the central column's layout; the list goes right after the welcome page.
        widget_added: called with each message widget the list makes (the window's features decorate it).
        made: called with the list once it is made (e.g. the language switch leaves it alone).
        shown: called after the pane changed between the welcome page and the list (the context meter).
    """

    def __init__(self, session: ChatSession, layout: QVBoxLayout, widget_added: list[Callable[[MessageWidget], None]],
                 made: Callable[[QWidget], None], shown: Callable[[], None]) -> None:
        self.session = session
        self.layout = layout
        self.widget_added = widget_added
        self.made = made
        self.shown = shown
        self.welcome = WelcomeView()
        layout.addWidget(self.welcome, 1)
        self._chat: ChatView | None = None

    @property
    def made_yet(self) -> ChatView | None:
        """The message list if it was made, else None (nothing is made)."""
        return self._chat

    @property
    def chat(self) -> ChatView:
        """The message list, made (and its modules imported) the first time it is read."""
        if self._chat is None:
            from app.ui.look.i18n import apply_copy_label
            from app.ui.messages.chat_view import ChatView

            apply_copy_label()                     # the renderer is imported now: its Copy link in the UI language
            chat = ChatView()
            chat.setAccessibleName(QCoreApplication.translate("MainWindow", "Messages"))
            chat.setVisible(False)                 # ``refresh`` shows it when there is something in it
            self.layout.insertWidget(self.layout.indexOf(self.welcome) + 1, chat, 1)
            for slot in self.widget_added:
                chat.widget_added.connect(slot)
            self._chat = chat                      # (the window's stylesheet applies to it as to any new child)
            self.made(chat)
        return self._chat

    def refresh(self) -> None:
        """The welcome page instead of an empty chat (not over notices such as a load error)."""
        conv, chat = self.session.conversation, self._chat
        empty = not conv.messages and (chat is None or (not chat.widgets and chat.notice_count == 0))
        self.welcome.set_model(self.session.engine.name, self.session.model_state)
        self.shown()
        self.welcome.setVisible(empty)
        if chat is not None or not empty:
            self.chat.setVisible(not empty)
