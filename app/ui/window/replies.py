"""How a reply that streams reaches the screen (``ReplyPainting``): the session's reply events (started, changed,
stopping, ended) attach the reply's view to the render tick (``app.ui.messages.coalescer``), update its status
line and the status bar, and, once everything that arrived is painted, finish its view.

A reply whose chat is not shown is counted but not drawn; a view made again for a reply that streams in the
background (its chat is opened) shows the text so far as a preview while the tick feeds it in slices; the widget
the reply had when its chat was left, kept by the list, goes on from what it showed."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QCoreApplication

from app.core.chat.session import ChatSession
from app.core.conversation import Message, MessageStatus
from app.core.streaming.generation import Generation
from app.ui.messages.coalescer import Coalescer
from app.ui.window.status_bar import StatusBar

if TYPE_CHECKING:
    from app.ui.messages.chat_view import ChatView
    from app.ui.messages.markdown_view import MarkdownView
    from app.ui.messages.widget import MessageWidget


translate = QCoreApplication.translate   # lupdate reads translate("Context", "text") calls; the window's context


def _feed_nothing(_text: str) -> None:
    """Feed of a reply generating in a chat that is not shown: its text stays in the ``Message``."""


def _paint_nothing() -> bool:
    return False


def _streamed_prefix(view: MarkdownView, reply: Message) -> int:
    """How many characters of ``reply``'s text ``view`` was fed while it streamed and still shows (a widget kept
    while its chat was not shown), or 0 (empty, a preview, caught up from scratch, or not a prefix of the text)."""
    md = view.renderer
    fed = md.text
    if not fed or md.finished or view.placeholder or view.catching_up or len(fed) > len(reply.text):
        return 0
    return len(fed) if reply.text.startswith(fed) else 0


class ReplyPainting:
    """The window's half of a streaming reply.

    Args:
        session: the chat shown and the running generations.
        coalescer: the render tick.
        chat: the message list (a callable: the window makes it when first needed).
        status: the status bar (state, live and final figures).
        send_mode: shows Send or Stop on the send button (True: Stop).
        decorate: adds a finished reply's menu and provenance to its widget.
        finished: called with the reply once everything that arrived is painted (the window's
            ``reply_finished``; the send queue and the context meter go on from there).
    """

    def __init__(self, session: ChatSession, coalescer: Coalescer, chat: Callable[[], ChatView], status: StatusBar,
                 send_mode: Callable[[bool], None], decorate: Callable[[MessageWidget], None],
                 finished: Callable[[Message], None]) -> None:
        self.session = session
        self.coalescer = coalescer
        self.chat = chat
        self.status = status
        self.send_mode = send_mode
        self.decorate = decorate
        self.finished = finished
        self._reshow_after_stop: set[int] = set()   # stopped replies whose last burst was not painted
        coalescer.painted.connect(self._on_painted)

    def _shown(self, gen: Generation) -> bool:
        return gen.conversation is self.session.conversation

    def started(self, gen: Generation) -> None:
        self.attach(gen, fresh_view=False)
        if self._shown(gen):
            self.send_mode(True)

    def attach(self, gen: Generation, fresh_view: bool) -> None:
        """Paint ``gen``'s reply into its view when its chat is shown, else only count what arrives."""
        from app.core.render.preview import tail_preview

        self.coalescer.end_finishing(gen.reply)   # its previous generation's end, not painted yet: finished now
        widget = self.chat().widget_for(gen.reply) if self._shown(gen) else None
        view = widget.view if widget is not None else None
        if view is None:
            self.coalescer.attach(gen.reply, _feed_nothing, _paint_nothing, gen.metrics)
            return
        if view.renderer.finished:                 # Continue: the view shows the finished text; stream on from it
            view.reset()
            gen.reply.take_new()                   # all of it is fed here; the tick feeds only what follows
            view.append_text(gen.reply.text)
            view.refresh()
        elif fresh_view and (fed := _streamed_prefix(view, gen.reply)):
            # the widget the reply had when its chat was left (the list kept it): it shows what it showed, and
            # the render tick feeds it what arrived meanwhile
            self.coalescer.catch_up(gen.reply, view.append_text, view.refresh, gen.metrics, fed=fed,
                                    lagging=view.lagging, render=view.render_fed, spend=view.spend,
                                    saturated=view.saturated, end_cost=view.end_cost_ms)
            return
        elif fresh_view and gen.reply.text:
            # a re-made view shows the end of the text so far as a preview (the list follows the bottom) while
            # the render tick feeds it in slices (never in one go), then its render
            view.begin_catch_up(tail_preview(gen.reply.text))
            self.coalescer.catch_up(gen.reply, view.append_text, view.refresh, gen.metrics, view.end_catch_up,
                                    lagging=view.lagging)
            return
        self.coalescer.attach(gen.reply, view.append_text, view.refresh, gen.metrics, view.lagging, view.render_fed,
                              view.spend, view.saturated, view.end_cost_ms)

    def changed(self, gen: Generation) -> None:
        reply = gen.reply
        self.status.update_reply(reply)          # the last reply's final figures come after it ended
        chat = self.chat()
        running = reply.id in self.session.running
        # (a widget made later shows the status from the start; a reply's end, while it still runs, is shown by
        # ``ended`` once the end is painted: here it cost ~1 ms of the frame the end falls in, twice)
        widget = chat.existing_widget(reply) if self._shown(gen) and not (reply.status.final and running) else None
        if widget is not None:
            widget.update_status()
            chat.message_changed(reply)
        if not running:
            return
        if reply.status is MessageStatus.WAITING and self.session.scheduler.position() > 0:
            self.status.set_state(translate("MainWindow", "waiting for the model…"))
        elif reply.status is MessageStatus.PREFILL:
            self.status.set_state(translate("MainWindow", "reading the prompt…"))
        elif reply.status is MessageStatus.GENERATING:
            self.status.set_state(translate("MainWindow", "generating…"))
            self.coalescer.paint_soon(reply)     # the first chunk: painted in the next loop turn, not a tick later

    def stopping(self, gen: Generation) -> None:
        if not self.coalescer.stop(gen.reply):     # a burst not painted yet: shown as a finished reply once ended
            self._reshow_after_stop.add(gen.reply.id)

    def ended(self, gen: Generation) -> None:
        reply = gen.reply
        stopped = reply.status is MessageStatus.STOPPED
        if not self.session.running:
            self.status.set_state(translate("MainWindow", "ready"))
        self.status.show_reply(reply)
        if self._shown(gen):
            self.send_mode(self.session.generating)

        def paint_end() -> None:           # what is left, fed, and the end: the final render in one patch
            widget = self.chat().widget_for(reply) if self._shown(gen) else None
            if widget is not None and widget.view is not None:
                widget.view.finish()

        def shown() -> None:               # everything that arrived is painted: the view shows the final render
            chat = self.chat()
            widget = chat.widget_for(reply) if self._shown(gen) else None
            if widget is not None:
                if widget.view is not None and not stopped and not widget.view.renderer.finished:
                    widget.view.finish()
                widget.update_status()
                chat.message_changed(reply)
            decorated = chat.widget_for(reply)
            if decorated is not None:
                self.decorate(decorated)
            self.finished(reply)

        if stopped:
            self.coalescer.detach(reply)
            shown()
            if reply.id in self._reshow_after_stop:
                self._reshow_after_stop.discard(reply.id)
                self.chat().reshow(reply)          # its preview now, its render in idle slices
        else:
            self.coalescer.finish(reply, shown, paint_end)   # a backlog still to paint: in slices first

    def _on_painted(self, reply: Message, _n: int) -> None:
        gen = self.session.running.get(reply.id)
        if gen is not None:
            self.status.show_live(gen)
