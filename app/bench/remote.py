"""Brook's remote (HTTP/SSE) path vs a raw httpx-sse read loop, same server, same run.

``python -m app.bench remote [--rounds 5] [--events 10000] [--rate 5000] [--stops 20]``

A local SSE server (``app.bench.sse_server``, 127.0.0.1, in a process of its own, as a real server is) sends
``--events`` chat-completion chunk events at ``--rate`` events/s (a deadline schedule), then ``[DONE]``. One
round of each path is run first and not timed (the first reply of a window, the first client). Per round,
alternating:

- **raw**: ``httpx`` + ``httpx_sse.connect_sse`` reading every event and decoding its JSON (what any client
  must do at least);
- **ours**: ``RemoteEngine`` through the app's own path: the shown, styled ``MainWindow`` (offscreen, history in a
  SQLite file on disk) sends the prompt; the chat session's ``generate`` (scheduler, TokenStream worker thread,
  bounded queue) runs on the qasync loop and the window's coalescer paints the reply into its view.

Throughput is content events received ÷ (request sent → the stream has ended: ``[DONE]`` read; ours: until the
window reports the reply finished, its last chunk painted). With the server writing as fast as it can
(*unpaced*), a third path is timed: **read then show** (``read_then_show_round``), the raw loop and then the
whole reply rendered at once into a finished reply's widget in the window and painted — the least a client does
to show what it read, and what the unpaced ratio is taken against (the bare loop shows nothing). Stop: ``--stops``
replies on an endless stream at the same rate are stopped after a random 50-300 ms the way the UI does
(``MainWindow.stop``, Esc);
``stop_to_disconnect_ms`` is the click → the server seeing the client's FIN (both stamped with
``perf_counter`` in this process); ``chunks_after_stop`` counts chunks that reached the reply or were painted
after the click (must be 0). Budgets: ``throughput_ratio_remote`` ≥ 0.98, ``stop_to_disconnect_ms_p95`` ≤ 50,
``chunks_after_stop`` 0, and ``throughput_ratio_unpaced`` ≥ ``UNPACED_BUDGET`` (0.5): ours ÷ read then show.
``throughput_ratio_unpaced_read`` (ours ÷ the bare loop) is reported, not budgeted.

Why 0.5 and not 0.9 of the bare loop: unpaced, the window's work (markdown, Qt's layout and paint) and the
reading thread hold one GIL in turn, so ours takes about the read's time plus the window's, where the bare loop
takes the read's alone (10,000 events: the window thread's CPU 150-270 ms of 260-420 ms; the bare loop 90-130).
Against reading then showing, ours adds what streaming costs: the reply painted ~60 times a second as it grows,
and its render cut into bounded ticks (``Coalescer``) so that no frame waits on it — where the one-shot render
holds the window 60-120 ms. The budget: that costs at most as much again as reading and showing the reply
once. Measured (4 rounds each, same runs): 0.73 at 2,000 events, 0.60 at 10,000; 0.53-0.60 at 10,000 before a
view that lags by less than a patch was fed with it (half the catch-up's ticks were patches of a few KB).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
from httpx_sse import connect_sse

from app.bench._util import emit, median, percentile, qt_loop, wait_until
from app.bench.sse_server import DONE, Reply, SSEServer, delta_event
from app.core.streaming.metrics import now
from app.core.types import GenerationParams
from app.engine.remote.engine import RemoteConnection, RemoteEngine

if TYPE_CHECKING:
    from app.ui.window.main_window import MainWindow

#: Unpaced, the app's whole path may take at most twice as long as reading the stream and then showing the whole
#: reply at once (see the module docstring).
UNPACED_BUDGET = 0.5
WORDS = ["The ", "quick ", "brown ", "fox ", "jumps ", "over ", "the ", "lazy ", "dog. ", "`code` ", "**bold** ",
         "é ", "世界 ", "🙂 ", "\n\n"]


def _events(n: int | None) -> Iterator[tuple[bytes, float]]:
    """``n`` content events then finish + [DONE] (``None``: endless)."""
    i = 0
    while n is None or i < n:
        yield delta_event(WORDS[i % len(WORDS)]), 0.0
        i += 1
    yield delta_event(None, finish="stop") + DONE, 0.0


def _serve(events: int, rate: Any, endless: Any, ready: Any, left: Any, stop: Any) -> None:
    """The server process: ``events`` per reply at ``rate.value`` events/s (0: as fast as it can), endless while
    ``endless.value``; puts its URL on ``ready`` and each client's leaving time (``perf_counter``) on ``left``."""
    def answer(req: Any) -> Reply | None:
        if not req.path.endswith("/chat/completions"):
            return None
        return Reply(steps=_events(None if endless.value else events), pace_per_s=rate.value or None,
                     end="hang" if endless.value else "close")

    with SSEServer(answer) as server:
        ready.put(server.url)
        sent = 0
        while not stop.is_set():
            if server.wait_disconnects(sent + 1, 0.2):
                for d in server.disconnects[sent:]:
                    left.put(d.t)
                sent = len(server.disconnects)


class Bench:
    """The SSE server in a process of its own, as a real server is. In this process its event loop and JSON
    encoding shared the GIL with the client measured: the raw loop read 2,000-20,000 unpaced events 1.3-4×
    slower than from a server process, so the ratio measured the server's share more than Brook's."""

    def __init__(self, events: int, rate: float | None) -> None:
        import multiprocessing

        ctx = multiprocessing.get_context("spawn")
        self._rate = ctx.Value("d", rate or 0.0)
        self._endless = ctx.Value("b", False)
        self._ready: Any = ctx.Queue()
        self._left: Any = ctx.Queue()
        self._stop = ctx.Event()
        self._proc = ctx.Process(target=_serve, args=(events, self._rate, self._endless, self._ready, self._left,
                                                      self._stop), name="brook-bench-sse", daemon=True)
        self.url = ""
        self.disconnects: list[float] = []       # when each client left (perf_counter s: CLOCK_MONOTONIC)

    def __enter__(self) -> Bench:
        self._proc.start()
        self.url = self._ready.get(timeout=60)
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._proc.join(10)
        if self._proc.is_alive():
            self._proc.kill()

    @property
    def rate(self) -> float | None:
        return self._rate.value or None

    @rate.setter
    def rate(self, rate: float | None) -> None:
        self._rate.value = rate or 0.0

    @property
    def endless(self) -> bool:
        return bool(self._endless.value)

    @endless.setter
    def endless(self, on: bool) -> None:
        self._endless.value = on

    def wait_disconnects(self, n: int, timeout: float) -> bool:
        """Block until ``n`` clients have left (``disconnects``), at most ``timeout`` s; success."""
        import queue

        end = time.perf_counter() + timeout
        while len(self.disconnects) < n:
            try:
                self.disconnects.append(self._left.get(timeout=max(0.0, end - time.perf_counter())))
            except queue.Empty:
                return False
        return True


def raw_round(url: str, text: list[str] | None = None) -> tuple[float, int]:
    """Raw read loop: (events/s, events); the content is appended to ``text`` when given."""
    body = {"model": "test-model", "messages": [{"role": "user", "content": "go"}], "stream": True}
    n = 0
    with httpx.Client(timeout=httpx.Timeout(None, connect=10)) as client:
        t0 = now()
        with connect_sse(client, "POST", f"{url}/chat/completions", json=body) as source:
            for sse in source.iter_sse():
                if sse.data == "[DONE]":
                    break
                obj = json.loads(sse.data)
                if obj["choices"] and (content := obj["choices"][0]["delta"].get("content")):
                    n += 1
                    if text is not None:
                        text.append(content)
        t_end = now()
    return n / (t_end - t0), n


async def read_then_show_round(url: str, window: MainWindow) -> tuple[float, int]:
    """The least a client does to show the reply it reads unpaced: the raw read loop (on a worker thread, where
    ours reads too), then the whole reply shown at once in the window — a finished reply's widget in its chat
    view, rendered in one go (``MarkdownView.set_text``, no bounded tick) and painted. (events/s, events)."""
    from app.core.conversation import Message, Role
    from app.ui.messages.widget import MessageWidget

    parts: list[str] = []
    t0 = now()
    _rate, n = await asyncio.get_running_loop().run_in_executor(None, raw_round, url, parts)
    viewport = window.chat.viewport()
    widget = MessageWidget(Message(Role.ASSISTANT, "".join(parts)), viewport)
    widget.setFixedWidth(viewport.width())
    widget.show()
    widget.repaint()
    t_end = now()
    widget.hide()
    widget.deleteLater()
    return n / (t_end - t0), n


async def ours_round(window: MainWindow) -> tuple[float, int]:
    """One reply through the window; (content events/s, content events)."""
    done: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

    def finished(m: Any) -> None:
        if not done.done():
            done.set_result(m)

    window.reply_finished.connect(finished)
    t0 = now()
    reply = window.send("go", GenerationParams(max_tokens=10**7))
    assert reply is not None
    await done
    t_end = now()
    window.reply_finished.disconnect(finished)
    n = reply.chunks - 1          # the finish event is a chunk too
    return n / (t_end - t0), n


async def stop_round(bench: Bench, window: MainWindow, delay_s: float) -> dict[str, float]:
    n_disc = len(bench.disconnects)
    reply = window.send("go", GenerationParams(max_tokens=10**7))
    assert reply is not None
    await wait_until(lambda: reply.chunks > 0 or reply.status.final, 30.0, 0.001)
    await asyncio.sleep(delay_s)
    gen = window.session.generation_of(reply)
    chunks_at_click = reply.chunks
    t_click = now()
    window.stop()                 # Esc: what arrived is painted, nothing after it
    if gen is not None and gen.stream is not None:
        await gen.stream.wait_closed()
    ok = await asyncio.get_running_loop().run_in_executor(None, bench.wait_disconnects, n_disc + 1, 10.0)
    await wait_until(lambda: reply.status.final, 10.0)
    await asyncio.sleep(0.05)
    t_disc = bench.disconnects[n_disc] if ok else float("nan")
    after = (reply.chunks - chunks_at_click) + (gen.chunks_painted_after_stop() if gen is not None else 0)
    return {"stop_to_disconnect_ms": (t_disc - t_click) * 1000.0, "after": after}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m app.bench remote", description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--events", type=int, default=10000, help="events per round")
    ap.add_argument("--rate", type=float, default=5000.0, help="server events/s")
    ap.add_argument("--stops", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    from app.core.streaming.stream import tune_switch_interval
    tune_switch_interval()

    bench = Bench(args.events, args.rate)
    raw: list[float] = []
    ours: list[float] = []
    raw_fast: list[float] = []
    ours_fast: list[float] = []
    shown_fast: list[float] = []
    stops: list[dict[str, float]] = []
    threads = [threading.active_count()]
    with bench, tempfile.TemporaryDirectory() as tmp, qt_loop() as loop:
        os.environ["BROOK_DATA_DIR"] = str(Path(tmp) / "data")
        os.environ["BROOK_CONFIG_DIR"] = str(Path(tmp) / "config")
        from PySide6.QtWidgets import QApplication

        from app.core.history.store import Store
        from app.ui.window.main_window import MainWindow

        app = QApplication.instance()
        assert isinstance(app, QApplication)
        app.setQuitOnLastWindowClosed(False)
        engine = RemoteEngine(RemoteConnection(bench.url))
        store = Store(Path(tmp) / "history.sqlite3")
        window = MainWindow(engine, store=store)
        window.resize(1040, 760)
        window.show()

        async def run_all() -> None:
            assert await window.load_model()
            ex = asyncio.get_running_loop().run_in_executor
            bench.rate = None                          # one round each, not timed: first use of each path
            await ex(None, raw_round, bench.url)
            await ours_round(window)
            window.new_chat()
            # the window's own workers (lexers, formulas, the history's writer) are not leaks
            threads[0] = threading.active_count()
            for i in range(args.rounds):
                for rate, r_list, o_list in ((args.rate, raw, ours), (None, raw_fast, ours_fast)):
                    bench.rate = rate
                    if i % 2 == 0:
                        r_list.append((await ex(None, raw_round, bench.url))[0])
                        o_list.append((await ours_round(window))[0])
                    else:
                        o_list.append((await ours_round(window))[0])
                        r_list.append((await ex(None, raw_round, bench.url))[0])
                    window.new_chat()              # one reply per chat, as the raw loop has no history
                    if rate is None:
                        shown_fast.append((await read_then_show_round(bench.url, window))[0])
            bench.rate, bench.endless = args.rate, True
            for _ in range(args.stops):
                stops.append(await stop_round(bench, window, rng.uniform(0.05, 0.3)))
                window.new_chat()
            window.close()
            await window.shutdown()

        t0 = time.perf_counter()
        loop.run_until_complete(run_all())
        wall = time.perf_counter() - t0
        store.close()
    lat = [s["stop_to_disconnect_ms"] for s in stops]
    result = {
        "bench": "remote", "paint_stage": "window", "rounds": args.rounds, "events": args.events,
        "rate_events_per_s": args.rate,
        "raw_events_per_s": median(raw), "ours_events_per_s": median(ours),
        "throughput_ratio_remote": (median(ours) or 0) / (median(raw) or 1),
        "raw_unpaced_events_per_s": median(raw_fast), "ours_unpaced_events_per_s": median(ours_fast),
        "read_then_show_events_per_s": median(shown_fast),
        "throughput_ratio_unpaced": (median(ours_fast) or 0) / (median(shown_fast) or 1),
        "throughput_ratio_unpaced_read": (median(ours_fast) or 0) / (median(raw_fast) or 1),
        "stops": len(stops), "stop_to_disconnect_ms_p50": percentile(lat, 50),
        "stop_to_disconnect_ms_p95": percentile(lat, 95), "stop_to_disconnect_ms_max": max(lat) if lat else None,
        "chunks_after_stop": int(sum(s["after"] for s in stops)),
        "threads_leaked": max(0, threading.active_count() - threads[0]),
        "wall_s": wall,
    }
    result["budgets_met"] = bool(result["throughput_ratio_remote"] >= 0.98
                                 and result["throughput_ratio_unpaced"] >= UNPACED_BUDGET
                                 and (result["stop_to_disconnect_ms_p95"] or 1e9) <= 50
                                 and result["chunks_after_stop"] == 0)
    emit(result)
    return 0
