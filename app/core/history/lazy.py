"""Messages of a saved chat whose text is read on first use (``Store.load_conversation``).

Opening a chat of 1,000 pairs of 2-8 KB replies read 6.4 MB of text from SQLite and built 2,000 full messages
(~35-55 ms on the project's 2-core machine, most of the 50 ms budget of ``python -m app.bench history``), though
the window shows a screen of them. A chat is now opened from a small index (``messages_light``: id, role,
status, created) and a small table of each message's text size (``sizes``: characters and line ends,
kept by triggers, so every writer — an older Brook, an import, a recovery — keeps it right). Each message is a
:class:`StoredMessage`: role, status, time and size known, the rest (text, model, parameters, figures,
provenance, other versions) read from its row the first time any of it is used; it then *becomes* a plain
``Message`` (its class is switched), so nothing else pays for the laziness. ``Message.stored_shape`` gives the
size without reading (the list's height estimates).

Nothing may be lost: ``read_all`` reads every message of a list in one query (a prompt, an export), and the
store reads the messages it handed out before it deletes their rows, replaces its file or closes
(:meth:`BodySource.read_pending`). Another thread (the context meter counts tokens in a worker) reads through its
own read-only connection.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import weakref
from collections.abc import Callable, Iterable
from typing import Any

from app.core.conversation import Message, MessageStatus, Role, _ids
from app.core.errors import BrookError

log = logging.getLogger("brook.store")
#: Held while a message is read (a worker thread and the loop thread may reach for the same one).
_READING = threading.RLock()

#: Schema of the text sizes: a small table (no overflow pages) kept by triggers on ``messages``, and an index
#: that answers a chat's list of messages without reading their rows (all idempotent; written short, so that the
#: schema still fits the file's first page: a damaged file keeps its schema readable). A message deleted takes
#: its size along (a foreign key; a size left by another program that does not enforce them is replaced when
#: its id is used again). A text changed to a non-text value (another program) keeps its old size: only a height
#: estimate, and reading the row shows it damaged. A save that leaves the text as it was writes no size.
_SIZE = "SELECT new.id,length(new.content),length(new.content)-length(replace(new.content,char(10),''))" \
        " WHERE typeof(new.content)='text'"
SHAPES_SQL = (
    "CREATE TABLE IF NOT EXISTS sizes(message_id INTEGER PRIMARY KEY REFERENCES messages ON DELETE "
    "CASCADE,chars INT,lines INT)",
    f"CREATE TRIGGER IF NOT EXISTS sizes_ai AFTER INSERT ON messages BEGIN "
    f"INSERT OR REPLACE INTO sizes {_SIZE};END",
    f"CREATE TRIGGER IF NOT EXISTS sizes_au AFTER UPDATE OF content ON messages "
    f"WHEN new.content IS NOT old.content BEGIN "
    f"INSERT OR REPLACE INTO sizes {_SIZE};END",
    "CREATE INDEX IF NOT EXISTS messages_light ON messages(conversation_id,id,role,status,created)",
)
#: Rows written before the table existed get their sizes once (reads every text once: ~1 s per 100 MB).
BACKFILL_SQL = ("INSERT OR IGNORE INTO sizes SELECT id, length(content), "
                "length(content) - length(replace(content, char(10), '')) FROM messages "
                "WHERE typeof(content) = 'text' AND id NOT IN (SELECT message_id FROM sizes)")
#: A chat's messages as the list needs them: from the index and the sizes table, never the rows themselves.
LIGHT_SQL = ("SELECT m.id, m.role, m.status, m.created, s.chars, s.lines FROM messages m "
             "LEFT JOIN sizes s ON s.message_id = m.id WHERE m.conversation_id = ? ORDER BY m.id")

#: What a ``StoredMessage`` reads on first use (every field but role, status, ids and time).
HEAVY = ("content", "model", "params", "stop_reason", "error", "metrics", "provenance", "versions",
         "version_index", "left_out", "_parts", "_taken", "_joined")


def ensure_shapes(db: sqlite3.Connection) -> None:
    """Create the sizes table, its triggers and the index, and fill in the sizes of older rows (idempotent)."""
    for statement in SHAPES_SQL:
        db.execute(statement)
    db.execute(BACKFILL_SQL)


def has_shapes(db: sqlite3.Connection) -> bool:
    """Whether ``db`` keeps the text sizes (a file shown read-only that was never upgraded does not)."""
    names = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE name IN "
                                      "('sizes', 'sizes_ai', 'sizes_au', "
                                      "'messages_light')")}
    return len(names) == 4


class BodySource:
    """Reads the rows of the ``StoredMessage``-s a store handed out: ``read(ids)`` → ``{db_id: Message}`` (full
    messages, ``app.core.history.rows``). On the store's own thread through ``own(ids)`` (the store's guarded
    ``read_messages``: damage found there is repaired), on any other through ``other(connection, ids)`` and a
    read-only connection of that thread to the same file."""

    def __init__(self, own: Callable[[list[int]], dict[int, Message]],
                 other: Callable[[sqlite3.Connection, list[int]], dict[int, Message]], path: str) -> None:
        self._own, self._other, self._path = own, other, path
        self._owner = threading.get_ident()
        self._others: dict[int, sqlite3.Connection] = {}
        self._lock = threading.Lock()
        #: the messages handed out (weakly: a chat closed and forgotten goes), read ones dropped by ``prune``
        self.pending: list[weakref.ref[StoredMessage]] = []
        self._pruned_at = 0

    def read(self, ids: list[int]) -> dict[int, Message]:
        ident = threading.get_ident()
        if ident == self._owner:
            return self._own(ids)
        with self._lock:
            db = self._others.get(ident)
            if db is None:
                from app.core.text import decode_utf8

                db = sqlite3.connect(f"{_uri(self._path)}?mode=ro", uri=True, check_same_thread=False)
                db.text_factory = decode_utf8
                self._others[ident] = db
        return self._other(db, ids)

    def unread(self) -> list[StoredMessage]:
        """The messages handed out and not read yet."""
        return [m for m in (r() for r in self.pending) if type(m) is StoredMessage]

    def prune(self) -> None:
        """Forget the messages read or gone, once the list has doubled since the last time (amortised O(1))."""
        if len(self.pending) >= 2 * self._pruned_at + 4096:
            self.pending = [weakref.ref(m) for m in self.unread()]
            self._pruned_at = len(self.pending)

    def read_pending(self, keep: Callable[[StoredMessage], bool] = lambda _m: True) -> None:
        """Read now every message handed out and not read yet (those for which ``keep`` is true): their rows are
        about to go (deleted, the file replaced or closed)."""
        read_all([m for m in self.unread() if keep(m)])
        self.prune()

    def close(self) -> None:
        with self._lock:
            others, self._others = self._others, {}
        for db in others.values():
            try:
                db.close()
            except sqlite3.Error:
                pass


def _uri(path: str) -> str:
    from pathlib import Path

    return Path(path).resolve().as_uri()


class StoredMessage(Message):
    """A saved message read on first use (see the module docstring): made by :func:`stored`, never by the
    constructor. Any of ``HEAVY`` read or set reads the row first; the object is then a ``Message``."""

    def stored_shape(self) -> tuple[int, int] | None:
        """``(characters, line ends)`` of the text, from the sizes table (nothing is read)."""
        return self.__dict__["_shape"]

    @staticmethod
    def read_many(messages: Iterable[Message]) -> None:
        """:func:`read_all` (``app.core.conversation.read_all`` calls it: the core does not import the history)."""
        read_all(messages)

    def _read_body(self, full: Message | None = None) -> None:
        with _READING:                # (another thread may be reading it: it is then a Message when this returns)
            if type(self) is StoredMessage:
                self._read_locked(full)

    def _read_locked(self, full: Message | None) -> None:
        d = self.__dict__
        source: BodySource = d["_source"]
        if full is None:
            try:
                full = source.read([d["db_id"]]).get(d["db_id"])
            except (sqlite3.Error, BrookError) as exc:    # the file cannot be read: shown as an error
                log.warning("history: message %s could not be read (%s)", d["db_id"], exc)
                full = None
            if type(self) is not StoredMessage:   # read meanwhile: the damage that read met was repaired, and
                return                            # the store read its messages before replacing the file
        if full is None:              # gone behind the store's back (another program), or unreadable: an error
            full = Message(Role(d["role"]), "", status=MessageStatus.ERROR,
                           error="This message could not be read from the history file.")
            d["db_id"] = None         # (saved again, it would be a new row: never one overwriting the old)
        fd = full.__dict__
        for name in HEAVY:
            d[name] = fd[name]
        if d["status"] is d.pop("_stored_status"):   # (a damaged row reads as an error)
            d["status"] = full.status
        d.pop("_shape", None)
        del d["_source"]
        self.__class__ = Message      # type: ignore[assignment]


def _lazy(name: str) -> property:
    def get(self: StoredMessage) -> Any:
        self._read_body()
        return getattr(self, name)

    def put(self: StoredMessage, value: Any) -> None:
        self._read_body()
        setattr(self, name, value)

    return property(get, put, doc=f"``{name}``, read from the history on first use")


for _name in HEAVY:
    setattr(StoredMessage, _name, _lazy(_name))


def stored(source: BodySource, db_id: int, conv_id: int, kind: tuple[Role, MessageStatus], created: float,
           shape: tuple[int, int]) -> StoredMessage:
    """A ``StoredMessage`` of row ``db_id`` of chat ``conv_id`` (see the module docstring); ``kind``: its role and
    status, ``shape``: its text's (characters, line ends)."""
    m = _new(StoredMessage)
    m.__dict__.update(role=kind[0], status=kind[1], id=next(_ids), created=created, generation_id=None, chunks=0,
                      _taken_chunks=0, db_id=db_id, _source=source, _stored_status=kind[1], _shape=shape,
                      _conv_id=conv_id)
    source.pending.append(weakref.ref(m))
    return m


_new = object.__new__


def read_all(messages: Iterable[Message]) -> None:
    """Read every not yet read message of ``messages`` (one query per store and 500 messages): a prompt or an
    export needs all of the text at once."""
    by_source: dict[int, tuple[BodySource, list[StoredMessage]]] = {}
    for m in messages:
        if type(m) is StoredMessage:
            src = m.__dict__.get("_source")
            if src is not None:
                by_source.setdefault(id(src), (src, []))[1].append(m)
    for src, ms in by_source.values():
        for k in range(0, len(ms), 500):
            part = ms[k:k + 500]
            try:
                full = src.read([m.__dict__["db_id"] for m in part])
            except (sqlite3.Error, BrookError) as exc:    # each is then read alone (an error if that fails)
                log.warning("history: %d messages could not be read at once (%s)", len(part), exc)
                full = {}
            with _READING:
                for m in part:
                    if type(m) is StoredMessage:
                        m._read_locked(full.get(m.__dict__["db_id"]))
