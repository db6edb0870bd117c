"""``app.ui.messages.formulas``: the text size formulas are drawn at, also where Qt knows no font."""

from __future__ import annotations

from PySide6.QtGui import QFont

from app.ui.messages import formulas


def test_the_text_size_falls_back_when_qt_has_no_font() -> None:
    assert formulas.text_pixel_size(15.0, 18.0, 11.0) == 15.0
    assert formulas.text_pixel_size(-1.0, 18.0, 11.0) == 18.0          # a font set in points: pixelSize -1
    assert formulas.text_pixel_size(-1.0, 0.0, 12.0) == 16.0           # no metrics either: 12 pt at 96 dpi
    assert formulas.text_pixel_size(-1.0, 0.0, -1.0) == formulas.FALLBACK_PIXEL_SIZE


def test_a_math_cache_is_made_when_qt_answers_minus_one(qapp, monkeypatch) -> None:
    """On a Debian without fonts Qt gave pixelSize -1 and MathCache raised "font size … must be positive"."""
    class NoFontInfo:
        def __init__(self, _font: QFont) -> None:
            pass

        def pixelSize(self) -> int:
            return -1

    class NoMetrics:
        def __init__(self, _font: QFont) -> None:
            pass

        def ascent(self) -> float:
            return 0.0

        descent = xHeight = ascent

    monkeypatch.setattr(formulas, "QFontInfo", NoFontInfo)
    monkeypatch.setattr(formulas, "QFontMetricsF", NoMetrics)
    font = QFont()
    cache = formulas.math_cache(font, 1.0)
    assert cache.font[0] == font.pointSizeF() * 96.0 / 72.0 > 0
