"""Work that never ends, for the worker pools' deadline tests (imported by the worker process by name)."""

from __future__ import annotations

import time


def hang(*_args: object) -> None:
    """Never returns (the pool must kill the worker at its deadline)."""
    while True:
        time.sleep(3600)
