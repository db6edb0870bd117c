"""Formula images in a ``QTextDocument``: Qt's image for a ``brook-math:`` name, and TeX in copied text.

The HTML of a reply names each rendered formula ``<img src="brook-math:…" title="TeX">`` (see
:mod:`app.core.render.math_render`); the view hands Qt the image (:func:`formula_image`) and, when text is copied,
writes the formula's TeX where Qt would write an object character (:func:`text_with_tex`). :func:`math_cache`
says what a renderer draws formulas with (size, metrics, pixel ratio).
"""

from __future__ import annotations

from PySide6.QtCore import QUrl
from PySide6.QtGui import QFont, QFontInfo, QFontMetricsF, QImage, QTextCharFormat, QTextDocument

from app.core.render.math_render import MATH_SCHEME, MathCache, MathPool, default_math_pool


def math_cache(font: QFont, dpr: float) -> MathCache:
    """Formulas drawn by the shared math pool for text in ``font`` (its size and metrics in logical pixels) on
    a screen of device pixel ratio ``dpr`` (at least 1)."""
    fm = QFontMetricsF(font)
    px = text_pixel_size(float(QFontInfo(font).pixelSize()), fm.ascent() + fm.descent(), font.pointSizeF())
    return MathCache((px, fm.ascent(), fm.descent(), fm.xHeight()), max(1.0, dpr), default_math_pool())


#: The text size (logical px) when Qt knows none: a system without any font gives -1 and metrics of 0.
FALLBACK_PIXEL_SIZE = 16.0


def text_pixel_size(pixel_size: float, line_height: float, point_size: float) -> float:
    """The text's size in logical pixels: Qt's ``QFontInfo.pixelSize()`` when positive, else the line's height
    (ascent + descent), else the point size at 96 dpi, else ``FALLBACK_PIXEL_SIZE``. (Without any font
    installed Qt answers -1 for the pixel size, and formulas must still be drawn, not raise.)"""
    for px in (pixel_size, line_height, point_size * 96.0 / 72.0):
        if px > 0:
            return px
    return FALLBACK_PIXEL_SIZE


def formula_image(pool: MathPool, name: QUrl) -> QImage | None:
    """The image of the formula ``name`` (``brook-math:…``) at its device pixel ratio, or None (not a formula's
    name, or unknown to ``pool``)."""
    if name.scheme() != MATH_SCHEME:
        return None
    img = pool.image(name.toString())
    if img is None or not img.ok:
        return None
    out = QImage.fromData(img.png, "PNG")
    out.setDevicePixelRatio(img.dpr)
    return out


def text_with_tex(doc: QTextDocument, start: int, end: int) -> str | None:
    """The plain text of ``doc`` from ``start`` to ``end`` with each formula image written as its TeX (``$…$``
    inline, ``$$…$$`` display); paragraphs and table cells end with a newline, as in Qt's own plain text. None
    when the range holds no formula (Qt's own text is right then)."""
    block = doc.findBlock(start)
    lines: list[str] = []
    found = False
    while block.isValid() and block.position() < end:
        parts: list[str] = []
        it = block.begin()
        while not it.atEnd():
            frag = it.fragment()
            it += 1
            f_start = frag.position()
            lo, hi = max(start, f_start), min(end, f_start + frag.length())
            if lo >= hi:
                continue
            fmt = frag.charFormat()
            if fmt.isImageFormat() and fmt.toImageFormat().name().startswith(MATH_SCHEME + ":"):
                inline = fmt.verticalAlignment() == QTextCharFormat.VerticalAlignment.AlignMiddle
                parts.append(f"${fmt.toolTip()}$" if inline else f"$${fmt.toolTip()}$$")
                found = True
            else:
                parts.append(frag.text()[lo - f_start : hi - f_start])
        lines.append("".join(parts))
        block = block.next()
    if not found:
        return None
    return "\n".join(lines).replace("\u2028", "\n").replace("\u00a0", " ")
