"""TeX math → PNG images (matplotlib's mathtext), off the loop, cached.

**What renders.** matplotlib's *mathtext* lays out a subset of TeX math, one line, no TeX installation
(https://matplotlib.org/stable/users/explain/text/mathtext.html): sub/superscripts, ``\\frac``/``\\dfrac``/
``\\tfrac``/``\\binom``, ``\\sqrt[n]{}``, Greek letters and most math symbols and operators (``\\int``, ``\\sum``,
``\\prod``, ``\\lim``, ``\\infty``, ``\\partial``, ``\\nabla``, arrows, relations, ``\\cdot``, ``\\times`` …),
accents (``\\hat``, ``\\bar``, ``\\vec``, ``\\dot``, ``\\tilde``, ``\\overline``), ``\\left``/``\\right``
delimiters, fonts (``\\mathrm``, ``\\mathbf``, ``\\mathit``, ``\\mathcal``, ``\\mathbb``, ``\\mathsf``,
``\\mathtt``, ``\\mathfrak``), ``\\text{}``, ``\\operatorname{}``, spacing (``\\,``, ``\\;``, ``\\quad``), and
``\\sin``-style function names. **Not** supported: environments (``\\begin{align}``, ``matrix``, ``cases``,
``array``), line breaks ``\\\\``, ``\\displaystyle``-only tricks, ``\\label``/``\\tag``, macros
(``\\newcommand``), colours, ``\\boxed``. Anything mathtext refuses (a ``ValueError`` from its parser) is shown
as its TeX source, never as an error — as is a formula whose layout runs past the deadline, and one holding a
character mathtext's fonts lack (Chinese or other non-Latin text in ``\\text{…}``: mathtext would draw a
box). mathtext has no display style: in ``$$…$$`` a ``\\frac`` is drawn as ``\\dfrac`` and the whole formula
:data:`DISPLAY_SCALE` larger.

**Off the loop.** Laying out a formula takes ~2-130 ms (the first one of a size loads fonts); a
:class:`MathPool` does it in a worker process with a deadline (:class:`~app.core.render.worker_pool.DeadlinePool`),
so the UI loop never waits: a formula not rendered yet shows as TeX, and the renderer re-renders its block once
the image is known (as for code colours). Results are kept by (TeX, display or inline, colour, font size,
device pixel ratio), so a reopened chat or a second view pays nothing. Without a pool (one-shot renders, tests,
tools) :class:`MathCache` renders in the caller.

**Images.** The PNG is drawn at the device pixel ratio (``dpr``) and sized in logical pixels
(:attr:`MathImage.width`/``height`` = pixels / ``dpr``), transparent, in one colour. An inline formula's image
is padded above or below (:func:`middle_split`) so that, placed with ``vertical-align: middle``, its baseline
sits on the text's (mathtext gives the formula's depth below its baseline). The HTML refers to it by
:attr:`MathImage.name` (``brook-math:<hash>``); the view resolves that name with :meth:`MathPool.image`.
"""

from __future__ import annotations

import hashlib
import io
import logging
import math
import os
import re
import sys
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from app.core.render.worker_pool import DeadlinePool, shared_pool

#: Seconds one formula may take in the worker before it is shown as TeX.
MATH_DEADLINE_S = 2.0
#: Scheme of the image names in the HTML (resolved by the view, never fetched).
MATH_SCHEME = "brook-math"
#: Display math (``$$…$$``) is drawn this much larger than the text.
DISPLAY_SCALE = 1.25
#: ``\frac`` (not ``\dfrac``/``\tfrac``): in display math it is drawn as ``\dfrac``, as TeX's display style would.
_FRAC = re.compile(r"\\frac(?![a-zA-Z])")
#: A formula longer than this (characters) is shown as TeX without trying (mathtext's layout is superlinear).
MAX_TEX_CHARS = 2_000

#: The text's font, in logical pixels: (size, ascent, descent, x-height), as Qt's ``QFontMetricsF`` gives them.
Font = tuple[float, float, float, float]
Key = tuple[str, bool, str, Font, float]  # (TeX, display, colour "#rrggbb", font, device pixel ratio)
#: The formula the worker draws at its start (``prepare_worker``) and ``warm_up`` asks for.
WARM_UP_KEY: Key = ("x^2", False, "#000000", (15.0, 14.0, 3.5, 8.0), 1.0)


@dataclass(frozen=True)
class MathImage:
    """A rendered formula: ``png`` (RGBA; ``b""`` when mathtext cannot lay it out: show the TeX), ``width`` and
    ``height`` in logical pixels, ``dpr`` the device pixel ratio it was drawn for, ``name`` what the HTML's
    ``<img src>`` holds."""

    name: str
    png: bytes
    width: int
    height: int
    dpr: float

    @property
    def ok(self) -> bool:
        """Whether there is an image (else the formula is shown as TeX)."""
        return bool(self.png)


def image_name(key: Key) -> str:
    """The ``brook-math:…`` name of a formula's image (a hash of its key: the same formula, style and size
    always get the same name)."""
    return f"{MATH_SCHEME}:{hashlib.sha1(repr(key).encode('utf-8')).hexdigest()[:20]}"


def _hex_rgb(color: str) -> tuple[int, int, int]:
    c = color.lstrip("#")
    if len(c) != 6:
        raise ValueError(f"expected a #rrggbb colour, got {color!r}")
    return int(c[0:2], 16), int(c[2:4], 16), int(c[4:6], 16)


def middle_split(above: float, depth: float, font: Font, scale: float = 1.0) -> tuple[float, float]:
    """How tall an inline image must be above and below the formula's baseline (device pixels, ≥ ``above``
    and ``depth``) so that Qt, placing it with ``vertical-align: middle``, puts that baseline on the text's.

    Qt (``QTextDocumentLayout::resizeInlineObject`` and ``QTextLine::draw``) gives a middle-aligned object of
    height H the ascent H/2 + x/4 and descent H/2 − x/4 (x: the x-height), takes the line's ascent and descent
    as the larger of those and the font's, and draws the object centred in the line: its middle lies
    (line ascent − line descent) / 2 above the baseline (measured here: within 1 px). ``font`` is in logical
    pixels, ``scale`` the device pixel ratio.
    """
    _px, f_ascent, f_descent, x_height = (v * scale for v in font)
    up, down = above, depth
    for _ in range(12):                       # the middle moves as the image grows: a few rounds settle it
        h = up + down
        line_up = max(f_ascent, h / 2 + x_height / 4)
        line_down = max(f_descent, h / 2 - x_height / 4)
        lift = line_up - line_down            # 2 × (the line's middle above the baseline)
        if up - down > lift + 0.25:
            down = up - lift
        elif up - down < lift - 0.25:
            up = down + lift
        else:
            break
    return up, down


#: The logger mathtext reports a character its fonts lack on ("… does not have a glyph for …").
_MATHTEXT_LOG = logging.getLogger("matplotlib.mathtext")


class _MissingGlyphs(logging.Handler):
    """Notes mathtext's "does not have a glyph" reports while one formula is laid out."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.seen = False

    def emit(self, record: logging.LogRecord) -> None:
        if "does not have a glyph" in record.getMessage():
            self.seen = True


def render_formula(tex: str, display: bool, color: str, font: Font, dpr: float) -> MathImage:
    """Lay ``tex`` (without dollars) out with mathtext and draw it as a PNG (see the module docstring).

    ``font``: the text's font in logical pixels (size, ascent, descent, x-height; display math is
    :data:`DISPLAY_SCALE` larger and not baseline-aligned); ``dpr``: device pixels per logical pixel. Returns a
    :class:`MathImage` whose ``png`` is ``b""`` when mathtext refuses the formula or its fonts lack one of its
    characters (mathtext would draw an empty box for it: Chinese in ``\\text{…}``, say). Imports matplotlib (Agg, no
    GUI): meant for the worker process, or for tools and tests.
    """
    key: Key = (tex, display, color, font, dpr)
    name = image_name(key)
    failed = MathImage(name, b"", 0, 0, dpr)
    source = " ".join(tex.split())          # TeX treats a newline as a space; mathtext wants one line
    if not source or len(source) > MAX_TEX_CHARS or "$" in source:
        return failed
    import numpy as np
    from matplotlib.font_manager import FontProperties
    from matplotlib.mathtext import MathTextParser
    from PIL import Image

    if display:          # mathtext has no display style: a display formula's fractions get their full size
        source = _FRAC.sub(r"\\dfrac", source)
    size = font[0] * (DISPLAY_SCALE if display else 1.0)
    missing = _MissingGlyphs()
    _MATHTEXT_LOG.addHandler(missing)
    try:
        parsed = MathTextParser("agg").parse(f"${source}$", dpi=72 * dpr, prop=FontProperties(size=size))
    except Exception:  # mathtext's ParseException (a ValueError) and any other failure of its layout
        return failed
    finally:
        _MATHTEXT_LOG.removeHandler(missing)
    if missing.seen:     # a character its fonts lack (Chinese in \text{…}) would be drawn as a box
        return failed
    alpha = np.asarray(parsed.image, dtype=np.uint8)
    if alpha.ndim != 2 or alpha.size == 0:
        return failed
    rows, cols = alpha.shape
    depth = min(float(rows), max(0.0, float(parsed.depth)))   # device px below the baseline
    pad_top = pad_bottom = 0
    if not display:
        up, down = middle_split(rows - depth, depth, font, dpr)
        pad_top, pad_bottom = round(up - (rows - depth)), round(down - depth)
    width = math.ceil(cols / dpr)
    height = math.ceil((rows + pad_top + pad_bottom) / dpr)
    full_w = max(cols, round(width * dpr))
    full_h = max(rows + pad_top + pad_bottom, round(height * dpr))
    extra = full_h - (rows + pad_top + pad_bottom)              # rounding up to whole logical pixels
    pad_top += extra // 2
    rgba = np.zeros((full_h, full_w, 4), dtype=np.uint8)
    rgba[..., 0], rgba[..., 1], rgba[..., 2] = _hex_rgb(color)
    rgba[pad_top : pad_top + rows, :cols, 3] = alpha
    buf = io.BytesIO()
    Image.fromarray(rgba, "RGBA").save(buf, "PNG")
    return MathImage(name, buf.getvalue(), width, height, dpr)


class MathPool(DeadlinePool[Key, MathImage]):
    """Renders formulas in a worker process (:func:`render_formula`, or ``handler`` named as
    ``"module:function"`` with its signature) with a deadline; shared by every view (:func:`default_math_pool`).
    :meth:`image` resolves an image name for the view."""

    def __init__(self, deadline_s: float = MATH_DEADLINE_S, max_entries: int = 2048,
                 handler: str = "app.core.render.math_render:render_formula",
                 init: str | None = "app.core.render.math_render:prepare_worker") -> None:
        super().__init__(handler, deadline_s, max_entries, name="brook-math", init=init)
        self._names: OrderedDict[str, Key] = OrderedDict()
        self._names_lock = threading.Lock()

    def fallback(self, key: Key) -> MathImage:
        """Past the deadline, or the layout failed: no image (the TeX is shown)."""
        return MathImage(image_name(key), b"", 0, 0, key[4])

    def request(self, key: Key) -> MathImage | None:
        """The formula's image if known (possibly one that failed), else None and it is queued (once)."""
        out = self.ask(key)
        if out is not None and out.ok:
            with self._names_lock:
                self._names[out.name] = key
                if len(self._names) > 4 * self._max:
                    self._names.popitem(last=False)
        return out

    def store(self, key: Key, image: MathImage) -> None:
        """Keep ``image``, drawn elsewhere (the render-ahead worker, :mod:`.render_ahead`), as the result of
        ``key``: the HTML that names it finds it (:meth:`image`), and no job draws it again."""
        self.put(key, image)
        if image.ok:
            with self._names_lock:
                self._names[image.name] = key
                if len(self._names) > 4 * self._max:
                    self._names.popitem(last=False)

    def image(self, name: str) -> MathImage | None:
        """The image an HTML ``<img src>`` names (one :meth:`request` returned), or None if it is unknown."""
        with self._names_lock:
            key = self._names.get(name)
        return self.lookup(key) if key is not None else None


class MathCache:
    """What a renderer asks for formulas: with a :class:`MathPool`, never renders in the caller (a formula not
    rendered yet is *pending*); without one, renders at once and keeps up to ``max_entries`` images.

    ``font``: the text's font in logical pixels (size, ascent, descent, x-height); ``dpr``: device pixel ratio.
    ``ValueError`` for a size or ratio that is not positive.
    """

    def __init__(self, font: Font, dpr: float = 1.0, pool: MathPool | None = None, max_entries: int = 256) -> None:
        if font[0] <= 0 or dpr <= 0:
            raise ValueError(f"font size and device pixel ratio must be positive (got {font[0]}, {dpr})")
        self.font: Font = tuple(round(float(v), 3) for v in font)  # type: ignore[assignment]
        self.dpr = float(dpr)
        self.pool = pool
        self._local: OrderedDict[Key, MathImage] = OrderedDict()
        self._max = max_entries

    def key(self, tex: str, display: bool, color: str) -> Key:
        """The cache key of a formula drawn in ``color`` with this cache's font and ratio."""
        return (tex, display, color, self.font, self.dpr)

    def get(self, tex: str, display: bool, color: str) -> tuple[MathImage | None, bool]:
        """``(image, pending)``: the image (``ok`` or failed) when known; ``(None, True)`` while the pool works."""
        key = self.key(tex, display, color)
        if self.pool is not None:
            out = self.pool.request(key)
            return out, out is None
        hit = self._local.get(key)
        if hit is None:
            hit = self._local[key] = render_formula(*key)
            if len(self._local) > self._max:
                self._local.popitem(last=False)
        return hit, False


def matplotlib_config_dir() -> Path | None:
    """Where the frozen app's matplotlib keeps its font cache: ``<user cache dir>/Brook/matplotlib-<bundle>``
    (``<bundle>``: a hash of the bundle's folder, so a moved bundle never reads font paths of another). None
    when not frozen: matplotlib's own default (``~/.config/matplotlib``) persists already. PyInstaller's
    matplotlib hook gives each process a new empty one, so each math worker rebuilt the font list (seconds,
    past the first formula's deadline)."""
    if not getattr(sys, "frozen", False):
        return None
    import platformdirs

    bundle = str(getattr(sys, "_MEIPASS", "") or Path(sys.executable).parent)
    tag = hashlib.sha256(bundle.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return Path(platformdirs.user_cache_dir("Brook", appauthor=False)) / f"matplotlib-{tag}"


def prepare_worker() -> None:
    """The math worker's start (``MathPool``'s ``init``, before its first job and outside its deadline): a
    persistent matplotlib config dir when frozen (:func:`matplotlib_config_dir`), then one formula drawn, which
    imports matplotlib and builds or reads its font cache and mathtext's fonts."""
    where = matplotlib_config_dir()
    if where is not None:
        try:
            where.mkdir(parents=True, exist_ok=True)
            os.environ["MPLCONFIGDIR"] = str(where)
        except OSError:       # a read-only home: PyInstaller's temporary folder stays
            pass
    render_formula(*WARM_UP_KEY)


def warm_up(pool: MathPool | None = None) -> None:
    """Start the math worker and have it draw one formula: it imports matplotlib and loads mathtext's fonts
    (~0.5–2 s of its own CPU), so the first formula of a reply is drawn at once. Never waits. The app does it
    while the model loads (``app.ui.messages.markdown_view.warm_up``)."""
    (pool or default_math_pool()).request(WARM_UP_KEY)


#: The process's shared pool (made on first use; its worker starts on the first formula).
default_math_pool = shared_pool(MathPool)
