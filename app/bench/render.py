"""Benchmark of the incremental markdown renderer: ``python -m app.bench render``.

What it measures, all in one run (the machines are shared and noisy, so comparisons are made side by side):

1. **Tick cost vs. length.** A reply of ~20,000 tokens is built from the corpus answers (``tests/data/answers``) (a
token is
   approximated as 4 characters; the reply is a reasoning prefix then a repeated *period* of answers padded to
   a whole number of ticks). It is streamed through :class:`~app.core.render.markdown.IncrementalMarkdown` in ticks of
   32 tokens (2,000 tokens/s × 16 ms). The cost of a tick is ``feed()`` of its tokens plus one
   ``render()``. Because every period is the same text at the same tick alignment, the ticks
   near token 200 (first period) and near token 20,000 (last period) render the same content; the only
   difference is how much text came before. ``tick_cost_ratio_20k_vs_200`` = median cost there ÷ median cost
   here (median over the window and over repeated runs). Budget ≤ 1.5.
2. **Against a naive renderer.** ``render_markdown(text_so_far)`` per tick near 20,000 tokens, same run:
   ``speedup_vs_naive_at_20k`` = naive median ÷ incremental median.
3. **Frames in Qt.** Offscreen (``QT_QPA_PLATFORM=offscreen`` unless set), the reply's
   :class:`~app.ui.messages.markdown_view.MarkdownView` inside the real chat view
   (``app.ui.messages.chat_view.ChatView``) with the
   window's stylesheet receives the reply at 2,000 tokens/s (``height_clones``: heights asked at another width
   than the shown one, each a document clone); a
   ``QTimer`` of 16 ms appends what is due and calls ``refresh()``. The intervals between ticks give
   ``frame_interval_ms_p99`` and ``frame_interval_ms_max`` (budgets ≤ 20 and ≤ 50).

Prints readable lines, then one JSON object as the last line. Takes well under 2 minutes.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from app.core.render.markdown import IncrementalMarkdown, render_markdown

CHARS_PER_TOKEN = 4
TOKENS_PER_TICK = 32  # 2,000 tokens/s × 16 ms
TICK_CHARS = CHARS_PER_TOKEN * TOKENS_PER_TICK
TARGET_TOKENS = 20_000
WINDOW_TOKENS = 400  # measurement window width around token 200 / token 20,000
_DEFAULT_CORPUS = Path(__file__).resolve().parents[2] / "tests" / "data" / "answers"

_FALLBACK = [
    "# Heading\n\nSome **bold** text and `code` with a [link](https://example.org).\n",
    "```python\ndef f(x):\n    return x * 2\n```\n",
    "| a | b |\n|---|---|\n" + "".join(f"| {i} | {i * i} |\n" for i in range(40)),
    "- one\n- two\n  - nested\n- three\n",
]


def build_reply(corpus: Path | None = None, target_tokens: int = TARGET_TOKENS) -> tuple[str, int, int]:
    """Build the benchmark reply: ``(text, prefix_chars, period_chars)``.

    ``text`` = a ``<think>`` prefix (padded to whole ticks) + repetitions of one period of answers (padded to
    whole ticks) until ``target_tokens`` × 4 characters. An unterminated fence in an answer is closed so that
    it does not swallow the following answers.
    """
    answers: list[str] = []
    think = "<think>\nThe user wants a mix of code, tables and lists.\n</think>\n\n"
    folder = corpus if corpus is not None else _DEFAULT_CORPUS
    if folder.is_dir():
        for path in sorted(folder.glob("*.md")):
            text = path.read_text(encoding="utf-8")
            if text.lstrip().startswith("<think>"):
                think = text[: text.index("</think>") + len("</think>")] + "\n\n"
                text = text[text.index("</think>") + len("</think>") :]
            if text.count("```") % 2:
                text += "\n```\n"
            answers.append(text.strip("\n") + "\n\n")
    if not answers:
        answers = [a + "\n" for a in _FALLBACK]

    def pad(s: str) -> str:
        return s + "\n" * (-len(s) % TICK_CHARS)

    prefix = pad(think)
    period = pad("".join(answers))
    n = max(1, (target_tokens * CHARS_PER_TOKEN - len(prefix)) // len(period) + 1)
    return prefix + period * n, len(prefix), len(period)


def _tick_costs(text: str) -> list[float]:
    """Seconds per tick of streaming ``text`` through IncrementalMarkdown (feeds of 4 chars, then a read)."""
    md = IncrementalMarkdown(theme="light")
    costs = []
    clock = time.perf_counter
    for start in range(0, len(text), TICK_CHARS):
        t0 = clock()
        for i in range(start, min(start + TICK_CHARS, len(text)), CHARS_PER_TOKEN):
            md.feed(text[i : i + CHARS_PER_TOKEN])
        md.render()
        costs.append(clock() - t0)
    md.finish()
    return costs


def measure_core(text: str, prefix: int, period: int, repeats: int = 5,
                 series: dict[str, list[float]] | None = None) -> dict[str, float]:
    """Tick-cost ratio and naive speed-up (see the module docstring). Costs in ms. ``series`` (optional)
    receives ``tick_ms`` (median per tick over the repeats; tick k ends at token (k + 1) × 32) and
    ``naive_tokens`` / ``naive_ms``: the naive full re-render's cost at 10 reply lengths."""
    runs = [_tick_costs(text) for _ in range(repeats)]
    per_tick = [statistics.median(r[i] for r in runs) for i in range(len(runs[0]))]
    if series is not None:
        series["tick_ms"] = [c * 1e3 for c in per_tick]
        series["naive_tokens"], series["naive_ms"] = [], []
        n_ticks = len(per_tick)
        for k in sorted({max(0, round(n_ticks * f) - 1) for f in (0.02, 0.05, 0.1, 0.2, 0.3, 0.45, 0.6, 0.75,
                                                                   0.9, 1.0)}):
            t0 = time.perf_counter()
            render_markdown(text[: (k + 1) * TICK_CHARS])
            series["naive_ms"].append((time.perf_counter() - t0) * 1e3)
            series["naive_tokens"].append((k + 1) * TOKENS_PER_TICK)
    ticks_per_period = period // TICK_CHARS
    # window A: ticks whose end lies in [200 - W/2, 200 + W/2] tokens; window B: the same ticks, last period
    lo = max(0, (200 * CHARS_PER_TOKEN - WINDOW_TOKENS * 2) // TICK_CHARS)
    hi = (200 * CHARS_PER_TOKEN + WINDOW_TOKENS * 2) // TICK_CHARS + 1
    last_period = (len(text) - prefix) // period - 1
    shift = last_period * ticks_per_period
    window_a = per_tick[lo:hi]
    window_b = per_tick[lo + shift : hi + shift]
    cost_a = statistics.median(window_a)
    cost_b = statistics.median(window_b)
    # naive full re-render per tick near the end, same ticks as window B
    naive = []
    for tick in range(lo + shift, min(hi + shift, lo + shift + 6)):
        end = (tick + 1) * TICK_CHARS
        t0 = time.perf_counter()
        render_markdown(text[:end])
        naive.append(time.perf_counter() - t0)
    naive_cost = statistics.median(naive)
    return {
        "tick_ms_near_200": cost_a * 1e3,
        "tick_ms_near_20k": cost_b * 1e3,
        "tick_cost_ratio_20k_vs_200": cost_b / cost_a,
        "naive_tick_ms_at_20k": naive_cost * 1e3,
        "speedup_vs_naive_at_20k": naive_cost / cost_b,
        "tick_ms_max": max(per_tick) * 1e3,
        "window_b_token": (lo + shift) * TOKENS_PER_TICK,
    }


def measure_frames(text: str, tokens_per_s: float = 2000.0, tick_ms: int = 16, *, inspector: bool = False,
                   series: dict[str, list[float]] | None = None) -> dict[str, float]:
    """Stream ``text`` into a MarkdownView at ``tokens_per_s``; frame intervals in ms (p50, p99, max).

    Each tick also stamps a ``StreamMetrics`` as the app's pipeline does (produced/enqueued/dequeued per token,
    painted per tick). ``inspector``: a ``StreamInspector`` (``app.ui.inspector.dock``) is open beside the view,
    following those stamps live, as it would in the app. ``series`` (optional) receives the raw
    ``frame_intervals_ms`` and ``refresh_ms``.
    """
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QEventLoop, Qt, QTimer
    from PySide6.QtWidgets import QApplication

    from app.ui.messages.markdown_view import MarkdownView

    app = QApplication.instance() or QApplication([])
    from app.core.render.highlight import warm_up

    warm_up()  # as the app does while the model loads: lexers are built before the first reply
    from app.core.render.math_render import default_math_pool
    from app.core.render.math_render import warm_up as warm_up_math

    warm_up_math()  # and the math worker has imported matplotlib (the model takes longer to load)
    default_math_pool().wait(120)
    # the reply inside the real chat view, with the window's real stylesheet (margins, borders), as in the app:
    # the message list lays the reply out, follows the bottom, and asks its height each tick
    import app.ui.messages.markdown_view as markdown_view
    from app.core.conversation import Message, MessageStatus, Role
    from app.ui.look.style import apply_style
    from app.ui.messages.chat_view import ChatView

    area = ChatView()
    apply_style(area)
    area.resize(900, 700)
    area.show()
    area.add(Message(Role.USER, "Show me code, tables and lists."))
    widget = area.add(Message(Role.ASSISTANT, status=MessageStatus.GENERATING, model="bench"))
    view = widget.view
    assert isinstance(view, MarkdownView)
    clones = [0]                   # heights asked at another width than the shown one: a document clone each
    real_hfw = markdown_view.height_for_width

    def counting_hfw(v: Any, width: int, probes: dict[int, int], lay_out_unset: bool = True) -> int:
        if v is view and width not in probes and v.document().characterCount() > 1:
            margins = v.contentsMargins()
            if v.document().textWidth() != max(1, width - margins.left() - margins.right()):
                clones[0] += 1
        return real_hfw(v, width, probes, lay_out_unset)

    markdown_view.height_for_width = counting_hfw
    from app.core.streaming.metrics import StreamMetrics

    metrics = StreamMetrics()
    metrics.t_slot = time.perf_counter()
    panel = None
    panel_ms: list[float] = []     # inspector redraw (refresh) cost per redraw
    paint_ms: list[float] = []     # inspector paint events
    if inspector:
        from app.ui.inspector.dock import StreamInspector

        panel = StreamInspector()
        panel.resize(900, 500)
        panel.show()
        panel.set_metrics(metrics, "", "render benchmark")
        for _ in range(3):      # it was open before the reply started: its first paint is not part of the stream
            app.processEvents()
        paint_event = panel.view.paintEvent

        def timed_paint(ev: object) -> None:   # the inspector's own paint cost
            t0 = time.perf_counter()
            paint_event(ev)
            paint_ms.append((time.perf_counter() - t0) * 1e3)
        panel.view.paintEvent = timed_paint   # type: ignore[method-assign]

    tokens = [text[i : i + CHARS_PER_TOKEN] for i in range(0, len(text), CHARS_PER_TOKEN)]
    state = {"sent": 0, "t0": 0.0, "last": 0.0}
    intervals: list[float] = []
    refresh_ms: list[float] = []
    loop = QEventLoop()
    timer = QTimer()
    timer.setTimerType(Qt.TimerType.PreciseTimer)
    timer.setInterval(tick_ms)

    def tick() -> None:
        now = time.perf_counter()
        if state["last"]:
            intervals.append((now - state["last"]) * 1e3)
        state["last"] = now
        due = min(len(tokens), int((now - state["t0"]) * tokens_per_s))
        sent = int(state["sent"])
        for tok in tokens[sent:due]:
            metrics.on_produced(now, 1)
            metrics.on_enqueued(now, 1, 0.0, len(tok))
            view.append_text(tok)
        if due > sent:
            metrics.on_dequeued(now, due - sent)
        state["sent"] = due
        t0 = time.perf_counter()
        view.refresh()
        t1 = time.perf_counter()
        refresh_ms.append((t1 - t0) * 1e3)
        metrics.on_painted(t1, due - sent, t1 - t0)
        if panel is not None:
            t2 = time.perf_counter()
            before = panel.refreshes
            panel.poke()                    # as the app's coalescer `painted` signal does
            if panel.refreshes != before:
                panel_ms.append((time.perf_counter() - t2) * 1e3)
        if due >= len(tokens):
            view.finish()
            timer.stop()
            loop.quit()

    timer.timeout.connect(tick)
    state["t0"] = time.perf_counter()
    timer.start()
    loop.exec()
    app.processEvents()
    deadline = time.perf_counter() + 120
    while view.renderer.highlights_pending and time.perf_counter() < deadline:   # code colours, formulas
        app.processEvents()
        time.sleep(0.01)
    view.refresh()
    ok = view.renderer.html == render_markdown(text, theme="light", math=view.renderer.math)
    area.close()
    markdown_view.height_for_width = real_hfw
    refreshes = 0
    extra: dict[str, float] = {}
    if panel is not None:
        refreshes = panel.refreshes
        extra["panel_refreshes"] = refreshes
        for name, xs in (("panel_refresh_ms", panel_ms), ("panel_paint_ms", paint_ms)):
            if xs:
                extra[f"{name}_p50"] = statistics.median(xs)
                extra[f"{name}_max"] = max(xs)
        panel.close()
        panel.deleteLater()
    if series is not None:
        series["frame_intervals_ms"] = list(intervals)
        series["refresh_ms"] = list(refresh_ms)
    intervals.sort()
    p99 = intervals[min(len(intervals) - 1, int(0.99 * len(intervals)))]
    return {
        "frame_interval_ms_p50": statistics.median(intervals),
        "frame_interval_ms_p99": p99,
        "frame_interval_ms_max": intervals[-1],
        "refresh_ms_p99": sorted(refresh_ms)[int(0.99 * (len(refresh_ms) - 1))],
        "frames": len(intervals),
        "final_html_equals_one_shot": ok,
        "height_clones": clones[0],
        **extra,
    }


def _median_frames(runs: list[dict[str, float]]) -> dict[str, float]:
    """Median of each numeric figure over ``runs`` (booleans: all true)."""
    out: dict[str, float] = {}
    for k, v in runs[0].items():
        if isinstance(v, bool):
            out[k] = all(r[k] for r in runs)
        else:
            out[k] = statistics.median(r[k] for r in runs)
    return out


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; print readable lines then one JSON line. Returns 0, or 1 when a budget is missed."""
    parser = argparse.ArgumentParser(prog="python -m app.bench render", description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, default=None, help="folder of answer .md files")
    parser.add_argument("--tokens", type=int, default=TARGET_TOKENS, help="reply length in tokens (≈4 chars)")
    parser.add_argument("--repeats", type=int, default=5, help="runs of the core measurement")
    parser.add_argument("--no-qt", action="store_true", help="skip the Qt frame measurement")
    parser.add_argument("--inspector", action="store_true",
                        help="measure the frames twice in this run: without, then with the stream inspector open "
                             "(inspector_* keys; both must be within budget)")
    parser.add_argument("--rounds", type=int, default=3,
                        help="with --inspector: rounds of (closed, open), alternating; medians are reported")
    parser.add_argument("--series", type=Path, default=None, metavar="PATH",
                        help="also write the raw series (per-tick cost, naive cost, frame intervals) to this JSON")
    args = parser.parse_args(argv)
    series: dict[str, list[float]] = {}

    text, prefix, period = build_reply(args.corpus, args.tokens)
    print(f"reply: {len(text):,} chars ≈ {len(text) // CHARS_PER_TOKEN:,} tokens; period {period:,} chars")
    result: dict[str, float | int | bool] = {"tokens": len(text) // CHARS_PER_TOKEN}
    core = measure_core(text, prefix, period, args.repeats, series if args.series else None)
    result.update(core)
    print(f"tick cost near token 200:    {core['tick_ms_near_200']:.3f} ms (median)")
    print(f"tick cost near token {core['window_b_token']:,}: {core['tick_ms_near_20k']:.3f} ms (median)")
    print(f"ratio 20k/200: {core['tick_cost_ratio_20k_vs_200']:.2f} (budget ≤ 1.5)")
    print(f"naive full re-render per tick at 20k: {core['naive_tick_ms_at_20k']:.1f} ms → "
          f"speed-up {core['speedup_vs_naive_at_20k']:.0f}×")
    ok = core["tick_cost_ratio_20k_vs_200"] <= 1.5
    if not args.no_qt:
        frames_series: dict[str, list[float]] = {}
        if not args.inspector:
            frames = measure_frames(text, series=frames_series)
        else:
            # the machine is shared: alternate closed/open rounds and take the median of each figure
            closed: list[dict[str, float]] = []
            opened: list[dict[str, float]] = []
            with_panel: dict[str, list[float]] = {}
            for r in range(args.rounds):
                for panel in ((False, True) if r % 2 == 0 else (True, False)):
                    if panel:
                        opened.append(measure_frames(text, inspector=True, series=with_panel))
                    else:
                        closed.append(measure_frames(text, series=frames_series))
            frames, inspected = _median_frames(closed), _median_frames(opened)
            series["inspector_frame_intervals_ms"] = with_panel["frame_intervals_ms"]
        result.update(frames)
        print(f"Qt frames: {frames['frames']}, interval p50 {frames['frame_interval_ms_p50']:.1f} ms, "
              f"p99 {frames['frame_interval_ms_p99']:.1f} ms (≤ 20), max {frames['frame_interval_ms_max']:.1f} ms "
              f"(≤ 50); final HTML equals one-shot: {frames['final_html_equals_one_shot']}")
        ok = ok and frames["frame_interval_ms_p99"] <= 20 and frames["frame_interval_ms_max"] <= 50
        series["frame_intervals_ms"] = frames_series.get("frame_intervals_ms", [])
        if args.inspector:
            result.update({f"inspector_{k}": v for k, v in inspected.items()})
            result["frame_rounds"] = args.rounds
            result["inspector_p99_ratio"] = inspected["frame_interval_ms_p99"] / frames["frame_interval_ms_p99"]
            print(f"with the inspector open: interval p50 {inspected['frame_interval_ms_p50']:.1f} ms, "
                  f"p99 {inspected['frame_interval_ms_p99']:.1f} ms (≤ 20), "
                  f"max {inspected['frame_interval_ms_max']:.1f} ms (≤ 50); "
                  f"{inspected['panel_refreshes']:.0f} inspector redraws of {inspected['panel_refresh_ms_p50']:.1f} + "
                  f"{inspected['panel_paint_ms_p50']:.1f} ms (refresh + paint, p50; medians of {args.rounds} rounds)")
            ok = ok and inspected["frame_interval_ms_p99"] <= 20 and inspected["frame_interval_ms_max"] <= 50
    result["within_budget"] = ok
    if args.series:
        args.series.write_text(json.dumps({k: [round(x, 4) for x in v] for k, v in series.items()}), "utf-8")
    print(json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in result.items()}))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
