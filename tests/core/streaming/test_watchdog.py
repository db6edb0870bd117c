"""The event-loop watchdog: a blocking call on the loop is reported once, with the stack that blocked it.

Robust on a busy machine: the blocking call lasts 300 ms *and* until the watchdog has taken its stack (a
watchdog thread that was not scheduled in time cannot miss it), and every wait is on a condition.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time

import pytest

from app.core.streaming.watchdog import LoopWatchdog, start_watchdog
from tests.helpers import run, until

LONG = 60.0   # seconds: only reached when something is broken


def block_the_loop_for_300ms(wd: LoopWatchdog, then_until=None) -> None:
    """The injected blocking call: 300 ms of ``time.sleep`` on the loop thread, then (still blocking) until
    the watchdog has seen the stall, so that a starved watchdog thread cannot miss it."""
    time.sleep(0.3)
    deadline = time.monotonic() + LONG
    until = then_until or (lambda: wd.in_stall)
    while not until() and time.monotonic() < deadline:
        time.sleep(0.005)


def _warnings(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "brook.watchdog" and r.levelno == logging.WARNING]


def test_a_300ms_blocking_call_logs_exactly_one_warning_naming_it(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="brook.watchdog")
    box: dict[str, LoopWatchdog] = {}

    async def main() -> None:
        wd = box["wd"] = LoopWatchdog(asyncio.get_running_loop(), threshold_ms=100, min_interval_s=0.0)
        wd.start()
        try:
            await asyncio.sleep(0.05)
            before = wd.stalls
            block_the_loop_for_300ms(wd)
            await until(lambda: wd.stalls > before)   # the stall ended and was reported
            await asyncio.sleep(0.05)
        finally:
            wd.stop()

    run(main())
    wd = box["wd"]
    naming = [r for r in _warnings(caplog) if "block_the_loop_for_300ms" in r.getMessage()]
    assert len(naming) == 1, [r.getMessage() for r in _warnings(caplog)]
    msg = naming[0].getMessage()
    assert "time.sleep" in msg or "sleep" in msg
    duration = float(msg.split("did not turn for ")[1].split(" ms")[0])
    # measured from the first unanswered ping (sent a ping period or more after the block began): above the
    # threshold, and the stack is short (innermost frames only, the blocking call last)
    assert duration > 100
    assert msg.rstrip().splitlines()[-1].strip().endswith("time.sleep(0.3)")
    assert len(msg) < 1200
    assert wd.stalls >= 1 and round(wd.longest_stall_ms) >= duration
    assert not wd.running


def test_warnings_are_rate_limited_but_every_stall_is_counted(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="brook.watchdog")
    box: dict[str, LoopWatchdog] = {}

    async def main() -> None:
        wd = box["wd"] = LoopWatchdog(asyncio.get_running_loop(), threshold_ms=100, min_interval_s=3600)
        wd.start()
        try:
            for _ in range(2):
                before = wd.stalls
                block_the_loop_for_300ms(wd)
                await until(lambda before=before: wd.stalls > before)
        finally:
            wd.stop()

    run(main())
    wd = box["wd"]
    assert wd.stalls >= 2
    assert wd.warnings == 1 and len(_warnings(caplog)) == 1
    assert wd.suppressed == wd.stalls - 1


def test_a_hung_loop_is_reported_while_it_is_still_stuck_and_not_again(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="brook.watchdog")
    box: dict[str, LoopWatchdog] = {}

    async def main() -> None:
        wd = box["wd"] = LoopWatchdog(asyncio.get_running_loop(), threshold_ms=100, min_interval_s=0.0,
                                      hang_report_s=0.2)
        wd.start()
        try:
            await asyncio.sleep(0.05)
            before = wd.stalls
            # blocks until the watchdog has warned: the report came while the loop was stuck
            block_the_loop_for_300ms(wd, then_until=lambda: any(
                "has not turned for" in r.getMessage() for r in _warnings(caplog)))
            await until(lambda: wd.stalls > before)
            await asyncio.sleep(0.05)
        finally:
            wd.stop()

    run(main())
    hung = [r for r in _warnings(caplog) if "block_the_loop_for_300ms" in r.getMessage()]
    assert len(hung) == 1 and "has not turned for" in hung[0].getMessage()


def test_threshold_must_be_positive_and_zero_means_off() -> None:
    loop = asyncio.new_event_loop()
    try:
        with pytest.raises(ValueError, match="threshold"):
            LoopWatchdog(loop, threshold_ms=0)
        assert start_watchdog(0, loop) is None
    finally:
        loop.close()


def test_a_new_threshold_applies_to_the_running_watchdog_at_once() -> None:
    """The settings dialog's threshold applies live (``retune``): same watchdog, same counts, new threshold,
    even when the old one's ping period (60 s / 4) would have kept the thread asleep for 15 s."""
    from app.core.streaming.watchdog import retune

    async def main() -> None:
        loop = asyncio.get_running_loop()
        wd = LoopWatchdog(loop, threshold_ms=60_000, min_interval_s=0.0)
        wd.start()
        try:
            await asyncio.sleep(0.05)                   # first ping answered: the thread waits out its period
            assert retune(wd, 100) is wd and wd.threshold_ms == 100 and wd.running
            time.sleep(0.3)                             # blocks the loop: a stall at 100 ms, none at 60 s
            deadline = time.monotonic() + 10.0          # far below the old 15 s period
            while not wd.in_stall and time.monotonic() < deadline:
                time.sleep(0.005)
            assert wd.in_stall, "the new threshold did not apply at once"
            await until(lambda: wd.stalls == 1)
            assert retune(wd, 0) is None and not wd.running        # 0: off
            other = retune(None, 250, loop)                         # on again: a new one
            assert other is not None and other.running and other.threshold_ms == 250
            other.stop()
            with pytest.raises(ValueError):
                wd.set_threshold_ms(0)
        finally:
            wd.stop()

    run(main())


class _ReportedPoll:
    """The selector's system poll object (``select.epoll``), reporting the frame that waits in it."""

    def __init__(self, real: object, wd: LoopWatchdog) -> None:
        self._real, self._wd = real, wd

    def poll(self, *args: object) -> object:
        self._wd.loop_idle(sys._getframe())          # this frame is the innermost while the loop waits
        return self._real.poll(*args)  # type: ignore[attr-defined]

    def __getattr__(self, name: str) -> object:
        return getattr(self._real, name)


def _report_waits(wd: LoopWatchdog) -> None:
    """Make the running asyncio loop report where it waits for events, as the window's Qt loop does
    (``loop_watch``: ``aboutToBlock`` with the frame that called into the dispatcher's C++)."""
    selector = asyncio.get_running_loop()._selector  # type: ignore[attr-defined]
    if not hasattr(selector._selector, "poll"):
        pytest.skip("needs a selector with a poll object (epoll, Linux)")
    selector._selector = _ReportedPoll(selector._selector, wd)


def test_a_gated_watchdog_never_pings_a_waiting_loop_and_still_sees_a_stall() -> None:
    """Gated (the loop reports the frame it waits for events in): while the loop waits nothing is sent to it (an
    idle window is not woken up), though the thread looks; a callback that blocks is still reported."""
    box: dict[str, LoopWatchdog] = {}

    async def main() -> None:
        wd = box["wd"] = LoopWatchdog(asyncio.get_running_loop(), threshold_ms=40, min_interval_s=0.0, gated=True)
        _report_waits(wd)
        wd.start()
        try:
            await asyncio.sleep(0.3)                    # the loop waits: many looks (one a threshold)
            assert wd.pings == 0 and wd.stalls == 0 and wd.looks >= 2
            block_the_loop_for_300ms(wd)                # a callback (this task's step) blocks the loop
            await until(lambda: wd.stalls >= 1)
            assert wd.pings >= 1
        finally:
            wd.stop()

    run(main())
    assert box["wd"].stalls >= 1 and not box["wd"].running


def test_a_gated_watchdog_does_not_ping_a_loop_whose_callbacks_are_short() -> None:
    """A loop that goes back to waiting between its looks has shown it is not stuck: no ping (no wake-up),
    though it was seen running Python (30 callbacks of 20 ms, the ping period is 100 ms)."""
    box: dict[str, LoopWatchdog] = {}

    async def main() -> None:
        wd = box["wd"] = LoopWatchdog(asyncio.get_running_loop(), threshold_ms=400, min_interval_s=0.0, gated=True)
        _report_waits(wd)
        wd.start()
        try:
            for _ in range(30):
                end = time.perf_counter() + 0.02
                while time.perf_counter() < end:        # a callback that runs Python for 20 ms …
                    pass
                await asyncio.sleep(0.01)               # … then the loop waits
            assert wd.pings == 0 and wd.looks >= 2
        finally:
            wd.stop()

    run(main())
