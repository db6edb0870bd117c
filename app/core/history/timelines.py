"""A finished reply's stream timeline, stored with it in the history and carried in its export.

Live, a reply's timeline is its ``StreamMetrics`` (``app.core.streaming.timeline``). Once its figures are final
(finished
or stopped, every chunk painted), ``ChatSession`` stores it once, off the render tick, in the history table
``timelines`` (one row per message, deleted with its message or chat: ``ON DELETE CASCADE``). The inspector
shows a stored timeline after a restart; ``app.core.history.export`` puts it in the reply's ``"timeline"``.

The plain shape (``from_metrics``, ``decode``; JSON, what an export holds)::

    {"version": 1, "units": "...", "reply_created": <s since the epoch> | null,
     "request_ms", "end_ms", "stop_ms", "worker_done_ms": <ms> | null, "prefill_ms": [a, b] | null,
     "chunks": {"produced_ms", "enqueued_ms", "dequeued_ms", "painted_ms": [ms, ...],
                "queue_depth": [chunks, ...], "wait_ms": [ms, ...], "chars": [characters, ...]},
     "ticks": {"at_ms": [ms, ...], "cost_ms": [ms, ...], "chunks": [chunks painted, ...]}}

Times are ms since the engine slot was acquired (as in ``app.core.streaming.timeline``), kept at 0.01 ms (10 µs);
``reply_created`` names the reply version it belongs to (Regenerate keeps other versions in the same row).
Stored form (``encode``): the same numbers as integers of 10 µs, each stamp array as differences (produced
from the chunk before, enqueued from produced, dequeued from enqueued, painted from dequeued, ticks from the
tick before: small numbers; painted left out when it is each tick's time once per chunk it painted, as it
always is), as compact JSON, zlib-compressed: about 5-9 KB per 1,000 tokens of a real reply (8.7 KB for
1,024 tokens of the bundled model in the window, one tick per chunk; ~90 KB as the plain JSON of "Copy as
JSON"). ``decode(encode(d)) == d`` for every ``d`` this module gave, so export → import → export is lossless.
``validated`` raises ``ValueError`` naming the first bad field.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import zlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:       # numpy (via app.core.streaming.timeline) only when a timeline is made or drawn: not at start-up
    import numpy as np

    from app.core.streaming.metrics import StreamMetrics
    from app.core.streaming.timeline import Timeline

log = logging.getLogger("brook.timeline")

VERSION = 1
#: Resolution of the stored times: units per ms (100: 10 µs).
PER_MS = 100
UNITS = "ms since the engine slot was acquired (prefill start), at 0.01 ms; wait_ms per put; tick cost in ms"
SCALARS = ("request_ms", "end_ms", "stop_ms", "worker_done_ms")
#: chunk arrays; each time array is stored as differences from the one named (None: from its own previous value)
CHUNK_TIMES = (("produced_ms", None), ("enqueued_ms", "produced_ms"), ("dequeued_ms", "enqueued_ms"),
               ("painted_ms", "dequeued_ms"))
CHUNK_COUNTS = ("queue_depth", "chars")
TICK_TIMES = ("at_ms", "cost_ms")

#: Largest stored timeline unpacked (bytes): ~1.2 million chunks; a blob unpacking to more is damaged (or a
#: compression bomb written by another program) and is not read.
MAX_STORED_BYTES = 64 << 20

TABLE_SQL = ("CREATE TABLE IF NOT EXISTS timelines (message_id INTEGER PRIMARY KEY "
             "REFERENCES messages(id) ON DELETE CASCADE, data BLOB NOT NULL)")


def _q(x: float) -> int:
    return round(x * PER_MS)


def _ms(k: int) -> float:
    return k / PER_MS


def _qs(a: np.ndarray) -> list[int]:
    import numpy as np

    return np.rint(np.asarray(a, dtype=np.float64) * PER_MS).astype(np.int64).tolist()


def from_metrics(m: StreamMetrics, reply_created: float | None = None) -> dict[str, Any]:
    """The plain shape of ``m``'s timeline (O(chunks + ticks)), at the stored resolution."""
    from app.core.streaming.timeline import snapshot

    tl = snapshot(m)
    ints: dict[str, Any] = {
        "reply_created": reply_created,
        "request_ms": _q(tl.request), "end_ms": None if tl.end is None else _q(tl.end),
        "stop_ms": None if tl.stop is None else _q(tl.stop),
        "worker_done_ms": None if tl.worker_done is None else _q(tl.worker_done),
        "prefill_ms": None if tl.prefill is None else [_q(tl.prefill[0]), _q(tl.prefill[1])],
        "chunks": {"produced_ms": _qs(tl.produced), "enqueued_ms": _qs(tl.enqueued), "dequeued_ms": _qs(tl.dequeued),
                   "painted_ms": _qs(tl.painted), "queue_depth": tl.depth.tolist(), "wait_ms": _qs(tl.wait),
                   "chars": tl.chars.tolist()},
        "ticks": {"at_ms": _qs(tl.tick_at), "cost_ms": _qs(tl.tick_cost), "chunks": tl.tick_chunks.tolist()},
    }
    return _plain(ints)


def _plain(ints: dict[str, Any]) -> dict[str, Any]:
    """Integers of 10 µs → the plain shape (ms floats)."""
    c, t = ints["chunks"], ints["ticks"]
    return {
        "version": VERSION, "units": UNITS, "reply_created": ints["reply_created"],
        **{k: None if ints[k] is None else _ms(ints[k]) for k in SCALARS},
        "prefill_ms": None if ints["prefill_ms"] is None else [_ms(x) for x in ints["prefill_ms"]],
        "chunks": {**{k: [_ms(x) for x in c[k]] for k, _ in CHUNK_TIMES},
                   "queue_depth": list(c["queue_depth"]), "wait_ms": [_ms(x) for x in c["wait_ms"]],
                   "chars": list(c["chars"])},
        "ticks": {"at_ms": [_ms(x) for x in t["at_ms"]], "cost_ms": [_ms(x) for x in t["cost_ms"]],
                  "chunks": list(t["chunks"])},
    }


def _ints(d: dict[str, Any]) -> dict[str, Any]:
    """The plain shape (validated) → integers of 10 µs."""
    c, t = d["chunks"], d["ticks"]
    return {
        "reply_created": d.get("reply_created"),
        **{k: None if d.get(k) is None else _q(d[k]) for k in SCALARS},
        "prefill_ms": None if d.get("prefill_ms") is None else [_q(x) for x in d["prefill_ms"]],
        "chunks": {**{k: [_q(x) for x in c.get(k, [])] for k, _ in CHUNK_TIMES},
                   "queue_depth": list(c.get("queue_depth", [])), "wait_ms": [_q(x) for x in c.get("wait_ms", [])],
                   "chars": list(c.get("chars", []))},
        "ticks": {"at_ms": [_q(x) for x in t.get("at_ms", [])], "cost_ms": [_q(x) for x in t.get("cost_ms", [])],
                  "chunks": list(t.get("chunks", []))},
    }


def normalised(d: dict[str, Any]) -> dict[str, Any]:
    """A validated plain timeline with only the fields this module knows, at the stored resolution (what
    ``decode(encode(d))`` gives)."""
    return _plain(_ints(d))


def _diff(b: list[int], a: list[int] | None) -> list[int]:
    out, prev = [], 0
    for i, x in enumerate(b):
        out.append(x - (a[i] if a is not None and i < len(a) else prev))
        prev = x
    return out


def _undiff(r: list[int], a: list[int] | None) -> list[int]:
    out, prev = [], 0
    for i, d in enumerate(r):
        prev = d + (a[i] if a is not None and i < len(a) else prev)
        out.append(prev)
    return out


def _painted(ticks: dict[str, list[int]]) -> list[int]:
    """Each tick's time once per chunk it painted (how ``StreamMetrics.on_painted`` stamps paints)."""
    return [t for t, n in zip(ticks["at_ms"], ticks["chunks"], strict=False) for _ in range(n)]


def encode(d: dict[str, Any], *, check: bool = True) -> bytes:
    """The stored form of a plain timeline (see the module docstring). Raises ``ValueError`` for a bad one
    (``check=False``: ``d`` is known good, e.g. made by ``from_metrics``)."""
    ints = _ints(validated(d) if check else d)
    c = ints["chunks"]
    packed = dict(ints)
    packed["chunks"] = {**c, **{k: _diff(c[k], None if ref is None else c[ref]) for k, ref in CHUNK_TIMES}}
    if c["painted_ms"] == _painted(ints["ticks"]):
        packed["chunks"]["painted_ms"] = None       # as always: each tick's time, once per chunk it painted
    packed["ticks"] = {**ints["ticks"], "at_ms": _diff(ints["ticks"]["at_ms"], None)}
    packed["v"] = VERSION
    return zlib.compress(json.dumps(packed, separators=(",", ":")).encode("ascii"), 6)   # 9: 1.6% less, 4× slower


def encode_metrics(m: StreamMetrics, reply_created: float | None = None) -> bytes:
    """``encode(from_metrics(m, reply_created))`` (~6 ms for 1,000 chunks, ~40 ms for 20,000: run it on a worker
    thread once ``m`` is final; ``app.core.history.timeline_writer``)."""
    return encode(from_metrics(m, reply_created), check=False)


def decode(blob: bytes) -> dict[str, Any]:
    """The plain timeline of a stored one. Raises ``ValueError`` for a damaged or unknown blob."""
    try:
        inflate = zlib.decompressobj()
        raw = inflate.decompress(blob, MAX_STORED_BYTES)
        if inflate.unconsumed_tail:
            raise ValueError(f"timeline: larger than {MAX_STORED_BYTES >> 20} MiB unpacked")
        packed = json.loads(raw)
    except (zlib.error, TypeError) as exc:
        raise ValueError(f"timeline: not a stored timeline ({exc})") from None
    except RecursionError:
        raise ValueError("timeline: nested too deeply") from None
    if not isinstance(packed, dict) or packed.get("v") != VERSION:
        raise ValueError("timeline: unknown stored version")
    try:
        c = packed["chunks"]
        packed["ticks"]["at_ms"] = _undiff(packed["ticks"]["at_ms"], None)
        for k, ref in CHUNK_TIMES:      # in order: each one's reference is decoded before it
            c[k] = _painted(packed["ticks"]) if c[k] is None else _undiff(c[k], None if ref is None else c[ref])
        return _plain(packed)
    except (KeyError, TypeError) as exc:
        raise ValueError(f"timeline: damaged stored timeline ({exc!r})") from None


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v == v and abs(v) < 1e12


def validated(d: Any) -> dict[str, Any]:
    """``d`` when it is a plain timeline this Brook reads; else ``ValueError`` naming the first bad field."""
    if not isinstance(d, dict):
        raise ValueError("timeline is not an object")
    if not isinstance(d.get("version"), int) or isinstance(d["version"], bool) or not 1 <= d["version"] <= VERSION:
        raise ValueError(f"timeline: version must be 1 to {VERSION}, not {d.get('version')!r}")
    if d.get("reply_created") is not None and not _number(d["reply_created"]):
        raise ValueError("timeline: reply_created must be a number")
    for k in SCALARS:
        if d.get(k) is not None and not _number(d[k]):
            raise ValueError(f"timeline: {k} must be a number or null")
    p = d.get("prefill_ms")
    if p is not None and not (isinstance(p, list) and len(p) == 2 and all(_number(x) for x in p)):
        raise ValueError("timeline: prefill_ms must be [start, end] or null")
    for group, times, counts in (("chunks", [k for k, _ in CHUNK_TIMES] + ["wait_ms"], CHUNK_COUNTS),
                                 ("ticks", TICK_TIMES, ("chunks",))):
        g = d.get(group)
        if not isinstance(g, dict):
            raise ValueError(f"timeline: {group} must be an object")
        for k in (*times, *counts):
            v = g.get(k, [])
            if not isinstance(v, list) or not all(_number(x) for x in v):
                raise ValueError(f"timeline: {group}.{k} must be a list of numbers")
            if k in counts and not all(isinstance(x, int) for x in v):
                raise ValueError(f"timeline: {group}.{k} must be a list of whole numbers")
    return d


def to_timeline(d: dict[str, Any]) -> Timeline:
    """A plain (stored) timeline as the ``Timeline`` the inspector draws (origin 0: times are already ms)."""
    import numpy as np

    from app.core.streaming.timeline import Timeline

    c, t = d["chunks"], d["ticks"]

    def f(v: list[float]) -> np.ndarray:
        return np.asarray(v, dtype=np.float64)

    def n(v: list[int]) -> np.ndarray:
        return np.asarray(v, dtype=np.int64)

    p = d.get("prefill_ms")
    return Timeline(0.0, f(c["produced_ms"]), f(c["enqueued_ms"]), f(c["dequeued_ms"]), f(c["painted_ms"]),
                    n(c["queue_depth"]), f(c["wait_ms"]), n(c["chars"]), f(t["at_ms"]), f(t["cost_ms"]),
                    n(t["chunks"]), float(d.get("request_ms") or 0.0), None if p is None else (p[0], p[1]),
                    d.get("end_ms"), d.get("stop_ms"), d.get("worker_done_ms"))


def export_dict(d: dict[str, Any], summary: dict[str, Any] | None, text: str = "", **extra: Any) -> dict[str, Any]:
    """A stored timeline in the shape of ``app.core.streaming.timeline.timeline_dict`` ("Copy as JSON" / "Save…"): each
    chunk's text (cut from the reply's ``text``) and the figures (``summary``, the stored ``Message.metrics``)."""
    from app.core.streaming.timeline import chunk_texts, figures_of

    tl = to_timeline(d)
    f = figures_of(summary or {}, tl)
    return {**d, **extra, "chunks": {**d["chunks"], "text": chunk_texts(tl, text)},
            "figures": {k: (round(v, 3) if isinstance(v, float) else v) for k, v in f.items()}}


def belongs_to(d: dict[str, Any] | None, reply_created: float) -> bool:
    """Whether a stored timeline ``d`` was recorded for the reply version created at ``reply_created`` (an older
    version shown with ‹ › has none)."""
    return d is not None and (d.get("reply_created") is None or d["reply_created"] == reply_created)


# in the history (one row per message) ------------------------------------------------------------------------
def ensure_table(db: sqlite3.Connection) -> None:
    """Create the ``timelines`` table if missing (a migration for older history files; idempotent)."""
    db.execute(TABLE_SQL)


def has_table(db: sqlite3.Connection) -> bool:
    return db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'timelines'").fetchone() is not None


def save(db: sqlite3.Connection, message_id: int, d: dict[str, Any] | bytes) -> int:
    """Store ``d`` (a plain timeline, or one already ``encode``-d) as message ``message_id``'s timeline (replacing
    one stored before); returns its size (bytes)."""
    blob = d if isinstance(d, bytes) else encode(d)
    db.execute("INSERT OR REPLACE INTO timelines(message_id, data) VALUES (?, ?)", (message_id, blob))
    return len(blob)


def load(db: sqlite3.Connection, message_id: int) -> dict[str, Any] | None:
    """Message ``message_id``'s stored timeline, or None (none stored, a file without the table, or a damaged
    blob — logged)."""
    if not has_table(db):
        return None
    row = db.execute("SELECT data FROM timelines WHERE message_id = ?", (message_id,)).fetchone()
    if row is None:
        return None
    try:
        return decode(bytes(row[0]))
    except (ValueError, TypeError) as exc:        # TypeError: not a blob at all
        log.warning("message %s: %s", message_id, exc)
        return None


def load_chat(db: sqlite3.Connection, conv_id: int) -> dict[int, dict[str, Any]]:
    """The stored timelines of chat ``conv_id``'s messages, by message id (damaged ones left out, logged)."""
    if not has_table(db):
        return {}
    out = {}
    for mid, blob in db.execute("SELECT t.message_id, t.data FROM timelines t JOIN messages m ON m.id = t.message_id "
                                "WHERE m.conversation_id = ?", (conv_id,)):
        try:
            out[int(mid)] = decode(bytes(blob))
        except (ValueError, TypeError) as exc:
            log.warning("message %s: %s", mid, exc)
    return out
