"""Garbage collection off the frame path.

CPython's cyclic collector stops the interpreter for a full (generation 2) collection in time proportional to
every tracked object: measured in the render bench's window (``python -m app.bench render``, 5,000 tokens/s),
27-55 ms each, the longest ticks of the stream. :func:`freeze_startup_heap` moves what exists after start-up
(modules, Qt wrappers, the parser's and lexers' tables: ~78,000 objects, none of them garbage) into the
permanent generation once, so later full collections only look at what the session made since (the same
stream's full collection: 54 ms → 1 ms).

Turning the automatic collector off while a reply streams (the render tick running the young generations
itself) was tried and taken out: the render bench's window then crashed (4 runs in 4) after several scenarios.
Most likely the cause was the closed event loops' Qt objects freed by the collector on a worker thread (the
bench's crash with the collector on, too); the collector now runs on the GUI thread only
(``app.ui.window.gui_thread``; see ``docs/architecture.md``, "Threads").
"""

from __future__ import annotations

import gc

_state = {"frozen": False}


def freeze_startup_heap() -> None:
    """Move every object tracked now into the permanent generation (``gc.freeze``), once per process; later
    calls do nothing. Call after start-up's imports and warm-up: what is frozen is never collected."""
    if not _state["frozen"]:
        _state["frozen"] = True
        gc.freeze()
