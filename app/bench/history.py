"""Long chats in the window: ``python -m app.bench history``.

A saved chat of N message pairs (a short question, then a realistic reply of 2-8 KB built from the corpus
answers in ``tests/data/answers/``: prose, a code block, a table, lists; see :func:`realistic`; with the timing
figures a real reply stores, :func:`figures`) in a history file on disk is opened in the real window offscreen,
then scrolled from the top to the bottom in 40 steps. For each N (default 10, 100, 1,000):

- ``open_ms_N``: ``open_conversation`` until the window has painted: the events it posted are sent (what Qt's loop
  does before a paint), then a synchronous ``repaint`` when they did not paint it; timers wait, as
  they do in the loop, where the idle work's first slices (0 ms timers) run after the frame.
  ``open_all_events_ms_N``: until those have run too and the window painted again (the figure ``open_ms_N`` was
  before: it counted one or two 13 ms idle slices that the person sees after the frame). ``open_cpu_ms_N`` the CPU
  time of the main thread until the frame (the same for ``scroll_step_cpu_ms_*_N``: on a shared machine the wall
  times also count the other processes' time);
- ``open_rendered_ms_N``: from the same start until every message on the screen shows its full render with its
  code colours (``ChatView.fully_rendered``);
- ``scroll_step_ms_*_N``: one step (``setValue`` on the scroll bar, pending events, and a synchronous repaint
  when they did not paint the list: one frame, :class:`PaintSeen`), the 40 steps back to back (no idle time
  between them);
- ``settle_ms_*_N``: the same scroll again, waiting after each step until every message in the viewport shows its
  full render with its code colours (the list first shows a plain-text preview of a reply it has not rendered
  yet, and renders it in idle slices once the scrolling pauses): the time from the step's start until then.
  ``settled_step_ms_*_N`` are that pass's steps, ``idle_slice_ms_*_N`` the idle slices' durations;
- ``rss_growth_mb_N``: resident memory after opening and scrolling minus before opening.

Every reply is made unique (``unique``: a distinct first line and a distinct line in each code block), so no
cache keyed by text — the list's or the lexer pool's — can hit across messages.

Then **a chat whose reply is streaming in the background**: the 1,000-pair chat gets a new reply from a scripted
engine at 1,000 tokens/s; once ~40 KB of it has arrived another chat is shown, and the streaming one is opened
again: ``open_streaming_ms`` (until painted) and ``open_streaming_rendered_ms`` (until the reply's view has
caught up with the text that had arrived; the render tick feeds it in time slices meanwhile),
``open_streaming_painted_ms`` (until its document shows that render, no preview and no piece left for a later
patch), with the frame intervals of the render tick in between (``open_streaming_frame_ms_max``).

Keys and budgets (docs/architecture.md): ``open_ms_1000`` ≤ 50, ``open_rendered_ms_1000`` ≤ 150,
``open_ratio_1000_vs_10`` ≤ 3, ``scroll_step_ms_p99_1000`` ≤ 16.7, ``scroll_step_ms_max_1000`` ≤ 50,
``settle_ms_p99_1000`` ≤ 150, ``open_streaming_ms`` ≤ 50, ``open_streaming_rendered_ms`` ≤ 150,
``rss_growth_mb_1000`` ≤ 150. Prints readable lines,
then one JSON object as the last line.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from app.bench._util import emit, percentile, rss_mb

_CORPUS = Path(__file__).resolve().parents[2] / "tests" / "data" / "answers"
STEPS = 40
BUDGETS = {"open_ms_1000": 50.0, "open_rendered_ms_1000": 150.0, "open_ratio_1000_vs_10": 3.0,
           "scroll_step_ms_p99_1000": 16.7, "scroll_step_ms_max_1000": 50.0, "settle_ms_p99_1000": 150.0,
           "open_streaming_ms": 50.0, "open_streaming_rendered_ms": 150.0, "rss_growth_mb_1000": 150.0}


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


def realistic(texts: list[str], i: int) -> str:
    """Reply ``i`` of a realistic chat: 2-8 KB (its size varies from reply to reply), a code block and a table in
    each, then corpus answers in turn until the size is reached; made unique to ``i`` (:func:`unique`)."""
    target = 2_000 + (i * 2_654_435_761) % 6_000
    code = next((t for t in texts if "```" in t), "```python\nprint('hi')\n```\n")
    rows = 4 + i % 9
    table = ("| step | time (ms) | note |\n|---|---:|---|\n"
             + "".join(f"| {k} | {k * 7 + i} | ok |\n" for k in range(rows)))
    parts = [f"Here is how it works, step {i}.\n", code.strip("\n") + "\n", table]
    k = i
    while sum(map(len, parts)) < target:
        text = texts[k % len(texts)]
        k += 1
        if text.lstrip().startswith("<think>") or text.count("```") % 2:
            continue
        parts.append(text.strip("\n") + "\n")
        if k - i > 4 * len(texts):
            break
    return unique("\n".join(parts), i)


def figures(text: str, i: int) -> dict[str, Any]:
    """The timing figures a real reply of ``text`` stores with it (``ReplySummary.as_dict()``, as
    ``app.core.streaming.generation`` saves them), with plausible values for a small model on a CPU."""
    from app.core.streaming.metrics import ReplySummary

    tokens = max(1, len(text) // 4)
    rate = 40.0 + i % 17
    return ReplySummary(ttft_ms=300.0 + i % 97, prefill_ms=280.0 + i % 89, first_paint_ms=4.0 + i % 7,
                        decode_tokens=tokens, decode_tokens_per_s=rate, chunks=tokens, chunks_painted=tokens,
                        queue_high_water=1 + i % 5, ticks=tokens // 2, longest_tick_ms=3.0 + i % 11,
                        total_ms=300.0 + tokens * 1000.0 / rate).as_dict() | {"left_out": 0}


def fill(store: Any, pairs: int, texts: list[str]) -> int:
    """Save a chat of ``pairs`` question/answer pairs (realistic replies) in ``store``; returns its id."""
    from app.core.conversation import Conversation, Message, Role

    conv = Conversation(title=f"{pairs} pairs")
    store.db.execute("BEGIN")
    for i in range(pairs):
        store.save_message(conv, Message(Role.USER, f"Question {i}: can you explain this, with an example?"))
        text = realistic(texts, i)
        store.save_message(conv, Message(Role.ASSISTANT, text, model="bench", metrics=figures(text, i)))
    store.db.execute("COMMIT")
    assert conv.id is not None
    return conv.id


def measure(pairs: int, texts: list[str], folder: Path, width: int = 1040, height: int = 760) -> dict[str, float]:
    from PySide6.QtWidgets import QApplication

    from app.core.history.store import Store
    from app.engine.scripted import ScriptedEngine
    from app.ui.window.main_window import MainWindow

    app = QApplication.instance()
    assert app is not None
    store = Store(folder / f"history-{pairs}.sqlite3")
    conv_id = fill(store, pairs, texts)
    window = MainWindow(ScriptedEngine(), store=store)
    window.resize(width, height)
    window.show()
    for _ in range(5):
        app.processEvents()
    gc.collect()
    rss0 = rss_mb()
    t0, c0 = time.perf_counter(), time.thread_time()
    painted = PaintSeen(window)
    window.open_conversation(conv_id)
    painted.frame(app.sendPostedEvents)   # what the loop does before it paints (posted events, not timers), the frame
    open_ms = (time.perf_counter() - t0) * 1000.0
    open_cpu_ms = (time.thread_time() - c0) * 1000.0
    app.processEvents()             # the timers too: the idle work's first slices (after the frame, in the loop)
    window.repaint()
    open_all_ms = (time.perf_counter() - t0) * 1000.0
    open_rendered_ms = settle(app, window.chat, t0)
    bar = window.chat.verticalScrollBar()
    bar.setValue(0)
    app.processEvents()
    window.repaint()
    chat = window.chat
    settle(app, chat)
    hits, misses = chat.renders.hits, chat.renders.misses
    cpu: list[float] = []
    steps = scroll(app, chat, settles=None, cpu=cpu)   # back to back: no idle time between the steps
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
    return {"open_ms": open_ms, "open_rendered_ms": open_rendered_ms, "open_cpu_ms": open_cpu_ms,
            "open_all_events_ms": open_all_ms,
            "scroll_step_cpu_ms_p50": percentile(cpu, 50) or 0.0, "scroll_step_cpu_ms_p99": percentile(cpu, 99) or 0.0,
            "scroll_step_ms_p50": percentile(steps, 50) or 0.0,
            "scroll_step_ms_p99": percentile(steps, 99) or 0.0, "scroll_step_ms_max": max(steps),
            "rss_growth_mb": rss1 - rss0, "reached_the_end": float(at_end), **cache,
            "settled_step_ms_p99": percentile(settled_steps, 99) or 0.0, "settled_step_ms_max": max(settled_steps),
            "settle_ms_p50": percentile(settles, 50) or 0.0, "settle_ms_p99": percentile(settles, 99) or 0.0,
            "settle_ms_max": max(settles), "idle_slice_ms_p99": percentile(slices, 99) or 0.0,
            "idle_slice_ms_max": max(slices, default=0.0)}


def scroll(app: Any, chat: Any, settles: list[float] | None, cpu: list[float] | None = None) -> list[float]:
    """Scroll ``chat`` from the top to the bottom in ``STEPS`` steps; returns each step's ms. With ``settles``,
    wait after each step until the viewport is fully rendered and append that time (from the step's start); with
    ``cpu``, append each step's CPU time on this thread (ms: what the step costs whatever else the machine runs)."""
    bar = chat.verticalScrollBar()
    steps: list[float] = []
    painted = PaintSeen(chat.viewport())
    for i in range(1, STEPS + 1):
        t, c = time.perf_counter(), time.thread_time()
        bar.setValue(round(bar.maximum() * i / STEPS))
        painted.frame(app.processEvents)
        steps.append((time.perf_counter() - t) * 1000.0)
        if cpu is not None:
            cpu.append((time.thread_time() - c) * 1000.0)
        if settles is not None:
            settles.append(settle(app, chat, t))
    return steps


class PaintSeen:
    """Whether ``widget`` was painted: :meth:`frame` runs pending events, then repaints ``widget`` synchronously
    only when they did not paint it — one frame either way. (A step that repainted after the events had painted
    the new frame counted two paints: 1.8-1.9 ms of a 16 ms scroll step, at p50.)"""

    def __init__(self, widget: Any) -> None:
        from PySide6.QtCore import QEvent, QObject

        paint = QEvent.Type.Paint
        seen = self

        class _Filter(QObject):
            def eventFilter(self, _obj: Any, event: Any) -> bool:
                if event.type() == paint:
                    seen.painted = True
                return False

        self.widget = widget
        self.painted = False
        self.repaints = 0                # frames the events did not paint (painted by ``frame``)
        self._filter = _Filter()
        widget.installEventFilter(self._filter)

    def frame(self, events: Any) -> None:
        """Run ``events`` (e.g. ``app.processEvents``), then the frame's paint if they did not paint it."""
        self.painted = False
        events()
        if not self.painted:
            self.repaints += 1
            self.widget.repaint()


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


def measure_streaming_open(texts: list[str], folder: Path, pairs: int = 1000, arrived_chars: int = 40_000,
                           width: int = 1040, height: int = 760) -> dict[str, float]:
    """Open a ``pairs``-pair chat whose last reply streams in the background (see the module docstring)."""
    import asyncio

    from app.bench._util import qt_loop
    from app.core.history.store import Store
    from app.core.types import GenerationParams
    from app.engine.scripted import ScriptedEngine
    from app.ui.window.main_window import MainWindow

    reply_text = "\n\n".join(realistic(texts, 10_000 + k) for k in range(40))
    with qt_loop() as loop:
        from PySide6.QtWidgets import QApplication

        app = QApplication.instance()
        assert isinstance(app, QApplication)
        app.setQuitOnLastWindowClosed(False)
        store = Store(folder / "history-streaming.sqlite3")
        conv_id = fill(store, pairs, texts)

        async def run() -> dict[str, float]:
            window = MainWindow(ScriptedEngine(reply_text, tokens_per_s=1000.0), store=store)
            window.resize(width, height)
            window.show()
            assert await window.load_model()
            window.open_conversation(conv_id)
            reply = window.send("One more, a long one, please.", GenerationParams(max_tokens=10 ** 7))
            assert reply is not None
            while len(reply.text) < arrived_chars and not reply.status.final:  # noqa: ASYNC110 (no event)
                await asyncio.sleep(0.02)
            window.new_chat()                        # the person looks at another chat meanwhile
            await asyncio.sleep(0.3)
            stamps: list[float] = []
            window.coalescer.timer.timeout.connect(lambda: stamps.append(time.perf_counter()))
            t0 = time.perf_counter()
            window.open_conversation(conv_id)        # … and comes back to the streaming one
            window.repaint()
            shown_ms = (time.perf_counter() - t0) * 1000.0
            arrived = len(reply.text)
            view = window.chat.widget_for(reply).view      # type: ignore[union-attr]
            assert view is not None
            while window.coalescer.waiting(reply) or len(view.renderer.text) < arrived:  # noqa: ASYNC110
                await asyncio.sleep(0.002)
            rendered_ms = (time.perf_counter() - t0) * 1000.0
            while view.placeholder or view.behind:         # noqa: ASYNC110 (no event)
                await asyncio.sleep(0.002)
            painted_ms = (time.perf_counter() - t0) * 1000.0
            gaps = [(b - a) * 1000.0 for a, b in itertools.pairwise(stamps) if a > t0]
            window.stop()
            while not reply.status.final:       # noqa: ASYNC110 (the stop is quick; no event to wait on)
                await asyncio.sleep(0.01)
            window.close()
            await window.shutdown()
            return {"open_streaming_ms": shown_ms, "open_streaming_rendered_ms": rendered_ms,
                    "open_streaming_painted_ms": painted_ms,
                    "open_streaming_chars": float(arrived),
                    "open_streaming_frame_ms_max": max(gaps, default=0.0)}

        try:
            return loop.run_until_complete(run())
        finally:
            store.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m app.bench history", description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", default="10,100,1000", help="comma-separated chat sizes (message pairs)")
    parser.add_argument("--corpus", type=Path, default=None, help="folder of answer .md files")
    parser.add_argument("--no-streaming", action="store_true", help="skip opening a chat that is streaming")
    args = parser.parse_args(argv)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    _app = QApplication.instance() or QApplication([])
    texts = answers(args.corpus)
    sizes = [int(x) for x in args.pairs.split(",") if x.strip()]
    tmp = tempfile.TemporaryDirectory()
    folder = Path(tmp.name)
    os.environ["BROOK_DATA_DIR"] = str(folder / "data")
    os.environ["BROOK_CONFIG_DIR"] = str(folder / "config")
    measure(5, texts, folder)                             # warm-up: fonts, lexers, stylesheet
    result: dict[str, Any] = {"bench": "history", "steps": STEPS,
                              "reply_chars_mean": sum(len(realistic(texts, i)) for i in range(200)) / 200}
    for n in sizes:
        r = measure(n, texts, folder)
        print(f"{n:>5} pairs: open {r['open_ms']:.0f} ms, scroll step p50 {r['scroll_step_ms_p50']:.1f} / "
              f"p99 {r['scroll_step_ms_p99']:.1f} / max {r['scroll_step_ms_max']:.1f} ms, "
              f"fully rendered after p50 {r.get('settle_ms_p50', 0):.0f} / p99 {r.get('settle_ms_p99', 0):.0f} ms, "
              f"idle slice max {r.get('idle_slice_ms_max', 0):.1f} ms, RSS +{r['rss_growth_mb']:.0f} MB", flush=True)
        for k, v in r.items():
            result[f"{k}_{n}"] = v
    if not args.no_streaming:
        r = measure_streaming_open(texts, folder, max(sizes) if sizes else 1000)
        print(f"streaming chat ({r['open_streaming_chars']:,.0f} chars arrived): shown in "
              f"{r['open_streaming_ms']:.0f} ms, caught up in {r['open_streaming_rendered_ms']:.0f} ms, "
              f"painted in {r['open_streaming_painted_ms']:.0f} ms, "
              f"longest frame meanwhile {r['open_streaming_frame_ms_max']:.0f} ms", flush=True)
        result.update(r)
    tmp.cleanup()
    if "open_ms_10" in result and "open_ms_1000" in result:
        result["open_ratio_1000_vs_10"] = result["open_ms_1000"] / max(result["open_ms_10"], 1e-6)
    verdict = {k: result[k] <= b for k, b in BUDGETS.items() if k in result}
    result["budgets"] = BUDGETS
    result["within_budget"] = bool(verdict) and all(verdict.values())
    emit(result)
    return 0 if result["within_budget"] or not verdict else 1


if __name__ == "__main__":
    sys.exit(main())
