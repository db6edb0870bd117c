"""The engine side of a chat session (no Qt): load the model in a worker thread, unload it, cancel a load, open
another model file, switch engines so that a model that fails to load never leaves the window without one.

``ModelLoading`` is ``ChatSession``'s base class (``app.core.chat.session``): the session owns the attributes
named below and gives the three hooks at the end; the methods here are the session's own (``session.load()``,
``session.switch_engine(new)``), so a caller never sees the split.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from app.core.chat.listener import ModelState, NoticeKind, SessionListener
from app.core.errors import BrookError, LoadCancelled
from app.core.settings import AppSettings
from app.core.streaming.scheduler import FairScheduler, scheduler_for
from app.core.text import QT_TRANSLATE_NOOP

if TYPE_CHECKING:
    from app.engine.base import Engine

log = logging.getLogger("brook.session")
#: Notices after a model switch that did not happen (English; the window translates them: ``Notes`` context).
KEPT_CANCELLED = QT_TRANSLATE_NOOP("Notes", "Kept %1: loading %2 was cancelled.")
KEPT_FAILED = QT_TRANSLATE_NOOP("Notes", "Kept %1: the other model could not be loaded (%2).")


class ModelLoading:
    """The session's engine and its state: ``engine`` / ``scheduler`` (the model and its fair scheduler),
    ``model_state`` (``load_error`` says why an ``ERROR``), ``loading`` (the load in progress), ``load_cancel``
    (set by ``cancel_load``; a new event per load), ``_loaded`` (set while replies may run on the engine);
    ``opener(path) -> Engine`` builds an engine for "Open model" (None: this session cannot open others)."""

    engine: Engine
    scheduler: FairScheduler
    settings: AppSettings
    listener: SessionListener
    opener: Callable[[str], Engine] | None
    model_state: ModelState
    load_error: str | None
    loading: asyncio.Future[None] | None
    load_cancel: threading.Event
    _loaded: asyncio.Event

    # -- loading -----------------------------------------------------------------------------------------
    async def load(self, *, say_cancel: bool = True) -> bool:
        """Load ``engine`` in a worker thread (the loop keeps running). Returns success; on failure
        ``model_state`` is ``ERROR``, ``load_error`` says why and the view gets a notice (a cancelled load
        only when ``say_cancel``). ``cancel_load()`` cancels it."""
        self._set_model_state(ModelState.LOADING)
        loop = asyncio.get_running_loop()
        listener = self.listener
        cancel = self.load_cancel = threading.Event()
        name = self.engine.name

        def progress(fraction: float) -> None:
            if cancel.is_set():
                raise LoadCancelled(name)
            with contextlib.suppress(RuntimeError):      # the loop closed while loading
                loop.call_soon_threadsafe(listener.load_progress, fraction)

        loading = self.loading = loop.run_in_executor(None, self.engine.load, progress)
        try:
            await loading
        except Exception as exc:
            self.load_error = str(exc)
            if cancel.is_set() and not isinstance(exc, LoadCancelled):   # it ended otherwise, after the Cancel
                exc = LoadCancelled(name)
                self.load_error = str(exc)
            if isinstance(exc, LoadCancelled):
                log.info("%s", exc)
            else:
                log.error("model load failed: %s", exc, exc_info=not isinstance(exc, BrookError))
            self._set_model_state(ModelState.ERROR)
            if say_cancel or not isinstance(exc, LoadCancelled):
                self.listener.notice(f"⚠ {exc}", NoticeKind.ERROR)
            return False
        if cancel.is_set():        # Cancel came after the engine's last progress report: free it again
            await loop.run_in_executor(None, self.engine.unload)
            self.load_error = str(LoadCancelled(name))
            self._set_model_state(ModelState.ERROR)
            if say_cancel:
                self.listener.notice(f"⚠ {self.load_error}", NoticeKind.ERROR)
            return False
        self.load_error = None
        self._set_model_state(ModelState.IDLE)
        self._loaded.set()
        return True

    async def unload(self) -> None:
        """Free the engine's memory (weights and KV cache) once every reply's worker has ended; ``model_state``
        becomes ``UNLOADED`` and the next reply waits for ``load()`` (idle unload, File → Models → Unload).
        Call ``stop_all()`` first to end running replies; this waits for their workers, it does not stop them."""
        await self._workers_closed()
        self._loaded.clear()
        await asyncio.get_running_loop().run_in_executor(None, self.engine.unload)
        self._set_model_state(ModelState.UNLOADED)

    def cancel_load(self) -> bool:
        """Cancel the model load in progress (thread-safe): the engine stops at its next progress report and
        frees what it loaded; ``switch_engine`` then loads the previous model again. False when nothing loads."""
        if self.model_state is not ModelState.LOADING or self.load_cancel.is_set():
            return False
        self.load_cancel.set()
        return True

    async def open_model(self, path: str) -> bool:
        """Open the GGUF at ``path`` instead of the current model (see ``switch_engine``). A file that cannot be
        opened is refused with a notice before anything is unloaded. On success the path is remembered."""
        try:
            new = self._open(path)
        except BrookError as exc:
            self.listener.notice(f"⚠ {exc}", NoticeKind.ERROR)
            return False
        if not await self.switch_engine(new):
            return False
        self.settings.model_path = path
        self.settings.recent_models = [path, *[p for p in self.settings.recent_models if p != path]][:10]
        self.save_settings()
        return True

    async def switch_engine(self, new: Engine) -> bool:
        """Replace the engine by ``new``: stop every reply, wait for their workers, unload the old model, load
        ``new``. If ``new`` fails to load, the old model is loaded again (with a notice), so a bad file never
        leaves the session without a model. Returns True when ``new`` is in use."""
        self.stop_all()
        old = self.engine
        self._loaded.clear()
        await self._workers_closed()          # the old model's workers end before it is freed
        await asyncio.get_running_loop().run_in_executor(None, old.unload)
        self._set_engine(new)
        if await self.load(say_cancel=False):
            return True
        failed = self.load_error
        cancelled = self.load_cancel.is_set()
        self._set_engine(old)
        if await self.load():
            said = KEPT_CANCELLED if cancelled else KEPT_FAILED
            self.listener.notice(said.replace("%1", old.name).replace("%2", new.name if cancelled else str(failed)),
                                 NoticeKind.INFO)
        return False

    def _open(self, path: str) -> Engine:
        if self.opener is None:
            raise BrookError("This window cannot open other models.")
        return self.opener(path)

    def _set_engine(self, engine: Engine) -> None:
        self.engine = engine
        self.scheduler = scheduler_for(engine)

    def _set_model_state(self, state: ModelState) -> None:
        self.model_state = state
        self.listener.model_state_changed(state)

    # -- the session's hooks -----------------------------------------------------------------------------
    def stop_all(self) -> None:
        """Stop every running reply (``ChatSession.stop_all``)."""
        raise NotImplementedError

    def save_settings(self) -> None:
        """Write the settings (``ChatSession.save_settings``)."""
        raise NotImplementedError

    async def _workers_closed(self) -> None:
        """Return once no reply's worker thread calls the engine any more (``ChatSession._workers_closed``)."""
        raise NotImplementedError
