"""Long chats in the window: ``python -m app.bench history``.

A saved chat of N message pairs (a short question, then a corpus answer from ``tests/data/answers/``, in
turn) is opened in the real window offscreen, then scrolled from the top to the bottom in 40 steps. For each N
(default 10, 100, 1,000):

- ``open_ms_N``: ``open_conversation`` until the window has painted (a synchronous ``repaint``);
- ``scroll_step_ms_*_N``: one step (``setValue`` on the scroll bar, pending events, a synchronous repaint),
  the 40 steps back to back (no idle time between them);
- ``settle_ms_*_N``: the same scroll again, waiting after each step until every message in the viewport shows its
  full render with its code colours (the list first shows a plain-text preview of a reply it has not rendered
  yet, and renders it in idle slices once the scrolling pauses): the time from the step's start until then.
  ``settled_step_ms_*_N`` are that pass's steps, ``idle_slice_ms_*_N`` the idle slices' durations;
- ``rss_growth_mb_N``: resident memory after opening and scrolling minus before opening.

Every reply is made unique (``unique``: a distinct first line and a distinct line in each code block), so no
cache keyed by text — the list's or the lexer pool's — can hit across messages.

Keys and budgets (from the issue): ``open_ms_1000`` ≤ 150, ``open_ratio_1000_vs_10`` ≤ 3,
``scroll_step_ms_p99_1000`` ≤ 16.7, ``scroll_step_ms_max_1000`` ≤ 50, ``rss_growth_mb_1000`` ≤ 150. Prints
readable lines, then one JSON object as the last line.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
from pathlib import Path
from typing import Any

from app.bench._util import emit, percentile, rss_mb

_CORPUS = Path(__file__).resolve().parents[2] / "tests" / "data" / "answers"
STEPS = 40
BUDGETS = {"open_ms_1000": 150.0, "open_ratio_1000_vs_10": 3.0, "scroll_step_ms_p99_1000": 16.7,
           "scroll_step_ms_max_1000": 50.0, "rss_growth_mb_1000": 150.0}


def answers(corpus: Path | None = None) -> list[str]:
    folder = corpus or _CORPUS
    out = [p.read_text("utf-8") for p in sorted(folder.glob("*.md"))] if folder.is_dir() else []
    return out or ["An answer with **bold** text and `code`.\n\n```python\nprint('hi')\n```\n"]


def unique(text: str, i: int) -> str:
    """``text`` made unique to message ``i``: a distinct first line, and a distinct last line in every fenced
    code block (so neither a cache keyed by text nor the lexer pool's per-segment cache can hit across messages:
    the corpus has only a few answers, and ``fill`` cycles through them)."""
    out = [f"Answer number {i}, in a few parts:", ""]
    fence = ""
    for line in text.split("\n"):
        stripped = line.lstrip()
        marker = stripped[:3] if stripped[:3] in ("```", "~~~") else ""
        if marker and not fence:
            fence = marker
        elif marker and fence == marker and stripped.strip() == marker * (len(stripped.strip()) // 3):
            out.append(f"{line[:len(line) - len(stripped)]}# message {i}")
            fence = ""
        out.append(line)
    return "\n".join(out)


def fill(store: Any, pairs: int, texts: list[str]) -> int:
    """Save a chat of ``pairs`` question/answer pairs in ``store``; returns its id."""
    from app.core.conversation import Conversation, Message, Role

    conv = Conversation(title=f"{pairs} pairs")
    store.db.execute("BEGIN")
    for i in range(pairs):
        store.save_message(conv, Message(Role.USER, f"Question {i}: can you explain this, with an example?"))
        store.save_message(conv, Message(Role.ASSISTANT, unique(texts[i % len(texts)], i), model="bench"))
    store.db.execute("COMMIT")
    assert conv.id is not None
    return conv.id


def measure(pairs: int, texts: list[str], width: int = 1040, height: int = 760) -> dict[str, float]:
    from PySide6.QtWidgets import QApplication

    from app.core.history.store import Store
    from app.engine.scripted import ScriptedEngine
    from app.ui.window.main_window import MainWindow

    app = QApplication.instance()
    assert app is not None
    store = Store(":memory:")
    conv_id = fill(store, pairs, texts)
    window = MainWindow(ScriptedEngine(), store=store)
    window.resize(width, height)
    window.show()
    for _ in range(5):
        app.processEvents()
    gc.collect()
    rss0 = rss_mb()
    t0 = time.perf_counter()
    window.open_conversation(conv_id)
    app.processEvents()
    window.repaint()
    open_ms = (time.perf_counter() - t0) * 1000.0
    bar = window.chat.verticalScrollBar()
    bar.setValue(0)
    app.processEvents()
    window.repaint()
    chat = window.chat
    settle(app, chat)
    hits, misses = chat.renders.hits, chat.renders.misses
    steps = scroll(app, chat, settles=None)            # back to back: no idle time between the steps
    at_end = bar.value() >= bar.maximum() - 1
    cache = {"render_cache_hits": float(chat.renders.hits - hits),
             "render_cache_misses": float(chat.renders.misses - misses)}
    bar.setValue(0)
    settle(app, chat)
    chat.idle_slices_ms.clear()
    settles: list[float] = []
    settled_steps = scroll(app, chat, settles)         # again, waiting after each step until all is rendered
    slices = list(chat.idle_slices_ms)
    rss1 = rss_mb()
    window.close()
    window.deleteLater()
    app.processEvents()
    store.close()
    return {"open_ms": open_ms, "scroll_step_ms_p50": percentile(steps, 50) or 0.0,
            "scroll_step_ms_p99": percentile(steps, 99) or 0.0, "scroll_step_ms_max": max(steps),
            "rss_growth_mb": rss1 - rss0, "reached_the_end": float(at_end), **cache,
            "settled_step_ms_p99": percentile(settled_steps, 99) or 0.0, "settled_step_ms_max": max(settled_steps),
            "settle_ms_p50": percentile(settles, 50) or 0.0, "settle_ms_p99": percentile(settles, 99) or 0.0,
            "settle_ms_max": max(settles), "idle_slice_ms_p99": percentile(slices, 99) or 0.0,
            "idle_slice_ms_max": max(slices, default=0.0)}


def scroll(app: Any, chat: Any, settles: list[float] | None) -> list[float]:
    """Scroll ``chat`` from the top to the bottom in ``STEPS`` steps; returns each step's ms. With ``settles``,
    wait after each step until the viewport is fully rendered and append that time (from the step's start)."""
    bar = chat.verticalScrollBar()
    steps: list[float] = []
    for i in range(1, STEPS + 1):
        t = time.perf_counter()
        bar.setValue(round(bar.maximum() * i / STEPS))
        app.processEvents()
        chat.viewport().repaint()
        steps.append((time.perf_counter() - t) * 1000.0)
        if settles is not None:
            settles.append(settle(app, chat, t))
    return steps


def settle(app: Any, chat: Any, since: float | None = None, timeout_s: float = 10.0) -> float:
    """Process events until every message in the viewport shows its full render with its code colours; returns
    the ms from ``since`` (the start of the scroll step) — what a person who stops scrolling there waits."""
    t0 = since if since is not None else time.perf_counter()
    end = time.perf_counter() + timeout_s
    while not chat.fully_rendered() and time.perf_counter() < end:
        app.processEvents()
        time.sleep(0.001)
    chat.viewport().repaint()
    return (time.perf_counter() - t0) * 1000.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m app.bench history", description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", default="10,100,1000", help="comma-separated chat sizes (message pairs)")
    parser.add_argument("--corpus", type=Path, default=None, help="folder of answer .md files")
    args = parser.parse_args(argv)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    _app = QApplication.instance() or QApplication([])
    texts = answers(args.corpus)
    sizes = [int(x) for x in args.pairs.split(",") if x.strip()]
    measure(5, texts)                                     # warm-up: fonts, lexers, stylesheet
    result: dict[str, Any] = {"bench": "history", "steps": STEPS}
    for n in sizes:
        r = measure(n, texts)
        print(f"{n:>5} pairs: open {r['open_ms']:.0f} ms, scroll step p50 {r['scroll_step_ms_p50']:.1f} / "
              f"p99 {r['scroll_step_ms_p99']:.1f} / max {r['scroll_step_ms_max']:.1f} ms, "
              f"fully rendered after p50 {r.get('settle_ms_p50', 0):.0f} / p99 {r.get('settle_ms_p99', 0):.0f} ms, "
              f"idle slice max {r.get('idle_slice_ms_max', 0):.1f} ms, RSS +{r['rss_growth_mb']:.0f} MB", flush=True)
        for k, v in r.items():
            result[f"{k}_{n}"] = v
    if "open_ms_10" in result and "open_ms_1000" in result:
        result["open_ratio_1000_vs_10"] = result["open_ms_1000"] / max(result["open_ms_10"], 1e-6)
    verdict = {k: result[k] <= b for k, b in BUDGETS.items() if k in result}
    result["budgets"] = BUDGETS
    result["within_budget"] = bool(verdict) and all(verdict.values())
    emit(result)
    return 0 if result["within_budget"] or not verdict else 1


if __name__ == "__main__":
    sys.exit(main())
