"""The context meter in the status bar: tokens the chat (plus the message being typed) will use / the context
window, with a warning before it overflows and a note when old messages are left out.

Counting runs the loaded model's tokenizer over the exact prompt (``app.core.context_meter.measure``) in a worker
thread, debounced while typing (``DEBOUNCE_MS``), so a long chat never blocks the window. Engines without a
tokenizer (the scripted one) show nothing.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QLabel, QWidget

from app.core.context_meter import ContextUsage, measure

log = logging.getLogger("brook.ui.context")
DEBOUNCE_MS = 300


class ContextMeter(QLabel):
    """``schedule()`` after anything that changes the prompt (typing, a reply, another chat, another model)."""

    def __init__(self, window: Any, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("contextMeter")
        self.w = window
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
        engine = self.w.engine
        if not hasattr(engine, "prompt_tokens") or not getattr(engine, "loaded", False):
            self.hide()
            return
        if self._task is not None and not self._task.done():
            self._again = True                      # count again when this one is done
            return
        conv, draft = self.w.conversation, self.w.input.toPlainText()
        params = self.w.settings.generation
        loop = asyncio.get_event_loop()
        self._task = loop.run_in_executor(None, measure, engine, conv, draft, params)
        self._task.add_done_callback(self._done)

    def _done(self, fut: asyncio.Future[Any]) -> None:
        try:
            usage = fut.result()
        except Exception as exc:        # the model was unloaded meanwhile, or a tokenizer error: show nothing
            log.debug("context meter: %s", exc)
            self.hide()
            return
        self.show_usage(usage)
        if self._again:
            self._again = False
            self.schedule()

    def show_usage(self, usage: ContextUsage) -> None:
        self.usage = usage
        text = self.tr("context %1 / %2").replace("%1", f"{usage.used:,}").replace("%2", f"{usage.window:,}")
        tip = self.tr("Tokens this chat sends to the model (with what you are typing) out of its context window "
                      "of %1 tokens; %2 more are kept free for the reply.") \
            .replace("%1", f"{usage.window:,}").replace("%2", f"{usage.reserve:,}")
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
