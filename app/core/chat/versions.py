"""Reply versions: Regenerate keeps the earlier replies (‹1/2› on the reply, as Jan and LM Studio do).

A reply ``Message`` shows one version: its own fields. The others are kept, oldest first, in
``Message.versions`` as dicts of the fields in ``VERSION_FIELDS`` (JSON, stored in the ``messages.versions``
column and in exports). ``Message.version_index`` is the shown version's place among all of them (0-based); the
versions list never holds the shown one. The chat's history sent to the model uses the shown version.

All functions are plain data operations (no Qt, no store): the caller saves the message afterwards.
"""

from __future__ import annotations

from typing import Any

from app.core.conversation import Message, MessageStatus

#: What one version keeps.
VERSION_FIELDS = ("content", "status", "created", "model", "params", "stop_reason", "error", "metrics", "provenance")


def snapshot(msg: Message) -> dict[str, Any]:
    """The shown version of ``msg`` as a dict of ``VERSION_FIELDS``."""
    return {"content": msg.text, "status": msg.status.value, "created": msg.created, "model": msg.model,
            "params": msg.params, "stop_reason": msg.stop_reason, "error": msg.error, "metrics": msg.metrics,
            "provenance": msg.provenance}


def _apply(msg: Message, v: dict[str, Any]) -> None:
    msg.set_text(v.get("content") or "")
    status = MessageStatus(v.get("status") or "done")
    msg.status = status if status.final else MessageStatus.STOPPED
    msg.created = float(v.get("created") or msg.created)
    msg.model, msg.params, msg.stop_reason = v.get("model"), v.get("params"), v.get("stop_reason")
    msg.error, msg.metrics, msg.provenance = v.get("error"), v.get("metrics"), v.get("provenance")


def count(msg: Message) -> int:
    """How many versions ``msg`` has (1 for a reply never regenerated)."""
    return 1 + len(msg.versions or [])


def begin_new_version(msg: Message) -> None:
    """Keep the shown version and make ``msg`` an empty reply waiting for the model: the new version is the
    last one (``version_index == count - 1``). A reply with no text and an error is replaced, not kept."""
    keep = list(msg.versions or [])
    if msg.text or not msg.error:
        keep.insert(msg.version_index, snapshot(msg))
    msg.versions = keep
    msg.version_index = len(keep)
    msg.set_text("")
    msg.status = MessageStatus.WAITING
    msg.error = msg.stop_reason = None
    msg.metrics = msg.provenance = msg.params = None


def show_version(msg: Message, index: int) -> bool:
    """Show version ``index`` (0-based, clamped) of ``msg``. Returns False when nothing changed (a reply that is
    still generating cannot switch)."""
    n = count(msg)
    index = max(0, min(n - 1, index))
    if index == msg.version_index or not msg.status.final:
        return False
    others = list(msg.versions or [])
    others.insert(msg.version_index, snapshot(msg))
    chosen = others.pop(index)
    _apply(msg, chosen)
    msg.versions = others
    msg.version_index = index
    return True


def label(msg: Message) -> str:
    """``"2/3"`` for the second of three versions; ``""`` for a reply with one version."""
    n = count(msg)
    return f"{msg.version_index + 1}/{n}" if n > 1 else ""
