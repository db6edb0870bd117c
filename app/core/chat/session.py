"""The chat session: one object that owns the life of the conversations in a window (no Qt).

It sends, stops, deletes, switches conversation, saves (autosave while a reply streams) and titles new chats;
loading and switching the engine is its base class's job (``app.core.chat.model_loading``). Each running reply is
one ``Generation`` (its task, token stream, metrics and id). A reply keeps generating when another conversation is
shown; the session keeps that conversation in memory until the reply ends, so coming back shows it whole.

The window is a view: it tells the session what the user did and draws what the session reports through a
``SessionListener`` (every method a no-op by default; it and the enums ``ModelState`` and ``NoticeKind`` live in
``app.core.chat.listener`` and are named here too). All methods run on the event loop's thread.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.core.chat.listener import ModelState, NoticeKind, SessionListener
from app.core.chat.model_loading import ModelLoading
from app.core.chat.presets import chat_params, new_chat
from app.core.conversation import Conversation, Message, MessageStatus, Role
from app.core.errors import BrookError
from app.core.history.store import Store
from app.core.history.timeline_writer import TimelineWriter
from app.core.model_settings import ModelSettings, ModelSettingsStore
from app.core.settings import AppSettings
from app.core.streaming.generation import (
    Generation,
    StreamSettings,
    ask_now,
    generate,
    let_go_unclaimed,
    mark_stopped,
)
from app.core.streaming.generation import shutdown as shutdown_generations
from app.core.streaming.scheduler import scheduler_for
from app.core.types import GenerationParams

if TYPE_CHECKING:
    from app.engine.base import Engine

log = logging.getLogger("brook.session")

#: Longest title made from a chat's first message (characters; an ellipsis marks the cut).
TITLE_CHARS = 60


@dataclass(eq=False)
class ReplyRun:
    """One generation of a reply as the session tracks it, from ``start_reply`` until its task and worker have
    both returned.

    ``ended``: the reply reached its final status and was saved (once, ``ChatSession._finish``). A stopped
    reply's worker may still be returning from its last engine call: the run is kept (``switch_engine`` and
    ``shutdown`` wait for it, ``generation_of`` still finds it) until it is ``settled``."""

    gen: Generation
    ended: bool = False

    @property
    def settled(self) -> bool:
        """Ended, and neither its task nor its worker thread runs any more."""
        g = self.gen
        return self.ended and not g.worker_alive and (g.task is None or g.task.done())


class ChatSession(ModelLoading):
    """Conversations, their replies and the engine they run on.

    - ``engine`` / ``scheduler``: the model and its fair scheduler (shared per engine), loaded, unloaded and
      switched by the base class (``app.core.chat.model_loading.ModelLoading``);
    - ``conversation``: the one shown; ``running`` maps reply id → its ``Generation`` while it generates (a
      view of the session's one list of ``ReplyRun`` records; a conversation with a running reply stays in
      memory through its run, so coming back to it shows the live reply);
    - ``store``: the SQLite history (``None``: nothing is saved, e.g. embedded windows and tests);
    - ``opener(path) -> Engine``: builds an engine for "Open model" (the app passes ``app.engine.open``'s
      ``open_engine`` with its options); it raises ``BrookError`` for a file that is not a GGUF.
    """

    #: While a reply streams, its partial text is saved this often (seconds): a crash loses at most this much.
    AUTOSAVE_S = 1.0

    def __init__(self, engine: Engine, settings: AppSettings | None = None, store: Store | None = None, *,
                 listener: SessionListener | None = None,
                 opener: Callable[[str], Engine] | None = None) -> None:
        self.engine = engine
        self.scheduler = scheduler_for(engine)
        self.settings = settings or AppSettings()
        self.store = store
        self.listener = listener or SessionListener()
        if store is not None:     # damage found later in the session was repaired: say so, show the new list
            store.on_problem = self._history_repaired
        self.opener = opener
        self._timelines = TimelineWriter(store) if store is not None else None
        self.conversation = self._new_conversation()
        self._runs: list[ReplyRun] = []        # every reply generating, or ended with its worker still returning
        self.model_state = ModelState.LOADING
        self.load_error: str | None = None
        self._loaded = asyncio.Event()
        self.loading: asyncio.Future[None] | None = None
        self.load_cancel = threading.Event()       # set by ``cancel_load``; a new one per load
        self.closing = False
        self._autosave: asyncio.TimerHandle | None = None
        self._save_warned = False

    # -- state -------------------------------------------------------------------------------------------
    @property
    def params(self) -> GenerationParams:
        return self.settings.generation

    @property
    def running(self) -> dict[int, Generation]:
        """Reply id → its ``Generation``, for every reply still generating (not yet ended)."""
        return {r.gen.reply.id: r.gen for r in self._runs if not r.ended}

    def _run_of(self, gen: Generation) -> ReplyRun | None:
        return next((r for r in self._runs if r.gen is gen), None)

    def _is_running(self, gen: Generation) -> bool:
        run = self._run_of(gen)
        return run is not None and not run.ended

    def _live_conversation(self, conv_id: int) -> Conversation | None:
        """The in-memory conversation ``conv_id`` while a reply of it generates."""
        return next((r.gen.conversation for r in self._runs
                     if not r.ended and r.gen.conversation.id == conv_id), None)

    def generations_in(self, conv: Conversation) -> list[Generation]:
        """The running generations of ``conv``."""
        return [r.gen for r in self._runs if not r.ended and r.gen.conversation is conv]

    @property
    def generating(self) -> bool:
        """True while the shown conversation has a reply generating (Send is then Stop)."""
        return bool(self.generations_in(self.conversation))

    def busy_conversations(self) -> set[int]:
        """Ids of saved conversations with a reply generating (the sidebar marks them)."""
        return {r.gen.conversation.id for r in self._runs if not r.ended and r.gen.conversation.id is not None}

    def generation_of(self, reply: Message) -> Generation | None:
        """The latest generation of ``reply`` while it runs or its worker is still finishing, else None."""
        for r in reversed(self._runs):
            if r.gen.reply is reply:
                return r.gen
        return None

    # -- conversations -----------------------------------------------------------------------------------
    def _new_conversation(self) -> Conversation:
        """An empty chat with the settings' preset and default system prompt as its own (``app.core.chat.presets``)."""
        return new_chat(self.settings.preset, self.settings.system_prompt, self.settings.generation)

    def new_chat(self) -> Conversation:
        """Show a new, empty conversation. Replies of the previous one keep generating."""
        self._show(self._new_conversation())
        return self.conversation

    def open_conversation(self, conv_id: int) -> Conversation | None:
        """Show saved conversation ``conv_id`` (the in-memory one when a reply of it is generating). Returns it,
        or None when it no longer exists. Replies of the previous conversation keep generating."""
        if self.conversation.id == conv_id:
            return self.conversation
        conv = self._live_conversation(conv_id)
        if conv is None:
            if self.store is None:
                return None
            try:
                conv = self.store.load_conversation(conv_id)
            except KeyError:
                self.listener.history_changed()
                return None
            except BrookError as exc:          # HistoryError: the file cannot be read
                self.listener.notice(f"⚠ {exc}", NoticeKind.ERROR)
                return None
        self._show(conv)
        return conv

    def _history_repaired(self, problem: str) -> None:
        self.listener.notice(f"⚠ {problem}", NoticeKind.ERROR)
        self.listener.history_changed()

    def _show(self, conv: Conversation) -> None:
        self.conversation = conv
        self.listener.conversation_shown(conv)

    def delete_conversation(self, conv_id: int) -> Conversation | None:
        """Delete saved conversation ``conv_id`` (its running replies are stopped first). Returns the deleted
        conversation with its messages, for ``restore_conversation`` (undo), or None if there was none."""
        if self.store is None:
            return None
        conv = self._live_conversation(conv_id)
        if conv is None:
            if self.conversation.id == conv_id:
                conv = self.conversation
            else:
                try:
                    conv = self.store.load_conversation(conv_id)
                except KeyError:
                    return None
        for g in self.generations_in(conv):
            self._stop(g)
        try:
            self.store.delete_conversation(conv_id)
        except BrookError as exc:
            self.listener.notice(f"⚠ {exc}", NoticeKind.ERROR)
            return None
        if self.conversation is conv:
            self.new_chat()
        self.listener.history_changed()
        return conv

    def restore_conversation(self, conv: Conversation) -> None:
        """Save ``conv`` (as returned by ``delete_conversation``) again, with all its messages, and show it."""
        if self.store is None:
            return
        conv.id = None
        for m in conv.messages:
            m.db_id = None
        try:
            self.store.create_conversation(conv)
            for m in conv.messages:
                self.store.save_message(conv, m)
        except Exception as exc:
            self._save_failed(exc)
        self.listener.history_changed()
        self._show(conv)

    def rename_conversation(self, conv_id: int, title: str) -> None:
        if self.store is not None:
            try:
                self.store.rename_conversation(conv_id, title)
            except BrookError as exc:
                self.listener.notice(f"⚠ {exc}", NoticeKind.ERROR)
                return
            if self.conversation.id == conv_id:
                self.conversation.title = title
            self.listener.history_changed()

    # -- sending -----------------------------------------------------------------------------------------
    def can_send(self) -> bool:
        return not self.closing and not self.generating and self.model_state is not ModelState.ERROR

    def send(self, text: str, params: GenerationParams | None = None) -> Message | None:
        """Add ``text`` as a user message to the shown conversation and start the reply. Returns the reply, or
        None when ``text`` is blank, the shown conversation already has a reply generating, the session is
        closing, or no model is loaded (a notice then says why)."""
        if not text.strip() or self.closing or self.generating:
            return None
        if self.model_state is ModelState.ERROR:
            self.listener.notice("⚠ No model is loaded (the reason is above). Open a model with File → Open model "
                                 "(Ctrl+O).", NoticeKind.ERROR)
            return None
        conv = self.conversation
        user = conv.add(Message(Role.USER, text))
        return self.start_reply(conv, params=params, user=user).reply

    def model_settings(self) -> ModelSettings | None:
        """The loaded model file's own settings (``app.core.model_settings``; None for an engine without a file)."""
        path = getattr(self.engine, "model_path", None)
        return ModelSettingsStore().get(path) if path else None

    def start_reply(self, conv: Conversation, reply: Message | None = None,
                    params: GenerationParams | None = None, *, user: Message | None = None) -> Generation:
        """Start generating ``reply`` (default: a new assistant message appended to ``conv``) and return its
        ``Generation``. The hook for every way of asking the model (send, regenerate, continue).

        The model is asked first (``ask_now``: its prefill runs while the window adds the messages' widgets and
        saves them); then ``user`` (a user message just added to ``conv``, if any) and a new reply are announced
        to the listener and saved."""
        new = reply is None
        if reply is None:
            reply = conv.add(Message(Role.ASSISTANT, status=MessageStatus.WAITING))
            reply.model = self.engine.name
        else:
            reply.status = MessageStatus.WAITING
        gen = Generation(reply, conv)
        params = params or chat_params(conv, self.params, self.model_settings())
        if self._loaded.is_set():
            ask_now(self.engine, self.scheduler, gen, params, settings=self._stream_settings(),
                    on_update=lambda _m: self._on_update(gen))
        if user is not None:
            self.listener.message_added(conv, user)
            self._save(conv, user)
        if new:
            self.listener.message_added(conv, reply)
        self._save(conv, reply)
        self._runs = [r for r in self._runs if not r.settled]
        self._runs.append(ReplyRun(gen))
        gen.task = asyncio.ensure_future(self._run(gen, params))
        gen.task.add_done_callback(lambda _t: let_go_unclaimed(gen))
        self.listener.reply_started(gen)
        self.listener.busy_changed()
        self._schedule_autosave()
        return gen

    def _stream_settings(self) -> StreamSettings:
        return StreamSettings(first_token_timeout_s=self.settings.first_token_timeout_s,
                              total_timeout_s=self.settings.total_timeout_s)

    async def _run(self, gen: Generation, params: GenerationParams) -> Message:
        settings = self._stream_settings()
        if not self._loaded.is_set():
            await self._loaded.wait()
        await generate(self.engine, self.scheduler, gen.conversation, gen.reply, params, settings=settings,
                       on_update=lambda _m: self._on_update(gen), generation=gen)   # takes over what ask_now asked
        return gen.reply

    def _on_update(self, gen: Generation) -> None:
        self.listener.reply_changed(gen)
        if not gen.reply.status.final:
            if gen.reply.status is MessageStatus.GENERATING and gen.saved_chunks < 0 and self.store is not None:
                gen.saved_chunks = 0         # the first chunk is saved at once (the next loop turn: appended
                asyncio.get_running_loop().call_soon(self._save_first, gen)   # by then), not 1 s later
            return
        if self._is_running(gen):
            self._finish(gen)
        elif any(m is gen.reply for m in gen.conversation.messages):   # final figures, unless it was deleted
            self._save(gen.conversation, gen.reply, behind=True)
        else:
            return
        if gen.metrics.final:                 # notified once with final figures (app.core.streaming.generation)
            self._save_timeline(gen)

    # -- stopping ----------------------------------------------------------------------------------------
    def stop(self) -> None:
        """Stop the shown conversation's replies now (Esc). The session is idle at once; each worker ends in the
        background and frees the model when it returns."""
        for g in self.generations_in(self.conversation):
            self._stop(g)

    def stop_all(self) -> None:
        """Stop every running reply, in every conversation."""
        for g in list(self.running.values()):
            self._stop(g)

    async def _workers_closed(self) -> None:
        """Return once every reply's worker thread has returned (stopped replies' too): the engine is free."""
        for r in list(self._runs):
            if r.gen.stream is not None:
                await r.gen.stream.wait_closed()

    def _stop(self, gen: Generation) -> None:
        if gen.task is None or gen.task.done() or gen.reply.status.final:
            return
        if gen.stream is not None:    # the worker, and the model's process, hear it first: the model stops while
            gen.stream.request_stop()  # the window paints what arrived and the reply is saved (~10 ms of work)
        self.listener.reply_stopping(gen)              # paint what arrived, then nothing more
        gen.painted_at_stop = len(gen.metrics.painted)
        gen.task.cancel()
        mark_stopped(gen.reply)
        self._finish(gen)

    def _finish(self, gen: Generation) -> None:
        """Once per generation: save the final reply and tell the view."""
        run = self._run_of(gen)
        if run is None or run.ended:
            return
        run.ended = True
        conv = gen.conversation
        self._save(conv, gen.reply, behind=True)
        if not self.running and self._autosave is not None:
            self._autosave.cancel()
            self._autosave = None
        self.listener.reply_ended(gen)
        self.listener.busy_changed()

    # -- saving ------------------------------------------------------------------------------------------
    def _save(self, conv: Conversation, msg: Message, behind: bool = False) -> None:
        """Save ``msg`` of ``conv``; ``behind``: a reply's save while it streams or as it ends, written on the
        history's writer thread (the end's save indexes the whole text for search: 27-83 ms for 1 MB, which on
        the loop fell in the reply's last frame); a write that fails there is redone here."""
        if self.store is None:
            return
        redo: Callable[[BaseException], None] | None = None
        if behind:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                pass
            else:
                def redo(_exc: BaseException) -> None:
                    loop.call_soon_threadsafe(self._save, conv, msg)
        try:
            new = conv.id is None
            if new:
                conv.title = title_for(msg.text)
            self.store.save_message(conv, msg, behind=redo)
            if new:
                self.listener.history_changed()
        except Exception as exc:  # the chat goes on even when the disk is full
            self._save_failed(exc)

    def _save_first(self, gen: Generation) -> None:
        """A reply's first chunk, saved as soon as it arrived: a crash in the reply's first second keeps it."""
        if self._is_running(gen) and gen.saved_chunks != gen.reply.chunks:
            gen.saved_chunks = gen.reply.chunks
            self._save(gen.conversation, gen.reply)

    def _save_timeline(self, gen: Generation) -> None:
        """When a reply's figures are final (finished or stopped, every chunk painted; ``generate`` notifies that
        once): its stream timeline into the history, encoded off the loop (``app.core.history.timeline_writer``)."""
        if self._timelines is not None:
            self._timelines.save(gen)

    def _save_failed(self, exc: BaseException) -> None:
        log.error("saving the history failed: %s", exc)
        if not self._save_warned:
            self._save_warned = True
            self.listener.notice(f"⚠ This chat can't be saved to the history ({exc}); it stays on screen until "
                                 "you close Brook.", NoticeKind.ERROR)

    def _schedule_autosave(self) -> None:
        if self._autosave is None and self.store is not None:
            self._autosave = asyncio.get_event_loop().call_later(self.AUTOSAVE_S, self.autosave)

    def autosave(self) -> None:
        """Save the partial text of every running reply that grew since its last save."""
        self._autosave = None
        for g in list(self.running.values()):
            if g.saved_chunks != g.reply.chunks:
                g.saved_chunks = g.reply.chunks
                self._save(g.conversation, g.reply, behind=True)
        if self.running:
            self._schedule_autosave()

    def save_settings(self) -> None:
        """Write the settings (only for a session with a history: tests leave the user's settings alone)."""
        if self.store is None:
            return
        try:
            self.settings.save()
        except BrookError as exc:             # SettingsError: a read-only or missing config folder, a full disk
            self.listener.notice(f"⚠ {exc}", NoticeKind.ERROR)
        except OSError as exc:
            log.error("saving settings failed: %s", exc)
            self.listener.notice(f"⚠ Settings could not be saved ({exc}).", NoticeKind.ERROR)

    # -- closing -----------------------------------------------------------------------------------------
    async def shutdown(self, join_timeout_s: float = 1.5) -> None:
        """Closing: stop every reply (saved as stopped), wait (at most ``join_timeout_s``, without blocking the
        loop) for the workers, then free the model. Safe to call twice."""
        self.closing = True
        self.stop_all()
        tasks = [r.gen.task for r in self._runs if r.gen.task is not None and not r.gen.task.done()]
        await shutdown_generations(tasks, [self.engine], join_timeout_s=join_timeout_s)
        if self._timelines is not None:
            await self._timelines.drain()        # the last replies' timelines are written before closing


def title_for(text: str) -> str:
    """A chat's title from its first message: the first non-blank line, at most ``TITLE_CHARS`` characters."""
    first = text.strip().splitlines()[0] if text.strip() else "New chat"
    return first[:TITLE_CHARS] + ("…" if len(first) > TITLE_CHARS else "")
