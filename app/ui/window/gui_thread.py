"""Qt objects are freed on the GUI thread: cyclic garbage is collected only there, and closing a qasync loop
deletes its own Qt objects there.

A Qt object must be destroyed on the thread it lives in (the GUI thread, for everything the window makes). A
Python wrapper that owns its C++ object deletes it when the wrapper is freed, and a wrapper held only by a
reference cycle is freed by CPython's cyclic collector, which runs on whatever thread happens to allocate when
a generation is due: the engine's worker thread, an executor thread, the lexer pool's. Then the C++ destructor
runs there. For a ``QObject`` with running timers Qt only warns (``QObject::~QObject: Timers cannot be stopped
from another thread``) and leaves the timers registered with the GUI thread's event dispatcher, which later
delivers a timer event to the freed object: a segfault.

That is what crashed the render benchmark about once in 30 runs (``tests/bench/test_report.py`` in CI about one
run in four): each scenario ran on its own qasync loop, and a closed ``qasync.QEventLoop`` is a cycle (the loop,
its ``_SimpleTimer``, the handles it holds) that keeps its Qt objects alive. qasync kills a ``call_later``'s Qt
timer only when it fires, even when the handle was cancelled (``asyncio.wait_for``'s timeout, an autosave), so a
closed loop's ``_SimpleTimer`` usually still has timers running. :func:`close_loop` closes the loop and deletes
its Qt objects at once, on the calling (GUI) thread, so whatever thread later collects the cycle only frees
wrappers whose C++ objects are already gone.

:class:`GuiThreadCollections` is the general guard, for any cycle (one holding a ``QPixmap`` or a
``QTextCursor`` in a wrapper's attributes, a parentless widget a future change drops): CPython's automatic
collector is turned off, and the GUI thread runs the generations that are due, by the collector's own counts
and thresholds, each time its event loop is about to wait (``QAbstractEventDispatcher.aboutToBlock``: between
frames, never inside a tick), so every object freed by the cyclic collector is freed on the GUI thread. A loop
that stays busy for a second with garbage pending collects from a one-shot timer; an idle loop is never woken.

:func:`new_loop` makes the app's qasync loop with a standard ``ThreadPoolExecutor`` as its default executor:
qasync's own starts ten ``QThread`` subclasses at once, and a starting ``QThread`` asks its Python wrapper for its
meta-object (the thread's name) from the new thread, without the GIL (PySide's ``retrieveMetaObject``), while
the GUI thread and the other workers run Python: the app died of it at start-up about once in 60 runs (SIGSEGV in
``PySide::MetaObjectBuilder::update``, in a thread that had not run any Python yet).
"""

from __future__ import annotations

import asyncio
import gc
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import shiboken6
from PySide6.QtCore import QAbstractEventDispatcher, QCoreApplication, QObject, QThread, QTimer

#: Worker threads of the loop's default executor (qasync's own default).
EXECUTOR_WORKERS = 10
#: How deep :func:`loop_qt_objects` looks into the loop's attributes (the loop → its executor → its workers).
_DEPTH = 3


def new_loop(app: QCoreApplication) -> Any:
    """A ``qasync.QEventLoop`` for ``app`` (not set as the current loop) whose ``run_in_executor(None, …)`` runs on
    a ``ThreadPoolExecutor`` of ``EXECUTOR_WORKERS`` Python threads named ``brook-worker-N``, started as jobs come,
    instead of qasync's ``QThread`` workers (see the module docstring). Closing the loop shuts it down and waits
    for its threads, as qasync's does. (Typed ``Any``: qasync ships no type information.)"""
    import qasync

    loop = qasync.QEventLoop(app)
    loop.set_default_executor(ThreadPoolExecutor(EXECUTOR_WORKERS, thread_name_prefix="brook-worker"))
    return loop


def loop_qt_objects(loop: asyncio.AbstractEventLoop) -> list[QObject]:
    """The live ``QObject``s that ``loop`` (a ``qasync.QEventLoop``) made and owns from Python: its timer, its
    call-soon signaller, its default executor's worker threads, its socket notifiers. Found in the attributes of
    the loop and of the qasync objects they hold (at most ``_DEPTH`` levels), never the application."""
    app = QCoreApplication.instance()
    found: dict[int, QObject] = {}
    seen: set[int] = set()

    def visit(value: Any, depth: int) -> None:
        if id(value) in seen or depth > _DEPTH:
            return
        seen.add(id(value))
        if isinstance(value, QObject):
            if value is not app and shiboken6.isValid(value) and shiboken6.ownedByPython(value):
                found[id(value)] = value
            return
        if isinstance(value, dict):
            for v in list(value.values()):
                visit(v, depth + 1)
        elif isinstance(value, (list, tuple, set, frozenset)):
            for v in list(value):
                visit(v, depth + 1)
        elif value is loop or type(value).__module__.split(".")[0] == "qasync":
            for v in list(getattr(value, "__dict__", {}).values()):
                visit(v, depth + 1)

    visit(loop, 0)
    return list(found.values())


def close_loop(loop: asyncio.AbstractEventLoop) -> int:
    """Close ``loop`` (a ``qasync.QEventLoop`` that is not running; closing twice is fine) and delete the Qt
    objects it owns now, on this thread, which must be the GUI thread (:func:`loop_qt_objects`; a worker thread
    still running is left alone). Returns how many were deleted."""
    if not loop.is_closed():
        loop.close()
    deleted = 0
    for obj in loop_qt_objects(loop):
        if isinstance(obj, QThread) and obj.isRunning():
            continue
        shiboken6.delete(obj)        # ~QObject here: its timers are unregistered from this thread's dispatcher
        deleted += 1
    return deleted


#: A GUI loop that has not waited for this long (ms) with young garbage pending collects from a timer.
BUSY_COLLECT_MS = 1000


class GuiThreadCollections(QObject):
    """Cyclic garbage collection on the GUI thread only (see the module docstring). :meth:`install` (on the
    GUI thread, with the application made) turns the automatic collector off; :meth:`collect_due` runs the
    oldest generation whose count passed its threshold (``gc.get_count`` / ``gc.get_threshold``: as CPython
    does, but without its rule that a full collection waits for 25 % new long-lived objects — the start-up heap
    is frozen, so a full collection is short); :meth:`uninstall` puts the collector back as it was.

    ``collections`` counts the collections it ran per generation (tests, benchmarks)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.collections = [0, 0, 0]
        self._thread: threading.Thread | None = None
        self._was_enabled = True
        self._dispatcher: QAbstractEventDispatcher | None = None
        self._busy = QTimer(self)
        self._busy.setSingleShot(True)
        self._busy.setInterval(BUSY_COLLECT_MS)
        self._busy.timeout.connect(self._on_busy)

    @property
    def installed(self) -> bool:
        return self._thread is not None

    def install(self) -> None:
        """Collect only on this (the GUI) thread from now on; idempotent."""
        if self._thread is not None:
            return
        dispatcher = QAbstractEventDispatcher.instance(QThread.currentThread())
        if dispatcher is None:
            raise RuntimeError("GuiThreadCollections.install needs the GUI thread's event dispatcher")
        self._thread = threading.current_thread()
        self._was_enabled = gc.isenabled()
        gc.disable()
        self._dispatcher = dispatcher
        dispatcher.aboutToBlock.connect(self._on_about_to_block)

    def uninstall(self) -> None:
        """Back to CPython's automatic collector (as it was before :meth:`install`)."""
        if self._thread is None:
            return
        if self._dispatcher is not None:
            self._dispatcher.aboutToBlock.disconnect(self._on_about_to_block)
            self._dispatcher = None
        self._busy.stop()
        self._thread = None
        if self._was_enabled:
            gc.enable()

    def collect_due(self, young: bool = False) -> int:
        """Run the oldest generation that is due (``young``: at least generation 0 when anything is pending);
        returns the generation collected, or -1. Only on the installed thread (elsewhere: -1)."""
        if threading.current_thread() is not self._thread:
            return -1
        counts, limits = gc.get_count(), gc.get_threshold()
        if limits[0] <= 0:                    # gc.set_threshold(0): collection turned off altogether
            return -1
        gen = -1
        if counts[0] > limits[0] or (young and counts[0] > 0):
            gen = 0
            for g in (2, 1):
                if counts[g] > limits[g]:
                    gen = g
                    break
        if gen >= 0:
            gc.collect(gen)
            self.collections[gen] += 1
        return gen

    def _on_about_to_block(self) -> None:
        self._busy.stop()
        self.collect_due()
        counts, limits = gc.get_count(), gc.get_threshold()
        if counts[0] > limits[0] // 2:        # garbage is piling up: if the loop stays busy, collect anyway
            self._busy.start()

    def _on_busy(self) -> None:
        self.collect_due(young=True)


_collections: list[GuiThreadCollections | None] = [None]


def collect_on_gui_thread() -> GuiThreadCollections:
    """The process's :class:`GuiThreadCollections`, installed (made on the first call; call on the GUI thread
    with the application made: the launcher does, and the benchmarks' window loop)."""
    guard = _collections[0]
    if guard is None:
        guard = _collections[0] = GuiThreadCollections()
    guard.install()
    return guard
