"""Qt objects are freed on the GUI thread: a closed qasync loop's Qt objects (``app.ui.window.gui_thread``)."""

from __future__ import annotations

import asyncio
import gc
import os
import subprocess
import sys
import textwrap
import threading
import weakref
from pathlib import Path

import shiboken6
from PySide6.QtCore import QObject

from app.core.conversation import MessageStatus
from app.core.history.store import Store
from app.engine.scripted import ScriptedEngine
from app.ui.window.gui_thread import GuiThreadCollections
from app.ui.window.main_window import MainWindow
from tests.helpers import run_on, until

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


#: The app's loop (``new_loop``) runs executor jobs, many at once, and reports the threads they ran on and the
#: Qt objects the loop owns.
EXECUTOR_SCRIPT = textwrap.dedent("""
    import asyncio, threading
    from PySide6.QtWidgets import QApplication
    from app.ui.window.gui_thread import close_loop, loop_qt_objects, new_loop

    app = QApplication([])
    loop = new_loop(app)
    asyncio.set_event_loop(loop)

    def job():
        return threading.current_thread().name

    async def work():
        return await asyncio.gather(*(loop.run_in_executor(None, job) for _ in range(30)))

    names = loop.run_until_complete(work())
    print("threads:", sorted(set(names)), flush=True)
    print("owned:", sorted({type(o).__name__ for o in loop_qt_objects(loop)}), flush=True)
    close_loop(loop)
""")


def test_the_apps_loop_runs_executor_jobs_on_python_threads_not_qthreads() -> None:
    """qasync's default executor starts ten ``QThread`` subclasses, whose start asks PySide for their meta-object
    without the GIL: the app segfaulted at start-up about once in 60 runs (``gui_thread.new_loop``)."""
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", EXECUTOR_SCRIPT], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    threads = next(line for line in proc.stdout.splitlines() if line.startswith("threads:"))
    names = threads.removeprefix("threads: ").strip("[]").replace("'", "").split(", ")
    assert names and all(n.startswith("brook-worker_") for n in names), out
    assert 1 <= len(names) <= 10, out                          # EXECUTOR_WORKERS at most
    owned = next(line for line in proc.stdout.splitlines() if line.startswith("owned:"))
    assert "Thread" not in owned, out


class _Node:
    """A cycle's member (``me`` points at itself)."""

    me: _Node


def test_cyclic_garbage_made_on_a_worker_thread_is_collected_on_the_gui_thread(qloop, automatic_gc) -> None:  # type: ignore[no-untyped-def]
    collected_on: list[str] = []

    def on_collection(phase: str, _info: dict[str, int]) -> None:
        if phase == "start":
            collected_on.append(threading.current_thread().name)

    last: list[weakref.ref[_Node]] = []

    def churn() -> None:                       # many thresholds' worth of cycles: due many times over
        for _ in range(20 * gc.get_threshold()[0]):
            node = _Node()
            node.me = node
        last.append(weakref.ref(node))

    guard = GuiThreadCollections()
    gc.collect()
    gc.callbacks.append(on_collection)
    guard.install()
    try:
        worker = threading.Thread(target=churn, name="churn")
        worker.start()
        worker.join()
        assert "churn" not in collected_on
        assert last[0]() is not None           # nobody collected it yet
        qloop.run_until_complete(asyncio.sleep(0.05))     # the GUI loop waits: the due generation runs first
        assert collected_on and set(collected_on) == {threading.main_thread().name}
        assert last[0]() is None
        assert sum(guard.collections) >= 1
    finally:
        guard.uninstall()
        gc.callbacks.remove(on_collection)
    assert gc.isenabled()


LONG_REPLY = ("| # | name | v |\n|---|---|---|\n" + "".join(f"| {i} | row *{i}* | `v{i}` |\n" for i in range(300))
              + "\n" + "".join(f"Paragraph {i} with **bold** text and `code`.\n\n" for i in range(200)))


def test_a_streaming_window_frees_cyclic_garbage_on_the_gui_thread_only(qloop, tmp_path, automatic_gc) -> None:  # type: ignore[no-untyped-def]
    """As the launcher sets it up: a window streams a long reply (its worker thread allocating, the stream
    inspector open), opens a new chat and closes, while another thread makes cyclic
    garbage; every collection runs on the GUI thread, and what is left holds no live ``QObject`` that Python
    owns (a worker's collection, keeping what it finds, finds none)."""
    collected_on: set[str] = set()

    def on_collection(phase: str, _info: dict[str, int]) -> None:
        if phase == "start":
            collected_on.add(threading.current_thread().name)

    stop = threading.Event()

    def churn() -> None:
        while not stop.is_set():
            for _ in range(gc.get_threshold()[0]):
                node = _Node()
                node.me = node
            stop.wait(0.001)

    guard = GuiThreadCollections()
    gc.collect()
    gc.callbacks.append(on_collection)
    guard.install()
    worker = threading.Thread(target=churn, name="churn")
    worker.start()
    try:
        _stream_and_drop(qloop, tmp_path / "history.sqlite3")
    finally:
        stop.set()
        worker.join()
        guard.uninstall()
        gc.callbacks.remove(on_collection)
    assert collected_on == {threading.main_thread().name}
    gc.disable()
    try:
        assert _live_qt_objects_in_garbage_collected_on_a_worker() == []
    finally:
        gc.enable()


def _stream_and_drop(qloop, path: Path) -> None:  # type: ignore[no-untyped-def]
    store = Store(path)
    window = MainWindow(ScriptedEngine(LONG_REPLY, tokens_per_s=20_000), store=store)
    window.resize(900, 700)
    window.show()
    window.inspector_dock.show()
    assert run_on(qloop, window.load_model())
    reply = window.send("go")
    assert reply is not None
    run_on(qloop, until(lambda: reply.status is MessageStatus.DONE))
    window.new_chat()                        # its widgets go back to the pool, emptied
    run_on(qloop, asyncio.sleep(0.05))
    window.close()
    run_on(qloop, window.shutdown())
    window.deleteLater()
    store.close()
    run_on(qloop, asyncio.sleep(0.05))       # the deferred deletes run


def _live_qt_objects_in_garbage_collected_on_a_worker() -> list[str]:
    live: list[str] = []

    def collect_keeping_garbage() -> None:
        gc.set_debug(gc.DEBUG_SAVEALL)
        try:
            gc.collect()
        finally:
            gc.set_debug(0)
        live.extend(type(o).__qualname__ for o in gc.garbage
                    if isinstance(o, QObject) and shiboken6.isValid(o) and shiboken6.ownedByPython(o))
        gc.garbage.clear()

    worker = threading.Thread(target=collect_keeping_garbage, name="collector")
    worker.start()
    worker.join()
    return live
