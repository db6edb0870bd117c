"""Garbage collection off the frame path.

CPython's cyclic collector stops the interpreter for a full (generation 2) collection in time proportional to
every tracked object: measured in the render bench's window (``python -m app.bench render``, 5,000 tokens/s),
27-55 ms each, the longest ticks of the stream. Two things keep them out of frames:

* :func:`freeze_startup_heap` moves what exists after start-up (modules, Qt wrappers, the parser's and lexers'
  tables: ~78,000 objects, none of them garbage) into the permanent generation once, so later full collections
  only look at what the session made since (the same stream's full collection: 54 ms → 1 ms);
* :class:`StreamingCollections` puts full collections off while a reply streams: the render tick holds it, the
  automatic collector is off meanwhile and the tick runs the young generations (0 and 1, well under a
  millisecond) when they are due, so a reply's garbage never piles up; when no reply streams any more, the
  collector is on again and a full collection runs when it is due, between frames that show nothing moving.
"""

from __future__ import annotations

import gc
import weakref

_state = {"frozen": False}


def freeze_startup_heap() -> None:
    """Move every object tracked now into the permanent generation (``gc.freeze``), once per process; later
    calls do nothing. Call after start-up's imports and warm-up: what is frozen is never collected."""
    if not _state["frozen"]:
        _state["frozen"] = True
        gc.freeze()


class StreamingCollections:
    """Full collections put off while at least one holder streams (see the module docstring).

    :meth:`hold` (a render tick starts painting) turns the automatic collector off, :meth:`release` (the last
    holder stops) turns it back on as it was before the first hold; :meth:`collect_young` (once per tick) runs
    generation 0, or 1 when it is due, by the collector's own thresholds. A holder that is garbage-collected
    without releasing is released then. One instance per process: :data:`STREAMING`.
    """

    def __init__(self) -> None:
        self._holders: dict[int, weakref.finalize] = {}
        self._was_enabled = True

    @property
    def held(self) -> bool:
        """Whether some holder streams (the automatic collector is off)."""
        return bool(self._holders)

    def hold(self, owner: object) -> None:
        """``owner`` starts streaming (idempotent)."""
        key = id(owner)
        if key in self._holders:
            return
        if not self._holders:
            self._was_enabled = gc.isenabled()
            gc.disable()
        self._holders[key] = weakref.finalize(owner, self._drop, key)

    def release(self, owner: object) -> None:
        """``owner`` stopped streaming (idempotent); the last one turns the collector back on."""
        fin = self._holders.get(id(owner))
        if fin is not None:
            fin.detach()
            self._drop(id(owner))

    def _drop(self, key: int) -> None:
        if self._holders.pop(key, None) is not None and not self._holders and self._was_enabled:
            gc.enable()

    def collect_young(self) -> int:
        """Run the young generation that is due (by ``gc.get_threshold``), if any; returns the generation
        collected, or -1. Does nothing unless held."""
        if not self._holders:
            return -1
        count0, count1, _ = gc.get_count()
        limit0, limit1, _ = gc.get_threshold()
        if limit0 <= 0:
            return -1
        if count1 >= limit1:
            gc.collect(1)
            return 1
        if count0 >= limit0:
            gc.collect(0)
            return 0
        return -1


#: The process's one instance (the render tick holds it).
STREAMING = StreamingCollections()
