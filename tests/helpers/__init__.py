"""Helpers shared by the tests: run a coroutine, wait on a condition, find the test corpus.

No fixed short timeouts here (the suite must pass on a busy machine): ``run`` and ``until`` wait as long as it
takes; a test that truly hangs is ended by pytest-timeout (``timeout`` in pyproject.toml), which is the one hang
guard.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

#: The repository root (the folder holding ``app/`` and ``tests/``).
ROOT = Path(__file__).resolve().parents[2]
#: The test corpus (``tests/data``): CommonMark examples and model answers.
#: ``BROOK_CORPUS`` points elsewhere (mutation testing runs the tests from a copy in ``mutants/``).
CORPUS = Path(os.environ.get("BROOK_CORPUS") or ROOT / "tests" / "data")
#: The corpus's realistic model answers (``*.md``); empty when the corpus is absent.
ANSWERS = sorted((CORPUS / "answers").glob("*.md")) if CORPUS.is_dir() else []


def run(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` on a fresh asyncio loop (``asyncio.run``) and return its result."""
    return asyncio.run(coro)


def run_on(loop: asyncio.AbstractEventLoop, aw: Awaitable[T]) -> T:
    """Run ``aw`` to completion on ``loop`` (e.g. the qasync ``qloop`` fixture) and return its result."""
    return loop.run_until_complete(aw)


async def until(cond: Callable[[], object], *, poll_s: float = 0.005) -> None:
    """Wait (without blocking the loop) until ``cond()`` is true, checking every ``poll_s`` seconds."""
    while not cond():
        await asyncio.sleep(poll_s)


def wait_for_thread(cond: Callable[[], object], *, poll_s: float = 0.005) -> None:
    """Block until ``cond()`` is true, checking every ``poll_s`` seconds: for state a worker thread sets, in a
    test that runs no event loop (a test that truly hangs is ended by pytest-timeout)."""
    import time

    while not cond():
        time.sleep(poll_s)
