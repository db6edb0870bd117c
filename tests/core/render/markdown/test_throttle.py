"""The big-tail throttle (app/core/render/markdown/throttle.py): a long open tail is parsed again once it grew by a
fifth, or once the time and 4 × the last parse's cost passed; showing the parse can be charged to it, once."""

from __future__ import annotations

import pytest

from app.core.render.markdown.throttle import BIG_TAIL_CHARS, BIG_TAIL_GROWTH, BIG_TAIL_MIN_S, TailThrottle


def _throttle(size: int, cost_s: float = 0.0) -> tuple[TailThrottle, list[float]]:
    """A throttle whose last parse, of a tail of ``size`` characters, cost ``cost_s`` and ended at clock 10 s."""
    now = [10.0 - cost_s]
    throttle = TailThrottle(lambda: now[0])
    t0 = now[0]
    now[0] = 10.0
    throttle.parsed(t0)
    throttle.rendered_chars = size
    return throttle, now


def test_a_big_tail_waits_until_it_grew_by_the_growth_fraction() -> None:
    size = 3 * BIG_TAIL_CHARS
    throttle, _now = _throttle(size)
    grown = int(size / (1 - BIG_TAIL_GROWTH))          # grew by exactly the fraction of its new size
    assert throttle.waits(size + 1)
    assert throttle.waits(grown - 2)
    assert not throttle.waits(grown + 2)


def test_a_small_tail_or_one_never_parsed_never_waits() -> None:
    throttle, _now = _throttle(BIG_TAIL_CHARS // 2)
    assert not throttle.waits(BIG_TAIL_CHARS)
    fresh = TailThrottle(lambda: 0.0)
    assert not fresh.waits(10 * BIG_TAIL_CHARS)


def test_a_big_tail_is_parsed_again_once_the_time_and_four_times_the_cost_passed() -> None:
    size = 3 * BIG_TAIL_CHARS
    throttle, now = _throttle(size, cost_s=0.1)         # 4 × 0.1 s > BIG_TAIL_MIN_S
    now[0] += BIG_TAIL_MIN_S + 0.01
    assert throttle.waits(size + 1)
    now[0] += 0.2                                      # past 4 × 0.1 s
    assert not throttle.waits(size + 1)


def test_showing_a_parse_is_charged_once_and_makes_the_next_parse_wait_longer() -> None:
    size = 3 * BIG_TAIL_CHARS
    throttle, now = _throttle(size)
    assert throttle.charge(0.2)                        # now 4 × 0.2 s must pass
    assert not throttle.charge(0.2)                    # once
    now[0] += BIG_TAIL_MIN_S + 0.01
    assert throttle.waits(size + 1)
    now[0] += 0.6
    assert not throttle.waits(size + 1)
    with pytest.raises(ValueError):
        throttle.charge(-1.0)


def test_the_estimate_of_a_parse_grows_with_the_tail_from_the_last_parse_and_its_showing() -> None:
    """What the end's parse of the tail will cost (``estimate``): the last parse with its showing, in proportion
    to the characters; nothing known before any parse."""
    size = 3 * BIG_TAIL_CHARS
    throttle, _now = _throttle(size, cost_s=0.004)
    assert throttle.estimate(size) == pytest.approx(0.004)
    assert throttle.estimate(2 * size) == pytest.approx(0.008)
    throttle.charge(0.002)
    assert throttle.estimate(size) == pytest.approx(0.006)
    assert TailThrottle(lambda: 0.0).estimate(size) == 0.0
