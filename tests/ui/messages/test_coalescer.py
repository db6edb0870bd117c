"""The render tick (``app.ui.messages.coalescer``) on a fake timer and a fake clock: what a tick paints, and how the
interval adapts to the cost of painting. Deterministic: no real timer fires, no wall time is measured."""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest

from app.core.conversation import Message, MessageStatus, Role
from app.core.streaming.metrics import StreamMetrics
from app.ui.messages.coalescer import Coalescer
from app.ui.messages.tick_budget import MAX_INTERVAL_MS, MIN_INTERVAL_MS
from tests.helpers.stubs import FakeClock, FakeTimer


class View:
    """Records what the tick hands it; each paint costs ``cost_s`` on the fake clock."""

    def __init__(self, clock: FakeClock, cost_s: float = 0.0) -> None:
        self.clock, self.cost_s = clock, cost_s
        self.fed: list[str] = []
        self.paints = 0

    def feed(self, text: str) -> None:
        self.fed.append(text)

    def paint(self) -> bool:
        self.paints += 1
        self.clock.advance(self.cost_s)
        return True


@pytest.fixture
def parts(qapp):  # type: ignore[no-untyped-def]
    timer, clock = FakeTimer(), FakeClock()
    return Coalescer(timer=timer, clock=clock), timer, clock


def reply() -> Message:
    return Message(Role.ASSISTANT, status=MessageStatus.GENERATING)


def test_attach_starts_the_tick_and_the_last_detach_stops_it(parts) -> None:
    co, timer, clock = parts
    assert not timer.isActive()
    a, b = reply(), reply()
    co.attach(a, View(clock).feed, View(clock).paint)
    co.attach(b, View(clock).feed, View(clock).paint)
    assert timer.isActive() and timer.interval() == MIN_INTERVAL_MS and co.tracked(a)
    co.detach(a)
    assert timer.isActive()
    co.detach(b)
    assert not timer.isActive() and not co.tracked(b)


def test_a_tick_paints_what_arrived_since_the_last_one_once(parts) -> None:
    co, timer, clock = parts
    r, view = reply(), View(clock)
    seen: list[tuple[Message, int]] = []
    co.painted.connect(lambda m, n: seen.append((m, n)))
    metrics = StreamMetrics()                 # the reply's generation's metrics: each paint is stamped there
    co.attach(r, view.feed, view.paint, metrics)
    r.append("Hel")
    r.append("lo")
    r.append("")                      # a chunk without text still counts as painted
    timer.fire()
    assert view.fed == ["Hello"] and view.paints == 1
    assert seen == [(r, 3)] and co.ticks == 1 and co.painted_chunks(r) == 3
    timer.fire()                      # nothing new: no paint, no tick counted
    assert view.paints == 1 and co.ticks == 1
    r.append(" world")
    timer.fire()
    assert view.fed == ["Hello", " world"] and co.ticks == 2 and co.painted_chunks(r) == 4
    assert len(metrics.painted) == 4


def test_frozen_replies_are_not_painted_and_flush_paints_at_once(parts) -> None:
    co, timer, clock = parts
    a, b = reply(), reply()
    va, vb = View(clock), View(clock)
    co.attach(a, va.feed, va.paint)
    co.attach(b, vb.feed, vb.paint)
    a.append("kept")
    assert co.flush(a) == 1 and va.fed == ["kept"]      # Stop paints what arrived before it ...
    co.freeze(a)
    a.append(" late")
    b.append("other")
    timer.fire()
    assert va.fed == ["kept"] and co.flush(a) == 0      # ... and nothing after it
    assert vb.fed == ["other"]


def test_expensive_ticks_double_the_interval_up_to_the_cap_and_cheap_ones_halve_it(parts) -> None:
    co, timer, clock = parts
    r, view = reply(), View(clock, cost_s=0.070)           # 70 ms per paint: more than 16, 32 and 64
    co.attach(r, view.feed, view.paint)
    for i in range(5):
        r.append(f"{i} ")
        timer.fire()
    assert timer.intervals == [MIN_INTERVAL_MS, 32, 64, MAX_INTERVAL_MS]   # capped at 100 ms (~10 Hz)
    assert co.interval_ms == MAX_INTERVAL_MS and co.last_tick_ms == pytest.approx(70)
    view.cost_s = 0.001                                    # cheap again: back to frame rate step by step
    for i in range(5):
        r.append(f"{i} ")
        timer.fire()
    assert timer.intervals[4:] == [50, 25, MIN_INTERVAL_MS]
    assert timer.interval() == MIN_INTERVAL_MS


def test_one_slow_tick_keeps_the_interval_and_a_fitting_tick_halves_it_back(parts) -> None:
    """A stall (a collection, a seal) is one tick over the interval: it keeps the interval (doubled, the next frame
    came 32 ms later too); two in a row double it, and the next tick that fits half of it halves it back (only
    below an eighth, a stream of 4-10 ms ticks stayed on 32 ms frames for ~40 frames after a doubling)."""
    co, timer, clock = parts
    r, view = reply(), View(clock, cost_s=0.020)            # over a whole frame
    co.attach(r, view.feed, view.paint)
    r.append("stall ")
    timer.fire()
    assert co.interval_ms == MIN_INTERVAL_MS
    r.append("again ")
    timer.fire()
    assert co.interval_ms == 32 and timer.intervals == [MIN_INTERVAL_MS]   # the timer gets it at its next firing
    view.cost_s = 0.010                                     # middling: over 1/8 of 32 ms, under half of it
    r.append("on ")
    timer.fire()
    assert co.interval_ms == MIN_INTERVAL_MS and timer.intervals == [MIN_INTERVAL_MS, 32]
    timer.fire()
    assert timer.intervals == [MIN_INTERVAL_MS, 32, MIN_INTERVAL_MS]


def test_a_paced_frame_over_its_interval_keeps_the_timer_on_its_grid(qapp) -> None:
    """A paced frame's work runs between two firings; setting a doubled interval there restarted the timer
    from the work's end, and the frame was shown the work's cost plus a whole 32 ms after the last beat."""
    from PySide6.QtWidgets import QWidget

    window, timer, clock = QWidget(), FakeTimer(), FakeClock()
    co = Coalescer(window, timer=timer, clock=clock)
    r, view = reply(), View(clock, cost_s=0.020)
    co.attach(r, view.feed, view.paint)
    for text in ("slow", " slower"):
        r.append(text)
        timer.fire()                            # the beat posts the frame's work
        qapp.processEvents()                    # the work: 20 ms, over the interval
    assert view.fed == ["slow", " slower"] and co.interval_ms == 32
    assert timer.intervals == [MIN_INTERVAL_MS]  # not restarted off the grid
    timer.fire()                                # the next firing, on the grid, shows it and takes the interval
    assert timer.intervals == [MIN_INTERVAL_MS, 32]
    window.deleteLater()


def test_a_tick_of_middling_cost_keeps_the_interval(parts) -> None:
    co, timer, clock = parts
    for cost_s in (0.005, 0.012):                          # between 1/8 of 16 ms and a whole frame
        r, view = reply(), View(clock, cost_s=cost_s)
        co.attach(r, view.feed, view.paint)
        for i in range(4):
            r.append(f"{i}")
            timer.fire()
        co.detach(r)
    assert timer.intervals == [MIN_INTERVAL_MS] and co.ticks == 8   # a frame is never stretched to 32 ms


def test_gui_tests_are_marked_gui_automatically(request: pytest.FixtureRequest) -> None:
    assert request.node.get_closest_marker("gui") is not None    # tests/conftest.py: a test in tests/ui


class CostlyView(View):
    """A view whose paint costs ``per_char_s`` for each character fed since the last paint."""

    def __init__(self, clock: FakeClock, per_char_s: float) -> None:
        super().__init__(clock)
        self.per_char_s, self._new = per_char_s, 0

    def feed(self, text: str) -> None:
        super().feed(text)
        self._new += len(text)

    def paint(self) -> bool:
        self.clock.advance(self._new * self.per_char_s)
        self._new = 0
        return super().paint()


def test_a_burst_is_painted_in_slices_that_fit_the_budget_and_nothing_is_lost(parts) -> None:
    from app.ui.messages.tick_budget import TICK_BUDGET_MS

    co, timer, clock = parts
    r, view = reply(), CostlyView(clock, per_char_s=1e-6)      # 1 µs a character: 1 MB would cost 1 s
    metrics = StreamMetrics()
    co.attach(r, view.feed, view.paint, metrics)
    text = "".join(f"line {i} of a burst\n" for i in range(20_000))   # ~350 KB in one chunk
    r.append(text)
    costs = []
    while co.waiting(r) or not view.fed:
        t0 = clock()
        timer.fire()
        costs.append((clock() - t0) * 1000)
    assert "".join(view.fed) == text and len(view.fed) > 10           # many ticks, in order, all of it
    assert max(costs[3:]) <= TICK_BUDGET_MS * 1.01                   # after the first measured ticks: within
    assert all(piece.endswith("\n") for piece in view.fed)           # cut at line ends
    assert co.painted_chunks(r) == 1 and len(metrics.painted) == 1   # the one chunk counts once, with the end


def test_a_reply_that_ends_with_a_backlog_is_finished_by_the_tick_that_paints_its_end(parts) -> None:
    co, timer, clock = parts
    r, view = reply(), CostlyView(clock, per_char_s=1e-5)
    co.attach(r, view.feed, view.paint)
    r.append("x\n" * 100_000)
    timer.fire()
    done: list[str] = []
    co.finish(r, lambda: done.append("".join(view.fed)))
    assert not done and co.tracked(r)                                # still painting in slices
    while co.tracked(r):
        timer.fire()
    assert done == ["x\n" * 100_000] and not timer.isActive()


def test_a_small_rest_is_painted_at_once_when_the_reply_ends(parts) -> None:
    co, _timer, clock = parts
    r, view = reply(), View(clock)
    co.attach(r, view.feed, view.paint)
    r.append("the end")
    done: list[list[str]] = []
    co.finish(r, lambda: done.append(list(view.fed)))
    assert done == [["the end"]] and not co.tracked(r)


def test_a_small_rest_and_the_end_are_painted_in_one_patch_when_the_view_paints_its_end(parts) -> None:
    co, _timer, clock = parts
    r, view = reply(), View(clock)
    metrics = StreamMetrics()
    co.attach(r, view.feed, view.paint, metrics)
    r.append("the end")
    steps: list[str] = []

    def paint_end() -> None:                  # the view's finish: renders the fed rest with the end, one patch
        steps.append(f"end after {view.fed}")
        clock.advance(0.004)

    co.finish(r, lambda: steps.append(f"done, stamped {len(metrics.painted)}"), paint_end)
    assert view.paints == 0                                 # the tail was not patched before the end
    assert steps == ["end after ['the end']", "done, stamped 1"]   # the rest fed, painted with the end, stamped
    assert not co.tracked(r)
    assert metrics.painted[-1] == pytest.approx(clock())             # stamped when the end was painted


def test_a_remade_view_catches_up_on_the_text_so_far_in_slices(parts) -> None:
    co, timer, clock = parts
    r, old, new = reply(), View(clock), CostlyView(clock, per_char_s=1e-5)
    co.attach(r, old.feed, old.paint)
    r.append("a\n" * 50_000)
    timer.fire()
    co.catch_up(r, new.feed, new.paint)                               # the chat was shown again: a new view
    r.append("more\n")
    while co.waiting(r) or not new.fed or "more" not in new.fed[-1]:
        timer.fire()
    assert "".join(new.fed) == "a\n" * 50_000 + "more\n" and len(new.fed) > 2


def test_a_catching_up_view_is_told_once_the_text_so_far_is_fed_before_that_paint(parts) -> None:
    co, timer, clock = parts
    r, view = reply(), CostlyView(clock, per_char_s=1e-5)
    r.append("b\n" * 40_000)
    events: list[str] = []
    co.catch_up(r, view.feed, lambda: events.append(f"paint {len(''.join(view.fed))}") or view.paint(),
                caught_up=lambda: events.append(f"caught up {len(''.join(view.fed))}"))
    while co.waiting(r) or not view.fed:
        timer.fire()
    assert events.count(f"caught up {80_000}") == 1 and events[-2:] == ["caught up 80000", "paint 80000"]
    assert all(e.startswith("paint") for e in events[:-2])               # before: slices rendered, no call


def test_a_backlog_is_painted_within_catch_up_ticks_even_when_every_patch_costs_more_than_the_budget(parts) -> None:
    from app.ui.messages.tick_budget import CATCH_UP_TICKS

    co, timer, clock = parts
    r, view = reply(), View(clock, cost_s=0.050)              # 50 ms a patch, however little was fed
    co.attach(r, view.feed, view.paint)
    r.append("y\n" * 200_000)                                 # 400 KB at once
    ticks = 0
    while co.waiting(r) or not view.fed:
        timer.fire()
        ticks += 1
    # the first ticks try smaller slices (CATCH_UP_TICK_MS): 50 ms at MIN_CATCH_UP_CHARS, 3 times, is fixed
    assert "".join(view.fed) == "y\n" * 200_000 and ticks <= CATCH_UP_TICKS + 6


def test_a_catch_up_slice_costs_at_most_catch_up_tick_ms_when_the_cost_grows_with_the_slice(parts) -> None:
    from app.ui.messages.tick_budget import CATCH_UP_TICK_MS

    co, timer, clock = parts
    view = CostlyView(clock, per_char_s=2e-6)               # a fixed 3 ms + 2 µs a character (1 MB: 2 s)
    view.cost_s = 0.003
    r = reply()
    co.attach(r, view.feed, view.paint)
    r.append("z\n" * 500_000)                                 # 1 MB at once: ÷ CATCH_UP_TICKS is 15,625
    costs = []
    while co.waiting(r) or not view.fed:
        t0 = clock()
        timer.fire()
        costs.append((clock() - t0) * 1000)
    assert "".join(view.fed) == "z\n" * 500_000
    assert max(costs) <= CATCH_UP_TICK_MS * 1.01              # the first slice too (not measured yet)
    assert max(len(p) for p in view.fed) < 1_000_000 // 64   # smaller than the catch-up floor alone
    assert len(costs) < 1_000_000 * 2e-6 * 1000 / (CATCH_UP_TICK_MS - 3) * 2   # and not many more ticks


def rendering_view(clock: FakeClock, per_char_s: float) -> tuple[View, list[int], Callable[[], None]]:
    """A view that renders without patching (``render``): each render costs ``per_char_s`` a character fed since
    the last one; ``renders`` gets the characters each render took."""
    renders: list[int] = []
    view = View(clock)

    def render() -> None:
        fed = sum(map(len, view.fed)) - sum(renders)
        renders.append(fed)
        clock.advance(fed * per_char_s)

    return view, renders, render


def test_a_catch_up_slice_is_rendered_in_quarters_until_its_render_time_is_spent(parts) -> None:
    """A view that renders without patching (``render``): the catch-up slice is fed in quarters, each rendered,
    until ``CATCH_UP_RENDER_MS`` is spent, then patched once. A render dearer than predicted (tables cost more a
    character than prose) then ends the slice early instead of making the frame late."""
    from app.ui.messages.tick_budget import CATCH_UP_RENDER_MS

    co, timer, clock = parts
    view, renders, render = rendering_view(clock, 4e-6)       # 4 µs a character fed since the last render

    r = reply()
    co.attach(r, view.feed, view.paint, render=render)
    r.append("w\n" * 200_000)                                 # 400 KB at once
    while co.waiting(r) or not view.fed:
        paints, n_renders, t0 = view.paints, len(renders), clock()
        timer.fire()
        assert view.paints == paints + 1                      # one patch a tick
        spent = [sum(renders[n_renders:k + 1]) * 4e-3 for k in range(n_renders, len(renders))]
        assert all(s < CATCH_UP_RENDER_MS for s in spent[:-1])   # no quarter begun after the render time
        assert (clock() - t0) * 1000 < 2 * CATCH_UP_RENDER_MS
    assert "".join(view.fed) == "w\n" * 200_000
    assert len(renders) > len(view.fed) // 2 > 0              # fed in parts, each rendered (the last, small
    #                                                           slices are fed and painted as usual)


def test_the_rest_of_an_ended_reply_is_rendered_in_quarters_until_its_render_time_is_spent(parts) -> None:
    """A reply that ended with more text waiting than its slice (an expensive tick had shrunk it): the next tick
    feeds and renders the rest in parts until ``CATCH_UP_RENDER_MS`` is spent, not one slice a tick (at 5,000
    tokens/s the last paint came up to 146 ms after the last chunk)."""
    from app.ui.messages.tick_budget import CATCH_UP_RENDER_MS

    co, timer, clock = parts
    view, renders, render = rendering_view(clock, 1e-6)       # 1 µs a character fed since the last render

    r = reply()
    co.attach(r, view.feed, view.paint, render=render)
    r.append("w\n" * 100)
    timer.fire()
    co._targets[r.id].slice_chars = 256                       # as an expensive tick leaves it
    r.append("x\n" * 2_000)                                  # 4,000 characters wait when the reply ends
    done: list[bool] = []
    co.finish(r, lambda: done.append(True))
    assert not done and co.waiting(r) == 4_000
    t0 = clock()
    timer.fire()
    assert done == [True] and "".join(view.fed) == "w\n" * 100 + "x\n" * 2_000    # all of it in one tick
    assert len(renders) > 1 and (clock() - t0) * 1000 < CATCH_UP_RENDER_MS
    assert max(map(len, view.fed[1:])) <= 512 + 2       # in parts of a catch-up slice's size, not a quarter of the
    #                                                     rest (1 MB in one chunk: parts of 250 KB, 205 ms frames)


def test_a_burst_that_ended_at_once_is_rendered_in_parts_of_a_catch_up_slice(parts) -> None:
    """1 MB in one chunk ends at once: its rest is fed in parts of the catch-up slice's size, each rendered,
    until the render time is spent — never a quarter of the megabyte in one part."""
    from app.ui.messages.tick_budget import CATCH_UP_RENDER_MS

    co, timer, clock = parts
    view, _renders, render = rendering_view(clock, 4e-6)       # 4 µs a character fed since the last render

    r = reply()
    co.attach(r, view.feed, view.paint, render=render)
    r.append("w\n" * 500_000)                                 # 1 MB at once, and the reply ends
    done: list[bool] = []
    co.finish(r, lambda: done.append(True))
    while not done:
        t0 = clock()
        timer.fire()
        assert (clock() - t0) * 1000 < 2 * CATCH_UP_RENDER_MS + 1
    assert "".join(view.fed) == "w\n" * 500_000


def test_a_tick_that_painted_has_its_window_paint_in_the_next_loop_turn(qapp) -> None:
    """Unpaced, not after Qt's update delay: the window gets its update request from the tick's loop turn."""
    from PySide6.QtWidgets import QWidget

    window, timer, clock = QWidget(), FakeTimer(), FakeClock()
    requests = _Requests(window)
    co = Coalescer(window, timer=timer, clock=clock, paced=False)
    r, view = reply(), View(clock)
    co.attach(r, view.feed, view.paint)
    timer.fire()                      # nothing arrived: nothing to show, no request
    qapp.sendPostedEvents()
    assert requests.n == 0
    r.append("Hello")
    timer.fire()
    qapp.sendPostedEvents()           # what the next loop turn delivers first (no timer runs here)
    assert requests.n == 1
    window.deleteLater()


def test_after_one_slow_tick_the_slices_grow_back_until_they_keep_up_with_the_text(parts) -> None:
    """A patch has a fixed cost: a slice cut by one slow tick (a seal, a collection) costs between half and the
    whole budget, and must still grow back, or the screen falls behind the producer for good."""
    co, timer, clock = parts

    class Affine(View):                       # 3 ms a patch + 7.5 µs a character: 400 characters cost 6 ms
        spike_s = 0.0

        def feed(self, text: str) -> None:
            super().feed(text)
            self.clock.advance(0.003 + 7.5e-6 * len(text) + self.spike_s)
            self.spike_s = 0.0

    r, view = reply(), Affine(clock)
    co.attach(r, view.feed, view.paint)
    line = "x" * 39 + "\n"
    for k in range(60):
        if k == 5:
            view.spike_s = 0.010               # one tick 10 ms slower
        r.append(line * 10)                    # 400 characters a tick: 25,000 characters/s at 16 ms
        timer.fire()
    fed = "".join(view.fed)
    assert fed == (line * 600)[: len(fed)] and len(fed) + co.waiting(r) == 24_000   # in order, nothing lost
    assert co.waiting(r) <= 800               # caught up to within two ticks of text


def test_the_first_chunk_is_painted_in_the_next_loop_turn_not_at_the_next_tick(parts, qapp) -> None:
    """``paint_soon`` (the reply's status became GENERATING): the first text is painted without the timer firing;
    only once per reply, and not for a frozen one."""
    co, timer, clock = parts
    r, view = reply(), View(clock)
    co.attach(r, view.feed, view.paint)
    co.paint_soon(r)
    r.append("Hi")                    # appended in the same loop turn as the status change
    qapp.processEvents()
    assert view.fed == ["Hi"] and view.paints == 1 and co.painted_chunks(r) == 1
    r.append(" there")
    co.paint_soon(r)                  # something was painted already: the ticks paint the rest
    qapp.processEvents()
    assert view.fed == ["Hi"]
    timer.fire()
    assert view.fed == ["Hi", " there"]
    frozen, fview = reply(), View(clock)
    co.attach(frozen, fview.feed, fview.paint)
    co.freeze(frozen)
    frozen.append("no")
    co.paint_soon(frozen)
    qapp.processEvents()
    assert fview.paints == 0


class _Requests:
    """Counts the update requests that reach ``window`` (an event filter installed before the coalescer's)."""

    def __init__(self, window) -> None:  # type: ignore[no-untyped-def]
        from PySide6.QtCore import QEvent, QObject

        class Filter(QObject):
            n = 0

            def eventFilter(self, obj: QObject, event: QEvent) -> bool:
                if event.type() == QEvent.Type.UpdateRequest:
                    self.n += 1
                return False

        self.filter = Filter()
        window.installEventFilter(self.filter)

    @property
    def n(self) -> int:
        return self.filter.n


def _ask_paint(window) -> None:  # type: ignore[no-untyped-def]
    """What Qt does when a widget of ``window`` changed: an update request posted to the window."""
    from PySide6.QtCore import QCoreApplication, QEvent

    QCoreApplication.postEvent(window, QEvent(QEvent.Type.UpdateRequest))


def test_paced_a_frame_is_made_after_the_beat_and_shown_at_the_next_one(qapp) -> None:
    """Paced (a widget parent): a firing posts the frame's work; the work's paints are held; the next firing
    shows it (one update request) and stamps the reply's metrics then, not when the work was done."""
    from PySide6.QtWidgets import QWidget

    window, timer, clock = QWidget(), FakeTimer(), FakeClock()
    requests = _Requests(window)
    co = Coalescer(window, timer=timer, clock=clock)
    r, view, metrics = reply(), View(clock, cost_s=0.004), StreamMetrics()
    co.attach(r, view.feed, view.paint, metrics)
    r.append("Hello")
    timer.fire()                      # the beat: nothing made yet; the work is posted
    assert view.fed == []
    qapp.processEvents()              # the loop turn after the beat's paint: the work
    assert view.fed == ["Hello"] and co.ticks == 1 and not metrics.painted
    _ask_paint(window)                # the patch asked for a paint: held until the beat
    qapp.processEvents()
    assert requests.n == 0
    clock.advance(0.012)
    beat = clock()
    timer.fire()                      # the next beat shows it
    assert list(metrics.painted) == [beat] and list(metrics.tick_cost) == [pytest.approx(0.004)]
    r.append(" world")
    qapp.processEvents()              # its paint, then the next frame's work
    assert requests.n == 1 and view.fed == ["Hello", " world"] and len(metrics.painted) == 1
    window.deleteLater()


def test_paced_a_beat_with_nothing_made_holds_nothing(qapp) -> None:
    from PySide6.QtWidgets import QWidget

    window, timer, clock = QWidget(), FakeTimer(), FakeClock()
    requests = _Requests(window)
    co = Coalescer(window, timer=timer, clock=clock)
    r, view = reply(), View(clock)
    co.attach(r, view.feed, view.paint)
    timer.fire()
    qapp.processEvents()              # the work found nothing: the window paints as it would
    _ask_paint(window)
    qapp.processEvents()
    assert view.paints == 0 and requests.n == 1
    window.deleteLater()


def _paced_frame_made(qapp, window, text: str):  # type: ignore[no-untyped-def]
    """A paced coalescer on ``window`` whose one reply got ``text`` and one beat: the frame is made (fed), not
    shown yet. Returns ``(timer, clock, coalescer, reply, view, metrics)``."""
    timer, clock = FakeTimer(), FakeClock()
    co = Coalescer(window, timer=timer, clock=clock)
    r, view, metrics = reply(), View(clock), StreamMetrics()
    co.attach(r, view.feed, view.paint, metrics)
    r.append(text)
    timer.fire()
    qapp.processEvents()
    assert view.fed == [text] and not metrics.painted
    return timer, clock, co, r, view, metrics


def test_paced_the_last_detach_shows_the_frame_made_at_once(qapp) -> None:
    """No beat comes once the last reply is detached (the timer stops): what was made is shown then, and the
    window's paints are no longer held."""
    from PySide6.QtWidgets import QWidget

    window = QWidget()
    requests = _Requests(window)
    timer, clock, co, r, _view, metrics = _paced_frame_made(qapp, window, "last")
    _ask_paint(window)
    clock.advance(0.005)
    co.detach(r)
    assert list(metrics.painted) == [clock()] and not timer.isActive()
    qapp.processEvents()
    assert requests.n == 1            # the frame, once (the held request was not delivered again)
    _ask_paint(window)
    qapp.processEvents()
    assert requests.n == 2
    window.deleteLater()


def test_paced_stop_shows_the_frame_made_before_it(qapp) -> None:
    """Stop counts what was painted when it was pressed (``Generation.painted_at_stop``): a frame made before it
    is shown and stamped then, not at the next beat, after the Stop."""
    from PySide6.QtWidgets import QWidget

    window = QWidget()
    _timer, _clock, co, r, view, metrics = _paced_frame_made(qapp, window, "made")
    r.append(" then stopped")
    assert co.stop(r)
    assert view.fed == ["made", " then stopped"] and len(metrics.painted) == 2
    window.deleteLater()


@pytest.mark.parametrize("after_ms", [1.0, 9.0])
def test_paced_an_end_that_would_make_the_beat_late_is_the_next_frames_work(qapp, after_ms: float) -> None:
    """The end comes at any moment of a frame, and its final render can cost 5-10 ms (a 200 KB code line whose
    ticks cost 2-4): painted when it came late in a frame, it made the next beat late (that shape's last frame:
    18-25 ms). Paced, an end that comes while a frame waits for its beat is painted at once when twice the last
    paint's cost still ends 2 ms before that beat (shown at that beat), else by the next frame's work."""
    from PySide6.QtWidgets import QWidget

    from app.ui.messages.tick_budget import END_COST_FACTOR, FRAME_MARGIN_MS

    window, timer, clock = QWidget(), FakeTimer(), FakeClock()
    co = Coalescer(window, timer=timer, clock=clock)
    r, view, metrics = reply(), View(clock, cost_s=0.004), StreamMetrics()   # 4 ms a paint
    co.attach(r, view.feed, view.paint, metrics)
    r.append("made")
    timer.fire()                                   # the beat
    qapp.processEvents()                           # the frame's work: 4 ms
    clock.advance(after_ms / 1000)                 # the end comes this long after the work
    r.append(" the end")
    steps: list[str] = []
    co.finish(r, lambda: steps.append(f"done after {view.fed}"),
              lambda: steps.append(f"end after {view.fed}"))
    left = MIN_INTERVAL_MS - 4 - after_ms
    if left >= END_COST_FACTOR * 4 + FRAME_MARGIN_MS:   # 11 ms left: it fits, painted now
        assert steps == ["end after ['made', ' the end']", "done after ['made', ' the end']"]
        assert not co.tracked(r)
    else:                                          # 3 ms left: nothing painted in this frame …
        assert steps == [] and view.fed == ["made"] and co.tracked(r)
        timer.fire()                               # … the beat shows the frame made; the next work is posted
        assert steps == [] and len(metrics.painted) == 1
        qapp.processEvents()                       # the next frame's work: the rest, with the end, then done
        assert steps == ["end after ['made', ' the end']", "done after ['made', ' the end']"]
        assert not co.tracked(r) and not timer.isActive()
    window.deleteLater()


@pytest.mark.parametrize("end_ms", [0.0, 6.0])
def test_paced_an_end_the_view_reckons_dear_is_the_next_frames_work_though_its_paints_were_cheap(
        qapp, end_ms: float) -> None:
    """A throttled tail's paints cost next to nothing and its end a whole parse (a 10 KB line of nested quotes:
    0.03-0.08 ms a paint, 5-6 ms its end; that beat came 19-20 ms after the last): the view's own reckoning of
    its end (``end_cost``, ms) counts when it is more than ``END_COST_FACTOR`` × the last paint."""
    from PySide6.QtWidgets import QWidget

    window, timer, clock = QWidget(), FakeTimer(), FakeClock()
    co = Coalescer(window, timer=timer, clock=clock)
    r, view, metrics = reply(), View(clock, cost_s=0.0001), StreamMetrics()   # 0.1 ms a paint
    co.attach(r, view.feed, view.paint, metrics, end_cost=lambda: end_ms)
    r.append("made")
    timer.fire()                                   # the beat
    qapp.processEvents()                           # the frame's work
    clock.advance(0.011)                           # the end comes ~11 ms after the beat: ~5 ms left
    r.append(" the end")
    steps: list[str] = []
    co.finish(r, lambda: steps.append("done"), lambda: steps.append("end"))
    if end_ms == 0.0:                              # 0.2 ms + the margin fits: painted now
        assert steps == ["end", "done"] and not co.tracked(r)
    else:                                          # 6 ms does not: the next frame's work
        assert steps == [] and view.fed == ["made"] and co.tracked(r)
        timer.fire()
        qapp.processEvents()
        assert steps == ["end", "done"] and not co.tracked(r)
    window.deleteLater()


@pytest.mark.parametrize("paint_ms", [2.0, 9.0])
def test_paced_a_frame_whose_paint_ran_over_gives_its_work_less_time(qapp, paint_ms: float) -> None:
    """The beat → the frame's work is the window's paint: past ``FRAME_PAINT_MS`` the work has that much less of
    its budgets — the catch-up render's time, and the view's patch (``spend``) — so paint and work still end
    before the next beat."""
    from PySide6.QtWidgets import QWidget

    from app.ui.messages.tick_budget import CATCH_UP_RENDER_MS, FRAME_PAINT_MS

    window, timer, clock = QWidget(), FakeTimer(), FakeClock()
    co = Coalescer(window, timer=timer, clock=clock)
    view, spent, rendered = View(clock), [], []

    def render() -> None:                                     # 2.5 ms a render
        rendered.append(clock())
        clock.advance(0.0025)

    r = reply()
    co.attach(r, view.feed, view.paint, render=render, spend=spent.append)
    r.append("v\n" * 200_000)                                 # a burst: caught up in timed slices
    timer.fire()                                              # the beat
    beat = clock()
    clock.advance(paint_ms / 1000)                            # the window's paint
    qapp.processEvents()                                      # the frame's work
    late = max(0.0, paint_ms - FRAME_PAINT_MS)
    assert spent == ([pytest.approx(late)] if late else [])
    assert len(rendered) == math.ceil((CATCH_UP_RENDER_MS - late) / 2.5)   # begun in the render time left
    assert (rendered[-1] - beat) * 1000 < paint_ms + CATCH_UP_RENDER_MS - late
    window.deleteLater()


@pytest.mark.parametrize("paint_ms", [1.0, 4.5, 9.0])
def test_paced_the_frames_work_ends_as_long_after_its_beat_whatever_the_paint_took(qapp, paint_ms: float) -> None:
    """The tick's budget is what the frame has left after its paint, counted from ``FRAME_PAINT_MS``: a quick paint
    gives the work more (a streaming table paints in ~2.5 ms: held to ``TICK_BUDGET_MS``, its screen fell behind
    the producer with a third of the loop idle), a slow one less; the next slice is sized to 80 % of it."""
    from PySide6.QtWidgets import QWidget

    from app.ui.messages.tick_budget import FIRST_SLICE_CHARS, FRAME_PAINT_MS, TICK_BUDGET_MS

    window, timer, clock = QWidget(), FakeTimer(), FakeClock()
    co = Coalescer(window, timer=timer, clock=clock)
    view = View(clock, cost_s=0.016)                           # every slice costs 16 ms: over any budget
    r = reply()
    co.attach(r, view.feed, view.paint)
    r.append("v\n" * 10_000)                                  # waits, but not enough for a catch-up slice
    for _ in range(2):
        timer.fire()                                           # the beat
        clock.advance(paint_ms / 1000)                         # the window's paint
        qapp.processEvents()                                   # the frame's work
    budget = max(TICK_BUDGET_MS / 4, TICK_BUDGET_MS + FRAME_PAINT_MS - paint_ms)
    assert len(view.fed[0]) == FIRST_SLICE_CHARS
    assert len(view.fed[1]) == pytest.approx(FIRST_SLICE_CHARS * budget / 16 * 0.8, abs=2)
    window.deleteLater()


def test_paced_only_at_the_frame_rate_not_at_a_stretched_interval(qapp) -> None:
    """Expensive ticks stretch the interval (up to 100 ms): the window's paints are not held that long (a key
    typed meanwhile would echo late); those firings do the work and paint at once."""
    from PySide6.QtWidgets import QWidget

    window, timer, clock = QWidget(), FakeTimer(), FakeClock()
    requests = _Requests(window)
    co = Coalescer(window, timer=timer, clock=clock)
    r, view = reply(), View(clock, cost_s=0.040)
    co.attach(r, view.feed, view.paint)
    r.append("slow")
    timer.fire()
    qapp.processEvents()                        # paced work: 40 ms
    r.append(" slower")
    timer.fire()                                # shows it
    qapp.processEvents()                        # paced work: 40 ms again, the interval doubles
    assert co.interval_ms > MIN_INTERVAL_MS and view.fed == ["slow", " slower"]
    assert requests.n == 1
    timer.fire()                                # shows it
    qapp.processEvents()
    assert requests.n == 2
    r.append(" more")
    timer.fire()                                # stretched: the work in the firing, painted at once
    assert view.fed == ["slow", " slower", " more"]
    qapp.processEvents()
    assert requests.n == 3
    _ask_paint(window)                          # nothing held
    qapp.processEvents()
    assert requests.n == 4
    window.deleteLater()


class LaggingView(View):
    """A view whose patch inserts at most ``per_patch`` characters of what it was fed (its patch budget): it
    lags while fed text is not all shown."""

    def __init__(self, clock: FakeClock, per_patch: int) -> None:
        super().__init__(clock)
        self.per_patch = per_patch
        self.shown = 0
        self.ended = False

    def paint(self) -> bool:
        super().paint()
        before = self.shown
        self.shown = min(len("".join(self.fed)), self.shown + self.per_patch)
        return self.shown > before

    def paint_end(self) -> None:
        self.ended = True
        self.paint()

    def lagging(self) -> bool:
        return self.shown < len("".join(self.fed))

    def saturated(self) -> bool:
        """What it was fed and does not show fills its next patch."""
        return len("".join(self.fed)) - self.shown >= self.per_patch


def test_a_view_that_lags_by_less_than_a_patch_is_fed_its_next_slice_with_the_patch_of_the_rest(parts) -> None:
    """Patches of the rest alone (1-3 ms) were half the ticks of a fast remote reply's catch-up."""
    co, timer, clock = parts
    r, view = reply(), LaggingView(clock, per_patch=100)
    metrics = StreamMetrics()
    co.attach(r, view.feed, view.paint, metrics, view.lagging, saturated=view.saturated)
    r.append("a" * 120)
    r.append("a" * 80)
    r.append("a" * 50)
    timer.fire()                                     # fed 250, shows 100: 150 left, more than a patch
    assert view.fed == ["a" * 250] and view.shown == 100 and co.painted_chunks(r) == 1
    r.append("b" * 10)
    timer.fire()                                     # a whole patch left: patched only, fed nothing
    assert view.fed == ["a" * 250] and view.shown == 200 and co.painted_chunks(r) == 1
    timer.fire()                                     # 50 left, less than a patch: the waiting text is fed too
    assert view.fed == ["a" * 250, "b" * 10] and view.shown == 260 and not view.lagging()
    assert co.painted_chunks(r) == 4 and len(metrics.painted) == 4


def test_a_lagging_view_is_patched_and_fed_nothing_until_it_shows_what_it_was_fed(parts) -> None:
    co, timer, clock = parts
    r, view = reply(), LaggingView(clock, per_patch=100)
    metrics = StreamMetrics()
    co.attach(r, view.feed, view.paint, metrics, view.lagging)
    r.append("a" * 120)
    r.append("a" * 80)
    r.append("a" * 50)
    timer.fire()                                     # fed 250 in 3 chunks, shows 100
    assert view.fed == ["a" * 250] and view.lagging()
    assert co.painted_chunks(r) == 1 and len(metrics.painted) == 1   # the first chunk begins on screen (TTFT)
    r.append("b" * 10)
    timer.fire()                                     # lags: patched again, nothing more fed, nothing counted
    assert view.fed == ["a" * 250] and view.shown == 200 and co.painted_chunks(r) == 1
    timer.fire()                                     # now it shows all it was fed: its chunks count
    assert view.shown == 250 and not view.lagging() and co.painted_chunks(r) == 3 and len(metrics.painted) == 3
    timer.fire()                                     # then the text that waited is fed
    assert view.fed == ["a" * 250, "b" * 10] and co.painted_chunks(r) == 4


def test_a_reply_whose_view_lags_at_its_end_is_finished_once_the_view_shows_it_all(parts) -> None:
    co, timer, clock = parts
    r, view = reply(), LaggingView(clock, per_patch=100)
    co.attach(r, view.feed, view.paint, None, view.lagging)
    r.append("a" * 90)
    timer.fire()
    r.append("b" * 200)                              # a small rest: fed and painted with the end at once
    done: list[int] = []
    co.finish(r, lambda: done.append(view.shown), view.paint_end)
    assert view.ended and view.lagging() and not done and co.tracked(r)
    while co.tracked(r):
        timer.fire()
    assert done == [290] and view.fed == ["a" * 90, "b" * 200] and co.painted_chunks(r) == 2



def test_the_first_slice_of_a_burst_counts_the_replys_first_chunk(parts) -> None:
    """A burst's chunks count in proportion to the characters painted, so a short first chunk taken with a long
    one counted only at the end of the backlog: the reply had no time to first token until then."""
    co, timer, clock = parts
    r, view = reply(), CostlyView(clock, per_char_s=1e-6)
    metrics = StreamMetrics()
    co.attach(r, view.feed, view.paint, metrics)
    r.append("Here it is:\n\n")
    r.append("line of a long reply\n" * 20_000)
    timer.fire()
    assert co.waiting(r) and view.fed[0].startswith("Here it is:")
    assert co.painted_chunks(r) == 1 and len(metrics.painted) == 1
    while co.waiting(r):
        timer.fire()
    assert co.painted_chunks(r) == 2 and len(metrics.painted) == 2
