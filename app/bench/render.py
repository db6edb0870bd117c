"""Benchmark of the incremental markdown renderer (DESIGN §5): ``python -m app.bench render``.

What it measures, all in one run (the machines are shared and noisy, so comparisons are made side by side):

1. **Tick cost vs. length.** A reply of ~20,000 tokens is built from the shared corpus answers (a token is
   approximated as 4 characters; the reply is a reasoning prefix then a repeated *period* of answers padded to
   a whole number of ticks). It is streamed through :class:`~app.core.markdown.IncrementalMarkdown` in ticks of
   32 tokens (2,000 tokens/s × 16 ms). The cost of a tick is ``feed()`` of its tokens plus one
   ``render()``. Because every period is the same text at the same tick alignment, the ticks
   near token 200 (first period) and near token 20,000 (last period) render the same content; the only
   difference is how much text came before. ``tick_cost_ratio_20k_vs_200`` = median cost there ÷ median cost
   here (median over the window and over repeated runs). Budget ≤ 1.5.
2. **Against a naive renderer.** ``render_markdown(text_so_far)`` per tick near 20,000 tokens, same run:
   ``speedup_vs_naive_at_20k`` = naive median ÷ incremental median.
3. **Frames in Qt.** Offscreen (``QT_QPA_PLATFORM=offscreen`` unless set), a
   :class:`~app.ui.markdown_view.MarkdownView` in a scroll area receives the reply at 2,000 tokens/s; a
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

from app.core.markdown import IncrementalMarkdown, render_markdown

CHARS_PER_TOKEN = 4
TOKENS_PER_TICK = 32  # 2,000 tokens/s × 16 ms
TICK_CHARS = CHARS_PER_TOKEN * TOKENS_PER_TICK
TARGET_TOKENS = 20_000
WINDOW_TOKENS = 400  # measurement window width around token 200 / token 20,000
_DEFAULT_CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "answers"

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


def measure_core(text: str, prefix: int, period: int, repeats: int = 5) -> dict[str, float]:
    """Tick-cost ratio and naive speed-up (see the module docstring). Costs in ms."""
    runs = [_tick_costs(text) for _ in range(repeats)]
    per_tick = [statistics.median(r[i] for r in runs) for i in range(len(runs[0]))]
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


def measure_frames(text: str, tokens_per_s: float = 2000.0, tick_ms: int = 16) -> dict[str, float]:
    """Stream ``text`` into a MarkdownView at ``tokens_per_s``; frame intervals in ms (p50, p99, max)."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QEventLoop, Qt, QTimer
    from PySide6.QtWidgets import QApplication, QScrollArea

    from app.ui.markdown_view import MarkdownView

    app = QApplication.instance() or QApplication([])
    from app.core.highlight import warm_up

    warm_up()  # as the app does while the model loads: lexers are built before the first reply
    area = QScrollArea()
    area.setWidgetResizable(True)
    # A scroll bar that appears later would change the width: a full re-layout of the whole document.
    area.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOn)
    area.resize(900, 700)
    view = MarkdownView(theme="light")
    area.setWidget(view)
    area.show()
    view.heightChanged.connect(lambda _h: area.verticalScrollBar().setValue(area.verticalScrollBar().maximum()))

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
            view.append_text(tok)
        state["sent"] = due
        t0 = time.perf_counter()
        view.refresh()
        refresh_ms.append((time.perf_counter() - t0) * 1e3)
        if due >= len(tokens):
            view.finish()
            timer.stop()
            loop.quit()

    timer.timeout.connect(tick)
    state["t0"] = time.perf_counter()
    timer.start()
    loop.exec()
    app.processEvents()
    ok = view.renderer.html == render_markdown(text, theme="light")
    area.close()
    intervals.sort()
    p99 = intervals[min(len(intervals) - 1, int(0.99 * len(intervals)))]
    return {
        "frame_interval_ms_p50": statistics.median(intervals),
        "frame_interval_ms_p99": p99,
        "frame_interval_ms_max": intervals[-1],
        "refresh_ms_p99": sorted(refresh_ms)[int(0.99 * (len(refresh_ms) - 1))],
        "frames": len(intervals),
        "final_html_equals_one_shot": ok,
    }


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; print readable lines then one JSON line. Returns 0, or 1 when a budget is missed."""
    parser = argparse.ArgumentParser(prog="python -m app.bench render", description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, default=None, help="folder of answer .md files")
    parser.add_argument("--tokens", type=int, default=TARGET_TOKENS, help="reply length in tokens (≈4 chars)")
    parser.add_argument("--repeats", type=int, default=5, help="runs of the core measurement")
    parser.add_argument("--no-qt", action="store_true", help="skip the Qt frame measurement")
    args = parser.parse_args(argv)

    text, prefix, period = build_reply(args.corpus, args.tokens)
    print(f"reply: {len(text):,} chars ≈ {len(text) // CHARS_PER_TOKEN:,} tokens; period {period:,} chars")
    result: dict[str, float | int | bool] = {"tokens": len(text) // CHARS_PER_TOKEN}
    core = measure_core(text, prefix, period, args.repeats)
    result.update(core)
    print(f"tick cost near token 200:    {core['tick_ms_near_200']:.3f} ms (median)")
    print(f"tick cost near token {core['window_b_token']:,}: {core['tick_ms_near_20k']:.3f} ms (median)")
    print(f"ratio 20k/200: {core['tick_cost_ratio_20k_vs_200']:.2f} (budget ≤ 1.5)")
    print(f"naive full re-render per tick at 20k: {core['naive_tick_ms_at_20k']:.1f} ms → "
          f"speed-up {core['speedup_vs_naive_at_20k']:.0f}×")
    ok = core["tick_cost_ratio_20k_vs_200"] <= 1.5
    if not args.no_qt:
        frames = measure_frames(text)
        result.update(frames)
        print(f"Qt frames: {frames['frames']}, interval p50 {frames['frame_interval_ms_p50']:.1f} ms, "
              f"p99 {frames['frame_interval_ms_p99']:.1f} ms (≤ 20), max {frames['frame_interval_ms_max']:.1f} ms "
              f"(≤ 50); final HTML equals one-shot: {frames['final_html_equals_one_shot']}")
        ok = ok and frames["frame_interval_ms_p99"] <= 20 and frames["frame_interval_ms_max"] <= 50
    result["within_budget"] = ok
    print(json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in result.items()}))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
