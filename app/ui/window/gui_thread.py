"""Qt objects are freed on the GUI thread: closing a qasync loop deletes its own Qt objects there.

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
"""

from __future__ import annotations

import asyncio
from typing import Any

import shiboken6
from PySide6.QtCore import QCoreApplication, QObject, QThread

#: How deep :func:`loop_qt_objects` looks into the loop's attributes (the loop → its executor → its workers).
_DEPTH = 3


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
