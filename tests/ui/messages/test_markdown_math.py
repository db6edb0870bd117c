"""Formulas in the view: images from the math pool (off the loop), TeX in what is copied and stored, the
theme's colour, a cache a reopened chat hits, TeX while the image is not known."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QUrl
from PySide6.QtGui import QImage, QTextDocument

from app.core.render.math_render import MATH_SCHEME
from app.ui.messages.markdown_view import MarkdownView

INTEGRAL = r"\int_0^1 x^2\,dx = \frac{1}{3}"
EULER = r"e^{i\pi}+1=0"
TEXT = f"Euler: ${EULER}$ holds.\n\n$$\n{INTEGRAL}\n$$\n\nDone.\n"


def _settle(qtbot, view: MarkdownView) -> None:
    def done() -> bool:
        view.refresh()
        return not view.renderer.highlights_pending
    qtbot.waitUntil(done, timeout=120_000)


def _images(view: MarkdownView) -> list[tuple[str, str]]:
    """(image name, its tooltip: the TeX) of every formula image in the document, in order."""
    out = []
    block = view.document().begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fmt = it.fragment().charFormat()
            it += 1
            if fmt.isImageFormat() and fmt.toImageFormat().name().startswith(MATH_SCHEME):
                out.append((fmt.toImageFormat().name(), fmt.toolTip()))
        block = block.next()
    return out


def _resource(view: MarkdownView, name: str) -> QImage:
    img = view.document().resource(QTextDocument.ResourceType.ImageResource, QUrl(name))
    assert isinstance(img, QImage) and not img.isNull()
    return img


def _ink(img: QImage) -> np.ndarray:
    """RGB of the opaque pixels of an image."""
    img = img.convertToFormat(QImage.Format.Format_RGBA8888)
    arr = np.frombuffer(img.constBits(), np.uint8).reshape(img.height(), img.bytesPerLine() // 4, 4)
    arr = arr[:, : img.width()]
    return arr[arr[..., 3] > 200][:, :3]


def _view(qtbot, theme: str = "light") -> MarkdownView:
    v = MarkdownView(theme=theme)
    qtbot.addWidget(v)
    v.resize(600, 300)
    return v


def test_a_formula_is_an_image_in_the_document_and_tex_in_what_is_copied(qtbot) -> None:
    v = _view(qtbot)
    v.set_text(TEXT)
    _settle(qtbot, v)
    assert [tex for _name, tex in _images(v)] == [EULER, INTEGRAL]
    shown = v.toPlainText()
    assert EULER not in shown and INTEGRAL not in shown and "Euler:" in shown and "Done." in shown
    for name, _tex in _images(v):
        assert _resource(v, name).devicePixelRatio() == 1.0   # loadResource gave Qt the pool's image
    assert v.renderer.text == TEXT                     # what is stored (and the message's Copy) is the source
    v.selectAll()
    copied = v.createMimeDataFromSelection().text()
    assert f"Euler: ${EULER}$ holds." in copied and f"$${INTEGRAL}$$" in copied and "\ufffc" not in copied


def test_unsupported_math_stays_tex_without_an_error(qtbot) -> None:
    bad = r"\begin{align} a &= b \\ c &= d \end{align}"
    v = _view(qtbot)
    v.set_text(f"Aligned: ${bad}$ and $x^$.\n\n$$\n\\begin{{cases}} 1 \\end{{cases}}\n$$\n")
    _settle(qtbot, v)
    assert _images(v) == []
    shown = v.toPlainText()
    assert bad in shown and "x^" in shown and "\\begin{cases} 1 \\end{cases}" in shown


def test_formulas_take_the_theme_colour_also_after_a_live_switch(qtbot) -> None:
    v = _view(qtbot, "light")
    v.set_text(TEXT)
    _settle(qtbot, v)
    light = _ink(_resource(v, _images(v)[0][0]))
    assert len(light) > 20 and light.max() < 100                              # dark ink on a light bubble
    v.set_theme("dark")
    _settle(qtbot, v)
    names = _images(v)
    assert len(names) == 2
    dark = _ink(_resource(v, names[0][0]))
    assert len(dark) > 20 and dark.min() > 180                                # light ink on a dark bubble


def test_a_reopened_message_hits_the_cache(qtbot) -> None:
    first = _view(qtbot)
    first.set_text(TEXT)
    _settle(qtbot, first)
    pool = first.math_pool()
    done = pool.completed
    again = _view(qtbot)
    again.set_text(TEXT)                                # the chat opened again
    assert not again.renderer.highlights_pending and pool.completed == done and pool.pending() == 0
    assert _images(again) == _images(first)


def test_an_unfinished_display_block_is_tex_until_it_closes(qtbot) -> None:
    v = _view(qtbot)
    head = f"Before.\n\n$$\n{INTEGRAL}\n"
    for i in range(0, len(head), 4):
        v.append_text(head[i : i + 4])
        v.refresh()
    assert _images(v) == [] and INTEGRAL in v.toPlainText()          # open: its TeX, as written so far
    v.append_text("$$\n\nAfter.\n")
    v.refresh()
    v.finish()
    _settle(qtbot, v)
    assert [tex for _n, tex in _images(v)] == [INTEGRAL] and "After." in v.toPlainText()


class _HiDpiView(MarkdownView):
    def devicePixelRatioF(self) -> float:   # a 2× screen (offscreen has 1×)
        return 2.0


def test_on_a_hidpi_screen_formulas_have_twice_the_pixels_at_the_same_size(qtbot) -> None:
    v = _HiDpiView(theme="light")
    qtbot.addWidget(v)
    v.set_text(TEXT)
    _settle(qtbot, v)
    plain = _view(qtbot)
    plain.set_text(TEXT)
    _settle(qtbot, plain)
    for (name, _t), (name1, _t1) in zip(_images(v), _images(plain), strict=True):
        sharp, normal = _resource(v, name), _resource(plain, name1)
        assert sharp.devicePixelRatio() == 2.0
        assert abs(sharp.width() - 2 * normal.width()) <= 8 and abs(sharp.height() - 2 * normal.height()) <= 8
        logical = sharp.deviceIndependentSize()
        assert abs(logical.width() - normal.width()) <= 4                # laid out at the same logical size


def test_an_image_that_arrives_mid_stream_replaces_the_tex_and_the_stream_goes_on(qtbot) -> None:
    v = _view(qtbot)
    formula = r"\sum_{k=1}^{n} k = \frac{n(n+1)}{2}"        # not drawn by any other test: not in the cache
    v.append_text(f"Sum:\n\n$$\n{formula}\n$$\n\nThen a paragraph.\n\nAnd ")
    v.refresh()
    assert formula in v.toPlainText() and _images(v) == []   # TeX while the worker draws it
    assert v.math_pool().wait(timeout=120)
    v.append_text("the rest.\n")
    v.refresh()                                              # the stream goes on: the image comes in
    assert [tex for _n, tex in _images(v)] == [formula]
    assert v.toPlainText().endswith("Then a paragraph.\nAnd the rest.")
    v.finish()
    once = _view(qtbot)
    once.set_text(v.renderer.text)
    assert once.toPlainText() == v.toPlainText() and _images(once) == _images(v)


def test_replies_rendered_for_the_message_list_draw_formulas_too(qtbot) -> None:
    """The message list renders replies scrolling into view ahead of their widget (``RenderCache``)."""
    from app.core.conversation import Message, Role
    from app.ui.messages.pool import RenderCache

    msg = Message(Role.ASSISTANT, TEXT)
    msg.id = 7
    renderer = RenderCache().render(msg, "light")
    assert renderer.math is not None
    v = _view(qtbot)
    v.set_renderer(renderer)
    _settle(qtbot, v)
    assert [tex for _n, tex in _images(v)] == [EULER, INTEGRAL]
