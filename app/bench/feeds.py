"""The slowest single ``feed()`` of the renderer on two hard inputs: ``python -m app.bench feeds``.

A render tick feeds what arrived and renders it (``render()``); one slow feed is a visible stall. Two inputs that once
made a feed cost a whole re-render (these bounds were timed asserts in
``tests/core/render/markdown/test_markdown.py``; wall
time belongs here, where it is compared in the same run, not in a unit test on a shared machine):

1. ``long_table``: the corpus answer ``03_long_table.md`` fed one character at a time (a 5,000-row table is
   the classic case: each new row must not re-render the whole table);
2. ``fence_200kb_line``: a 200 KB line inside a code fence, fed in 64-character pieces;
3. ``emphasis_40k`` and ``link_openers_40k``: 40,000 characters of ``**_* `` and of ``[](`` (markdown-it's
   slow shapes: ~10 µs of inline parsing per character) fed in 16-character pieces, against ``plain_40k``,
   40,000 characters of plain words fed the same way, in the same run: ``stream_vs_plain`` is the ratio of
   their whole streams (``stream_ms``: every feed and render, and the final render).

For each: ``worst_feed_ms`` and ``p99_feed_ms`` (``feed`` + ``render()``), and, as the baseline of the
same run, ``one_shot_ms``: ``render_markdown`` of the whole text once. ``worst_vs_one_shot`` = worst ÷
one-shot (well below 1 when a feed costs O(new text), about 1 or more when a feed re-renders everything).
Budget: worst feed ≤ 100 ms on each input. Prints readable lines, then one JSON object as the last line;
exit status 1 when a budget is missed. Median of ``--repeats`` runs (default 3).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from app.bench._util import emit, percentile
from app.core.render.markdown import IncrementalMarkdown, render_markdown

BUDGET_MS = 100.0
_CORPUS = Path(__file__).resolve().parents[2] / "tests" / "data" / "answers"


def _long_table(corpus: Path) -> tuple[str, int]:
    path = corpus / "03_long_table.md"
    if path.is_file():
        return path.read_text(encoding="utf-8"), 1
    rows = "".join(f"| {i} | row *{i}* | `v{i}` |\n" for i in range(5000))       # the corpus is absent
    return "| # | name | value |\n|---:|:---|---|\n" + rows + "\nAfter the table.\n", 1


def _fence_line(_corpus: Path) -> tuple[str, int]:
    return "Here:\n\n```python\nx = '" + "ab" * 100_000 + "'\n```\n\nafter\n", 64


_LONG = 40_000


def _emphasis(_corpus: Path) -> tuple[str, int]:
    return ("**_* " * (_LONG // 5))[:_LONG], 16


def _link_openers(_corpus: Path) -> tuple[str, int]:
    return ("[](" * (_LONG // 3 + 1))[:_LONG], 16


def _plain(_corpus: Path) -> tuple[str, int]:
    return ("word " * (_LONG // 5))[:_LONG], 16


def feed_costs(text: str, step: int) -> tuple[list[float], float, bool]:
    """Seconds of each ``feed`` + ``render()``, of the whole stream (every feed and render, and ``finish``),
    and whether the finished HTML equals the one-shot one."""
    md = IncrementalMarkdown()
    costs: list[float] = []
    start = time.perf_counter()
    for i in range(0, len(text), step):
        t0 = time.perf_counter()
        md.feed(text[i:i + step])
        md.render()
        costs.append(time.perf_counter() - t0)
    md.finish()
    whole = time.perf_counter() - start
    return costs, whole, md.html == render_markdown(text)


def measure(make: Callable[[Path], tuple[str, int]], corpus: Path, repeats: int) -> dict[str, float | bool]:
    base, step = make(corpus)
    worst, p99, one_shot, stream = [], [], [], []
    same = True
    for r in range(repeats):
        text = f"{base}\nrun {r}\n"          # a text of its own per run: no cache of an earlier run helps
        t0 = time.perf_counter()
        render_markdown(text)
        one_shot.append((time.perf_counter() - t0) * 1000)
        costs, whole, ok = feed_costs(text, step)
        stream.append(whole * 1000)
        same = same and ok
        worst.append(max(costs) * 1000)
        p99.append((percentile(costs, 99) or 0.0) * 1000)
    w, o = statistics.median(worst), statistics.median(one_shot)
    return {"chars": len(base), "feed_chars": step, "worst_feed_ms": w, "p99_feed_ms": statistics.median(p99),
            "one_shot_ms": o, "worst_vs_one_shot": w / o if o else 0.0, "stream_ms": statistics.median(stream),
            "final_html_equals_one_shot": same,
            "within_budget": w <= BUDGET_MS and same}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m app.bench feeds", description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, default=_CORPUS, help="folder of answer .md files")
    parser.add_argument("--repeats", type=int, default=3, help="runs per input (median reported)")
    args = parser.parse_args(argv)
    result: dict[str, object] = {"budget_ms": BUDGET_MS}
    ok = True
    inputs = (("long_table", _long_table), ("fence_200kb_line", _fence_line), ("plain_40k", _plain),
              ("emphasis_40k", _emphasis), ("link_openers_40k", _link_openers))
    for name, make in inputs:
        r = measure(make, args.corpus, args.repeats)
        if name in ("emphasis_40k", "link_openers_40k"):
            plain = result["plain_40k"]
            assert isinstance(plain, dict)
            r["stream_vs_plain"] = r["stream_ms"] / plain["stream_ms"] if plain["stream_ms"] else 0.0
        print(f"{name}: {r['chars']:,} chars in {r['feed_chars']}-char feeds: worst feed {r['worst_feed_ms']:.1f} ms, "
              f"p99 {r['p99_feed_ms']:.2f} ms; one-shot render {r['one_shot_ms']:.0f} ms "
              f"(worst/one-shot {r['worst_vs_one_shot']:.3f}); whole stream {r['stream_ms']:.0f} ms"
              + (f" ({r['stream_vs_plain']:.1f}× plain)" if "stream_vs_plain" in r else "")
              + f"; streamed == one-shot: {r['final_html_equals_one_shot']}")
        result[name] = r
        ok = ok and bool(r["within_budget"])
    result["within_budget"] = ok
    emit(result)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
