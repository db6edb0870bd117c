"""Closing the window mid-reply, core side (issue 3, item 9): cancel, join the worker, unload the engine, and
exit without waiting for a worker and without "Task was destroyed but it is pending" / "Event loop is closed"
warnings. No wall-clock bounds (the machine may be busy): what must not be waited for takes an hour instead."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

SCRIPT = r"""
import asyncio, logging, sys, threading, warnings
warnings.simplefilter("default")
logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
from app.core.conversation import Conversation, Message, Role
from app.core.streaming.generation import generate, shutdown
from app.core.streaming.scheduler import FairScheduler
from app.core.types import GenerationParams
from app.engine.scripted import ScriptedEngine

PREFILL = float(sys.argv[1])
JOIN_TIMEOUT = float(sys.argv[2])

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
    ok = await shutdown(tasks, [e], join_timeout_s=JOIN_TIMEOUT)
    print("ok", ok, "loaded", e.loaded, "statuses", ",".join(t.result().status.value if not t.cancelled()
          else "cancelled" for t in tasks), flush=True)

asyncio.run(main())
print("threads", threading.active_count(), flush=True)
"""


def test_close_mid_reply_exits_cleanly() -> None:
    # a generous join timeout: shutdown returns as soon as the workers have exited (they stop within a token)
    out = subprocess.run([sys.executable, "-X", "dev", "-c", SCRIPT, "0", "60"], cwd=ROOT, capture_output=True,
                         text=True, timeout=240)
    assert out.returncode == 0, out.stderr
    assert "ok True loaded False" in out.stdout
    assert "statuses cancelled,cancelled,cancelled" in out.stdout
    assert "threads 1" in out.stdout
    for bad in ("Task was destroyed", "Event loop is closed", "was never awaited", "Traceback"):
        assert bad not in out.stderr, out.stderr


def test_close_during_a_long_prefill_still_exits() -> None:
    """A worker stuck in prefill cannot be joined in time: the engine is left loaded (freeing it under a
    running decode would crash) and the process exits anyway (the worker is a daemon thread). The prefill
    lasts an hour: a process that waited for it would not end before the subprocess timeout."""
    out = subprocess.run([sys.executable, "-X", "dev", "-c", SCRIPT, "3600", "1.0"], cwd=ROOT, capture_output=True,
                         text=True, timeout=240)
    assert out.returncode == 0, out.stderr
    assert "ok False loaded True" in out.stdout
    for bad in ("Task was destroyed", "Event loop is closed", "Traceback"):
        assert bad not in out.stderr, out.stderr
