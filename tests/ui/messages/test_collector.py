"""Garbage collection off the frame path (``app.ui.messages.collector``): full collections wait while a reply
streams, the young generations still run, and the collector is back on when nothing streams."""

from __future__ import annotations

import gc

import pytest

from app.core.conversation import Message, MessageStatus, Role
from app.ui.messages.coalescer import Coalescer
from app.ui.messages.collector import StreamingCollections
from tests.helpers.stubs import FakeClock, FakeTimer


class Owner:
    """Something that holds the collections (weak-referenceable)."""


@pytest.fixture
def collections():  # type: ignore[no-untyped-def]
    was = gc.isenabled()
    gc.enable()
    yield StreamingCollections()
    if was:
        gc.enable()
    else:
        gc.disable()


def test_holding_turns_the_automatic_collector_off_until_the_last_holder_releases(collections) -> None:
    a, b = Owner(), Owner()
    collections.hold(a)
    collections.hold(b)
    collections.hold(a)                          # idempotent
    assert not gc.isenabled() and collections.held
    collections.release(a)
    assert not gc.isenabled()
    collections.release(b)
    assert gc.isenabled() and not collections.held
    collections.release(b)                       # idempotent
    assert gc.isenabled()


def test_a_holder_that_goes_away_without_releasing_turns_it_back_on(collections) -> None:
    owner = Owner()
    collections.hold(owner)
    assert not gc.isenabled()
    del owner
    assert gc.isenabled() and not collections.held


def test_the_young_generations_still_run_when_due_and_never_a_full_one(collections) -> None:
    owner = Owner()
    collections.hold(owner)
    limit0, limit1, _ = gc.get_threshold()
    gc.collect()
    full_before = gc.get_stats()[2]["collections"]
    young: list[int] = []
    kept = []
    for _ in range(limit1 + 2):
        kept.append([[] for _ in range(limit0 + 10)])   # live tracked objects: generation 0 passes its threshold
        young.append(collections.collect_young())
    del kept
    assert 0 in young and 1 in young
    assert gc.get_stats()[2]["collections"] == full_before
    collections.release(owner)
    assert collections.collect_young() == -1     # not held: nothing to do (the automatic collector runs)


def test_the_render_tick_holds_the_collections_while_it_has_replies(qapp) -> None:
    from app.ui.messages.collector import STREAMING

    was = gc.isenabled()
    gc.enable()
    try:
        co = Coalescer(timer=FakeTimer(), clock=FakeClock())
        r = Message(Role.ASSISTANT, status=MessageStatus.GENERATING)
        co.attach(r, lambda _t: None, lambda: True)
        assert STREAMING.held and not gc.isenabled()
        co.detach(r)
        assert not STREAMING.held and gc.isenabled()
    finally:
        if not was:
            gc.disable()
