"""Pinned chats and folders of chats: how the sidebar groups the history.

Stored in the history file (schema version 3, ``Store.migrate``):

- ``folders(id, name, collapsed, created)``: a folder's name is unique whatever its case ("Work" and "work" are
  one folder) and at most ``MAX_NAME`` characters; ``collapsed`` is whether the sidebar shows it closed.
- ``conversations.pinned`` (1 when pinned) and ``conversations.folder_id`` (the folder it is in; NULL: none;
  deleting a folder sets it NULL, so the folder's chats stay, ungrouped).

A pinned chat is shown at the top of the sidebar whatever its folder; its folder is kept for when it is unpinned.
Values another program wrote (a ``pinned`` of ``"yes"``, a ``folder_id`` pointing nowhere) read as not pinned /
no folder, never as an error. Every function takes the history's ``sqlite3.Connection`` and raises
``sqlite3.Error`` for SQLite's own failures (``Store`` turns those into ``HistoryError``).
"""

from __future__ import annotations

import re
import sqlite3
import time
from dataclasses import dataclass

from app.core.errors import BrookError
from app.core.text import valid_text

#: Longest folder name (characters, after ``folder_name``).
MAX_NAME = 120

SCHEMA = """
CREATE TABLE IF NOT EXISTS folders (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE COLLATE NOCASE,
    collapsed INTEGER NOT NULL DEFAULT 0,
    created REAL NOT NULL
);
"""

#: The columns of ``conversations`` the grouping adds (``app.core.history.columns.ADDED_COLUMNS``).
COLUMNS = [("pinned", "INTEGER"), ("folder_id", "INTEGER REFERENCES folders(id) ON DELETE SET NULL")]

_SPACES = re.compile(r"[\s\x00-\x1f\x7f-\x9f\u2028\u2029]+")


class FolderNameError(BrookError):
    """A folder name that cannot be used: ``kind`` is ``"empty"``, ``"long"`` or ``"taken"`` (the name of another
    folder), so the window can say it in its own language; ``name`` is the name as normalised."""

    def __init__(self, message: str, kind: str, name: str = "") -> None:
        super().__init__(message)
        self.kind = kind
        self.name = name


@dataclass(frozen=True, slots=True)
class FolderInfo:
    """A folder as the sidebar shows it."""

    id: int
    name: str
    collapsed: bool


def folder_name(text: str) -> str:
    """``text`` as a folder name: valid Unicode, every run of white space or control characters (a line break, a
    tab, NUL) one space, no space at either end. Raises ``FolderNameError`` when nothing is left or it is longer
    than ``MAX_NAME`` characters."""
    name = _SPACES.sub(" ", valid_text(text)).strip()
    if not name:
        raise FolderNameError("A folder needs a name.", "empty")
    if len(name) > MAX_NAME:
        raise FolderNameError(f"A folder name can have at most {MAX_NAME} characters (this one has {len(name):,}).",
                              "long", name)
    return name


def ensure_table(db: sqlite3.Connection) -> None:
    """Create the ``folders`` table when missing (schema version 3)."""
    db.executescript(SCHEMA)


def list_folders(db: sqlite3.Connection) -> list[FolderInfo]:
    """Every folder, by name (case-insensitive), then by id."""
    out = []
    for fid, name, collapsed in db.execute("SELECT id, name, collapsed FROM folders ORDER BY name COLLATE NOCASE, id"):
        shown = name if isinstance(name, str) else (name.decode("utf-8", "replace") if isinstance(name, bytes)
                                                      else str(name))
        out.append(FolderInfo(int(fid), shown, collapsed == 1))
    return out


def find_folder(db: sqlite3.Connection, name: str) -> int | None:
    """The id of the folder called ``name`` (any case), or None."""
    row = db.execute("SELECT id FROM folders WHERE name = ?", (name,)).fetchone()
    return None if row is None else int(row[0])


def create_folder(db: sqlite3.Connection, name: str) -> int:
    """A new folder called ``folder_name(name)``; returns its id. Raises ``FolderNameError`` for a bad name or one
    another folder has."""
    name = folder_name(name)
    if find_folder(db, name) is not None:
        raise FolderNameError(f"A folder called “{name}” already exists.", "taken", name)
    cur = db.execute("INSERT INTO folders(name, created) VALUES (?, ?)", (name, time.time()))
    return int(cur.lastrowid or 0)


def folder_for_import(db: sqlite3.Connection, name: str) -> int:
    """The folder called ``name`` (any case), made when there is none (an import's ``"folder"``)."""
    name = folder_name(name)
    found = find_folder(db, name)
    return found if found is not None else create_folder(db, name)


def rename_folder(db: sqlite3.Connection, folder_id: int, name: str) -> str:
    """Call folder ``folder_id`` ``folder_name(name)``; returns the name given. Raises ``FolderNameError`` (bad name,
    another folder's name) or ``KeyError`` (no such folder)."""
    name = folder_name(name)
    other = find_folder(db, name)
    if other is not None and other != folder_id:
        raise FolderNameError(f"A folder called “{name}” already exists.", "taken", name)
    if db.execute("UPDATE folders SET name = ? WHERE id = ?", (name, folder_id)).rowcount == 0:
        raise KeyError(folder_id)
    return name


def delete_folder(db: sqlite3.Connection, folder_id: int) -> list[int]:
    """Delete folder ``folder_id``; its chats stay, in no folder. Returns their ids (for an undo)."""
    ids = [int(r[0]) for r in db.execute("SELECT id FROM conversations WHERE folder_id = ?", (folder_id,))]
    db.execute("UPDATE conversations SET folder_id = NULL WHERE folder_id = ?", (folder_id,))
    db.execute("DELETE FROM folders WHERE id = ?", (folder_id,))
    return ids


def set_collapsed(db: sqlite3.Connection, folder_id: int, collapsed: bool) -> None:
    """Remember whether folder ``folder_id`` is shown closed."""
    db.execute("UPDATE folders SET collapsed = ? WHERE id = ?", (int(collapsed), folder_id))


def set_pinned(db: sqlite3.Connection, conv_id: int, pinned: bool) -> None:
    """Pin chat ``conv_id`` to the top of the sidebar, or unpin it. Raises ``KeyError`` when there is no such chat."""
    if db.execute("UPDATE conversations SET pinned = ? WHERE id = ?", (1 if pinned else None, conv_id)).rowcount == 0:
        raise KeyError(conv_id)


def move_to_folder(db: sqlite3.Connection, conv_id: int, folder_id: int | None) -> None:
    """Put chat ``conv_id`` into folder ``folder_id`` (None: out of any folder). Raises ``KeyError`` when the chat
    or the folder does not exist."""
    if folder_id is not None and db.execute("SELECT 1 FROM folders WHERE id = ?", (folder_id,)).fetchone() is None:
        raise KeyError(folder_id)
    if db.execute("UPDATE conversations SET folder_id = ? WHERE id = ?", (folder_id, conv_id)).rowcount == 0:
        raise KeyError(conv_id)
