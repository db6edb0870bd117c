"""Work that never ends, for the worker pools' deadline tests (imported by the worker process by name)."""

from __future__ import annotations

import time


def hang(*_args: object) -> None:
    """Never returns (the pool must kill the worker at its deadline)."""
    while True:
        time.sleep(3600)


_started = False


def slow_start() -> None:
    """A worker start that takes longer than the deadlines of the tests that use it (1.5 s), as a frozen math
    worker building matplotlib's font cache did."""
    global _started
    time.sleep(1.5)
    _started = True


def started(*_args: object) -> bool:
    """Whether ``slow_start`` ran in this (worker) process."""
    return _started
