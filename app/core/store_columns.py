"""Columns added to the history schema after version 1, added in place to older files (idempotent).

Each is nullable, so rows written before it existed stay valid. Kept apart from ``Store.migrate``'s numbered
versions so features can add a column without renumbering: ``ensure_columns`` checks ``PRAGMA table_info``.
"""

from __future__ import annotations

import sqlite3

#: table → [(column, SQL type)]
ADDED_COLUMNS: dict[str, list[tuple[str, str]]] = {
    # a reply's provenance as JSON (model file, size, SHA-256, chat template source, seed): app.core.provenance
    "messages": [("provenance", "TEXT")],
    # the chat's sampling preset name (app.core.presets) and its own parameter overrides as JSON
    "conversations": [("preset", "TEXT"), ("params", "TEXT")],
}


def ensure_columns(db: sqlite3.Connection) -> list[str]:
    """Add any missing column of ``ADDED_COLUMNS``; returns the ``table.column`` names added."""
    added = []
    for table, cols in ADDED_COLUMNS.items():
        have = {r[1] for r in db.execute(f"PRAGMA table_info({table})")}
        for name, kind in cols:
            if name not in have:
                db.execute(f"ALTER TABLE {table} ADD COLUMN {name} {kind}")
                added.append(f"{table}.{name}")
    return added
