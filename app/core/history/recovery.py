"""A damaged history file: detect it, save every readable chat into a new file, keep rolling backups.

- ``damage(db)``: SQLite's ``PRAGMA quick_check`` (every page of every table and index is read; ~10 ms per MB).
- ``recover(path, new_store)``: reads the damaged file row by row in rowid order, skipping the unreadable stretches
  (a seek past a bad page, then a binary search back to the first readable row), and writes what it read into a
  fresh history with the current schema (the search index is rebuilt by its triggers). Folders come first, then
  chats (a chat whose folder was lost stays, in no folder). Messages whose chat row was lost are kept in a chat
  titled "Recovered messages". The damaged file is kept aside, never deleted. (Python's
  ``sqlite3`` has no ``.recover`` — that is the sqlite3 shell's dbdata extension — so this is the row-by-row way.)
- ``backup_daily(path, folder)``: SQLite's online backup API (``Connection.backup``) into
  ``backups/history-YYYY-MM-DD.sqlite3`` once a day, keeping the newest ``KEEP_BACKUPS``.
- ``restore_backup(store, backup)``: a daily backup becomes the history in place (copied
  with the backup API), the file it replaces is kept aside, never deleted.
"""

from __future__ import annotations

import functools
import logging
import sqlite3
import threading
import time
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from app.core.errors import HistoryError

log = logging.getLogger("brook.store.recovery")

SQLITE_HEADER = b"SQLite format 3\x00"
#: How many daily backups are kept.
KEEP_BACKUPS = 3
_CORRUPT_CODES = {11, 26}      # SQLITE_CORRUPT, SQLITE_NOTADB
_MAX_ROWID = 1 << 62


def is_corruption(exc: BaseException) -> bool:
    """True when ``exc`` is SQLite saying the file is damaged (not a locked, read-only or full disk)."""
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None and code & 0xFF in _CORRUPT_CODES:
        return True
    text = str(exc).lower()
    return "malformed" in text or "not a database" in text or "corrupt" in text


def looks_like_sqlite(path: Path) -> bool:
    """The file starts with SQLite's 16-byte header (so a damaged body may still hold readable pages)."""
    try:
        with path.open("rb") as fh:
            return fh.read(16) == SQLITE_HEADER
    except OSError:
        return False


def damage(db: sqlite3.Connection) -> str | None:
    """None when ``PRAGMA quick_check`` finds the file sound, else its first findings (one line)."""
    try:
        rows = [str(r[0]) for r in db.execute("PRAGMA quick_check(5)").fetchall()]
    except sqlite3.DatabaseError as exc:
        return str(exc)
    return None if rows == ["ok"] else "; ".join(rows)


@dataclass(frozen=True, slots=True)
class Recovered:
    """What ``recover`` saved: ``conversations`` and ``messages`` read back, ``orphans`` (messages whose chat
    row was lost, kept in "Recovered messages" chats), ``skipped`` unreadable stretches, ``aside``: where the
    damaged file now is."""

    conversations: int
    messages: int
    orphans: int
    skipped: int
    aside: Path


def _readable_rows(src: sqlite3.Connection, table: str, columns: list[str],
                   skipped: list[int]) -> Iterator[dict[str, Any]]:
    """Rows of ``table`` in rowid order, skipping what cannot be read; appends the rowid where each unreadable
    stretch began to ``skipped``."""
    cols = ", ".join(["rowid AS _rid", *columns])
    start = -_MAX_ROWID

    def first_at(x: int) -> int | None:          # raises for a seek into an unreadable stretch
        r = src.execute(f"SELECT rowid FROM {table} WHERE rowid >= ? ORDER BY rowid LIMIT 1", (x,)).fetchone()
        return None if r is None else int(r[0])

    while True:
        try:
            n = 0
            for row in src.execute(f"SELECT {cols} FROM {table} WHERE rowid >= ? ORDER BY rowid LIMIT 200",
                                   (start,)):
                n += 1
                start = int(row["_rid"]) + 1
                yield {k: row[k] for k in columns}
            if n == 0:
                return
            continue
        except sqlite3.DatabaseError:
            pass
        # sqlite3 steps one row ahead, so the row at ``start`` may be readable though the scan failed: read it alone
        try:
            rid = first_at(start)
        except sqlite3.DatabaseError:
            rid = -1
        if rid is None:
            return
        if rid >= 0:
            try:
                row = src.execute(f"SELECT {cols} FROM {table} WHERE rowid = ?", (rid,)).fetchone()
            except sqlite3.DatabaseError:
                skipped.append(rid)              # its text is on a damaged overflow page
                row = None
            if row is not None:
                yield {k: row[k] for k in columns}
            start = rid + 1
            continue
        skipped.append(start)
        step = 1                                   # seek past the bad stretch with doubling steps …
        while True:
            if start + step >= _MAX_ROWID:
                return
            try:
                first_at(start + step)
                break
            except sqlite3.DatabaseError:
                step *= 2
        lo, hi = start, start + step               # … then back to the first seek that works
        while hi - lo > 1:
            mid = (lo + hi) // 2
            try:
                first_at(mid)
                hi = mid
            except sqlite3.DatabaseError:
                lo = mid
        start = hi


def recover(path: Path, open_new: Callable[[Path], Any]) -> Recovered:
    """Save every readable conversation and message of the damaged history at ``path`` into a new file that
    replaces it; the damaged file (and its ``-wal``/``-shm``) is renamed ``<name>.damaged-<unix time>``.
    ``open_new(path)`` opens a fresh, empty history with the current schema (``Store``) and returns it.
    Raises ``sqlite3.DatabaseError`` when nothing at all can be read (the schema page is gone)."""
    stamp = int(time.time())
    tmp = path.with_name(path.name + f".recovering-{stamp}")
    src = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, isolation_level=None)
    src.row_factory = sqlite3.Row
    src.text_factory = lambda b: b.decode("utf-8", "replace")
    skipped: list[int] = []
    try:
        tables = {r[0] for r in src.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        new = open_new(tmp)
        db: sqlite3.Connection = new.db

        def columns(table: str) -> list[str]:
            if table not in tables:
                return []
            have = [r[1] for r in src.execute(f"PRAGMA table_info({table})")]
            want = {r[1] for r in db.execute(f"PRAGMA table_info({table})")}
            return [c for c in have if c in want]

        conv_ids: set[int] = set()
        n_msgs = n_orphans = 0
        db.execute("BEGIN")
        folder_ids: set[int] = set()           # folders first: a chat's folder_id must name one that was saved
        fcols = columns("folders")
        for row in (_readable_rows(src, "folders", fcols, skipped) if {"id", "name"} <= set(fcols) else ()):
            try:
                db.execute(f"INSERT INTO folders({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
                           tuple(row.values()))
                folder_ids.add(int(row["id"]))
            except sqlite3.IntegrityError:     # a name twice, a NULL where one is needed: that folder is left out
                continue
        ccols = columns("conversations")
        for row in (_readable_rows(src, "conversations", ccols, skipped) if "id" in ccols else ()):
            if row.get("folder_id") is not None and row["folder_id"] not in folder_ids:
                row["folder_id"] = None        # its folder was lost: the chat is kept, in no folder
            db.execute(f"INSERT INTO conversations({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
                       tuple(row.values()))
            conv_ids.add(int(row["id"]))
        lost: dict[int, int] = {}               # lost conversation id → its stand-in
        mcols = columns("messages")
        for row in (_readable_rows(src, "messages", mcols, skipped) if "conversation_id" in mcols else ()):
            cid = int(row.get("conversation_id") or 0)
            if cid not in conv_ids:
                if cid not in lost:
                    t = float(row.get("created") or time.time())
                    cur = db.execute("INSERT INTO conversations(title, created, updated) VALUES (?,?,?)",
                                     (f"Recovered messages ({len(lost) + 1})", t, t))
                    lost[cid] = int(cur.lastrowid or 0)
                row["conversation_id"] = lost[cid]
                n_orphans += 1
            db.execute(f"INSERT INTO messages({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
                       tuple(row.values()))
            n_msgs += 1
        db.execute("COMMIT")
        new.close()
    finally:
        src.close()
    aside = path.with_name(f"{path.name}.damaged-{stamp}")
    for suffix in ("", "-wal", "-shm"):
        part = path.with_name(path.name + suffix)
        if part.exists():
            part.rename(path.with_name(f"{path.name}{suffix}.damaged-{stamp}"))
    for suffix in ("-wal", "-shm"):
        part = tmp.with_name(tmp.name + suffix)
        if part.exists():
            part.unlink()
    tmp.rename(path)
    result = Recovered(len(conv_ids) + len(lost), n_msgs, n_orphans, len(skipped), aside)
    log.warning("history %s was damaged: recovered %s; damaged file kept as %s", path, result, aside.name)
    return result


def _read_only(path: Path) -> sqlite3.Connection:
    """A read-only connection to the SQLite file at ``path`` (by URI, so a missing file is an error, never made)."""
    return sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)


def _copy(source: Path, target: Path) -> None:
    """Copy the SQLite file ``source`` (read-only) to ``target`` with SQLite's online backup API, 256 pages a step
    (consistent even while another connection writes). Raises ``sqlite3.Error`` or ``OSError``."""
    src = _read_only(source)
    try:
        dst = sqlite3.connect(str(target))
        try:
            src.backup(dst, pages=256)
        finally:
            dst.close()
    finally:
        src.close()


def backup_daily(path: Path, folder: Path, keep: int = KEEP_BACKUPS, today: date | None = None) -> Path | None:
    """Copy the history at ``path`` to ``folder/history-YYYY-MM-DD.sqlite3`` with SQLite's online backup API
    (consistent even while the app writes), unless today's copy exists; delete all but the newest ``keep``.
    Returns the new backup's path, or None (already done today, or the copy failed: logged, never raised)."""
    day = (today or date.today()).isoformat()
    target = folder / f"history-{day}.sqlite3"
    if target.exists():
        return None
    tmp = target.with_suffix(".partial")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        _copy(path, tmp)
        tmp.replace(target)
    except (OSError, sqlite3.Error) as exc:
        log.warning("history backup to %s failed: %s", target, exc)
        tmp.unlink(missing_ok=True)
        return None
    for old in sorted(folder.glob("history-*.sqlite3"))[:-keep]:
        old.unlink(missing_ok=True)
    log.info("history backed up to %s", target)
    return target


def start_daily_backup(path: Path, folder: Path) -> threading.Thread:
    """``backup_daily`` in a daemon thread with its own connection (WAL lets it read while the app writes), so a
    large history never delays the window."""
    t = threading.Thread(target=backup_daily, args=(path, folder), name="brook-history-backup", daemon=True)
    t.start()
    return t


def recovery_notice(r: Recovered, why: str, backups: Path) -> str:
    """The sentence the window shows after ``recover``."""
    text = (f"The chat history file was damaged ({why}). Brook saved {r.conversations} chat(s) with "
            f"{r.messages} message(s) into a new history file; the damaged file is kept as {r.aside.name}.")
    if r.skipped:
        text += " Some parts could not be read."
    if r.orphans:
        text += f" {r.orphans} message(s) whose chat was lost are in \"Recovered messages\"."
    offer = backup_offer(backups, r.aside.with_name(r.aside.name.split(".damaged-")[0]))
    if offer:
        text += " " + offer
    return text


def latest_backup(folder: Path) -> tuple[Path, int] | None:
    """The newest daily backup in ``folder`` that SQLite can read, with its number of chats; None when there is
    none (a backup that cannot be read is passed over)."""
    for path in sorted(folder.glob("history-*.sqlite3"), reverse=True) if folder.is_dir() else []:
        try:
            db = _read_only(path)
            try:
                chats = int(db.execute("SELECT COUNT(*) FROM conversations").fetchone()[0])
            finally:
                db.close()
        except sqlite3.Error:
            continue
        return path, chats
    return None


@dataclass(frozen=True, slots=True)
class Restored:
    """What ``restore_backup`` did: the ``backup`` restored and its ``chats``; ``aside``: where the history file it
    replaced is now (None when there was none)."""

    backup: Path
    chats: int
    aside: Path | None


def restore_backup(store: Any, backup: Path) -> Restored:
    """Make ``backup`` (a daily backup, or any Brook history file) the history of ``store`` (a ``Store`` on a
    file): the backup is checked (``PRAGMA quick_check``) and copied next to the history with SQLite's backup API,
    the history file (with its ``-wal``/``-shm``) is renamed ``<name>.before-restore-<unix time>``, the copy takes
    its place and ``store`` reopens on it (an older backup is migrated to the current schema); ``store.problem``
    is cleared. Raises ``HistoryError`` with a sentence when the store is read-only or in memory, or the backup
    cannot be read or is damaged (nothing changed then), or the swap fails (the old file is put back)."""
    path = Path(str(store.path))
    if str(store.path) == ":memory:" or store.read_only:
        raise HistoryError("This session's chat history cannot be written, so a backup cannot be restored into "
                           "it. Quit Brook and copy the backup over the history file instead.")
    try:
        src = _read_only(backup)
        try:
            why = damage(src)
            chats = int(src.execute("SELECT COUNT(*) FROM conversations").fetchone()[0]) if why is None else 0
        finally:
            src.close()
    except sqlite3.Error as exc:
        raise HistoryError(f"The backup {backup} cannot be read ({exc}); nothing was changed.") from None
    if why is not None:
        raise HistoryError(f"The backup {backup} is damaged ({why}); nothing was changed.")
    stamp = int(time.time())
    tmp = path.with_name(f"{path.name}.restoring-{stamp}")
    try:
        _copy(backup, tmp)
    except (OSError, sqlite3.Error) as exc:
        tmp.unlink(missing_ok=True)
        raise HistoryError(f"The backup {backup} could not be copied ({exc}); nothing was changed.") from None
    store.db.close()
    moved: list[tuple[Path, Path]] = []
    aside = path.with_name(f"{path.name}.before-restore-{stamp}")
    try:
        for suffix in ("", "-wal", "-shm"):
            part = path.with_name(path.name + suffix)
            if part.exists():
                part.rename(path.with_name(f"{path.name}{suffix}.before-restore-{stamp}"))
                moved.append((path.with_name(f"{path.name}{suffix}.before-restore-{stamp}"), part))
        tmp.rename(path)
    except OSError as exc:
        for was, back in reversed(moved):
            was.rename(back)
        tmp.unlink(missing_ok=True)
        store.db = store._connect()
        raise HistoryError(f"The backup could not replace {path} ({exc.strerror or exc}); nothing was changed.") \
            from None
    store.db = store._connect()
    store.problem = None
    log.warning("history %s restored from %s (%d chats); the file it replaced is kept as %s", path, backup, chats,
                aside.name)
    return Restored(backup, chats, aside if moved else None)


def backup_offer(folder: Path, history: Path) -> str:
    """A sentence offering the newest readable daily backup (its day, chats and how to go back to it), or ""."""
    found = latest_backup(folder)
    if found is None:
        return ""
    path, chats = found
    day = path.stem.removeprefix("history-")
    return (f"A backup of {day} with {chats} chat(s) exists: {path}. To go back to it, quit Brook and copy it "
            f"over {history}.")


def describe(exc: sqlite3.Error, path: Any) -> str:
    """A sentence for a SQLite error that is not damage."""
    text = str(exc)
    low = text.lower()
    if "readonly" in low or "read-only" in low:
        return f"The chat history ({path}) is read-only this session: this change was not saved."
    if "locked" in low or "busy" in low:
        return f"The chat history ({path}) is locked by another program: this change was not saved."
    if "full" in low:
        return f"The disk holding the chat history ({path}) is full: this change was not saved."
    return f"The chat history ({path}) could not be used: {text}."


def guard_store(cls: type) -> None:
    """Wrap every public method of ``cls`` (a ``Store``): a SQLite error becomes ``HistoryError`` with a
    sentence for the window; when it says the file is damaged, the store first repairs itself
    (``recover_now``) and runs the call once more."""

    def guarded(method: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(method)
        def call(self: Any, *args: Any, **kwargs: Any) -> Any:
            try:
                return method(self, *args, **kwargs)
            except sqlite3.Error as exc:
                if not (is_corruption(exc) and not self.read_only and str(self.path) != ":memory:"):
                    log.error("history: %s failed: %s", method.__name__, exc)
                    raise HistoryError(describe(exc, self.path)) from exc
                log.error("history: %s found the file damaged: %s", method.__name__, exc)
                problem = self.recover_now(str(exc))
            try:
                return method(self, *args, **kwargs)
            except sqlite3.Error as exc:
                raise HistoryError(describe(exc, self.path)) from exc
            finally:
                log.info("history repaired: %s", problem)
        return call

    for name, value in list(vars(cls).items()):
        if not name.startswith("_") and isinstance(value, types.FunctionType) and \
                name not in ("close", "migrate", "recover_now"):
            setattr(cls, name, guarded(value))
