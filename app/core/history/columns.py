"""Columns added to the history schema after version 1, added in place to older files (idempotent).

Each is nullable, so rows written before it existed stay valid. Kept apart from ``Store.migrate``'s numbered
versions so features can add a column without renumbering: ``ensure_columns`` checks ``PRAGMA table_info``.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from app.core.history.folders import COLUMNS as GROUPING_COLUMNS

#: table → [(column, SQL type)]
ADDED_COLUMNS: dict[str, list[tuple[str, str]]] = {
    # a reply's provenance as JSON (model file, size, SHA-256, chat template source, seed): streaming.provenance
    "messages": [("provenance", "TEXT"),
                 # a reply's other versions (regenerate keeps them) as JSON {"shown": i, "others": [...]}
                 ("versions", "TEXT")],
    # the chat's sampling preset name (app.core.chat.presets) and its own parameter overrides as JSON; whether it
    # is pinned and its folder (app.core.history.folders)
    "conversations": [("preset", "TEXT"), ("params", "TEXT"), *GROUPING_COLUMNS],
}


def versions_json(msg: Any) -> str | None:
    """``msg``'s other versions for the ``versions`` column (None when it has only one)."""
    if not msg.versions:
        return None
    return json.dumps({"shown": msg.version_index, "others": msg.versions}, ensure_ascii=False)


def load_versions(msg: Any, raw: str | None) -> None:
    """Set ``msg.versions`` / ``msg.version_index`` from the column (ignores a malformed value)."""
    if not raw:
        return
    try:
        v = json.loads(raw)
        others = [o for o in v["others"] if isinstance(o, dict)]
        shown = int(v["shown"])
    except (ValueError, KeyError, TypeError):
        return
    msg.versions, msg.version_index = others or None, max(0, min(shown, len(others)))


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
