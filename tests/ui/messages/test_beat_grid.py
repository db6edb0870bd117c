"""Paced beats on the timer's exact grid (app/ui/messages/pacing.py ``BeatGrid``): a Qt timer fires up to ~1 ms
after its due time; the beat waits for the grid time plus the slack, learnt from the firings (fake clock)."""

from __future__ import annotations

import itertools

import pytest

from app.ui.messages.coalescer import Coalescer
from app.ui.messages.pacing import BEAT_SLACK_S, BeatGrid
from app.ui.messages.tick_budget import MIN_INTERVAL_MS
from tests.helpers.stubs import FakeClock, FakeTimer


class _Clock(FakeClock):
    def sleep(self, s: float) -> None:
        self.advance(s)


def _beats(lates_ms: list[float], interval_ms: float = 16.0, origin: float = 100.0) -> tuple[list[float], BeatGrid]:
    """The times the beats are shown when the timer fires ``lates_ms`` after its grid times."""
    clock = _Clock()
    grid = BeatGrid(sleep=clock.sleep, clock=clock)
    shown = []
    for k, late in enumerate(lates_ms):
        clock.t = origin + k * interval_ms / 1000 + late / 1000
        grid.wait(interval_ms)
        shown.append(clock())
    return shown, grid


def test_firings_late_by_under_the_slack_are_shown_on_the_grid() -> None:
    lates = [0.4, 0.9, 0.0, 0.7, 1.05, 0.2, 0.95, 0.5]
    shown, grid = _beats(lates)
    # the first firing sets the grid (0.4 ms late: it is the earliest seen) and is held for the slack like the
    # next, so their interval is the timer's; the third shows the grid is earlier
    assert shown[0] == pytest.approx(100.0 + 0.0004 + BEAT_SLACK_S)
    assert shown[1] == pytest.approx(100.016 + 0.0004 + BEAT_SLACK_S)
    for k in range(3, len(lates)):
        assert shown[k] == pytest.approx(100.0 + k * 0.016 + BEAT_SLACK_S)
    intervals = [(b - a) * 1000 for a, b in itertools.pairwise(shown[3:])]
    assert intervals == pytest.approx([16.0] * len(intervals))
    assert grid.waited_s > 0


def test_a_firing_later_than_the_slack_is_not_held_and_a_stall_starts_a_new_grid() -> None:
    shown, _ = _beats([0.0, 0.0, 3.0, 0.0, 9.0, 9.2])
    assert shown[2] == pytest.approx(100.032 + 0.003)             # the loop was busy: late as it is
    assert shown[3] == pytest.approx(100.048 + BEAT_SLACK_S)      # back on the grid
    # half an interval behind: a new grid there, held for the slack like the next beat, which keeps its interval
    assert shown[4] == pytest.approx(100.064 + 0.009 + BEAT_SLACK_S)
    assert shown[5] == pytest.approx(100.080 + 0.009 + BEAT_SLACK_S)


def test_a_new_interval_or_a_restarted_timer_starts_a_new_grid() -> None:
    clock = _Clock()
    grid = BeatGrid(sleep=clock.sleep, clock=clock)
    clock.t = 10.0
    grid.wait(16)
    assert clock() == pytest.approx(10.0 + BEAT_SLACK_S)    # the first firing sets the grid, after the slack
    clock.t = 10.0163
    grid.wait(32)                      # another interval: this firing sets a new grid (on the old one, 0.3 ms
    assert clock() == pytest.approx(10.0163 + BEAT_SLACK_S)  # late, it would be held 0.8 ms)
    clock.t = 10.0483
    grid.wait(32)                      # on it: due at 10.0483, shown after the slack
    assert clock() == pytest.approx(10.0483 + BEAT_SLACK_S)
    grid.reset()
    clock.t = 10.09
    grid.wait(32)                      # restarted: a new grid here (on the old one, 9.7 ms late: not held)
    assert clock() == pytest.approx(10.09 + BEAT_SLACK_S)
    assert grid.waited_s == pytest.approx(4 * BEAT_SLACK_S)


def test_a_paced_coalescer_waits_for_the_grid_at_its_beats_only(qapp) -> None:
    from PySide6.QtWidgets import QWidget

    from app.core.conversation import Message, MessageStatus, Role

    class Grid:
        def __init__(self) -> None:
            self.waits: list[float] = []
            self.resets = 0

        def wait(self, interval_ms: float) -> None:
            self.waits.append(interval_ms)

        def reset(self) -> None:
            self.resets += 1

    window = QWidget()
    co = Coalescer(window, timer=FakeTimer(), clock=FakeClock())
    assert co._grid is None                           # a test's timer fires when told: no grid to keep
    real = Coalescer(window)
    assert isinstance(real._grid, BeatGrid)
    grid = Grid()
    real._grid = grid                                 # type: ignore[assignment]
    r = Message(Role.ASSISTANT, status=MessageStatus.GENERATING)
    real.attach(r, lambda _t: None, lambda: True)
    assert grid.resets == 1                           # the timer started: a new grid
    real.tick()
    assert grid.waits == [MIN_INTERVAL_MS]
    real.interval_ms = MIN_INTERVAL_MS * 2            # stretched: the firing does the work, no beat to keep
    real.tick()
    assert grid.waits == [MIN_INTERVAL_MS]
    real._set_interval()
    assert grid.resets == 2
    unpaced = Coalescer(window, paced=False)
    unpaced._grid = grid                              # type: ignore[assignment]
    unpaced.attach(r, lambda _t: None, lambda: True)
    unpaced.tick()
    assert grid.waits == [MIN_INTERVAL_MS]
    real.detach(r)
    unpaced.detach(r)
    window.deleteLater()
