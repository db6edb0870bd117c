"""``python main.py --smoke-test``: the main job, scripted, on the real window and the loaded model.

Sends ``SMOKE_PROMPT`` (temperature 0, seed 42, at most 200 tokens), waits for the reply (or presses Stop
``--stop-after-ms`` after the first token), and prints one JSON line::

    {"model", "chunks", "ticks", "ttft_ms", "tokens_per_s", "max_stall_ms", "stopped", "chunks_after_stop",
     "reply_chars", "code_blocks", "formula_images", "status", "closed", "window_shown_at", "model_loaded_at",
     "cpu_variant", "backend", "device", "gpu_layers", "n_layers", "quantization", "status_device",
     "reply_device"}

(``cpu_variant`` … ``n_layers`` from the engine's ``runtime()``: llama.cpp's CPU variant, the device the layers ran
on, and how many layers were offloaded to a GPU; absent for an engine without one; ``quantization`` from the model
file's header, ``app.engine.library.read_model_info``; ``status_device``: the status bar's device label, None when
hidden; ``reply_device``: the device line of the reply's provenance, ``provenance.describe``).

With ``--engine-fault KIND`` (``segv``, ``ill``, ``abort``, ``kill``, ``hang``) the model's process does KIND to
itself ``--engine-fault-after-ms`` after the first token of the reply; the smoke test then sends a second prompt
and the JSON line adds ``engine_crashed``, ``engine_restarted`` (a new process served the second reply),
``first_reply_chars``, ``first_stop_reason`` and ``second_reply_chars``; it succeeds when the first reply kept
text, its stop reason names the fault, and the second reply has text.

``ticks`` counts render ticks that painted new text of the reply; ``max_stall_ms`` is the longest gap between
two firings of a 2 ms precise QTimer while the reply ran (the main loop's worst iteration, timer slack
included). Exit status 0 on success; non-zero with the reason on stderr otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, QTimer

from app.core.conversation import Message, MessageStatus
from app.core.types import GenerationParams

if TYPE_CHECKING:
    from app.engine.hosted import HostedEngine
    from app.ui.window.main_window import MainWindow

SMOKE_PROMPT = "Write a Python function that reverses a string. Put the code in a fenced code block."
SMOKE_PARAMS = GenerationParams(temperature=0.0, seed=42, max_tokens=200)
#: How long to wait for the model to load and the reply to finish (s): generous for a slow CPU;
#: ``BROOK_SMOKE_TIMEOUT_S`` sets it (an emulated CPU under qemu needs far more).
SMOKE_TIMEOUT_S = float(os.environ.get("BROOK_SMOKE_TIMEOUT_S") or 300.0)
#: With ``--engine-fault hang``: seconds without a token after which the model process counts as hung.
HANG_DEADLINE_S = 2.0
#: What the first reply's stop reason must say for each fault.
FAULT_WORDS = {"segv": "SIGSEGV", "ill": "SIGILL", "abort": "SIGABRT", "kill": "SIGKILL", "hang": "stopped responding"}


class StallMonitor(QObject):
    """Records the longest gap between firings of a short precise timer (ms)."""

    def __init__(self, interval_ms: int = 2) -> None:
        super().__init__()
        self._timer = QTimer(self)
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self._beat)
        self._last = 0.0
        self.max_gap_ms = 0.0

    def start(self) -> None:
        self._last = time.perf_counter()
        self.max_gap_ms = 0.0
        self._timer.start()

    def stop(self) -> None:
        self._timer.stop()

    def _beat(self) -> None:
        t = time.perf_counter()
        gap = (t - self._last) * 1000.0
        self._last = t
        if gap > self.max_gap_ms:
            self.max_gap_ms = gap


def _hosted(engine: object) -> HostedEngine | None:
    """The engine host's engine behind ``engine`` (through ``--slow-ms``'s wrapper), or None."""
    from app.engine.hosted import HostedEngine

    inner = getattr(engine, "inner", engine)
    return inner if isinstance(inner, HostedEngine) else None


async def _second_reply(window: MainWindow, args: argparse.Namespace) -> Message | int:
    """After a crash: send the prompt again and wait for that reply (or the exit status of a failure)."""
    done: asyncio.Future[Message] = asyncio.get_running_loop().create_future()
    reply = window.send(args.prompt or SMOKE_PROMPT, params=SMOKE_PARAMS)
    if reply is None:
        return _fail("the window did not accept the second prompt")

    def finished(msg: Message) -> None:
        if msg is reply and not done.done():
            done.set_result(msg)

    window.reply_finished.connect(finished)
    if reply.status.final:
        return reply
    try:
        return await asyncio.wait_for(asyncio.shield(done), SMOKE_TIMEOUT_S)
    except TimeoutError:
        return _fail(f"the second reply did not finish within {SMOKE_TIMEOUT_S:g} s")


def _formula_images(html: str) -> int:
    from app.core.render.math_render import MATH_SCHEME  # (not at start-up: the start-up bench times it)

    return html.count(f'src="{MATH_SCHEME}:')


def _fail(reason: str) -> int:
    print(f"smoke test failed: {reason}", file=sys.stderr)
    return 1


async def run_smoke_test(window: MainWindow, load: asyncio.Future[bool], args: argparse.Namespace) -> int:
    """Drive ``window`` through one reply; see the module docstring."""
    await asyncio.sleep(0)                   # one loop turn: the window's show and first paint events ran
    for _ in range(5000):                    # (the first frame may take a few more turns: ≤ 5 s)
        if window.first_painted_at is not None:
            break
        await asyncio.sleep(0.001)
    shown_at = window.first_painted_at or time.time()
    try:
        ok = await asyncio.wait_for(asyncio.shield(load), SMOKE_TIMEOUT_S)
    except TimeoutError:
        return _fail(f"the model did not load within {SMOKE_TIMEOUT_S:g} s")
    if not ok:
        return _fail(f"the model did not load: {window.session.load_error}")
    loaded_at = time.time()
    done: asyncio.Future[Message] = asyncio.get_running_loop().create_future()

    def finished(msg: Message) -> None:
        if not done.done():
            done.set_result(msg)

    window.reply_finished.connect(finished)
    fault = getattr(args, "engine_fault", None)
    hosted = _hosted(window.session.engine)
    host_pid = getattr(hosted, "host_pid", None)
    if fault is not None:
        if hosted is None:
            return _fail("--engine-fault needs a local model (its engine host)")
        if fault == "hang":
            hosted.token_deadline_s = HANG_DEADLINE_S
        hosted.inject_fault(fault, args.engine_fault_after_ms)
    monitor = StallMonitor()
    monitor.start()
    params = SMOKE_PARAMS
    if getattr(args, "scripted_reply", None) is not None:     # stream the whole file, however long
        params = GenerationParams(temperature=0.0, seed=42, max_tokens=1_000_000)
    reply = window.send(args.prompt or SMOKE_PROMPT, params=params)
    if reply is None:
        return _fail("the window did not accept the prompt")
    close_after = getattr(args, "close_after_ms", None)
    if args.stop_after_ms is not None or close_after is not None:
        first: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def on_paint(msg: Message, _n: int) -> None:
            if msg is reply and not first.done():
                first.set_result(None)

        window.coalescer.painted.connect(on_paint)
        try:
            await asyncio.wait_for(asyncio.shield(first), SMOKE_TIMEOUT_S)
        except TimeoutError:
            return _fail("no token was painted")
        if close_after is not None:
            await asyncio.sleep(close_after / 1000.0)
            window.close()                   # closing mid-reply: the reply is stopped, the app shuts down
        else:
            await asyncio.sleep(args.stop_after_ms / 1000.0)
            if not done.done():
                window.stop()
    try:
        await asyncio.wait_for(asyncio.shield(done), SMOKE_TIMEOUT_S)
    except TimeoutError:
        return _fail(f"the reply did not finish within {SMOKE_TIMEOUT_S:g} s")
    # give a stopped worker's late chunks every chance to (wrongly) reach the screen
    if close_after is None:
        gen = window.session.generation_of(reply)
        if gen is not None and gen.stream is not None:
            await gen.stream.wait_closed()
        await asyncio.sleep(0.3)
    widget = window.chat.widget_for(reply)
    view = widget.view if widget is not None else None
    renderer = getattr(view, "renderer", None)
    settle_by = time.monotonic() + SMOKE_TIMEOUT_S     # code colours and formula images from the worker pools
    while renderer is not None and renderer.highlights_pending and time.monotonic() < settle_by:  # noqa: ASYNC110
        await asyncio.sleep(0.05)      # the view polls the pools on a timer: there is no event to wait on
    monitor.stop()
    metrics = reply.metrics or {}
    code_blocks = len(getattr(renderer, "code_blocks", []) or [])
    result = {
        "model": window.session.engine.name,
        "chunks": reply.chunks,
        "ticks": metrics.get("ticks", 0),
        "ttft_ms": round(metrics.get("ttft_ms") or 0.0, 2),
        "tokens_per_s": round(metrics.get("decode_tokens_per_s") or 0.0, 2),
        "max_stall_ms": round(monitor.max_gap_ms, 2),
        "stopped": reply.status is MessageStatus.STOPPED,
        "chunks_after_stop": _chunks_painted_after_stop(window, reply),
        "reply_chars": len(reply.text),
        "code_blocks": code_blocks,
        "formula_images": _formula_images(renderer.html) if renderer is not None else 0,
        "status": reply.status.value,
        "closed": close_after is not None,
        "window_shown_at": round(shown_at, 4),   # Unix time (s): the start-up benchmark subtracts its launch time
        "model_loaded_at": round(loaded_at, 4),
    }
    runtime = getattr(window.session.engine, "runtime", None)   # what it ran on: cpu_variant, backend, device, …
    result.update(runtime() if callable(runtime) else {})
    from app.core.streaming.provenance import describe

    status_device = window.status.device_label     # where the window says the model runs, and the reply's details
    result["status_device"] = status_device.text() if status_device.isVisibleTo(window) else None
    result["reply_device"] = dict(describe(reply)).get("device")
    model_path = getattr(window.session.engine, "model_path", None)
    if model_path is not None:          # the model library's header reader (the gguf package) works frozen too
        from app.engine.library import read_model_info

        result["quantization"] = read_model_info(model_path).quantization
    if args.screenshot and close_after is None:
        window.chat.scroll_to_bottom()
        await asyncio.sleep(0.1)
        if not window.grab().save(args.screenshot):
            return _fail(f"could not save the screenshot to {args.screenshot}")
    second: Message | None = None            # the reply after the fault (``--engine-fault``)
    if fault is not None:
        got = await _second_reply(window, args)
        if isinstance(got, int):
            return got
        second = got
        result.update({"engine_fault": fault, "engine_crashed": getattr(hosted, "crashes", 0) > 0,
                       "engine_restarted": getattr(hosted, "host_pid", None) not in (None, host_pid),
                       "first_reply_chars": len(reply.text), "first_stop_reason": reply.stop_reason,
                       "second_reply_chars": len(second.text), "second_status": second.status.value})
    print(json.dumps(result), flush=True)
    if fault is not None and second is not None:
        if not result["engine_crashed"] or FAULT_WORDS[fault] not in str(reply.stop_reason):
            return _fail(f"the fault {fault} did not end the first reply as a crash ({reply.stop_reason})")
        if not result["first_reply_chars"]:
            return _fail("the first reply kept no text")
        if second.status is not MessageStatus.DONE or not result["second_reply_chars"]:
            return _fail(f"the second reply did not work: {second.error or second.status.value}")
        return 0
    if reply.status in (MessageStatus.ERROR, MessageStatus.TIMED_OUT):
        return _fail(reply.error or reply.status.value)
    if result["chunks_after_stop"]:
        return _fail(f"{result['chunks_after_stop']} chunks were painted after Stop")
    return 0


def _chunks_painted_after_stop(window: MainWindow, reply: Message) -> int:
    """Chunks of ``reply`` painted after Stop was pressed (0 unless something is wrong)."""
    gen = window.session.generation_of(reply)
    return gen.chunks_painted_after_stop() if gen is not None else 0
