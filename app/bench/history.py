"""Long chats in the window: ``python -m app.bench history``.

A saved chat of N message pairs (a short question, then a corpus answer from ``../shared/corpus/answers/``, in
turn) is opened in the real window offscreen, then scrolled from the top to the bottom in 40 steps. For each N
(default 10, 100, 1,000):

- ``open_ms_N``: ``open_conversation`` until the window has painted (a synchronous ``repaint``);
- ``scroll_step_ms_*_N``: one step (``setValue`` on the scroll bar, pending events, a synchronous repaint);
- ``rss_growth_mb_N``: resident memory after opening and scrolling minus before opening.

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

_CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "answers"
STEPS = 40
BUDGETS = {"open_ms_1000": 150.0, "open_ratio_1000_vs_10": 3.0, "scroll_step_ms_p99_1000": 16.7,
           "scroll_step_ms_max_1000": 50.0, "rss_growth_mb_1000": 150.0}


def answers(corpus: Path | None = None) -> list[str]:
    folder = corpus or _CORPUS
    out = [p.read_text("utf-8") for p in sorted(folder.glob("*.md"))] if folder.is_dir() else []
    return out or ["An answer with **bold** text and `code`.\n\n```python\nprint('hi')\n```\n"]


def fill(store: Any, pairs: int, texts: list[str]) -> int:
    """Save a chat of ``pairs`` question/answer pairs in ``store``; returns its id."""
    from app.core.conversation import Conversation, Message, Role

    conv = Conversation(title=f"{pairs} pairs")
    store.db.execute("BEGIN")
    for i in range(pairs):
        store.save_message(conv, Message(Role.USER, f"Question {i}: can you explain this, with an example?"))
        store.save_message(conv, Message(Role.ASSISTANT, texts[i % len(texts)], model="bench"))
    store.db.execute("COMMIT")
    assert conv.id is not None
    return conv.id


def measure(pairs: int, texts: list[str], width: int = 1040, height: int = 760) -> dict[str, float]:
    from PySide6.QtWidgets import QApplication

    from app.core.store import Store
    from app.engine.scripted import ScriptedEngine
    from app.ui.main_window import MainWindow

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
    steps: list[float] = []
    for i in range(1, STEPS + 1):
        t = time.perf_counter()
        bar.setValue(round(bar.maximum() * i / STEPS))
        app.processEvents()
        window.chat.viewport().repaint()
        steps.append((time.perf_counter() - t) * 1000.0)
    at_end = bar.value() >= bar.maximum() - 1
    rss1 = rss_mb()
    window.close()
    window.deleteLater()
    app.processEvents()
    store.close()
    return {"open_ms": open_ms, "scroll_step_ms_p50": percentile(steps, 50) or 0.0,
            "scroll_step_ms_p99": percentile(steps, 99) or 0.0, "scroll_step_ms_max": max(steps),
            "rss_growth_mb": rss1 - rss0, "reached_the_end": float(at_end)}


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
              f"RSS +{r['rss_growth_mb']:.0f} MB", flush=True)
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
