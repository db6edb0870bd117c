"""Qt objects are freed on the GUI thread: a closed qasync loop's Qt objects (``app.ui.window.gui_thread``)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

#: A qasync loop that ran an executor job and left a cancelled ``call_later`` (as ``asyncio.wait_for`` does) is
#: closed, dropped and collected by a worker thread; then the GUI thread's loop runs past the cancelled delay.
#: Without ``close_loop`` its ``_SimpleTimer`` is destroyed on the worker (Qt warns) and the timer it left in
#: the GUI thread's dispatcher fires at a freed object: a segfault.
SCRIPT = textwrap.dedent("""
    import asyncio, gc, sys, threading
    import qasync
    from PySide6.QtCore import qInstallMessageHandler
    from PySide6.QtWidgets import QApplication
    from app.ui.window.gui_thread import close_loop, loop_qt_objects

    def on_message(_mode, _context, text):
        print(f"qt[{threading.current_thread().name}]: {text}", flush=True)

    qInstallMessageHandler(on_message)
    app = QApplication([])

    def run_one():
        loop = qasync.QEventLoop(app)
        asyncio.set_event_loop(loop)

        async def work():
            loop.call_later(0.3, print, "never").cancel()
            await asyncio.wait_for(loop.run_in_executor(None, sum, [1, 2]), 30)

        loop.run_until_complete(work())
        asyncio.set_event_loop(None)
        found = {type(o).__name__ for o in loop_qt_objects(loop)}
        print("owned:", sorted(found), flush=True)
        print("deleted:", close_loop(loop), flush=True)

    gc.disable()                  # the cycle is collected below, not by chance
    run_one()
    worker = threading.Thread(target=gc.collect, name="worker")
    worker.start()
    worker.join()
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    loop.run_until_complete(asyncio.sleep(0.6))     # past the cancelled call_later's 0.3 s
    print("survived", flush=True)
""")


def test_a_closed_loop_leaves_no_qt_object_for_another_thread_to_free() -> None:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "survived" in proc.stdout, out
    assert "another thread" not in out, out
    owned = next(line for line in proc.stdout.splitlines() if line.startswith("owned:"))
    assert "_SimpleTimer" in owned and "_QThreadWorker" in owned, owned
    deleted = int(next(line for line in proc.stdout.splitlines() if line.startswith("deleted:")).split()[1])
    assert deleted >= 3, out          # the timer, the call-soon signaller, the executor's worker(s)
