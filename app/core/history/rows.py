"""A ``messages`` row read back as a ``Message`` (``message_from_row``), cleaned field by field: a value of the
wrong type or range is left out and logged (``app.core.history.schema``), a row whose role, status or text
cannot be read becomes a damaged message, never an exception. The per-row work is what opening a long chat
costs (``python -m app.bench history``): fields that are empty cost nothing, parameters and provenance shared by
a chat's replies are cleaned once (by their stored text), and the pydantic schema is imported with the first
chat read, not at start-up."""

from __future__ import annotations

import functools
import json
import logging
import sqlite3
from collections.abc import Callable, Sequence
from typing import Any

from app.core.conversation import Message, MessageStatus, Role
from app.core.history.clean import clean_text, clean_time
from app.core.history.columns import load_versions
from app.core.text import decode_utf8

log = logging.getLogger("brook.store")

#: The columns ``message_from_row`` reads, in this order.
MESSAGE_COLUMNS = ("id", "role", "content", "status", "model", "params", "stop_reason", "error", "metrics",
                   "provenance", "created", "versions")
_ROLES = {r.value: r for r in Role}
_STATUSES = {s.value: s for s in MessageStatus}


class _Where:
    """Names a stored field in log lines (formatted only when a line is written)."""

    __slots__ = ("field", "mid")

    def __init__(self, mid: Any, field: str) -> None:
        self.mid, self.field = mid, field

    def __str__(self) -> str:
        return f"message {self.mid}: {self.field}"


def schema_module() -> Any:
    """``app.core.history.schema`` (pydantic), imported when the first chat is read, not at start-up."""
    from app.core.history import schema

    return schema


def warm_schema() -> None:
    """:func:`schema_module` ahead of the first chat read, on a thread of its own (the window starts one): a failure
    only logs, and the first chat read imports it again (and says so there if it fails). (Under PySide6's own
    import hook, which reads each new module's attributes, pydantic's import once failed circularly on that
    thread; the launcher installs ``app.ui.window.feature_check`` instead.)"""
    try:
        schema_module()
    except Exception:
        log.warning("importing the history schema ahead failed; the first chat read imports it", exc_info=True)


def message_from_row(r: Any) -> Message:
    """A ``messages`` row (a sequence of ``MESSAGE_COLUMNS``, or a ``sqlite3.Row``) as a ``Message``; never raises
    for what the row holds. Fields of the wrong type or range are left out (``app.core.history.schema``, logged);
    a row whose role, status or text cannot be read is shown as a damaged message: status ``error`` with a
    sentence saying what is wrong, its text kept where it has one. A reply that was still streaming when the app
    died comes back as ``stopped``."""
    if isinstance(r, sqlite3.Row):
        r = tuple(r[c] for c in MESSAGE_COLUMNS)
    return message_from_tuple(r, schema_module())


def message_from_tuple(r: Sequence[Any], schema: Any) -> Message:
    """``message_from_row`` of a tuple in ``MESSAGE_COLUMNS``' order, with the schema module given (per row: no
    import statement)."""
    mid, role_v, content, status_v, model, params, stop_reason, error, metrics, provenance, created, versions = r
    damaged: list[str] = []
    role = _ROLES.get(role_v) if isinstance(role_v, str) else None
    if role is None:
        role = Role.ASSISTANT
        damaged.append(f"its role {clean_text(role_v)!r} is unknown")
    status = _STATUSES.get(status_v) if isinstance(status_v, str) else None
    if status is None:
        status = MessageStatus.ERROR
        damaged.append(f"its status {clean_text(status_v)!r} is unknown")
    if not isinstance(content, str):
        damaged.append("its text is not text")
        content = clean_text(content) or ""
    if not status.final:
        status = MessageStatus.STOPPED
    error = clean_text(error)
    if damaged:
        log.warning("history: message %s is damaged: %s", mid, "; ".join(damaged))
        status = MessageStatus.ERROR
        error = "This message is damaged in the history file: " + "; ".join(damaged) + "."
    m = Message.decoded(role, content, status=status, model=clean_text(model),
                params=_cleaned(schema.clean_params, params, mid, "params"),
                stop_reason=clean_text(stop_reason), error=error,
                metrics=None if metrics is None else schema.clean_metrics(schema.loads_json(metrics),
                                                                       _Where(mid, "metrics")),
                provenance=_cleaned(schema.clean_provenance, provenance, mid, "provenance"),
                created=clean_time(created))
    m.db_id = mid
    if isinstance(versions, str):
        load_versions(m, versions)
        m.versions = schema.clean_versions(m.versions, _Where(mid, "versions"))
        m.version_index = min(m.version_index, len(m.versions or []))
    return m


@functools.lru_cache(maxsize=512)
def _cleaned_json(clean: Callable[..., Any], raw: str) -> Any:
    return clean(loads(raw), "a stored value")


def _cleaned(clean: Callable[..., Any], raw: Any, mid: Any, field: str) -> Any:
    """``clean(json.loads(raw))``, cached by the stored text (a chat's replies share their parameters and
    provenance); a copy, so no two messages share one dict. None (a user message's) is None, at no cost."""
    if raw is None:
        return None
    if not isinstance(raw, str):
        return clean(loads(raw), _Where(mid, field))
    out = _cleaned_json(clean, raw)
    return dict(out) if isinstance(out, dict) else out


def loads(v: Any) -> Any:
    """A stored JSON value parsed, or None (not text, or not JSON)."""
    if not isinstance(v, (str, bytes)):
        return None
    try:
        return json.loads(v)
    except (ValueError, RecursionError):
        return None


def light_fields(role_v: Any, status_v: Any) -> tuple[Role, MessageStatus] | None:
    """Role and status of a row as ``message_from_tuple`` reads them (a reply still streaming when the app died:
    ``stopped``), or None when either is unknown (the row is then read whole: it is damaged)."""
    role = _ROLES.get(role_v) if isinstance(role_v, str) else None
    status = _STATUSES.get(status_v) if isinstance(status_v, str) else None
    if role is None or status is None:
        return None
    return role, status if status.final else MessageStatus.STOPPED


def rows(db: sqlite3.Connection, sql: str, args: tuple[Any, ...]) -> list[Any]:
    """``sql``'s rows as plain tuples. Text is decoded by SQLite's own strict UTF-8 decoder; only rows with invalid
    UTF-8 in them (written by another program) are read again with U+FFFD for the bad bytes."""
    db.text_factory = str           # strict, in C: a row's text then needs no check for lone surrogates
    try:
        cur = db.cursor()
        cur.row_factory = None      # plain tuples in MESSAGE_COLUMNS' order (a Row looks names up: slow)
        return cur.execute(sql, args).fetchall()
    except sqlite3.OperationalError as exc:
        if "decode" not in str(exc):
            raise
        db.text_factory = decode_utf8          # invalid UTF-8 somewhere: U+FFFD for the bad bytes
        cur = db.cursor()
        cur.row_factory = None
        return cur.execute(sql, args).fetchall()
    finally:
        db.text_factory = decode_utf8


def gone(mid: int) -> Message:
    """A message whose row went between two reads (another program deleted it)."""
    m = Message(Role.ASSISTANT, "", status=MessageStatus.ERROR, error="This message is no longer in the history file.")
    m.db_id = mid
    return m
