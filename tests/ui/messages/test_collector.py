"""Garbage collection off the frame path (``app.ui.messages.collector``): the start-up heap is frozen once, so a
later full collection does not walk it; the render tick leaves the automatic collector alone."""

from __future__ import annotations

import gc

from app.core.conversation import Message, MessageStatus, Role
from app.ui.messages import collector
from app.ui.messages.coalescer import Coalescer
from tests.helpers.stubs import FakeClock, FakeTimer


def test_the_start_up_heap_is_frozen_once(monkeypatch) -> None:
    calls: list[int] = []
    monkeypatch.setattr(collector, "_state", {"frozen": False})
    monkeypatch.setattr(gc, "freeze", lambda: calls.append(gc.get_freeze_count()))
    collector.freeze_startup_heap()
    collector.freeze_startup_heap()
    assert len(calls) == 1


def test_the_view_warm_up_freezes_what_start_up_made(qapp, monkeypatch) -> None:
    from app.ui.messages import markdown_view

    frozen: list[bool] = []
    monkeypatch.setattr(markdown_view, "freeze_startup_heap", lambda: frozen.append(True))
    markdown_view.warm_up()
    assert frozen == [True]


def test_the_render_tick_leaves_the_automatic_collector_on(qapp) -> None:
    was = gc.isenabled()
    gc.enable()
    try:
        co = Coalescer(timer=FakeTimer(), clock=FakeClock())
        r = Message(Role.ASSISTANT, status=MessageStatus.GENERATING)
        co.attach(r, lambda _t: None, lambda: True)
        r.append("x")
        co.timer.fire()
        assert gc.isenabled()          # turning it off while streaming crashed the bench's window (collector)
        co.detach(r)
    finally:
        if not was:
            gc.disable()
