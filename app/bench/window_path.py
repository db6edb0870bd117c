"""The app's own path for the streaming benchmarks: a shown, styled ``MainWindow``.

What a user sees of a reply is what went through the whole window: ``MainWindow.send`` → the chat session
(history in a SQLite file on disk, autosave, title, context meter) → ``generate`` (scheduler, the worker thread,
the bounded queue, the consumer on the qasync loop) → the window's ``Coalescer`` → the reply's ``MarkdownView`` in
the shown ``ChatView``, under the app's stylesheet, painted by Qt (offscreen unless a platform is set). A hidden,
unstyled view fed by the bench measured less than that: no stylesheet, no paint, no session work.

:class:`BenchWindow` is that window over one engine; :meth:`BenchWindow.reply` sends a prompt in a new chat and
waits until the window says the reply is finished (its last chunk painted); :meth:`BenchWindow.paint_foreign`
paints a message the bench streams itself (the painted raw loop) with the same tick into the same chat view.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.core.conversation import Message
from app.core.streaming.metrics import StreamMetrics, now
from app.core.types import GenerationParams

if TYPE_CHECKING:
    from app.core.streaming.generation import Generation
    from app.engine.base import Engine

#: The window's size in every bench (the render bench's too): a laptop's usual window.
WINDOW_SIZE = (1040, 760)


@contextlib.contextmanager
def bench_home() -> Iterator[Path]:
    """A temporary folder holding the window's data and config folders (``BROOK_DATA_DIR``,
    ``BROOK_CONFIG_DIR``), so a bench never touches the user's history or settings; both are restored after."""
    keys = ("BROOK_DATA_DIR", "BROOK_CONFIG_DIR")
    old = {k: os.environ.get(k) for k in keys}
    with tempfile.TemporaryDirectory(prefix="brook-bench-") as tmp:
        home = Path(tmp)
        os.environ["BROOK_DATA_DIR"] = str(home / "data")
        os.environ["BROOK_CONFIG_DIR"] = str(home / "config")
        try:
            yield home
        finally:
            for k, v in old.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v


@dataclass
class ReplyRun:
    """One reply through the window: the message, its generation's metrics (produced, dequeued and painted
    stamps, ``now()`` seconds) and the moment ``send`` was called."""

    reply: Message
    metrics: StreamMetrics
    generation: Generation
    t_call: float


class BenchWindow:
    """A shown, styled ``MainWindow`` over ``engine`` with its history in ``home/NAME.sqlite3``.

    Call :meth:`start` (loads the engine through the window, warms the lexers and the formula pool as after a
    real start), then :meth:`reply` as often as needed, and :meth:`close` at the end (the engine is unloaded
    with the window's shutdown)."""

    def __init__(self, engine: Engine, home: Path, name: str = "history") -> None:
        from PySide6.QtWidgets import QApplication

        from app.core.history.store import Store
        from app.ui.window.main_window import MainWindow

        app = QApplication.instance()
        assert isinstance(app, QApplication), "run inside app.bench._util.qt_loop()"
        app.setQuitOnLastWindowClosed(False)        # the bench closes its windows; the loop goes on
        self.store = Store(home / f"{name}.sqlite3")
        self.window = MainWindow(engine, store=self.store)
        self.window.resize(*WINDOW_SIZE)
        self.window.show()

    async def start(self) -> None:
        """Load the engine the way the window does (off the loop, with progress) and wait for the one-time
        warm-ups (lexers in their workers, matplotlib in the formula pool). Raises ``RuntimeError`` with the
        window's load error when the engine did not load."""
        window = self.window
        if not await window.load_model():
            raise RuntimeError(f"the bench window's engine did not load: {window.session.load_error}")
        lexers = getattr(window, "_lexers_warm", None)
        if lexers is not None:
            await lexers
        from app.core.render.math_render import default_math_pool

        default_math_pool().wait(120)
        await asyncio.sleep(0.1)

    def send(self, prompt: str, params: GenerationParams, *, new_chat: bool = True) -> ReplyRun:
        """Show a new chat (unless not ``new_chat``: the chat shown goes on) and send ``prompt`` in it (Enter);
        returns at once, the reply streaming."""
        window = self.window
        if new_chat:
            window.new_chat()                  # one reply per chat: the prompt is the same every time
        t_call = now()
        reply = window.send(prompt, params)
        assert reply is not None, "the window did not send (a reply was still streaming?)"
        gen = window.session.generation_of(reply)
        assert gen is not None
        return ReplyRun(reply, gen.metrics, gen, t_call)

    async def reply(self, prompt: str, params: GenerationParams, *, new_chat: bool = True) -> ReplyRun:
        """:meth:`send`, then wait until the window reports the reply finished (everything that arrived is
        painted: ``MainWindow.reply_finished``)."""
        done: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

        def finished(m: object) -> None:
            if not done.done():
                done.set_result(m)

        self.window.reply_finished.connect(finished)
        try:
            run = self.send(prompt, params, new_chat=new_chat)
            await done
        finally:
            self.window.reply_finished.disconnect(finished)
        return run

    def paint_foreign(self, reply: Message, metrics: StreamMetrics) -> Callable[[], None]:
        """Show ``reply`` (a message the bench fills itself) at the end of the chat view and paint it with the
        window's render tick, stamping ``metrics``; returns the call that detaches it."""
        window = self.window
        widget = window.chat.add(reply)
        view = widget.view
        assert view is not None
        window.coalescer.attach(reply, view.append_text, view.refresh, metrics)
        return lambda: window.coalescer.detach(reply)

    async def close(self) -> None:
        """Close the window, stop what runs, unload the engine, close the history file."""
        window = self.window
        window.close()
        await window.shutdown()
        window.deleteLater()
        self.store.close()
        await asyncio.sleep(0.05)
