"""Opening a history file that may be damaged, not a database, read-only or locked — never raising.

``open_or_recover`` is what the window calls at start (``Store.open_or_recover``): it probes the file read-only
(``PRAGMA quick_check``, ``app.core.history.recovery.damage``) before opening it for writing, and picks one of
four outcomes, each with a sentence for the window in ``store.problem``:

- sound: the store as it is, and a daily backup started on a thread (``recovery.start_daily_backup``);
- damaged: every readable chat is saved into a new file, the damaged one is kept aside as ``*.damaged-<time>``
  (``recovery.recover``);
- not a database at all: renamed ``*.corrupt-<time>`` with its ``-wal``/``-shm``, and a new history starts
  (``set_aside``; also used when a repair found mid-session fails);
- read-only (file or folder) or locked: the saved chats are shown read-only; new ones stay in memory.

``cls`` is the store class (``app.core.history.store.Store``), passed in so this module does not import it.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from pathlib import Path
from typing import Any

from app.core.history.recovery import (
    backup_offer,
    damage,
    looks_like_sqlite,
    recover,
    recovery_notice,
    start_daily_backup,
)

log = logging.getLogger("brook.store")


def open_or_recover(cls: Any, path: Path, backups: Path | None = None) -> Any:
    """A ``cls`` store for the history at ``path``, its ``problem`` set when it could not be used as it is
    (module docstring); never raises. ``backups``: the folder of the daily backups (default ``backups/`` next to
    ``path``)."""
    why = None
    if path.exists() and looks_like_sqlite(path):
        try:
            probe = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
            try:
                why = damage(probe)
            finally:
                probe.close()
        except sqlite3.Error:
            why = None                       # cannot even open it read-only: the paths below say why
    if why is not None:
        recovered = _recover(cls, path, why, backups)
        if recovered is not None:
            return recovered
    try:
        store = cls(path)
        store.db.execute("BEGIN IMMEDIATE")      # writable and not locked?
        store.db.execute("ROLLBACK")
    except sqlite3.OperationalError as exc:   # locked, unreadable folder, read-only: not corruption
        return _read_only(cls, path, exc)
    except sqlite3.DatabaseError as exc:
        if looks_like_sqlite(path):
            recovered = _recover(cls, path, str(exc), backups)
            if recovered is not None:
                return recovered
        return set_aside(cls, path, exc)
    store.backups = backups or path.parent / "backups"
    start_daily_backup(path, store.backups)
    return store


def _read_only(cls: Any, path: Path, exc: sqlite3.Error) -> Any:
    log.error("history %s cannot be written (%s)", path, exc)
    if path.exists():
        try:
            store = cls(path, read_only=True)
            store.db.execute("SELECT COUNT(*) FROM conversations").fetchone()
            store.problem = (f"Chat history is read-only this session: {path} cannot be written ({exc}). "
                             "Your saved chats are shown; new messages are not saved. Check the folder's "
                             "permissions, or close other programs using it.")
            return store
        except sqlite3.Error as exc2:
            log.error("history %s cannot be read either (%s)", path, exc2)
    store = cls(":memory:")
    store.problem = (f"Chat history can't be saved this session: {path} cannot be opened for writing "
                     f"({exc}). Close other programs using it, or check the folder's permissions.")
    return store


def _recover(cls: Any, path: Path, why: str, backups: Path | None) -> Any | None:
    try:
        r = recover(path, cls)
        store = cls(path)
    except (OSError, sqlite3.Error) as exc:
        log.error("recovering the history %s failed (%s)", path, exc)
        return None
    store.backups = backups or path.parent / "backups"
    store.problem = recovery_notice(r, why, store.backups)
    return store


def set_aside(cls: Any, path: Path, exc: sqlite3.Error) -> Any:
    """Rename the unreadable history at ``path`` (and its ``-wal``/``-shm``) to ``*.corrupt-<s since the epoch>``
    and return a new ``cls`` store there (in memory when that fails too), its ``problem`` saying so and offering
    the newest daily backup when there is one."""
    stamp = int(time.time())
    aside = path.with_name(f"{path.name}.corrupt-{stamp}")
    log.error("history %s unreadable (%s); moved to %s", path, exc, aside)
    try:
        for suffix in ("", "-wal", "-shm"):
            part = path.with_name(path.name + suffix)
            if part.exists():
                part.rename(path.with_name(f"{path.name}{suffix}.corrupt-{stamp}"))
        store = cls(path)
    except (OSError, sqlite3.Error) as exc2:
        log.error("could not start a new history at %s (%s)", path, exc2)
        store = cls(":memory:")
        store.problem = f"Chat history can't be saved this session: {path} is damaged and read-only."
        return store
    store.problem = (f"The chat history file was damaged and has been set aside as {aside.name}; "
                     "a new history was started.")
    offer = backup_offer(path.parent / "backups", path)
    if offer:
        store.problem += " " + offer
    return store
