"""Export chats to Markdown and JSON, and import JSON back (lossless).

JSON (``FORMAT`` = ``"brook-chats"``, version 1), UTF-8::

    {"format": "brook-chats", "version": 1, "exported": <unix s>,
     "conversations": [{"title", "system_prompt", "preset", "params", "created", "updated",
                        "pinned": true | false, "folder": null | "<folder name>",
                        "messages": [{"role", "content", "status", "created", "model", "params",
                                      "stop_reason", "error", "metrics", "provenance",
                                      "versions": null | {"shown": i, "others": [{content, status, …}]},
                                      "timeline": null | {...}},
                                     ...]}, ...]}

Every field a chat has in the history is in it (times in seconds since the epoch), so ``import_json`` of an
export gives the same chats (new row ids), pinned and in folders of the same names as before (a folder is found
by its name, whatever its case, or made; ``pinned`` and ``folder`` are optional, so older exports import as
ungrouped chats, and an older Brook ignores them). A reply that was still streaming when the app died is exported as
``stopped``, as the window shows it. A reply's ``timeline`` is its stream timeline (every chunk's four times,
queue, ticks; the plain shape of ``app.core.history.timelines``), absent or null when none was recorded.
Markdown is for reading: one ``#`` section per chat, one ``##`` per message, each reply followed by its
provenance (``app.core.streaming.provenance.describe``).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from app.core.conversation import Conversation, Role, read_all
from app.core.history import folders
from app.core.history import timelines as timeline_store
from app.core.history.clean import clean_text, clean_time
from app.core.history.schema import ChatImportError, check_export
from app.core.streaming.provenance import describe
from app.core.text import valid_json

__all__ = ["ChatImportError", "ImportCancelled", "ImportResult", "checked_chats", "export_json", "import_file",
           "import_json", "read_export", "write_exports", "write_import"]

log = logging.getLogger("brook.export")
FORMAT = "brook-chats"
VERSION = 1
#: Largest export file ``import_file`` reads (bytes): a file past it is refused before it is read.
MAX_IMPORT_BYTES = 1 << 30


@dataclass(frozen=True, slots=True)
class ImportResult:
    """What an import did: ``ids`` of the chats added (in the document's order) and ``skipped``, the titles of
    chats left out because the history already holds the same chat (same title, start time and messages)."""

    ids: list[int] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    def summary(self, source: object) -> str:
        """One line for a person: ``imported 2 chat(s) from FILE; 1 already in the history was skipped``."""
        text = f"imported {len(self.ids)} chat(s) from {source}"
        if self.skipped:
            text += f"; {len(self.skipped)} already in the history skipped"
        return text


def conversation_to_dict(store: Any, conv_id: int) -> dict[str, Any]:
    """One chat of ``store`` (an ``app.core.history.store.Store``) as a JSON-ready dict. Raises ``KeyError``."""
    conv: Conversation = store.load_conversation(conv_id)
    read_all(conv.messages)          # the whole text, one query (messages are read on first use otherwise)
    row = store.db.execute("SELECT c.created, c.updated, c.pinned, f.name FROM conversations c "
                           "LEFT JOIN folders f ON f.id = c.folder_id WHERE c.id = ?", (conv_id,)).fetchone()
    timelines = timeline_store.load_chat(store.db, conv_id)
    return {
        "title": conv.title, "system_prompt": conv.system_prompt, "preset": conv.preset, "params": conv.params,
        "created": clean_time(row[0]), "updated": clean_time(row[1]),
        "pinned": isinstance(row[2], int) and row[2] != 0, "folder": clean_text(row[3]),
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
    try:
        return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%d %H:%M UTC")
    except (OverflowError, OSError, ValueError, TypeError):
        return "an unknown time"


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


def import_json(store: Any, doc: Any) -> ImportResult:
    """Add the chats of an export document (parsed JSON) to ``store`` as new chats, all or nothing. The whole
    document is checked first (``app.core.history.schema``: every field's type and range), so nothing is
    written unless all of it can be read back; lone surrogates in text become U+FFFD (``valid_json``). A chat
    the history already holds (same title, start time and messages: the same file imported twice) is skipped.
    Raises ``ChatImportError`` naming the chat, the message and the field of the first problem."""
    return write_import(store, checked_chats(doc))


def checked_chats(doc: Any) -> list[dict[str, Any]]:
    """The chats of an export document (parsed JSON), checked whole (``app.core.history.schema``), as the plain
    dicts ``write_import`` takes. Needs no store, so it can run in a worker thread. Raises ``ChatImportError``."""
    return _validated(doc)


def write_import(store: Any, chats: list[dict[str, Any]]) -> ImportResult:
    """Write chats that ``checked_chats`` returned into ``store`` in one transaction (all or nothing; on the
    store's own thread), skipping those already there."""
    db = store.db
    result = ImportResult()
    db.execute("BEGIN")
    try:
        for c in chats:
            if _already_there(db, c):
                result.skipped.append(c["title"])
                continue
            folder_id = folders.folder_for_import(db, c["folder"]) if c.get("folder") else None
            cur = db.execute("INSERT INTO conversations(title, system_prompt, created, updated, preset, params, "
                             "pinned, folder_id) VALUES (?,?,?,?,?,?,?,?)",
                             (c["title"], c.get("system_prompt"), c["created"], c["updated"], c.get("preset"),
                              _dumps(c.get("params")), 1 if c.get("pinned") else None, folder_id))
            cid = int(cur.lastrowid or 0)
            result.ids.append(cid)
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
    if result.skipped:
        log.info("import: %d chat(s) already in the history skipped", len(result.skipped))
    return result


def _already_there(db: Any, chat: dict[str, Any]) -> bool:
    """Whether the history holds a chat with ``chat``'s title, start time and messages (role, text, time)."""
    want = [(m["role"], m["content"], float(m["created"])) for m in chat["messages"]]
    for (cid,) in db.execute("SELECT id FROM conversations WHERE title = ? AND created = ?",
                             (chat["title"], chat["created"])).fetchall():
        have = [(r, t, clean_time(c)) for r, t, c in
                db.execute("SELECT role, content, created FROM messages WHERE conversation_id = ? ORDER BY id", (cid,))]
        if have == want:
            return True
    return False


def import_file(store: Any, path: Path) -> ImportResult:
    """``import_json`` of a file. Raises ``ChatImportError`` (also for unreadable, non-JSON, too deeply nested or
    larger than ``MAX_IMPORT_BYTES`` files)."""
    return write_import(store, read_export(path))


#: How much ``read_export`` reads at a time (bytes): the unit of its progress.
READ_BLOCK = 1 << 20


class ImportCancelled(ChatImportError):
    """``read_export`` was told to stop (nothing was imported)."""


def read_export(path: Path, progress: Callable[[str, int, int], None] | None = None,
                cancelled: Callable[[], bool] | None = None) -> list[dict[str, Any]]:
    """Read and check an export file: the chats ``write_import`` takes. Needs no store (the window runs it in a
    worker thread). ``progress(phase, done, total)`` is called from the calling thread: phase ``"read"`` with
    bytes read of the file's size after each ``READ_BLOCK``, then ``"check"`` (0, 0) while it is parsed and
    checked. ``cancelled()`` is asked between blocks and before the check; true raises ``ImportCancelled``.
    Raises ``ChatImportError`` (unreadable, not JSON, nested too deeply, larger than ``MAX_IMPORT_BYTES``, not
    an export, a bad field)."""
    def stop() -> None:
        if cancelled is not None and cancelled():
            raise ImportCancelled("The import was cancelled; nothing was imported.")

    try:
        if not path.is_file():
            raise ChatImportError(f"{path} is not a regular file.")
        size = path.stat().st_size
        if size > MAX_IMPORT_BYTES:
            raise ChatImportError(f"{path.name} is {size / 2**20:,.0f} MiB, larger than an export Brook reads "
                                  f"({MAX_IMPORT_BYTES >> 20:,} MiB).")
        parts: list[bytes] = []
        done = 0
        with path.open("rb") as fh:
            while done <= MAX_IMPORT_BYTES:
                stop()
                block = fh.read(READ_BLOCK)
                if not block:
                    break
                parts.append(block)
                done += len(block)
                if progress is not None:
                    progress("read", done, max(size, done))
        if done > MAX_IMPORT_BYTES:
            raise ChatImportError(f"{path.name} grew past {MAX_IMPORT_BYTES >> 20:,} MiB while it was read.")
        stop()
        if progress is not None:
            progress("check", 0, 0)
        doc = json.loads(b"".join(parts).decode("utf-8"))
    except OSError as exc:
        raise ChatImportError(f"Cannot read {path}: {exc.strerror or exc}") from None
    except RecursionError:
        raise ChatImportError(f"{path.name} is nested too deeply to be a Brook chat export.") from None
    except ValueError as exc:       # UnicodeDecodeError too
        raise ChatImportError(f"{path.name} is not JSON: {exc}") from None
    chats = checked_chats(doc)
    stop()
    return chats


def _dumps(v: Any) -> str | None:
    return None if v is None else json.dumps(v, ensure_ascii=False)


def _validated(doc: Any) -> list[dict[str, Any]]:
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ChatImportError("This file is not a Brook chat export (no \"format\": \"brook-chats\").")
    version = doc.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version > VERSION:
        raise ChatImportError(f"This export is of a newer version ({version!r}) than this Brook reads "
                              f"({VERSION}); update Brook.")
    checked = check_export(doc)
    return [valid_json(c.model_dump(exclude_unset=True)) for c in checked.conversations]
