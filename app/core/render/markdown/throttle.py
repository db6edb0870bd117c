"""The big-tail throttle: how often a long open tail is parsed again while it streams.

A tail (the open part of a streamed reply: :mod:`.incremental`) that no fast path holds is re-parsed whole at each
render. Once it is longer than :data:`BIG_TAIL_CHARS`, it is re-parsed only after it grew by a fraction
:data:`BIG_TAIL_GROWTH` of its size, or after :data:`BIG_TAIL_MIN_S` and at least 4 × the last parse's cost
passed (with what showing it cost, :meth:`TailThrottle.charge`): amortised O(1) per character, and parsing and
showing a long open block take at most about a fifth of the time. It only delays what is shown: the final HTML
is unaffected.
"""

from __future__ import annotations

from collections.abc import Callable

#: Tails longer than this (characters) are re-parsed only after growing by BIG_TAIL_GROWTH of their size.
BIG_TAIL_CHARS = 2_000
#: Fraction of the tail's size that must arrive before a big tail is re-parsed again …
BIG_TAIL_GROWTH = 0.2
#: … unless this long (seconds) and 4 × the last render's cost have passed (keeps a slow stream fresh).
BIG_TAIL_MIN_S = 0.25


class TailThrottle:
    """When a big tail's parse waits. ``clock``: seconds (injected, so tests can drive it)."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self.rendered_chars = -1       # the tail's size at its last full parse (-1: none yet)
        self.chargeable = False        # the last render re-parsed the tail: showing it may be charged (charge)
        self._parsed_t = 0.0           # when the last parse ended (clock s)
        self._cost = 0.0               # what it cost, with what showing it was charged (s)

    def waits(self, size: int) -> bool:
        """Whether a tail of ``size`` characters waits for its parse (see the module docstring)."""
        return (
            size > BIG_TAIL_CHARS
            and self.rendered_chars >= 0
            and size - self.rendered_chars < BIG_TAIL_GROWTH * size
            and self._clock() - self._parsed_t < max(BIG_TAIL_MIN_S, 4 * self._cost)
        )

    def parsed(self, t0: float) -> None:
        """A render that re-parsed the tail, started at ``t0`` (clock s), ends now."""
        self._parsed_t = self._clock()
        self._cost = self._parsed_t - t0
        self.chargeable = True

    def estimate(self, size: int) -> float:
        """What parsing and showing a tail of ``size`` characters would cost (seconds), reckoned from the last
        parse (with what showing it was charged) in proportion to the characters: the tail's parse is linear in
        its size. 0.0 before any parse."""
        if self.rendered_chars <= 0:
            return 0.0
        return self._cost * size / self.rendered_chars

    def charge(self, seconds: float) -> bool:
        """Add ``seconds`` (what showing the last parse cost) to its cost: only a render that re-parsed the tail
        can be charged, once; returns whether this one was. ``ValueError`` for a negative or non-finite
        ``seconds``."""
        if not 0.0 <= seconds < float("inf"):
            raise ValueError(f"charge() needs a finite duration >= 0 s, got {seconds!r}")
        if not self.chargeable:
            return False
        self.chargeable = False
        self._cost += seconds
        return True
