"""Moving between messages with the keyboard: Alt+Up / Alt+Down (window-wide shortcuts of the message list).

The focused message is scrolled to (its top near the top of the view), draws a focus ring
(``MessageWidget.paintEvent``) and tells assistive technology its role, its place ("message 3 of 40") and its
first words (``MessageWidget.focusInEvent``). Ctrl+L goes back to the message box.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, cast

from PySide6.QtCore import QCoreApplication, QObject, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QApplication

from app.core.conversation import Message, Role

if TYPE_CHECKING:
    from collections.abc import Sequence

    from PySide6.QtWidgets import QWidget

    from app.ui.messages.widget import MessageWidget


class _Item(Protocol):
    """A row of the message list: its message (None for a non-message row) and its widget, if it has one."""

    @property
    def message(self) -> Message | None: ...
    @property
    def widget(self) -> QWidget | None: ...


class MessageList(Protocol):
    """What the keys need of the message list (:class:`app.ui.messages.chat_view.ChatView`)."""

    #: Pixels kept between a message scrolled to and the edge of the view.
    message_spacing: int

    @property
    def items(self) -> Sequence[_Item]: ...
    def _visible_range(self, margin: int = 0) -> tuple[int, int]: ...
    def scroll_to(self, message: Message, margin: int = 40) -> MessageWidget | None: ...
    def addAction(self, action: QAction, /) -> None: ...


def install(view: MessageList) -> None:
    """Add the Alt+Up / Alt+Down actions to ``view`` (active wherever the focus is in its window)."""
    translate = QCoreApplication.translate     # named "translate" (lupdate reads tr("a", "b") as a tr() call)
    for keys, step, name in (("Alt+Up", -1, translate("ChatView", "Previous message")),
                             ("Alt+Down", 1, translate("ChatView", "Next message"))):
        act = QAction(name, cast(QObject, view))     # the list is a QObject (a ChatView)
        act.setShortcut(QKeySequence(keys))
        act.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        act.triggered.connect(lambda _checked=False, s=step: move_focus(view, s))
        view.addAction(act)


def focused_message(view: MessageList) -> Message | None:
    """The message whose widget holds the keyboard focus (or a focused part of it), or None."""
    focus = QApplication.focusWidget()
    if focus is None:
        return None
    for it in view.items:
        w = it.widget
        if it.message is not None and w is not None and (focus is w or w.isAncestorOf(focus)):
            return it.message
    return None


def move_focus(view: MessageList, step: int) -> MessageWidget | None:
    """Move the keyboard focus ``step`` messages down (negative: up), scroll to that message and mark it; with
    no message focused, Alt+Up goes to the last message in view and Alt+Down to the first. Stops at the first
    and the last message. Returns the focused message's widget (None in an empty chat)."""
    items = view.items
    idx = [i for i, it in enumerate(items) if it.message is not None]
    if not idx:
        return None
    current = focused_message(view)
    if current is not None:
        pos = next(k for k, i in enumerate(idx) if items[i].message is current)
        target = idx[max(0, min(len(idx) - 1, pos + step))]
    else:
        first, last = view._visible_range()
        shown = [i for i in idx if first <= i < last] or idx
        target = shown[-1] if step < 0 else shown[0]
    msg = items[target].message
    assert msg is not None
    w = view.scroll_to(msg, margin=view.message_spacing)
    if w is None:
        return None
    translate = QCoreApplication.translate
    who = translate("ChatView", "Reply") if msg.role is Role.ASSISTANT else translate("ChatView", "Your message")
    w.setAccessibleName(translate("ChatView", "%1, message %2 of %3").replace("%1", who)
                        .replace("%2", str(idx.index(target) + 1)).replace("%3", str(len(idx))))
    w.setFocus(Qt.FocusReason.ShortcutFocusReason)
    return w
