"""python -m app.bench report: budgets met / missed, the four PNG plots, and a real (quick) run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.bench.report import BUDGETS, Budget, main, write_report

PNG = b"\x89PNG\r\n\x1a\n"


def canned() -> dict[str, dict]:
    return {
        "pipeline": {"result": {"throughput_ratio_scripted": 0.995, "ttft_added_ms_p95": 30.0,
                                "scripted": {"ratios": [0.99, 1.0, 0.995]}, "model": {"ratios": [0.98, 0.99]},
                                "throughput_ratio_model": 0.985},
                     "series": None, "log": "pipeline log", "seconds": 1.0},
        "stop": {"result": {"stop_latency_ms_p95": 30.0, "token_interval_ms": 20.0, "chunks_after_stop": 0,
                            "threads_leaked": 0},
                 "series": {"stop_latency_ms": [3.0, 5.0, 30.0, 12.0]}, "log": "", "seconds": 1.0},
        "render": {"result": {"tick_cost_ratio_20k_vs_200": 1.1, "frame_interval_ms_p99": 16.0,
                              "frame_interval_ms_max": 40.0},
                   "series": {"tick_ms": [0.3, 0.4, 0.35, 0.5], "naive_tokens": [32, 128], "naive_ms": [0.5, 2.0],
                              "frame_intervals_ms": [16.0, 17.0, 40.0],
                              "inspector_frame_intervals_ms": [16.5, 18.0]},
                   "log": "", "seconds": 1.0},
        "soak": {"result": None, "series": None, "log": "Traceback: boom <b>", "seconds": 2.0},
    }


def test_the_report_marks_each_budget_met_or_missed_and_draws_four_plots(tmp_path: Path) -> None:
    summary = write_report(canned(), tmp_path)
    html = (tmp_path / "report.html").read_text("utf-8")
    # pipeline: scripted ratio met, TTFT 30 > 25 missed, model 0.985 < 0.99 missed
    assert summary["missed"] == 2 and summary["met"] == 7
    assert "pipeline: TTFT added by the app, p95 (ms)" in summary["missed_labels"]
    assert html.count("class=missed>missed<") == 2 and html.count("class=met>met<") == 7
    assert "≤ 70.000" in html.replace("&lt;=", "≤")           # stop: one token interval + 50 ms
    assert "failed (no JSON result)" in html and "boom &lt;b&gt;" in html   # a crashed bench, escaped
    for name in ("render_tick_cost", "frame_intervals", "stop_latency", "throughput_ratio"):
        png = tmp_path / f"{name}.png"
        assert png.read_bytes().startswith(PNG) and png.stat().st_size > 5000
        assert f"src='{name}.png'" in html


def test_a_figure_not_measured_is_neither_met_nor_missed() -> None:
    b = Budget("x", "k", "<=", 1.0, "k")
    assert b.check({}) is None and b.check({"k": True}) is None
    assert b.check({"k": 1.0}) is True and b.check({"k": 1.5}) is False
    assert {b.bench for b in BUDGETS} >= {"pipeline", "stop", "soak", "render"}


@pytest.mark.slow
def test_a_quick_real_run_writes_the_report_with_its_plots(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["--quick", "--only", "stop,render", "--out", str(tmp_path)]) == 0
    last = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert last["report"] == str(tmp_path / "report.html")
    assert (tmp_path / "stop_latency.png").read_bytes().startswith(PNG)
    assert (tmp_path / "render_tick_cost.png").read_bytes().startswith(PNG)
    assert (tmp_path / "frame_intervals.png").read_bytes().startswith(PNG)
    html = (tmp_path / "report.html").read_text("utf-8")
    assert "inspector_frame_interval_ms_p99" in html and "stop_latency_ms_p95" in html


def test_bad_arguments_are_refused(tmp_path: Path) -> None:
    assert main(["--only", "nosuch", "--out", str(tmp_path)]) == 2


def test_replot_writes_the_report_again_from_saved_results(tmp_path: Path) -> None:
    (tmp_path / "results.json").write_text(json.dumps(canned()), "utf-8")
    assert main(["--replot", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "stop_latency.png").read_bytes().startswith(PNG)
    assert main(["--replot", "--out", str(tmp_path / "empty")]) == 2      # nothing saved there: refused


def test_a_few_stops_are_one_visible_bar_each_with_the_budget_line() -> None:
    from app.bench.report import stop_latency_figure

    fig = stop_latency_figure({"stop_latency_ms": [0.4, 0.6, 0.5, 0.7, 0.3, 0.5, 0.6, 0.4]},
                              {"token_interval_ms": 20.0})
    fig.canvas.draw()
    [ax] = fig.axes
    bars = [p for p in ax.patches if p.get_height() > 0]
    assert len(bars) == 8
    assert min(b.get_window_extent().width for b in bars) >= 20          # px: not slivers under a pixel wide
    assert [line.get_ydata()[0] for line in ax.lines] == [70.0]         # the budget


def test_frame_counts_use_a_log_axis_only_for_large_counts() -> None:
    from app.bench.report import frame_intervals_figure

    few = frame_intervals_figure({"frame_intervals_ms": [16.0, 17.0, 17.0, 40.0]})
    assert few.axes[0].get_yscale() == "linear"
    many = frame_intervals_figure({"frame_intervals_ms": [16.0] * 500 + [40.0]})
    assert many.axes[0].get_yscale() == "log"


def _measured(bench: str, args: list[str], tmp_path: Path) -> dict[str, object]:
    from app.bench.report import run_bench

    run = run_bench(bench, args, tmp_path, timeout_s=600)
    assert run["result"] is not None, run["log"][-3000:]
    return {b.key: b.check(run["result"]) for b in BUDGETS if b.bench == bench}


@pytest.mark.parametrize(("bench", "args"), [
    ("startup", ["--runs", "1"]), ("idle", ["--seconds", "1"]),
    ("remote", ["--rounds", "1", "--events", "300", "--stops", "2"]),
    ("stop", ["--stops", "3", "--model-stops", "2"]),
    ("soak", ["--replies", "2", "--tokens", "50"]),
    ("pipeline", ["--rounds", "1", "--tokens", "300", "--ttft-runs", "2", "--model-tokens", "16",
                  "--model-ttft-runs", "2"]),
])
def test_every_budget_of_a_bench_is_a_figure_it_really_writes(bench: str, args: list[str], tmp_path: Path) -> None:
    """A budget whose key the bench never writes would be skipped silently (as ``history``'s were)."""
    checked = _measured(bench, args, tmp_path)
    assert checked and None not in checked.values(), checked


def test_the_reports_history_budgets_are_the_history_benchs_own() -> None:
    """The bench checks its own ``BUDGETS``; the report must check the same keys and limits (it once looked for
    keys the bench never wrote, and lacked two of its budgets)."""
    from app.bench.history import BUDGETS as BENCH

    assert {b.key: b.limit for b in BUDGETS if b.bench == "history"} == BENCH
    assert all(b.op == "<=" for b in BUDGETS if b.bench == "history")


@pytest.mark.slow
def test_every_history_budget_is_a_figure_the_history_bench_writes(tmp_path: Path) -> None:
    checked = _measured("history", ["--pairs", "10,1000"], tmp_path)
    assert checked and None not in checked.values(), checked
