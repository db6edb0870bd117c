"""Frame-interval figures of a window scenario (``python -m app.bench render``): percentiles of one stream's
frame intervals, and one figure set from several streams of the same scenario (:func:`pool_runs`)."""

from __future__ import annotations

import statistics
from typing import Any


def frame_figures(intervals: list[float]) -> dict[str, float]:
    """p50, p99 (the value at rank ⌊0.99 n⌋) and max of ``intervals`` (ms), and their count."""
    xs = sorted(intervals)
    if not xs:
        return {"frame_interval_ms_p50": 0.0, "frame_interval_ms_p99": 0.0, "frame_interval_ms_max": 0.0,
                "frames": 0}
    return {"frame_interval_ms_p50": statistics.median(xs),
            "frame_interval_ms_p99": xs[min(len(xs) - 1, int(0.99 * len(xs)))],
            "frame_interval_ms_max": xs[-1], "frames": len(xs)}


#: Streams of each hostile shape whose frames are pooled (``--shape-repeats``). A shape streams ~2.5 s: ~160
#: frames, whose p99 is its second-worst frame — one rare late firing of the timer more or less (the machine's:
#: a sleep of 0.3 ms that returned after 2, 1 frame in ~500) decided it. Three streams give the p99 of ~480.
SHAPE_REPEATS = 3


def pool_runs(runs: list[dict[str, Any]], intervals: list[float]) -> dict[str, Any]:
    """One scenario's figures from its ``runs`` (``app.bench.render.measure_window``'s results, the same stream
    repeated) and their pooled frame ``intervals`` (ms): the frame percentiles of all of them, the worst of each
    other figure (end-to-end, ticks, stalls, reply time), and each run's p99 (``frame_interval_ms_p99_runs``).
    One run: its own result."""
    if len(runs) == 1:
        return runs[0]
    out = dict(runs[-1])
    out.update(frame_figures(intervals) if intervals else {})
    out["frame_interval_ms_max"] = max(r["frame_interval_ms_max"] for r in runs)
    out["frame_interval_ms_p99_runs"] = [r["frame_interval_ms_p99"] for r in runs]
    out["runs"] = len(runs)
    for key, worst in (("e2e_ratio", min), ("producer_ratio", min), ("tick_ms_p99", max), ("tick_ms_max", max),
                       ("reply_ms", max), ("last_paint_after_last_chunk_ms", max)):
        values = [r[key] for r in runs if r.get(key) is not None]
        if values:
            out[key] = worst(values)
    out["stalls"] = sum(r.get("stalls", 0) for r in runs)
    for key in ("final_html_equals_one_shot", "shown_whole_at_finish"):
        out[key] = all(bool(r.get(key)) for r in runs)
    out["timed_out"] = any(bool(r.get("timed_out")) for r in runs)
    return out
