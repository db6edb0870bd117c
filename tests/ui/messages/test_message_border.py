"""A reply's border (``MessageWidget.paintEvent``): a paint of a band of the widget shows the same pixels there as the
whole rounded outline stroked at once — a band strokes only the part of the outline around it (the rounded ends
clipped to the rows near them, the straight sides between as lines)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QRect
from PySide6.QtGui import QColor, QImage, QRegion

from app.core.conversation import Message, MessageStatus, Role
from app.ui.messages import widget
from app.ui.messages.widget import MessageWidget


def _paint(w: MessageWidget, band: QRect | None) -> QImage:
    image = QImage(w.size(), QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(QColor(255, 0, 255))
    band = w.rect() if band is None else band
    w.render(image, band.topLeft(), QRegion(band))     # (the region's top left lands at the target offset)
    return image


@pytest.mark.parametrize("focused", [False, True])
def test_a_band_of_a_reply_is_painted_as_the_whole_reply_is_there(qtbot, monkeypatch, focused: bool) -> None:
    text = "\n\n".join(f"Paragraph {i}: a line of a long reply." for i in range(60))
    w = MessageWidget(Message(Role.ASSISTANT, text, status=MessageStatus.DONE))
    qtbot.addWidget(w)
    w.resize(500, 1600)
    w.show()
    qtbot.waitExposed(w)
    if focused:
        w.setFocus()
        qtbot.waitUntil(w.hasFocus)
    with monkeypatch.context() as m:        # the reference: the whole outline, one rounded rectangle
        m.setattr(widget, "_stroke_outline", lambda p, rect, band: p.drawRoundedRect(rect, 10, 10))
        whole = _paint(w, None)
    h = w.height()
    bands = [QRect(0, 0, 500, 40), QRect(0, 3, 500, 9), QRect(0, 300, 500, 200), QRect(0, 700, 500, 1),
             QRect(0, h - 60, 500, 60), QRect(0, h - 20, 500, 12), QRect(0, 200, 500, h - 400)]
    for band in bands:
        part = _paint(w, band)
        assert part.copy(band) == whole.copy(band), band
    # the border is there: the left column of a band in the middle is not the background
    assert whole.pixelColor(0, h // 2) != whole.pixelColor(20, h // 2)
