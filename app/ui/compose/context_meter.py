"""The context meter in the status bar: tokens the chat (plus the message being typed) will use / the context
window, with a warning before it overflows and a note when old messages are left out.

Counting runs the loaded model's tokenizer over the exact prompt (``app.core.chat.context_meter.measure``) in a worker
thread, debounced while typing (``DEBOUNCE_MS``), so a long chat never blocks the window. A remote server counts
with its own tokenizer where it has one, else the count is an estimate shown with "≈" (``app.engine.remote.tokens``);
it is asked only between replies. Engines without a tokenizer (the scripted one) show nothing.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QLabel, QWidget

from app.core.chat.context_meter import ContextUsage, measure
from app.core.chat.session import ChatSession
from app.core.conversation import Conversation
from app.core.types import GenerationParams
from app.engine.base import Engine

log = logging.getLogger("brook.ui.context")
DEBOUNCE_MS = 300


class ContextMeter(QLabel):
    """``schedule()`` after anything that changes the prompt (typing, a reply, another chat, another model).

    Args:
        session: the chat session whose engine, shown chat and settings are counted.
        draft: the text being typed (counted with the chat).
    """

    def __init__(self, session: ChatSession, draft: Callable[[], str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("contextMeter")
        self.session = session
        self.draft = draft
        self.usage: ContextUsage | None = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DEBOUNCE_MS)
        self._timer.timeout.connect(self._start)
        self._task: asyncio.Future[Any] | None = None
        self._again = False
        self.hide()

    def schedule(self) -> None:
        self._timer.start()

    def _start(self) -> None:
        engine = self.session.engine
        countable = hasattr(engine, "prompt_tokens") or hasattr(engine, "count_prompt")   # a model or a server
        if not countable or not getattr(engine, "loaded", False):
            self.hide()
            return
        if self._task is not None and not self._task.done():
            self._again = True                      # count again when this one is done
            return
        conv, draft = self.session.conversation, self.draft()
        params = self.session.settings.generation
        if hasattr(engine, "count_prompt"):
            self._task = asyncio.ensure_future(self._count_on_server(engine, conv, draft, params))
        else:
            self._task = asyncio.get_event_loop().run_in_executor(None, measure, engine, conv, draft, params)
        self._task.add_done_callback(self._done)

    async def _count_on_server(self, engine: Engine, conv: Conversation, draft: str,
                               params: GenerationParams) -> ContextUsage | None:
        """Count on a remote server only while no reply runs there, holding the engine's scheduler slot:
        llama_cpp.server ends a streaming reply when another request comes in (its ``interrupt_requests``), so
        the meter's tokenizer request must never overlap a reply. None: a reply is running (counted after it)."""
        scheduler = self.session.scheduler
        if scheduler.would_wait():
            return None
        slot = await scheduler.acquire()
        try:
            return await asyncio.get_running_loop().run_in_executor(None, measure, engine, conv, draft, params)
        finally:
            slot.release()

    def _done(self, fut: asyncio.Future[Any]) -> None:
        try:
            usage = fut.result()
        except Exception as exc:        # the model was unloaded meanwhile, or a tokenizer error: show nothing
            log.debug("context meter: %s", exc)
            self.hide()
            return
        if usage is not None:
            self.show_usage(usage)
        if self._again:
            self._again = False
            self.schedule()

    def show_usage(self, usage: ContextUsage) -> None:
        self.usage = usage
        used = ("≈" if usage.estimate else "") + f"{usage.used:,}"
        if usage.window:
            text = self.tr("context %1 / %2").replace("%1", used).replace("%2", f"{usage.window:,}")
            tip = self.tr("Tokens this chat sends to the model (with what you are typing) out of its context "
                          "window of %1 tokens; %2 more are kept free for the reply.") \
                .replace("%1", f"{usage.window:,}").replace("%2", f"{usage.reserve:,}")
        else:
            text = self.tr("context %1 tokens").replace("%1", used)
            tip = self.tr("Tokens this chat sends to the model (with what you are typing). The server does not say "
                          "how large its context window is.")
        if usage.source == "estimate":
            tip += "\n" + self.tr("≈ An estimate from the text's length: this server cannot count tokens.")
        elif usage.estimate:
            tip += "\n" + self.tr("≈ Counted with the server's tokenizer; the few tokens its chat template adds "
                                   "are estimated.")
        if usage.left_out:
            text += " · " + self.tr("%n old message(s) left out", "", usage.left_out)
            tip += "\n" + self.tr("The oldest messages no longer fit and are not sent. Start a new chat, or raise "
                                  "the context window in Settings.")
        elif usage.warning:
            text += " · " + self.tr("almost full")
        self.setText(text)
        self.setToolTip(tip)
        self.setProperty("warning", usage.warning)
        self.setStyleSheet("color: #b45309; font-weight: bold;" if usage.warning else "")
        self.show()
