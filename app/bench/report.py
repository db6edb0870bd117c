"""``python -m app.bench report [--out DIR] [--quick] [--only NAMES]``: run the benchmarks, write report.html.

Runs each benchmark in its own process (``python -m app.bench NAME``; pipeline, stop, soak, render, feeds, consumer,
search, and history / remote when those benchmarks exist), reads the JSON object each prints as its last line,
checks the figures against their budgets and writes ``DIR/report.html`` (default ``bench-report/``) with:

- a table per benchmark: figure, value, budget, met / missed;
- matplotlib PNG plots: ``render_tick_cost.png`` (per-tick render cost vs reply length, Brook's incremental
  renderer vs the naive full re-render), ``frame_intervals.png`` (histogram of frame intervals while streaming
  2,000 tokens/s, with and without the stream inspector open), ``stop_latency.png`` (Stop click → worker
  stopped, per stop) and ``throughput_ratio.png`` (ours ÷ raw loop, per round);
- each benchmark's raw JSON and its log.

``--quick`` runs small versions (for a smoke check; the budgets are then only indicative). Prints one JSON
object as its last line: the report's path and the budgets met / missed. Exit status 0 when the report was
written (budgets missed are in the report, not the exit status), 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.bench._util import emit

#: Benchmarks in the order they run: (name, full arguments, --quick arguments). ``{series}`` is replaced by
#: the path of the benchmark's raw-series JSON file.
PLAN: list[tuple[str, list[str], list[str]]] = [
    ("pipeline", [], ["--tokens", "3000", "--rounds", "2", "--ttft-runs", "5", "--model-tokens", "40"]),
    ("stop", ["--model-stops", "20", "--series", "{series}"],
     ["--stops", "8", "--model-stops", "4", "--series", "{series}"]),
    ("soak", [], ["--replies", "8", "--tokens", "200"]),
    ("render", ["--inspector", "--series", "{series}"],
     ["--tokens", "2000", "--repeats", "1", "--seconds", "3", "--shapes", "nested_quotes,long_table",
      "--shape-repeats", "1", "--inspector", "--series", "{series}"]),
    ("feeds", [], ["--repeats", "1"]),
    ("consumer", [], ["--seconds", "1"]),
    ("search", [], ["--messages", "2000", "--rounds", "2"]),
    ("history", [], ["--pairs", "10,1000"]),
    ("sidebar", [], ["--opens", "12"]),
    ("idle", [], ["--seconds", "2"]),
    ("startup", [], ["--runs", "1"]),
    ("remote", [], ["--rounds", "2", "--events", "10000", "--stops", "5"]),
]


@dataclass(frozen=True)
class Budget:
    """One budget: ``key`` of ``bench``'s JSON must satisfy ``op`` against ``limit`` (a number, or a function
    of the whole result, e.g. stop latency ≤ one token interval + 50 ms). Source: docs/architecture.md, "Budgets"."""

    bench: str
    key: str
    op: str                   # "<=", "<", ">=", "=="
    limit: float | Callable[[dict[str, Any]], float]
    label: str

    def limit_for(self, result: dict[str, Any]) -> float:
        return self.limit(result) if callable(self.limit) else self.limit

    def value(self, result: dict[str, Any]) -> Any:
        """The figure (a dotted key reaches into nested objects: ``long_table.worst_feed_ms``)."""
        v: Any = result
        for part in self.key.split("."):
            v = v.get(part) if isinstance(v, dict) else None
        return v

    def check(self, result: dict[str, Any]) -> bool | None:
        """True (met), False (missed), None (not measured in this run)."""
        value = self.value(result)
        if isinstance(value, bool) and self.op == "==":
            value = int(value)               # a yes/no figure (e.g. final_html_equals_one_shot) against 1
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            return None
        limit = self.limit_for(result)
        return {"<=": value <= limit, "<": value < limit, ">=": value >= limit, "==": value == limit}[self.op]


BUDGETS = [
    Budget("pipeline", "throughput_ratio_scripted", ">=", 0.99, "throughput vs raw loop (scripted engine)"),
    Budget("pipeline", "throughput_ratio_model", ">=", 0.99, "throughput vs raw loop (real model)"),
    Budget("pipeline", "ttft_added_ms_p95", "<=", 25.0, "TTFT added by the app, p95 (ms)"),
    Budget("pipeline", "ttft_added_ms_p95_model", "<=", 16.7, "TTFT added by the app on the real model, p95 (ms)"),
    Budget("stop", "stop_latency_ms_p95", "<=", lambda r: float(r.get("token_interval_ms", 0.0)) + 50.0,
           "Stop → worker stopped, p95 (ms; ≤ one token interval + 50)"),
    Budget("stop", "chunks_after_stop", "==", 0, "chunks shown after Stop"),
    Budget("stop", "threads_leaked", "==", 0, "threads left after all stops"),
    Budget("stop", "stop_latency_ms_p95_model", "<=", lambda r: float(r.get("token_interval_ms_model", 0.0)) + 10.0,
           "real model: Stop → worker stopped, p95 (ms; ≤ one token interval + 10)"),
    Budget("stop", "chunks_after_stop_model", "==", 0, "real model: chunks shown after Stop"),
    Budget("stop", "threads_leaked_model", "==", 0, "real model: threads left after all stops"),
    Budget("stop", "rss_added_after_unload_mb_model", "<", 30.0, "real model: RSS added after unload (MB)"),
    Budget("stop", "host_gone_model", "==", 1, "real model: engine host process gone after unload"),
    Budget("soak", "rss_growth_mb", "<", 20.0, "RSS growth over the replies (MiB)"),
    Budget("soak", "threads_leaked", "==", 0, "threads left after the replies"),
    Budget("render", "tick_cost_ratio_20k_vs_200", "<=", 1.5, "render cost per tick at 20k ÷ at 200 tokens"),
    Budget("render", "frame_interval_ms_p99", "<=", 16.7,
           "frame interval p99 in the window, worst of 100/1,000/5,000 tok/s and the hostile shapes (ms)"),
    Budget("render", "frame_interval_ms_max", "<=", 50.0, "frame interval max, worst scenario (ms)"),
    Budget("render", "e2e_ratio_min", ">=", 0.99, "tokens on screen ÷ producer's rate, worst scenario"),
    Budget("render", "final_html_equals_one_shot", "==", 1, "streamed HTML equals the one-shot render"),
    Budget("render", "shown_whole_at_finish", "==", 1, "a finished reply's view shows all of it"),
    Budget("render", "inspector_frame_interval_ms_p99", "<=", 16.7, "… with the inspector open: p99 (ms)"),
    Budget("render", "inspector_frame_interval_ms_max", "<=", 50.0, "… with the inspector open: max (ms)"),
    Budget("feeds", "long_table.worst_feed_ms", "<=", 100.0, "slowest feed, 5,000-row table (ms)"),
    Budget("feeds", "fence_200kb_line.worst_feed_ms", "<=", 100.0, "slowest feed, 200 KB code line (ms)"),
    Budget("history", "open_ms_1000", "<=", 50.0, "open a 1,000-pair chat: shown (ms)"),
    Budget("history", "open_rendered_ms_1000", "<=", 150.0, "open a 1,000-pair chat: fully rendered (ms)"),
    Budget("history", "scroll_step_ms_p99_1000", "<=", 16.7, "one scroll step p99, 1,000 pairs (ms)"),
    Budget("history", "settle_ms_p99_1000", "<=", 150.0, "stopped-on screen fully rendered, p99 (ms)"),
    Budget("history", "scroll_step_ms_max_1000", "<=", 50.0, "one scroll step max, 1,000 pairs (ms)"),
    Budget("history", "open_streaming_ms", "<=", 50.0, "open a chat whose reply streams: shown (ms)"),
    Budget("history", "open_streaming_rendered_ms", "<=", 150.0,
           "open a chat whose reply streams: caught up with the text so far (ms)"),
    Budget("history", "open_ratio_1000_vs_10", "<=", 3.0, "open a 1,000-pair chat ÷ a 10-pair one (shown)"),
    Budget("history", "rss_growth_mb_1000", "<=", 150.0, "memory after opening and scrolling 1,000 pairs (MB)"),
    Budget("idle", "wakeups_per_s", "<=", 2.0, "idle window: main-thread wake-ups per second"),
    Budget("startup", "window_shown_ratio", "<=", 3.0, "launch → window shown ÷ a bare PySide6 window"),
    Budget("startup", "model_window_shown_ratio", "<=", 1.10,
           "bundled model: launch → window shown, engine host ÷ in-process"),
    Budget("startup", "model_ready_ratio", "<=", 1.10, "bundled model: launch → model ready, engine host ÷ in-process"),
    Budget("remote", "throughput_ratio_remote", ">=", 0.98, "remote SSE path vs a raw httpx-sse loop"),
    Budget("remote", "throughput_ratio_unpaced", ">=", 0.5, "… unpaced, vs reading then showing it at once"),
    Budget("remote", "stop_to_disconnect_ms_p95", "<=", 50.0, "remote: Stop → server sees the disconnect, p95 (ms)"),
    Budget("remote", "chunks_after_stop", "==", 0, "remote: chunks shown after Stop"),
]


def _text(out: str | bytes | None) -> str:
    """A timed-out run's captured output as text (``TimeoutExpired`` may hold bytes)."""
    if isinstance(out, bytes):
        return out.decode("utf-8", "replace")
    return out or ""


def available() -> set[str]:
    from app.bench.__main__ import _names
    return set(_names())


def run_bench(name: str, args: list[str], out: Path, timeout_s: float) -> dict[str, Any]:
    """Run ``python -m app.bench NAME ARGS`` in a child process; returns ``{"result": dict | None, "series":
    dict | None, "log": str, "seconds": float, "returncode": int}``. Never raises for the benchmark's failure."""
    series_path = out / f"{name}_series.json"
    argv = [a.replace("{series}", str(series_path)) for a in args]
    env = dict(os.environ)
    env.setdefault("QT_QPA_PLATFORM", "offscreen")
    t0 = time.perf_counter()
    try:
        proc = subprocess.run([sys.executable, "-m", "app.bench", name, *argv], capture_output=True, text=True,
                              timeout=timeout_s, env=env, check=False)
        log, code = proc.stdout + proc.stderr, proc.returncode
    except subprocess.TimeoutExpired as exc:
        log = f"{_text(exc.stdout)}{_text(exc.stderr)}\n(timed out after {timeout_s:.0f} s)"
        code = -1
    seconds = time.perf_counter() - t0
    result = None
    for line in reversed((log if isinstance(log, str) else "").splitlines()):
        line = line.strip()
        if line.startswith("{") and line.endswith("}"):
            try:
                result = json.loads(line)
                break
            except ValueError:
                continue
    series = None
    if series_path.exists():
        try:
            series = json.loads(series_path.read_text("utf-8"))
        except ValueError:
            series = None
    return {"result": result, "series": series, "log": log, "seconds": seconds, "returncode": code}


# plots -----------------------------------------------------------------------------------------------------

def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def plot_tick_cost(series: dict[str, Any], path: Path) -> Path | None:
    """Per-tick render cost (ms, log scale) vs reply length (tokens): ours per tick and its rolling median,
    and the naive full re-render at sampled lengths."""
    ticks = series.get("tick_ms") or []
    if not ticks:
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(8, 4.2), dpi=110)
    tokens = [(k + 1) * 32 for k in range(len(ticks))]
    ax.plot(tokens, ticks, color="#9ecae1", lw=0.6, label="Brook, each tick")
    w = 25
    rolling = [sorted(ticks[max(0, i - w):i + w + 1])[len(ticks[max(0, i - w):i + w + 1]) // 2]
               for i in range(len(ticks))]
    ax.plot(tokens, rolling, color="#1f77b4", lw=2, label="Brook, rolling median")
    if series.get("naive_ms"):
        ax.plot(series["naive_tokens"], series["naive_ms"], "o-", color="#d62728", lw=2,
                label="naive: re-render the whole reply")
    ax.axhline(16.7, color="grey", ls=":", lw=1)
    ax.text(tokens[-1], 16.7, " one frame (16.7 ms)", va="bottom", ha="right", color="grey", fontsize=8)
    ax.set_yscale("log")
    ax.set_xlabel("reply length (tokens)")
    ax.set_ylabel("render cost per tick (ms)")
    ax.set_title("Render cost per tick vs reply length (ticks of 32 tokens)")
    ax.legend(loc="upper left", fontsize=8)
    ax.grid(True, which="both", alpha=0.2)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


#: Fewer stops than this are drawn one bar per stop (a histogram of 8 values is 8 slivers); more, as a histogram.
STOPS_AS_BARS = 40
#: A frame histogram whose tallest bin holds fewer frames than this keeps a linear count axis (a log axis for
#: counts of 1-5 makes one frame look like a hundred).
LOG_COUNTS_FROM = 50


def plot_frame_intervals(series: dict[str, Any], path: Path) -> Path | None:
    """Histogram of frame intervals (ms) while streaming, without and with the inspector open."""
    fig = frame_intervals_figure(series)
    if fig is None:
        return None
    fig.savefig(path)
    _plt().close(fig)
    return path


def frame_intervals_figure(series: dict[str, Any]) -> Any:
    """The frame-interval figure (matplotlib ``Figure``), or None without intervals. Counts are on a log axis only
    when a bin holds ``LOG_COUNTS_FROM`` frames or more."""
    base = series.get("frame_intervals_ms") or []
    if not base:
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(8, 4), dpi=110)
    with_panel = series.get("inspector_frame_intervals_ms") or []
    top = max(60.0, max(base + with_panel))
    bins = [i * 1.0 for i in range(int(min(top, 120)) + 2)]
    def p99(xs: list[float]) -> float:
        return sorted(xs)[min(len(xs) - 1, int(0.99 * len(xs)))]

    counts, _edges, _bars = ax.hist([min(x, bins[-1]) for x in base], bins=bins, alpha=0.6, color="#1f77b4",
                                    label=f"inspector closed (p99 {p99(base):.1f} ms)")
    tallest = max(counts)
    if with_panel:
        more, _edges, _bars = ax.hist([min(x, bins[-1]) for x in with_panel], bins=bins, alpha=0.5,
                                      color="#ff7f0e", label=f"inspector open (p99 {p99(with_panel):.1f} ms)")
        tallest = max(tallest, max(more))
    if tallest >= LOG_COUNTS_FROM:
        ax.set_yscale("log")
    else:
        ax.yaxis.get_major_locator().set_params(integer=True)
    for x, text in ((16.7, "16.7 ms tick"), (20, "p99 budget 20"), (50, "max budget 50")):
        ax.axvline(x, color="grey", ls=":", lw=1)
        ax.text(x, ax.get_ylim()[1] * 0.95, f" {text}", rotation=90, va="top", fontsize=8, color="grey")
    ax.set_xlabel(f"interval between render ticks (ms; longer ones counted at {bins[-1]:.0f})")
    ax.set_ylabel("frames")
    ax.set_title("Frame intervals while streaming 2,000 tokens/s of mixed markdown")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def plot_stop_latency(series: dict[str, Any], result: dict[str, Any], path: Path) -> Path | None:
    """Stop click → worker thread stopped (ms) per stop, with the budget."""
    fig = stop_latency_figure(series, result)
    if fig is None:
        return None
    fig.savefig(path)
    _plt().close(fig)
    return path


def stop_latency_figure(series: dict[str, Any], result: dict[str, Any]) -> Any:
    """The stop-latency figure (matplotlib ``Figure``), or None without stops: one bar per stop (its latency)
    under ``STOPS_AS_BARS`` stops, else a histogram of 1 ms-or-wider bins; the budget (one token interval + 50 ms)
    as a line."""
    lat = series.get("stop_latency_ms") or []
    if not lat:
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(8, 3.6), dpi=110)
    budget = float(result.get("token_interval_ms", 0.0)) + 50.0
    if len(lat) < STOPS_AS_BARS:
        ax.bar(range(1, len(lat) + 1), lat, width=0.7, color="#2ca02c", alpha=0.8)
        ax.axhline(budget, color="#d62728", ls="--", lw=1.5)
        ax.text(0.5, budget, f" budget {budget:.0f} ms", color="#d62728", fontsize=8, va="bottom")
        ax.set_xticks(range(1, len(lat) + 1))
        ax.set_xlabel("stop")
        ax.set_ylabel("Stop click → worker stopped (ms)")
        ax.set_ylim(0, max(max(lat), budget) * 1.15)
    else:
        hi = max(max(lat), budget)
        width = max(1.0, hi / 40)
        bins = [i * width for i in range(int(hi / width) + 2)]
        ax.hist(lat, bins=bins, color="#2ca02c", alpha=0.8)
        ax.axvline(budget, color="#d62728", ls="--", lw=1.5)
        ax.text(budget, ax.get_ylim()[1] * 0.9, f" budget {budget:.0f} ms", color="#d62728", fontsize=8)
        ax.set_xlabel("Stop click → worker thread stopped (ms)")
        ax.set_ylabel("stops")
    ax.set_title(f"Stop latency over {len(lat)} stops at random moments")
    fig.tight_layout()
    return fig


def plot_throughput(result: dict[str, Any], path: Path) -> Path | None:
    """Throughput ratio ours ÷ raw loop per round (scripted engine and real model), with the budget."""
    runs = [(k, result[k].get("ratios") or []) for k in ("scripted", "model") if isinstance(result.get(k), dict)]
    runs = [(k, r) for k, r in runs if r]
    if not runs:
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(8, 3.6), dpi=110)
    from matplotlib.ticker import MaxNLocator

    for (name, ratios), color in zip(runs, ("#1f77b4", "#ff7f0e"), strict=False):
        med = statistics.median(ratios)
        ax.plot(range(1, len(ratios) + 1), ratios, "o-", color=color, label=f"{name} (median {med:.3f})")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.axhline(0.99, color="#d62728", ls="--", lw=1.2, label="budget ≥ 0.99")
    ax.axhline(1.0, color="grey", ls=":", lw=1)
    ax.set_xlabel("round")
    ax.set_ylabel("throughput ours ÷ raw")
    ax.set_title("Whole pipeline vs the raw loop on the same engine, per round")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


# html ------------------------------------------------------------------------------------------------------

def _esc(x: Any) -> str:
    import html
    return html.escape(str(x))


def _val(v: Any) -> str:
    return f"{v:.3f}" if isinstance(v, float) else _esc(v)


def write_report(runs: dict[str, dict[str, Any]], out: Path, *, quick: bool = False) -> dict[str, Any]:
    """Write ``out/report.html`` and its PNG plots from ``runs`` (name → ``run_bench`` output). Returns
    ``{"report": path, "met": n, "missed": n, "not_measured": n, "missed_labels": [...], "plots": [...]}``."""
    out.mkdir(parents=True, exist_ok=True)
    plots: list[tuple[str, Path]] = []

    def add(title: str, p: Path | None) -> None:
        if p is not None:
            plots.append((title, p))

    render, stop, pipeline = runs.get("render", {}), runs.get("stop", {}), runs.get("pipeline", {})
    add("Render cost per tick vs reply length",
        plot_tick_cost(render.get("series") or {}, out / "render_tick_cost.png"))
    add("Frame intervals", plot_frame_intervals(render.get("series") or {}, out / "frame_intervals.png"))
    add("Stop latency", plot_stop_latency(stop.get("series") or {}, stop.get("result") or {}, out / "stop_latency.png"))
    add("Throughput ratio per round", plot_throughput(pipeline.get("result") or {}, out / "throughput_ratio.png"))

    met = missed = unknown = 0
    missed_labels: list[str] = []
    sections = []
    for name, run in runs.items():
        result = run.get("result")
        rows = []
        for b in (b for b in BUDGETS if b.bench == name):
            ok = b.check(result or {})
            if ok is None:
                unknown += 1
                continue
            met, missed = met + ok, missed + (not ok)
            if not ok:
                missed_labels.append(f"{name}: {b.label}")
            cls, word = ("met", "met") if ok else ("missed", "missed")
            rows.append(f"<tr><td>{_esc(b.label)}</td><td><code>{_esc(b.key)}</code></td>"
                        f"<td class=num>{_val(b.value(result or {}))}</td>"
                        f"<td>{_esc(b.op)} {_val(b.limit_for(result or {}))}</td><td class={cls}>{word}</td></tr>")
        verdicts = ("budget_ok", "within_budget", "budgets_met")
        verdict = next((result[k] for k in verdicts if isinstance((result or {}).get(k), bool)),
                       None) if result is not None else None
        if verdict is not None:   # the benchmark's own verdict over all its budgets (shown, not counted again)
            cls = "met" if verdict else "missed"
            rows.append(f"<tr><td>the benchmark's own budget check</td><td></td><td></td><td></td>"
                        f"<td class={cls}>{cls}</td></tr>")
        status = ("ran" if result is not None else "failed (no JSON result)") + f", {run.get('seconds', 0):.0f} s"
        table = ("<table><tr><th>figure</th><th>key</th><th>value</th><th>budget</th><th></th></tr>"
                 + "".join(rows) + "</table>") if rows else "<p>No budgeted figure in this result.</p>"
        raw = json.dumps(result, indent=1) if result is not None else "(none)"
        sections.append(f"<h2>{_esc(name)} <small>({_esc(status)})</small></h2>{table}"
                        f"<details><summary>JSON result</summary><pre>{_esc(raw)}</pre></details>"
                        f"<details><summary>log</summary><pre>{_esc(run.get('log', '')[-20000:])}</pre></details>")
    figures = "".join(f"<figure><img src='{_esc(p.name)}' alt='{_esc(t)}'><figcaption>{_esc(t)}</figcaption></figure>"
                      for t, p in plots)
    load = ""
    if hasattr(os, "getloadavg"):   # a shared machine's load explains noisy frame figures
        load = " · load average {:.1f} / {:.1f} / {:.1f} (1 / 5 / 15 min, at the end)".format(*os.getloadavg())
    machine = (f"{platform.platform()} · Python {platform.python_version()} · {os.cpu_count()} CPUs · "
               f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}{load}")
    note = "<p class=missed>Quick run: small benchmarks, budgets indicative only.</p>" if quick else ""
    page = f"""<!doctype html><html><head><meta charset="utf-8"><title>Brook benchmark report</title>
<style>body{{font-family:sans-serif;max-width:1000px;margin:2em auto;padding:0 1em;color:#222}}
table{{border-collapse:collapse;margin:.5em 0}}td,th{{border:1px solid #ccc;padding:3px 8px;text-align:left}}
.num{{text-align:right;font-family:monospace}}.met{{color:#1a7f37;font-weight:bold}}
.missed{{color:#cf222e;font-weight:bold}}img{{max-width:100%;border:1px solid #ddd}}
figure{{margin:1em 0}}pre{{background:#f6f8fa;padding:.5em;overflow:auto;max-height:30em}}</style></head>
<body><h1>Brook benchmark report</h1><p>{_esc(machine)}</p>{note}
<p><b>{met}</b> budgets met, <b class={"missed" if missed else "met"}>{missed}</b> missed
{"(" + _esc("; ".join(missed_labels)) + ")" if missed_labels else ""}. Budgets: docs/architecture.md; each comparison
(ours vs a baseline) is measured in the same run.</p>
{figures}{"".join(sections)}</body></html>"""
    path = out / "report.html"
    path.write_text(page, "utf-8")
    return {"report": str(path), "met": met, "missed": missed, "not_measured": unknown,
            "missed_labels": missed_labels, "plots": [str(p) for _t, p in plots]}


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m app.bench report", description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=Path("bench-report"), help="folder for report.html and the PNGs")
    ap.add_argument("--quick", action="store_true", help="small versions of each benchmark (a smoke check)")
    ap.add_argument("--only", default="", help="comma-separated benchmark names (default: all there are)")
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds allowed per benchmark")
    ap.add_argument("--replot", action="store_true",
                    help="run nothing: write the report again from DIR/results.json of an earlier run")
    args = ap.parse_args(argv)
    have = available()
    wanted = [n.strip() for n in args.only.split(",") if n.strip()]
    unknown = [n for n in wanted if n not in {p[0] for p in PLAN}]
    if unknown:
        print(f"report: unknown benchmark(s): {', '.join(unknown)}", file=sys.stderr)
        return 2
    try:
        args.out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        print(f"report: cannot create {args.out}: {exc}", file=sys.stderr)
        return 2
    runs: dict[str, dict[str, Any]] = {}
    for name, full, quick in PLAN:
        if args.replot or name not in have or (wanted and name not in wanted):
            continue
        print(f"running {name} …", flush=True)
        runs[name] = run_bench(name, quick if args.quick else full, args.out, args.timeout)
        print(f"  {name}: {'ok' if runs[name]['result'] is not None else 'no result'} "
              f"in {runs[name]['seconds']:.0f} s", flush=True)
    if args.replot:
        try:
            runs = json.loads((args.out / "results.json").read_text("utf-8"))
        except (OSError, ValueError) as exc:
            print(f"report: no results to plot again in {args.out}: {exc}", file=sys.stderr)
            return 2
    else:
        (args.out / "results.json").write_text(json.dumps(runs), "utf-8")
    summary = write_report(runs, args.out, quick=args.quick)
    print(f"wrote {summary['report']}: {summary['met']} budgets met, {summary['missed']} missed")
    emit({"bench": "report", **summary})
    return 0
