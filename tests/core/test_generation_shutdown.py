"""Closing the window mid-reply, core side (issue 3, item 9): cancel, join the worker, unload the engine, and
exit within 2 s without "Task was destroyed but it is pending" / "Event loop is closed" warnings."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = r"""
import asyncio, logging, sys, threading, warnings
warnings.simplefilter("default")
logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
from app.core.conversation import Conversation, Message, Role
from app.core.generation import generate, shutdown
from app.core.scheduler import FairScheduler
from app.core.types import GenerationParams
from app.engine.scripted import ScriptedEngine

PREFILL = float(sys.argv[1])

async def main():
    loop = asyncio.get_running_loop()
    loop.set_debug(True)
    e = ScriptedEngine(["tok "] * 100000, tokens_per_s=500, prefill_s=PREFILL)
    e.load()
    sched = FairScheduler()
    c = Conversation()
    c.add(Message(Role.USER, "hi"))
    tasks = []
    for _ in range(3):   # one streaming, two waiting for the model
        r = c.add(Message(Role.ASSISTANT))
        tasks.append(asyncio.ensure_future(generate(e, sched, c, r, GenerationParams(max_tokens=100000))))
    await asyncio.sleep(0.3)
    ok = await shutdown(tasks, [e], join_timeout_s=1.0)
    print("ok", ok, "loaded", e.loaded, "statuses", ",".join(t.result().status.value if not t.cancelled()
          else "cancelled" for t in tasks), flush=True)

asyncio.run(main())
print("threads", threading.active_count(), flush=True)
"""


@pytest.mark.timeout(30)
def test_close_mid_reply_exits_quickly_and_cleanly() -> None:
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-X", "dev", "-c", SCRIPT, "0"], cwd=ROOT, capture_output=True,
                         text=True, timeout=20)
    elapsed = time.perf_counter() - t0
    assert out.returncode == 0, out.stderr
    assert "ok True loaded False" in out.stdout
    assert "statuses cancelled,cancelled,cancelled" in out.stdout
    assert "threads 1" in out.stdout
    for bad in ("Task was destroyed", "Event loop is closed", "was never awaited", "Traceback"):
        assert bad not in out.stderr, out.stderr
    assert elapsed < 2.0 + 1.5      # the script's own 0.3 s of streaming and interpreter start-up included


@pytest.mark.timeout(30)
def test_close_during_a_long_prefill_still_exits() -> None:
    """A worker stuck in prefill cannot be joined in time: the engine is left loaded (freeing it under a
    running decode would crash) and the process exits anyway (the worker is a daemon thread)."""
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-X", "dev", "-c", SCRIPT, "5"], cwd=ROOT, capture_output=True,
                         text=True, timeout=20)
    elapsed = time.perf_counter() - t0
    assert out.returncode == 0, out.stderr
    assert "ok False loaded True" in out.stdout
    for bad in ("Task was destroyed", "Event loop is closed", "Traceback"):
        assert bad not in out.stderr, out.stderr
    assert elapsed < 4.0
