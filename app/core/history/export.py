"""Export chats to Markdown and JSON, and import JSON back (lossless).

JSON (``FORMAT`` = ``"brook-chats"``, version 1), UTF-8::

    {"format": "brook-chats", "version": 1, "exported": <unix s>,
     "conversations": [{"title", "system_prompt", "preset", "params", "created", "updated",
                        "messages": [{"role", "content", "status", "created", "model", "params",
                                      "stop_reason", "error", "metrics", "provenance",
                                      "versions": null | {"shown": i, "others": [{content, status, …}]},
                                      "timeline": null | {...}},
                                     ...]}, ...]}

Every field a chat has in the history is in it (times in seconds since the epoch), so ``import_json`` of an
export gives the same chats (new row ids). A reply that was still streaming when the app died is exported as
``stopped``, as the window shows it. A reply's ``timeline`` is its stream timeline (every chunk's four times,
queue, ticks; the plain shape of ``app.core.history.timelines``), absent or null when none was recorded.
Markdown is for reading: one ``#`` section per chat, one ``##`` per message, each reply followed by its
provenance (``app.core.streaming.provenance.describe``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from app.core.conversation import Conversation, MessageStatus, Role
from app.core.errors import BrookError
from app.core.history import timelines as timeline_store
from app.core.streaming.provenance import describe

FORMAT = "brook-chats"
VERSION = 1


class ChatImportError(BrookError):
    """The file is not a Brook chat export, or part of it is malformed (nothing was imported)."""


def conversation_to_dict(store: Any, conv_id: int) -> dict[str, Any]:
    """One chat of ``store`` (an ``app.core.history.store.Store``) as a JSON-ready dict. Raises ``KeyError``."""
    conv: Conversation = store.load_conversation(conv_id)
    row = store.db.execute("SELECT created, updated FROM conversations WHERE id = ?", (conv_id,)).fetchone()
    timelines = timeline_store.load_chat(store.db, conv_id)
    return {
        "title": conv.title, "system_prompt": conv.system_prompt, "preset": conv.preset, "params": conv.params,
        "created": row[0], "updated": row[1],
        "messages": [{"role": m.role.value, "content": m.text, "status": m.status.value, "created": m.created,
                      "model": m.model, "params": m.params, "stop_reason": m.stop_reason, "error": m.error,
                      "metrics": m.metrics, "provenance": m.provenance,
                      "versions": {"shown": m.version_index, "others": m.versions} if m.versions else None,
                      "timeline": timelines.get(m.db_id) if m.db_id is not None else None}
                     for m in conv.messages],
    }


def export_json(store: Any, conv_ids: Iterable[int] | None = None) -> dict[str, Any]:
    """The chats ``conv_ids`` (default: all, newest first) as the export document."""
    ids = list(conv_ids) if conv_ids is not None else [c.id for c in store.list_conversations()]
    return {"format": FORMAT, "version": VERSION, "exported": time.time(),
            "conversations": [conversation_to_dict(store, i) for i in ids]}


def export_markdown(store: Any, conv_ids: Iterable[int] | None = None) -> str:
    """The chats ``conv_ids`` (default: all) as one Markdown text."""
    doc = export_json(store, conv_ids)
    return "\n\n---\n\n".join(chat_markdown(c) for c in doc["conversations"]) + "\n"


def chat_markdown(chat: dict[str, Any]) -> str:
    """One exported chat dict as Markdown."""
    from app.core.conversation import Message

    out = [f"# {chat['title']}", "", f"*{_when(chat['created'])}*"]
    if chat.get("system_prompt"):
        out += ["", "**System prompt:**", "", _quote(chat["system_prompt"])]
    for m in chat["messages"]:
        who = {"user": "You", "assistant": "Assistant", "system": "System"}.get(m["role"], m["role"])
        head = f"## {who} · {_when(m['created'])}"
        if m["status"] not in ("done",):
            head += f" · {m['status']}"
        out += ["", head, "", m["content"] or "*(empty)*"]
        if m.get("error"):
            out += ["", f"> ⚠ {m['error']}"]
        if m["role"] == "assistant":
            msg = Message(Role.ASSISTANT, model=m.get("model"), params=m.get("params"), metrics=m.get("metrics"),
                          stop_reason=m.get("stop_reason"), provenance=m.get("provenance"))
            rows = describe(msg)
            if rows:
                out += ["", "<details><summary>Provenance</summary>", "",
                        *(f"- {k}: {v}" for k, v in rows), "", "</details>"]
            others = (m.get("versions") or {}).get("others") or []
            if others:
                shown = (m.get("versions") or {}).get("shown", len(others))
                out += ["", f"<details><summary>Other versions of this reply ({len(others)}; this one is "
                        f"{shown + 1} of {len(others) + 1})</summary>"]
                for v in others:
                    out += ["", f"*{_when(v.get('created') or 0)} · {v.get('status', '')}*", "", v.get("content") or ""]
                out += ["", "</details>"]
    return "\n".join(out)


def _when(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%d %H:%M UTC")


def _quote(text: str) -> str:
    return "\n".join("> " + line for line in text.splitlines())


def write_exports(store: Any, folder: Path, conv_ids: Iterable[int] | None = None) -> list[Path]:
    """Write ``brook-chats-<UTC time>.json`` and ``.md`` into ``folder`` (created if missing); returns the two
    paths. Raises ``OSError`` when the folder cannot be written."""
    folder.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    ids = list(conv_ids) if conv_ids is not None else None
    doc = export_json(store, ids)
    paths = [folder / f"brook-chats-{stamp}.json", folder / f"brook-chats-{stamp}.md"]
    paths[0].write_text(json.dumps(doc, ensure_ascii=False, indent=1), "utf-8")
    paths[1].write_text("\n\n---\n\n".join(chat_markdown(c) for c in doc["conversations"]) + "\n", "utf-8")
    return paths


def import_json(store: Any, doc: Any) -> list[int]:
    """Add the chats of an export document (parsed JSON) to ``store`` as new chats, all or nothing; returns
    their new ids in the document's order. Raises ``ChatImportError`` naming the first bad field."""
    chats = _validated(doc)
    db = store.db
    ids: list[int] = []
    db.execute("BEGIN")
    try:
        for c in chats:
            cur = db.execute("INSERT INTO conversations(title, system_prompt, created, updated, preset, params) "
                             "VALUES (?,?,?,?,?,?)", (c["title"], c.get("system_prompt"), c["created"], c["updated"],
                                                      c.get("preset"), _dumps(c.get("params"))))
            cid = int(cur.lastrowid or 0)
            ids.append(cid)
            for m in c["messages"]:
                cur = db.execute(
                    "INSERT INTO messages(conversation_id, role, content, status, created, model, params, stop_reason, "
                    "error, metrics, provenance, versions) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                    (cid, m["role"], m["content"], m["status"], m["created"], m.get("model"), _dumps(m.get("params")),
                     m.get("stop_reason"), m.get("error"), _dumps(m.get("metrics")), _dumps(m.get("provenance")),
                     _dumps(m.get("versions"))))
                if m.get("timeline") is not None:
                    timeline_store.save(db, int(cur.lastrowid or 0), m["timeline"])
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    return ids


def import_file(store: Any, path: Path) -> list[int]:
    """``import_json`` of a file. Raises ``ChatImportError`` (also for unreadable or non-JSON files)."""
    try:
        doc = json.loads(path.read_text("utf-8"))
    except OSError as exc:
        raise ChatImportError(f"Cannot read {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise ChatImportError(f"{path.name} is not JSON: {exc}") from None
    return import_json(store, doc)


def _dumps(v: Any) -> str | None:
    return None if v is None else json.dumps(v, ensure_ascii=False)


def _validated(doc: Any) -> list[dict[str, Any]]:
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ChatImportError("This file is not a Brook chat export (no \"format\": \"brook-chats\").")
    if not isinstance(doc.get("version"), int) or doc["version"] > VERSION:
        raise ChatImportError(f"This export is of a newer version ({doc.get('version')!r}) than this Brook reads "
                              f"({VERSION}); update Brook.")
    chats = doc.get("conversations")
    if not isinstance(chats, list):
        raise ChatImportError("\"conversations\" is missing or not a list.")
    roles = {r.value for r in Role}
    statuses = {s.value for s in MessageStatus}
    for i, c in enumerate(chats):
        where = f"conversation {i + 1}"
        _need(c, dict, where)
        _need(c.get("title"), str, f"{where}: title")
        for k in ("created", "updated"):
            _need(c.get(k), (int, float), f"{where}: {k}")
        _need(c.get("messages"), list, f"{where}: messages")
        for j, m in enumerate(c["messages"]):
            mw = f"{where}, message {j + 1}"
            _need(m, dict, mw)
            _need(m.get("content"), str, f"{mw}: content")
            _need(m.get("created"), (int, float), f"{mw}: created")
            if m.get("role") not in roles:
                raise ChatImportError(f"{mw}: role must be one of {sorted(roles)}, not {m.get('role')!r}.")
            if m.get("status") not in statuses:
                raise ChatImportError(f"{mw}: status must be one of {sorted(statuses)}, not {m.get('status')!r}.")
            for k in ("params", "metrics", "provenance", "versions"):
                if m.get(k) is not None:
                    _need(m[k], dict, f"{mw}: {k}")
            if m.get("timeline") is not None:
                try:
                    timeline_store.validated(m["timeline"])
                except ValueError as exc:
                    raise ChatImportError(f"{mw}: {exc}.") from None
    return chats


def _need(value: Any, kind: type | tuple[type, ...], where: str) -> None:
    if not isinstance(value, kind) or isinstance(value, bool):
        raise ChatImportError(f"{where} is missing or of the wrong type ({type(value).__name__}).")
