"""A history file as Brook wrote it before search, provenance and stored timelines (schema version 1)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

#: The version-1 tables, one chat "old chat" (id 1); the caller's ``INSERT INTO messages`` rows follow.
V1_SCHEMA = """
    CREATE TABLE conversations (id INTEGER PRIMARY KEY, title TEXT NOT NULL, system_prompt TEXT,
        created REAL NOT NULL, updated REAL NOT NULL);
    CREATE TABLE messages (id INTEGER PRIMARY KEY, conversation_id INTEGER NOT NULL REFERENCES
        conversations(id) ON DELETE CASCADE, role TEXT NOT NULL, content TEXT NOT NULL, status TEXT NOT NULL,
        model TEXT, params TEXT, stop_reason TEXT, error TEXT, metrics TEXT, created REAL NOT NULL);
    INSERT INTO conversations VALUES (1, 'old chat', NULL, 1.0, 2.0);
"""


def write_v1_history(path: Path, messages_sql: str) -> None:
    """Write a version-1 history file at ``path``: :data:`V1_SCHEMA`, then ``messages_sql`` (INSERT statements
    into ``messages``), then ``PRAGMA user_version = 1``."""
    db = sqlite3.connect(path)
    db.executescript(V1_SCHEMA + messages_sql + "\nPRAGMA user_version = 1;\n")
    db.commit()
    db.close()
