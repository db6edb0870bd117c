"""The history bench's frames (``app.bench.history.PaintSeen``): a scroll step or an open is timed until one frame
is painted — by the pending events when they paint it, by a synchronous repaint only when they do not."""

from __future__ import annotations

import time

from PySide6.QtWidgets import QWidget

from app.bench.history import PaintSeen


def test_a_frame_the_events_painted_is_not_painted_again(qapp) -> None:
    widget = QWidget()
    widget.resize(200, 100)
    widget.show()
    qapp.processEvents()
    seen = PaintSeen(widget)
    paints: list[int] = []
    real_repaint = widget.repaint
    widget.repaint = lambda: (paints.append(1), real_repaint())      # type: ignore[method-assign]

    def events() -> None:
        time.sleep(0.02)        # (past the platform's update delay, if it has one: the request is due)
        qapp.processEvents()

    widget.update()
    seen.frame(events)                             # the update request is delivered: painted there
    assert seen.painted and seen.repaints == 0 and not paints

    seen.frame(lambda: None)                        # nothing painted it: the frame is painted here, once
    assert seen.painted and seen.repaints == 1 and paints == [1]
    widget.close()
