"""Messages and conversations: the model of truth (no Qt).

An assistant ``Message`` grows by ``append`` (O(1) per chunk: pieces are kept in a list, joined lazily) and
the render tick takes what arrived since the last tick with ``take_new`` (O(new text)).
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from app.core.text import valid_text


class Role(StrEnum):
    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"


class MessageStatus(StrEnum):
    """Life of a reply. Final states: DONE, STOPPED, TIMED_OUT, ERROR."""

    WAITING = "waiting"        # in line for the model
    PREFILL = "prefill"        # the model is reading the prompt (no token yet)
    GENERATING = "generating"  # decode: tokens are arriving
    DONE = "done"
    STOPPED = "stopped"
    TIMED_OUT = "timed out"
    ERROR = "error"

    @property
    def final(self) -> bool:
        return self in (MessageStatus.DONE, MessageStatus.STOPPED, MessageStatus.TIMED_OUT, MessageStatus.ERROR)


_ids = itertools.count(1)


@dataclass(eq=False)
class Message:
    """One chat message, plain data. For assistant replies also the provenance: model, params, timings
    (``metrics``, the ``ReplySummary`` as a dict), stop reason. What runs while a reply is generated (its task,
    token stream, live metrics) lives in ``app.core.streaming.generation.Generation``, not here."""

    role: Role
    content: str = ""
    status: MessageStatus = MessageStatus.DONE
    id: int = field(default_factory=lambda: next(_ids))
    created: float = field(default_factory=time.time)
    generation_id: int | None = None
    model: str | None = None
    params: dict[str, Any] | None = None
    stop_reason: str | None = None     # "stop" | "length" | "user" | "timeout" | "error"
    error: str | None = None
    metrics: dict[str, Any] | None = None
    provenance: dict[str, Any] | None = None   # model file, size, SHA-256, chat template: streaming.provenance
    versions: list[dict[str, Any]] | None = None   # a reply's other versions (app.core.chat.versions)
    version_index: int = 0                     # the shown version's place among all versions
    chunks: int = 0
    _parts: list[str] = field(default_factory=list, repr=False)
    _taken: int = 0                    # parts already handed to the renderer
    _taken_chunks: int = 0
    _joined: tuple[int, str] = field(default=(-1, ""), repr=False)
    db_id: int | None = field(default=None, repr=False)     # row id in the history database
    left_out: int = 0                  # older messages left out of this reply's prompt (context window)

    def __post_init__(self) -> None:
        self.content = valid_text(self.content)      # the boundary: typed, pasted, imported or loaded text
        if not self.left_out and isinstance(self.metrics, dict):
            self.left_out = int(self.metrics.get("left_out") or 0)
        if self.content:
            self._parts.append(self.content)
            self._taken = 1

    @classmethod
    def decoded(cls, role: Role, text: str, **fields: Any) -> Message:
        """A message whose ``text`` was just decoded from UTF-8 (a row of the history: SQLite's decoder, or
        U+FFFD for bad bytes). Such text cannot hold a lone surrogate, so ``valid_text``'s O(len) check is skipped
        (~6 ms of opening a 1,000-pair chat of 2-8 KB replies). ``fields``: as the constructor's."""
        m = cls(role, "", **fields)
        m.content = text
        if text:
            m._parts.append(text)
            m._taken = 1
        return m

    def stored_shape(self) -> tuple[int, int] | None:
        """``(characters, line ends)`` of a saved message's text not read yet (``app.core.history.lazy``), without
        reading it; None for a message in memory (its ``text`` is there)."""
        return None

    # streaming -----------------------------------------------------------------------------------------
    def append(self, text: str, generation_id: int | None = None) -> bool:
        """Add a chunk of text. Chunks tagged with another generation's id are dropped (returns False)."""
        if generation_id is not None and generation_id != self.generation_id:
            return False
        self.chunks += 1
        if text:
            self._parts.append(text)
        return True

    def take_new(self) -> tuple[str, int]:
        """Text and number of chunks appended since the last call (for the render tick)."""
        new_parts = self._parts[self._taken:]
        self._taken = len(self._parts)
        n = self.chunks - self._taken_chunks
        self._taken_chunks = self.chunks
        return "".join(new_parts), n

    @property
    def pending(self) -> bool:
        """True when text arrived that the renderer has not taken yet."""
        return self._taken < len(self._parts)

    @property
    def text(self) -> str:
        """The whole text so far (joined once per change, not per chunk)."""
        n = len(self._parts)
        if self._joined[0] != n:
            self._joined = (n, "".join(self._parts))
        return self._joined[1]

    def set_text(self, text: str) -> None:
        """Replace the text (loading from history, editing); the renderer takes it as new."""
        text = valid_text(text)
        self._parts = [text] if text else []
        self._taken = 0
        self._joined = (-1, "")
        self.chunks = 0
        self._taken_chunks = 0


@dataclass(eq=False)
class Conversation:
    """An ordered list of messages with an optional system prompt."""

    title: str = "New chat"
    messages: list[Message] = field(default_factory=list)
    system_prompt: str | None = None
    id: int | None = None
    preset: str | None = None                  # name of the chat's sampling preset (app.core.chat.presets)
    params: dict[str, Any] | None = None       # the chat's own sampling parameters (GenerationParams fields)

    def add(self, message: Message) -> Message:
        self.messages.append(message)
        return message

    def prompt_messages(self, upto: Message | None = None) -> list[dict[str, str]]:
        """The chat history to send to the model, in OpenAI's shape; stops before ``upto``.

        The result is always a valid alternation for a strict chat template (Mistral, Gemma: "roles must
        alternate"), whatever was stopped, failed, deleted or edited: an optional system message, then user,
        assistant, user, …, ending with a user message when ``upto`` is given (or when the chat ends unanswered).

        - A reply that ended without any text (stopped before its first token, failed, timed out) means its
          question was not answered: the pair is left out (``unanswered`` tells the window to offer a resend).
        - A user message followed by another user message (its reply was deleted) is left out the same way;
          two replies in a row (the question between them was deleted) are joined into one.
        - Replies before the first user message are left out; system messages in the list join the system
          prompt. Stopped or timed-out partial replies are kept (they are what the model said).
        """
        system: list[str] = [self.system_prompt] if self.system_prompt else []
        turns: list[dict[str, str]] = []
        read_all(self.messages)
        for m in self.messages:
            if m is upto:
                break
            text = m.text
            if m.role is Role.SYSTEM:
                if text:
                    system.append(text)
            elif m.role is Role.USER:
                if turns and turns[-1]["role"] == "user":
                    turns.pop()                  # unanswered: its reply was deleted or never came
                turns.append({"role": "user", "content": text})
            elif not text:
                if m.status.final and turns and turns[-1]["role"] == "user":
                    turns.pop()                  # stopped or failed before any text: the pair is left out
                # (a reply still waiting or reading the prompt keeps its question: the context meter counts it)
            elif not turns:
                continue                         # a reply before any question
            elif turns[-1]["role"] == "assistant":
                turns[-1]["content"] += "\n\n" + text
            else:
                turns.append({"role": "assistant", "content": text})
        if upto is not None:
            while turns and turns[-1]["role"] == "assistant":
                turns.pop()                      # a reply is asked of the last question
        head = [{"role": "system", "content": "\n\n".join(system)}] if system else []
        return head + turns

    def unanswered(self, message: Message) -> bool:
        """True for a finished reply without any text (stopped before its first token, failed, timed out, or
        an immediate end of turn):
        its question is left out of later prompts, and the window offers to send it again."""
        return message.role is Role.ASSISTANT and message.status.final and not message.text

    def question_of(self, reply: Message) -> Message | None:
        """The user message ``reply`` answers (the nearest user message before it), or None."""
        try:
            i = self.messages.index(reply)
        except ValueError:
            return None
        for m in reversed(self.messages[:i]):
            if m.role is Role.USER:
                return m
        return None


def read_all(messages: list[Message]) -> None:
    """Read the text of every saved message of ``messages`` not read yet, in one query (``app.core.history.lazy``:
    a prompt or an export needs all of it; one query per message would cost ~30 µs each)."""
    for m in messages:
        read_many = getattr(type(m), "read_many", None)
        if read_many is not None:
            read_many(messages)
            return
