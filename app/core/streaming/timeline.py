"""A reply's stream timeline: every chunk's four times, the queue, the ticks, and the figures they give.

Read from a ``StreamMetrics`` (``app.core.streaming.metrics``) at any moment, live or finished, without disturbing the
threads that fill it: each array is copied once (``arr[:n]`` under the GIL, O(n), no buffer export, so an
``append`` on the worker thread can never fail with ``BufferError``).

Times are **ms since the reply's engine slot was acquired** (``t_slot``; the request time when there was no
slot yet): the request itself may be negative (time in line). ``timeline_json`` is the shape that "Copy as
JSON" / "Save…" give, for a bug report; ``figures`` the inspector's summary.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import numpy as np

from app.core.streaming.metrics import StreamMetrics

#: Version of the JSON shape written by ``timeline_json`` (bump on an incompatible change).
TIMELINE_VERSION = 1


@dataclass
class Timeline:
    """A consistent snapshot (numpy float64 arrays of ms since ``origin``; int arrays of counts).

    Chunk arrays have one entry per chunk, index = chunk number: ``produced``/``enqueued`` (worker side) may be
    longer than ``dequeued``/``painted`` while chunks are in flight (and after a Stop, which drops the queue).
    ``depth`` is the queue depth after each put (chunks), ``wait`` the time that put waited on a full queue (ms),
    ``chars`` the chunk's length in characters. ``tick_at``/``tick_cost``/``tick_chunks``: render ticks that
    painted this reply (end time ms, cost ms, chunks painted). ``prefill``: (slot, first chunk produced) or None.
    """

    origin: float
    produced: np.ndarray
    enqueued: np.ndarray
    dequeued: np.ndarray
    painted: np.ndarray
    depth: np.ndarray
    wait: np.ndarray
    chars: np.ndarray
    tick_at: np.ndarray
    tick_cost: np.ndarray
    tick_chunks: np.ndarray
    request: float
    prefill: tuple[float, float] | None
    end: float | None
    stop: float | None
    worker_done: float | None

    @property
    def chunks(self) -> int:
        return len(self.produced)


def _ms(arr: Any, origin: float) -> np.ndarray:
    a = np.frombuffer(arr[: len(arr)], dtype=np.float64)   # arr[:n] copies (a new array, not a view)
    return (a - origin) * 1000.0


def _rel(t: float | None, origin: float) -> float | None:
    return None if t is None else (t - origin) * 1000.0


def snapshot(m: StreamMetrics) -> Timeline:
    """Copy what ``m`` holds now into a ``Timeline`` (O(chunks + ticks)); safe while the stream runs."""
    origin = m.t_slot if m.t_slot is not None else m.t_request
    n_enq = len(m.enqueued)
    kept = m.kept if m.t_end is not None else None     # the reply has ended: describe what reached it
    if kept is not None and kept < n_enq:          # chunks a Stop left in the queue never reached the reply
        n_enq = kept
    produced = _ms(m.produced[:n_enq] if kept is not None else m.produced, origin)
    depth = np.frombuffer(m.depths[:n_enq], dtype=np.int32).astype(np.int64)
    chars = np.frombuffer(m.chars[:n_enq], dtype=np.int32).astype(np.int64)
    wait = np.zeros(n_enq)
    k = len(m.wait_index)
    widx = np.frombuffer(m.wait_index[:k], dtype=np.int32)
    ws = np.frombuffer(m.wait_s[:k], dtype=np.float64)[: len(widx)]
    keep = widx < n_enq
    wait[widx[keep]] = ws[keep] * 1000.0
    n_ticks = len(m.tick_chunks)
    tick_at = _ms(m.tick_at[:n_ticks], origin)
    tick_cost = np.frombuffer(m.tick_cost[:n_ticks], dtype=np.float64) * 1000.0
    tick_chunks = np.array(m.tick_chunks[:n_ticks], dtype=np.int64)
    prefill = (0.0, float(produced[0])) if len(produced) and m.t_slot is not None else None
    enqueued, dequeued = m.enqueued[:n_enq], m.dequeued[:n_enq]
    return Timeline(origin, produced, _ms(enqueued, origin), _ms(dequeued, origin), _ms(m.painted[:n_enq], origin),
                    depth, wait, chars, tick_at, tick_cost, tick_chunks, (m.t_request - origin) * 1000.0,
                    prefill, _rel(m.t_end, origin), _rel(m.t_stop, origin), _rel(m.t_worker_done, origin))


def chunk_texts(tl: Timeline, text: str) -> list[str]:
    """Split the reply's ``text`` into the chunks' texts (by their character counts); chunks that carried no
    text give ''. Text the timeline does not cover (a reply edited afterwards) is ignored."""
    out = []
    pos = 0
    for n in tl.chars.tolist():
        out.append(text[pos:pos + n])
        pos += n
    return out


def _pct(a: np.ndarray, p: float) -> float | None:
    """The ``p``-th percentile by linear interpolation between closest ranks (numpy's default method).
    Not ``np.percentile``: its first call imports ``numpy.ma`` (0.1-0.5 s, on the event loop)."""
    if not len(a):
        return None
    s = np.sort(a)
    k = (len(s) - 1) * p / 100.0
    lo = int(k)
    hi = min(lo + 1, len(s) - 1)
    return float(s[lo] + (s[hi] - s[lo]) * (k - lo))


def figures(m: StreamMetrics, tl: Timeline | None = None) -> dict[str, Any]:
    """The inspector's summary figures (ms, tokens/s, counts; ``None`` when not known yet).

    ``ReplySummary`` (TTFT = prefill + first paint, decode tokens/s, queue high-water, backpressure waits,
    ticks, longest tick) plus: ``gap_ms_p50/p95/max``, the inter-token gap (time between consecutive chunks
    *produced*, the model's rhythm); ``latency_ms_p50/p95/max``, produced → painted per painted chunk (the
    app's share); ``chunks_per_tick_mean/max``; ``waiting_in_queue_max``.
    """
    tl = tl if tl is not None else snapshot(m)
    return figures_of(m.summary().as_dict(), tl)


def figures_of(summary: dict[str, Any], tl: Timeline) -> dict[str, Any]:
    """``figures`` from a reply's summary (``ReplySummary.as_dict()``, e.g. a stored ``Message.metrics``) and its
    timeline (live or stored, ``app.core.history.timelines``)."""
    out: dict[str, Any] = dict(summary)
    gaps = np.diff(tl.produced)
    out["gap_ms_p50"], out["gap_ms_p95"] = _pct(gaps, 50), _pct(gaps, 95)
    out["gap_ms_max"] = float(gaps.max()) if len(gaps) else None
    n = min(len(tl.painted), len(tl.produced))
    lat = tl.painted[:n] - tl.produced[:n]
    out["latency_ms_p50"], out["latency_ms_p95"] = _pct(lat, 50), _pct(lat, 95)
    out["latency_ms_max"] = float(lat.max()) if n else None
    out["chunks_per_tick_mean"] = float(tl.tick_chunks.mean()) if len(tl.tick_chunks) else None
    out["chunks_per_tick_max"] = int(tl.tick_chunks.max()) if len(tl.tick_chunks) else None
    out["waiting_in_queue_max"] = int(tl.depth.max()) if len(tl.depth) else 0
    return out


def _list(a: np.ndarray, digits: int = 3) -> list[Any]:
    if a.dtype.kind == "f":
        return [round(x, digits) for x in a.tolist()]
    return a.tolist()


def _r3(x: float | None) -> float | None:
    return None if x is None else round(x, 3)


def timeline_dict(m: StreamMetrics, text: str = "", **extra: Any) -> dict[str, Any]:
    """Everything about one reply's stream as plain JSON-able data (columns: one list per stamp kind, index =
    chunk number). ``extra`` is merged in at the top level (e.g. ``reply_id``, ``model``, ``loop_stalls``)."""
    tl = snapshot(m)
    return {
        "version": TIMELINE_VERSION,
        "units": "ms since the engine slot was acquired (prefill start); wait_ms per put; tick cost in ms",
        **extra,
        "request_ms": _r3(tl.request),
        "prefill_ms": None if tl.prefill is None else [_r3(tl.prefill[0]), _r3(tl.prefill[1])],
        "end_ms": _r3(tl.end), "stop_ms": _r3(tl.stop), "worker_done_ms": _r3(tl.worker_done),
        "chunks": {
            "produced_ms": _list(tl.produced), "enqueued_ms": _list(tl.enqueued),
            "dequeued_ms": _list(tl.dequeued), "painted_ms": _list(tl.painted),
            "queue_depth": _list(tl.depth), "wait_ms": _list(tl.wait), "text": chunk_texts(tl, text),
        },
        "ticks": {"at_ms": _list(tl.tick_at), "cost_ms": _list(tl.tick_cost, 4), "chunks": _list(tl.tick_chunks)},
        "figures": {k: (round(v, 3) if isinstance(v, float) else v) for k, v in figures(m, tl).items()},
    }


def timeline_json(m: StreamMetrics, text: str = "", **extra: Any) -> str:
    """``timeline_dict`` as indented JSON text."""
    return json.dumps(timeline_dict(m, text, **extra), ensure_ascii=False, indent=1)
