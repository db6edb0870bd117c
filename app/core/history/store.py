"""Chat history in SQLite (WAL): conversations and messages, with each reply's provenance and timings.

One connection, used from the loop thread only. Writes are small and committed at once, so a crash loses at
most the last few hundred ms of a streaming reply (the UI saves partial text periodically while streaming).
The saves of a streaming reply can be written behind (``save_message(…, behind=…)``): on a thread of their own,
in order, before any later read or write (``app.core.history.write_behind``).
Schema versions are tracked with ``PRAGMA user_version``; ``migrate`` brings an older file up to date.
"""

from __future__ import annotations

import functools
import json
import logging
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.core.conversation import Conversation, Message, MessageStatus, Role
from app.core.history import folders as folder_store
from app.core.history import opening
from app.core.history import timelines as timeline_store
from app.core.history.clean import MAX_TIME, clean_text, clean_time
from app.core.history.columns import ensure_columns, versions_json
from app.core.history.folders import FolderInfo
from app.core.history.lazy import LIGHT_SQL, BodySource, ensure_shapes, has_shapes, stored
from app.core.history.recovery import (
    Restored,
    guard_store,
    latest_backup,
    recover,
    recovery_notice,
    restore_backup,
)
from app.core.history.rows import MESSAGE_COLUMNS, gone, light_fields, loads, message_from_tuple, rows, schema_module
from app.core.history.search import (
    SearchHit,
    TitleHit,
    ensure_search_index,
    ensure_unfinished_index,
    finish_interrupted,
    has_search_index,
)
from app.core.history.search import search as search_messages
from app.core.history.search import search_titles as search_chat_titles
from app.core.history.write_behind import WriteBehind
from app.core.text import decode_utf8, valid_text

log = logging.getLogger("brook.store")
#: 1: chats and messages; 2: each reply's stream timeline (``timelines``, app.core.history.timelines); 3: folders
#: and pinned chats (``folders``, ``conversations.pinned`` / ``folder_id``: app.core.history.folders); 4: an index
#: of the unfinished replies; 5: each message's text size (``sizes``: app.core.history.lazy)
SCHEMA_VERSION = 5

_SCHEMA = """
CREATE TABLE IF NOT EXISTS conversations (
    id INTEGER PRIMARY KEY,
    title TEXT NOT NULL,
    system_prompt TEXT,
    created REAL NOT NULL,
    updated REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS messages (
    id INTEGER PRIMARY KEY,
    conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    role TEXT NOT NULL,
    content TEXT NOT NULL,
    status TEXT NOT NULL,
    model TEXT,
    params TEXT,
    stop_reason TEXT,
    error TEXT,
    metrics TEXT,
    created REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS messages_by_conversation ON messages(conversation_id, id);
"""


@dataclass(frozen=True, slots=True)
class ConversationInfo:
    """A chat as the sidebar lists it: ``updated`` in s since the epoch, ``messages`` its number of messages,
    ``pinned`` and ``folder_id`` its place in the sidebar (``app.core.history.folders``; None: in no folder)."""

    id: int
    title: str
    updated: float
    messages: int
    pinned: bool = False
    folder_id: int | None = None


class Store:
    """SQLite history at ``path`` (``":memory:"`` for tests). The constructor raises ``sqlite3.DatabaseError``
    for a file that is not a database (``open_or_recover`` repairs or sets such a file aside instead); every
    public method raises ``HistoryError`` (a ``BrookError`` the window shows) for a SQLite error, after
    repairing a history found damaged mid-session."""

    def __init__(self, path: str | Path, *, read_only: bool = False) -> None:
        self.path = path
        self.problem: str | None = None      # set when the history could not be used as it is (for the window)
        self.read_only = read_only           # an old history shown from a read-only file or folder
        #: called with ``problem`` when damage found later in the session was repaired (the window shows it)
        self.on_problem: Callable[[str], None] | None = None
        #: where the daily backups of this history are (``open_or_recover``'s ``backups``; default: next to it)
        self.backups = Path(str(path)).parent / "backups"
        #: reads the messages ``load_conversation`` hands out unread (None: every message is read at once)
        self.bodies: BodySource | None = None
        self._reading_pending = False        # the rows are about to go: read them without repairing
        #: the writes handed over with ``behind`` (a file history only: another connection cannot open a memory one)
        self.behind: WriteBehind | None = None
        if not read_only and str(path) != ":memory:":
            self.behind = WriteBehind(str(path), _configure_writer)
        self._db = self._connect()

    @property
    def db(self) -> sqlite3.Connection:
        """The loop's connection, once every write handed over before is written (``WriteBehind.flush``)."""
        if self.behind is not None and self.behind.pending:
            self.behind.flush()
        return self._db

    @db.setter
    def db(self, db: sqlite3.Connection) -> None:
        self._db = db

    def _connect(self) -> sqlite3.Connection:
        if self.read_only:
            uri = Path(self.path).resolve().as_uri()
            try:
                db = sqlite3.connect(f"{uri}?mode=ro", uri=True, isolation_level=None)
                db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
            except sqlite3.OperationalError:    # WAL file without its -shm in a read-only folder
                db = sqlite3.connect(f"{uri}?mode=ro&immutable=1", uri=True, isolation_level=None)
        else:
            db = sqlite3.connect(str(self.path), isolation_level=None)
        if self.behind is not None:
            self.behind.reconnect()           # the file may have been replaced (recovery, a backup restored)
        self.db = db
        db.row_factory = sqlite3.Row
        _configure(db)
        if self.read_only:
            self.has_fts = has_search_index(db)
            self.has_folders = _has_folders(db)       # an older file shown read-only has none (no migration)
        else:
            if str(self.path) != ":memory:":
                db.execute("PRAGMA journal_mode = WAL")
                db.execute("PRAGMA synchronous = NORMAL")
            self.migrate()
        if self.bodies is not None:
            self.bodies.close()
        lazy = str(self.path) != ":memory:" and has_shapes(db)     # (another thread cannot open a memory one)
        self.bodies = BodySource(self._own_read, self._read_messages, str(self.path)) if lazy else None
        return db

    @classmethod
    def open_or_recover(cls, path: Path, backups: Path | None = None) -> Store:
        """Open the history at ``path``; never raises. Sets ``problem`` (a sentence for the window) when the
        history could not be used as it is: damaged (repaired into a new file), not a database (set aside, a new
        history started), read-only or locked (shown read-only). See ``app.core.history.opening``.

        A sound history is copied once a day to ``backups`` (default: ``backups/`` next to it; 3 days kept).
        """
        return opening.open_or_recover(cls, path, backups)

    def recover_now(self, why: str) -> str:
        """Damage found during the session: save what can be read into a new file, reopen it, set and
        return ``problem`` (and tell ``on_problem``)."""
        path = Path(self.path)
        self._read_pending()
        self.db.close()
        try:
            r = recover(path, type(self))
            self.problem = recovery_notice(r, why, path.parent / "backups")
        except (OSError, sqlite3.Error) as exc:
            log.error("recovering the history %s failed (%s)", path, exc)
            opening.set_aside(type(self), path, sqlite3.DatabaseError(why))
            self.problem = (f"The chat history file was damaged ({why}) and could not be read; it was set aside "
                            "and a new history was started.")
        self.db = self._connect()
        if self.on_problem is not None:
            self.on_problem(self.problem)
        return self.problem

    def restore_backup(self, backup: Path) -> Restored:
        """Make the daily backup ``backup`` this history (``app.core.history.recovery.restore_backup``: the file it
        replaces is kept aside). Raises ``HistoryError`` with a sentence (nothing changed)."""
        self._read_pending()
        return restore_backup(self, backup)

    def latest_backup(self) -> tuple[Path, int] | None:
        """The newest readable daily backup of this history and its number of chats (None: none yet)."""
        return latest_backup(self.backups)

    def migrate(self) -> None:
        version = self.db.execute("PRAGMA user_version").fetchone()[0]
        if version < 1:
            self.db.executescript(_SCHEMA)
        if version < 2:
            timeline_store.ensure_table(self.db)
        if version < 3:
            folder_store.ensure_table(self.db)
        if version < 4:
            ensure_unfinished_index(self.db)
        if version < 5:
            ensure_shapes(self.db)
        if version < SCHEMA_VERSION:
            self.db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        ensure_columns(self.db)
        self.has_fts = ensure_search_index(self.db)
        finish_interrupted(self.db)
        self.has_folders = True

    def search(self, query: str, limit: int = 50) -> list[SearchHit]:
        """Messages of every chat containing all terms of ``query``, newest first (see ``app.core.history.search``);
        each hit has ``conversation_id``, ``message_id`` and a ``snippet``."""
        return search_messages(self.db, query, limit)

    def search_titles(self, query: str, limit: int = 20) -> list[TitleHit]:
        """Chats whose title contains all terms of ``query``, most recently changed first (see
        ``app.core.history.search.search_titles``); each hit has ``conversation_id``, ``title`` and ``spans``."""
        return search_chat_titles(self.db, query, limit)

    def close(self) -> None:
        self._read_pending()
        if self.bodies is not None:
            self.bodies.close()
        if self.behind is not None:
            self.behind.close()
        self.db.close()

    def _read_pending(self, conv_id: int | None = None, message_id: int | None = None) -> None:
        """Read the messages handed out unread (of chat ``conv_id``, or message ``message_id``; default all): their
        rows are about to be deleted, or the file replaced or closed. A read that fails leaves them as they are."""
        if self.bodies is None:
            return
        self._reading_pending = True
        try:
            self.bodies.read_pending(lambda m: (conv_id is None or m.__dict__.get("_conv_id") == conv_id)
                                     and (message_id is None or m.__dict__.get("db_id") == message_id))
        finally:
            self._reading_pending = False

    def read_messages(self, ids: list[int]) -> dict[int, Message]:
        """Messages ``ids`` read in full, by row id (a row no longer there is missing): what a message
        ``load_conversation`` handed out reads on first use (``app.core.history.lazy``)."""
        return self._read_messages(self.db, ids)

    def _own_read(self, ids: list[int]) -> dict[int, Message]:
        return self._read_messages(self.db, ids) if self._reading_pending else self.read_messages(ids)

    # conversations -------------------------------------------------------------------------------------
    def create_conversation(self, conv: Conversation) -> int:
        t = time.time()
        cur = self.db.execute("INSERT INTO conversations(title, system_prompt, created, updated, preset, params) "
                              "VALUES (?,?,?,?,?,?)",
                              (conv.title, conv.system_prompt, t, t, conv.preset, _dumps(conv.params)))
        conv.id = int(cur.lastrowid or 0)
        return conv.id

    def rename_conversation(self, conv_id: int, title: str) -> None:
        self.db.execute("UPDATE conversations SET title = ? WHERE id = ?", (valid_text(title), conv_id))

    def save_chat_settings(self, conv: Conversation) -> None:
        """Store the chat's own system prompt, preset name and sampling parameters (creates the chat if new)."""
        if conv.id is None:
            self.create_conversation(conv)
            return
        self.db.execute("UPDATE conversations SET system_prompt = ?, preset = ?, params = ? WHERE id = ?",
                        (conv.system_prompt, conv.preset, _dumps(conv.params), conv.id))

    def delete_conversation(self, conv_id: int) -> None:
        self._read_pending(conv_id=conv_id)     # (an undo saves them again: their text must be in memory)
        self.db.execute("DELETE FROM conversations WHERE id = ?", (conv_id,))

    def list_conversations(self) -> list[ConversationInfo]:
        """Every chat, most recently changed first, with its pin and folder (a folder that is gone: None)."""
        group = ("c.pinned, f.id AS folder_id", "LEFT JOIN folders f ON f.id = c.folder_id ") if self.has_folders \
            else ("NULL AS pinned, NULL AS folder_id", "")
        rows = self.db.execute(
            f"SELECT c.id, c.title, c.updated, COUNT(m.id) AS n, {group[0]} FROM conversations c {group[1]}"
            "LEFT JOIN messages m ON m.conversation_id = c.id GROUP BY c.id ORDER BY c.updated DESC, c.id DESC"
        ).fetchall()
        return [ConversationInfo(r["id"], clean_text(r["title"]) or "", clean_time(r["updated"]), r["n"],
                                 _pinned(r["pinned"]), r["folder_id"]) for r in rows]

    # pins and folders (app.core.history.folders) --------------------------------------------------------
    def list_folders(self) -> list[FolderInfo]:
        """Every folder of chats, by name."""
        return folder_store.list_folders(self.db) if self.has_folders else []

    def create_folder(self, name: str) -> int:
        """A new folder; returns its id. Raises ``FolderNameError`` (empty, too long, taken)."""
        return folder_store.create_folder(self.db, name)

    def rename_folder(self, folder_id: int, name: str) -> str:
        """Rename a folder; returns the name as stored. Raises ``FolderNameError`` or ``KeyError``."""
        return folder_store.rename_folder(self.db, folder_id, name)

    def delete_folder(self, folder_id: int) -> list[int]:
        """Delete a folder, keeping its chats (in no folder); returns their ids."""
        return folder_store.delete_folder(self.db, folder_id)

    def set_folder_collapsed(self, folder_id: int, collapsed: bool) -> None:
        """Remember whether the sidebar shows folder ``folder_id`` closed."""
        folder_store.set_collapsed(self.db, folder_id, collapsed)

    def set_pinned(self, conv_id: int, pinned: bool) -> None:
        """Pin a chat to the top of the sidebar, or unpin it. Raises ``KeyError`` for an unknown chat."""
        folder_store.set_pinned(self.db, conv_id, pinned)

    def move_to_folder(self, conv_id: int, folder_id: int | None) -> None:
        """Put a chat into a folder (None: out of its folder). Raises ``KeyError`` for an unknown chat or folder."""
        folder_store.move_to_folder(self.db, conv_id, folder_id)

    def load_conversation(self, conv_id: int) -> Conversation:
        """Load a conversation; raises ``KeyError`` when there is none with that id. A reply that was still
        streaming when the app died comes back as ``stopped`` with the text saved so far.

        Cost: one query of a small index and table; each message's text and details are read on first use
        (``app.core.history.lazy``: opening a 1,000-pair chat of 2-8 KB replies, ``python -m app.bench history``).
        A file without the text sizes (shown read-only, never upgraded; or in memory) is read whole."""
        row = self.db.execute("SELECT * FROM conversations WHERE id = ?", (conv_id,)).fetchone()
        if row is None:
            raise KeyError(conv_id)
        schema = schema_module()
        conv = Conversation(title=clean_text(row["title"]) or "", system_prompt=clean_text(row["system_prompt"]),
                            id=row["id"], preset=clean_text(row["preset"]),
                            params=schema.clean_params(loads(row["params"]), f"chat {conv_id}: params"))
        if self.bodies is not None:
            conv.messages = self._light_messages(conv_id)
            return conv
        sql = f"SELECT {', '.join(MESSAGE_COLUMNS)} FROM messages WHERE conversation_id = ? ORDER BY id"
        conv.messages = [message_from_tuple(r, schema) for r in rows(self.db, sql, (conv_id,))]
        return conv

    def _light_messages(self, conv_id: int) -> list[Message]:
        """Chat ``conv_id``'s messages from the index and the sizes table, each read on first use
        (``app.core.history.lazy``); a row whose role, status, time or size is odd is read at once (it may be
        damaged). ~5 ms for 2,000 messages (``python -m app.bench history``)."""
        bodies = self.bodies
        assert bodies is not None
        kinds: dict[tuple[Any, Any], tuple[Role, MessageStatus] | None] = {}     # (a chat has 2-4 kinds)
        out: list[Message | int] = []
        odd: list[int] = []
        for mid, role_v, status_v, created, chars, lines in rows(self.db, LIGHT_SQL, (conv_id,)):
            key = (role_v, status_v)
            kind = kinds[key] if key in kinds else kinds.setdefault(key, light_fields(role_v, status_v))
            if kind is None or chars is None or type(created) is not float or not 0.0 <= created <= MAX_TIME:
                odd.append(mid)
                out.append(mid)
            else:
                out.append(stored(bodies, mid, conv_id, kind, created, (chars, lines)))
        bodies.prune()
        if not odd:
            return out        # type: ignore[return-value]
        full = self._read_messages(self.db, odd)
        return [full.get(m, gone(m)) if isinstance(m, int) else m for m in out]

    def _read_messages(self, db: sqlite3.Connection, ids: list[int]) -> dict[int, Message]:
        """Messages ``ids`` read in full through ``db`` (this store's connection, or another thread's), by row id
        (a row no longer there is missing)."""
        schema = schema_module()
        sql = f"SELECT {', '.join(MESSAGE_COLUMNS)} FROM messages WHERE id IN ({', '.join('?' * len(ids))})"
        return {r[0]: message_from_tuple(r, schema) for r in rows(db, sql, tuple(ids))}

    # messages ------------------------------------------------------------------------------------------
    def save_timeline(self, message_id: int, timeline: dict[str, Any] | bytes,
                      behind: Callable[[BaseException], None] | None = None) -> int:
        """Store a reply's stream timeline (the plain shape of ``app.core.history.timelines``, or its ``encode``-d
        form; replaces one stored before; deleted with its message). Returns its size in bytes. Raises
        ``ValueError`` for a bad one. ``behind``: written on the writer thread, after the reply's own save handed
        over before it (see ``save_message``; ``behind(exc)`` is called there when it fails)."""
        if behind is not None and self.behind is not None:
            blob = timeline if isinstance(timeline, bytes) else timeline_store.encode(timeline)
            self.behind.submit(functools.partial(timeline_store.save, message_id=message_id, d=blob), behind)
            return len(blob)
        return timeline_store.save(self.db, message_id, timeline)

    def load_timeline(self, message_id: int) -> dict[str, Any] | None:
        """Message ``message_id``'s stored stream timeline (plain shape), or None."""
        return timeline_store.load(self.db, message_id)

    def delete_message(self, message_id: int) -> None:
        self._read_pending(message_id=message_id)
        self.db.execute("DELETE FROM messages WHERE id = ?", (message_id,))

    def save_message(self, conv: Conversation, msg: Message,
                     behind: Callable[[BaseException], None] | None = None) -> None:
        """Insert or update ``msg`` (its row id is kept on ``msg.db_id``) and touch the conversation.

        ``behind``: an update of a saved message in a file history is written on the writer thread
        (:class:`WriteBehind`; the values are taken now); when it fails, ``behind(exc)`` is called on that
        thread (redo the save without ``behind`` on the loop: that repairs a damaged file or raises
        ``HistoryError``). An insert, or a memory history, is written at once."""
        values = (msg.text, msg.status.value, msg.model, _dumps(msg.params), msg.stop_reason, msg.error,
                  _dumps(msg.metrics), _dumps(msg.provenance), versions_json(msg))
        row: int | None = getattr(msg, "db_id", None)
        if behind is not None and self.behind is not None and conv.id is not None and row is not None:
            self.behind.submit(functools.partial(_update_message, values=values, message_id=row,
                                                 conv_id=conv.id, t=time.time()), behind)
            return
        if conv.id is None:
            self.create_conversation(conv)
        t = time.time()
        if row is None:
            cur = self.db.execute(
                "INSERT INTO messages(conversation_id, role, content, status, model, params, stop_reason, error, "
                "metrics, provenance, versions, created) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                (conv.id, msg.role.value, *values, msg.created))
            msg.db_id = cur.lastrowid
            self.db.execute("UPDATE conversations SET updated = ? WHERE id = ?", (t, conv.id))
        else:
            _update_message(self.db, values, row, conv.id, t)


guard_store(Store)      # every public method: SQLite errors become HistoryError; damage is repaired, then retried


def _update_message(db: sqlite3.Connection, values: tuple[Any, ...], message_id: int, conv_id: int | None,
                    t: float) -> None:
    db.execute("UPDATE messages SET content=?, status=?, model=?, params=?, stop_reason=?, error=?, "
               "metrics=?, provenance=?, versions=? WHERE id=?", (*values, message_id))
    db.execute("UPDATE conversations SET updated = ? WHERE id = ?", (t, conv_id))


def _configure(db: sqlite3.Connection) -> None:
    """Settings of every connection to the history (the loop's and the writer's)."""
    db.text_factory = decode_utf8     # text written by another program may be invalid UTF-8
    db.execute("PRAGMA foreign_keys = ON")


def _configure_writer(db: sqlite3.Connection) -> None:
    _configure(db)
    db.execute("PRAGMA synchronous = NORMAL")   # as the loop's connection (WAL: durable at each checkpoint)


def _dumps(v: Any) -> str | None:
    return None if v is None else json.dumps(v)


def _pinned(v: Any) -> bool:
    """A stored ``pinned``: only a whole number other than 0 pins (text or a blob another program wrote: no)."""
    return isinstance(v, int) and v != 0


def _has_folders(db: sqlite3.Connection) -> bool:
    cols = {r[1] for r in db.execute("PRAGMA table_info(conversations)")}
    has_table = db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'folders'").fetchone()
    return {"pinned", "folder_id"} <= cols and has_table is not None
