"""The render bench's frames in the window (``app.bench.render.measure_window``) end with the reply's end: the
work of its final render (the view's ``finish``) is part of the last frame, not left out after it."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from app.bench import render
from app.ui.messages.markdown_view import MarkdownView

pytestmark = pytest.mark.timeout(120)


def test_the_last_frame_holds_the_replys_final_render(qapp, monkeypatch, tmp_path: Path) -> None:
    for name in ("BROOK_DATA_DIR", "BROOK_CONFIG_DIR"):       # measure_window sets them: put them back after
        monkeypatch.setenv(name, str(tmp_path / name))
    real = MarkdownView.finish
    # a window made once before, and the chunks 40 ms apart: the first window of a process imports the window's
    # modules, and the 5 chunks (40 ms at 100/s) all came before its first frame once, leaving no frame before
    # the end to measure from (CI, the suite's first test)
    render.measure_window(["Warm ", "up.\n"], 100.0, timeout_s=60)

    def slow_finish(self, *a, **k):  # type: ignore[no-untyped-def]
        time.sleep(0.3)              # a final render that blocks the loop (a block parsed whole at the end)
        return real(self, *a, **k)

    monkeypatch.setattr(MarkdownView, "finish", slow_finish)
    out = render.measure_window(["Hello ", "**there**", ".\n\n", "| a |\n|---|\n", "| 1 |\n"], 25.0, timeout_s=60)
    assert out["final_html_equals_one_shot"] and out["status"] == "done" and out["shown_whole_at_finish"]
    assert out["frame_interval_ms_max"] >= 300.0


def test_a_reply_finished_before_its_view_shows_all_of_it_is_reported(qapp, monkeypatch, tmp_path: Path) -> None:
    from app.ui.messages.tick_target import Target

    for name in ("BROOK_DATA_DIR", "BROOK_CONFIG_DIR"):
        monkeypatch.setenv(name, str(tmp_path / name))
    burst = "| a | b |\n|---|---|\n" + "".join(f"| {i} | `x{i}` and *y* |\n" for i in range(3000)) + "\nEnd.\n"
    out = render.measure_window([burst], 1.0, timeout_s=60)
    assert out["shown_whole_at_finish"]
    monkeypatch.setattr(Target, "lags", lambda self: False)   # the tick ignores a view that lags
    out = render.measure_window([burst], 1.0, timeout_s=60)
    assert out["final_html_equals_one_shot"] and not out["shown_whole_at_finish"]


def test_the_window_scenarios_run_the_apps_own_watchdog_and_count_its_stalls(qapp, monkeypatch,
                                                                            tmp_path: Path) -> None:
    """The bench's window runs the loop watchdog the launcher starts (gated by the loop's turns, the settings'
    threshold), not one that pings the loop every 10 ms: that one switched the window's thread out ~200 times a
    second. A final render that blocks the loop for 0.3 s is one of its stalls."""
    from app.core.settings import AppSettings
    from app.ui.window import loop_watch

    for name in ("BROOK_DATA_DIR", "BROOK_CONFIG_DIR"):
        monkeypatch.setenv(name, str(tmp_path / name))
    monkeypatch.delenv("BROOK_BENCH_STACKS", raising=False)
    started: list[object] = []
    real_watch = loop_watch.watch_loop

    def watch(threshold_ms, loop=None):  # type: ignore[no-untyped-def]
        wd = real_watch(threshold_ms, loop)
        started.append(wd)
        return wd

    monkeypatch.setattr(loop_watch, "watch_loop", watch)
    real = MarkdownView.finish

    def slow_finish(self, *a, **k):  # type: ignore[no-untyped-def]
        time.sleep(0.3)
        return real(self, *a, **k)

    monkeypatch.setattr(MarkdownView, "finish", slow_finish)
    out = render.measure_window(["Hello ", "**there**", ".\n"], 100.0, timeout_s=60)
    assert len(started) == 1 and getattr(started[0], "gated", False)
    assert out["stall_threshold_ms"] == AppSettings().watchdog_threshold_ms
    assert out["stalls"] >= 1


def test_a_shapes_streams_are_pooled_into_one_scenario_whose_other_figures_are_the_worst() -> None:
    """Each hostile shape streams ``--shape-repeats`` times: its frame percentiles come from all the frames (a
    p99 of ~160 frames is the second-worst), every other figure is the worst run's, and each run's p99 is kept."""
    from app.bench.frames import pool_runs

    def run(intervals: list[float], e2e: float, same: bool) -> dict[str, object]:
        xs = sorted(intervals)
        return {"frame_interval_ms_p99": xs[int(0.99 * len(xs))], "frame_interval_ms_max": xs[-1], "e2e_ratio": e2e,
                "tick_ms_max": max(intervals) / 4, "stalls": 1, "final_html_equals_one_shot": same,
                "shown_whole_at_finish": True, "timed_out": False, "reply_ms": 2500.0}

    a = [16.0] * 98 + [17.0, 30.0]                          # alone: p99 30, its worst frame of 100 …
    b = [16.0] * 100
    c = [16.0] * 99 + [16.5]
    pooled = pool_runs([run(a, 0.995, True), run(b, 0.992, True), run(c, 0.998, False)], a + b + c)
    assert pooled["frame_interval_ms_p99"] == 16.5          # … pooled, the p99 of 300 frames: the fourth-worst
    assert pooled["frame_interval_ms_max"] == 30.0 and pooled["frames"] == 300
    assert pooled["frame_interval_ms_p99_runs"] == [30.0, 16.0, 16.5] and pooled["runs"] == 3
    assert pooled["e2e_ratio"] == 0.992 and pooled["tick_ms_max"] == 7.5 and pooled["stalls"] == 3
    assert pooled["final_html_equals_one_shot"] is False and pooled["shown_whole_at_finish"] is True
    assert pool_runs([run(b, 0.99, True)], b)["frame_interval_ms_p99"] == 16.0
