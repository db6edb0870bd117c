"""Formulas as images (matplotlib's mathtext), off the loop, cached; TeX whenever an image cannot be had."""

from __future__ import annotations

import io
import os

import numpy as np
import pytest
from PIL import Image

from app.core.render.markdown import IncrementalMarkdown, render_markdown
from app.core.render.math_render import MathCache, MathPool, image_name, middle_split, render_formula

FONT = (15.0, 14.0, 3.5, 8.0)   # size, ascent, descent, x-height (logical px), like DejaVu Sans at 15 px
INTEGRAL = r"\int_0^1 x^2\,dx = \frac{1}{3}"
EULER = r"e^{i\pi}+1=0"
TEXT = f"Euler: ${EULER}$.\n\n$$\n{INTEGRAL}\n$$\n\nAfter.\n"
UNSUPPORTED = [r"\begin{align} a &= b \\ c &= d \end{align}", r"x^", r"a \\ b", r"\frac{1}", r"\newcommand{\R}{x}",
               r"\begin{pmatrix} 1 \end{pmatrix}", "x" * 3000]


def pixels(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGBA"))


@pytest.fixture
def pool():
    p = MathPool(deadline_s=30.0)
    yield p
    p.close()


def test_a_formula_is_drawn_in_its_colour_at_the_device_pixel_ratio() -> None:
    one = render_formula(INTEGRAL, True, "#1f2328", FONT, 1.0)
    two = render_formula(INTEGRAL, True, "#e6edf3", FONT, 2.0)
    assert one.ok and two.ok and one.name != two.name
    px1, px2 = pixels(one.png), pixels(two.png)
    assert px1.shape[:2] == (one.height, one.width)                  # logical size at ratio 1 …
    assert px2.shape[:2] == (2 * two.height, 2 * two.width)          # … and twice the pixels at ratio 2
    assert abs(two.width - one.width) <= 4 and abs(two.height - one.height) <= 4    # the same logical size
    inked = px2[px2[..., 3] > 128]
    assert len(inked) > 200 and (inked[:, :3] == (0xE6, 0xED, 0xF3)).all()   # the colour asked for
    assert (pixels(one.png)[px1[..., 3] > 128][:, :3] == (0x1F, 0x23, 0x28)).all()


@pytest.mark.parametrize("tex", UNSUPPORTED)
def test_what_mathtext_cannot_lay_out_is_no_image_and_no_exception(tex: str) -> None:
    out = render_formula(tex, False, "#1f2328", FONT, 1.0)
    assert not out.ok and out.png == b""
    html = render_markdown(f"See ${tex.replace(chr(10), ' ')}$ here.\n", math=MathCache(FONT))
    assert "<img" not in html


def test_inline_math_is_padded_so_its_baseline_sits_on_the_text() -> None:
    # Qt centres a middle-aligned image in the line; the split puts the formula's baseline on the text's
    ascent, descent, x = FONT[1], FONT[2], FONT[3]
    for above, depth in [(10.0, 0.0), (10.0, 4.0), (30.0, 12.0), (6.0, 8.0)]:
        up, down = middle_split(above, depth, FONT)
        assert up >= above - 0.01 and down >= depth - 0.01
        h = up + down
        line_up, line_down = max(ascent, h / 2 + x / 4), max(descent, h / 2 - x / 4)
        middle_above_baseline = (line_up - line_down) / 2
        assert abs((up - h / 2) - middle_above_baseline) <= 0.3


def test_streamed_equals_one_shot_with_images_at_any_chunking() -> None:
    math = MathCache(FONT)
    whole = render_markdown(TEXT, math=math)
    assert whole.count('<img src="brook-math:') == 2 and INTEGRAL not in whole.split("title=")[0]
    for size in (1, 3, 7, 50):
        md = IncrementalMarkdown(math=math)
        for i in range(0, len(TEXT), size):
            md.feed(TEXT[i : i + size])
            md.render()
        md.finish()
        assert md.html == whole


def test_the_pool_renders_off_the_caller_and_a_second_render_hits_the_cache(pool: MathPool) -> None:
    math = MathCache(FONT, 1.0, pool)
    md = IncrementalMarkdown(math=math)
    md.feed(TEXT)
    md.render()
    md.finish()
    assert md.highlights_pending and "<img" not in md.html and INTEGRAL in md.html   # TeX meanwhile
    assert pool.wait(timeout=120)
    md.render()
    assert not md.highlights_pending and md.restyled_from is not None
    assert md.html == render_markdown(TEXT, math=MathCache(FONT))                   # the same images
    done = pool.completed
    again = IncrementalMarkdown(math=MathCache(FONT, 1.0, pool))                    # a reopened chat
    again.feed(TEXT)
    again.finish()
    assert not again.highlights_pending and again.html == md.html
    assert pool.completed == done and pool.pending() == 0                           # nothing drawn again
    img = pool.image(image_name(math.key(EULER, False, "#1f2328")))
    assert img is not None and img.ok


def test_a_stable_block_shows_tex_until_its_image_arrives_while_streaming(pool: MathPool) -> None:
    """A block with a formula does not wait in the tail (the worker may be starting: the tail would grow): it is
    stable with its TeX, and re-rendered, while the stream goes on, once the image is there."""
    math = MathCache(FONT, 1.0, pool)
    md = IncrementalMarkdown(math=math)
    md.feed(f"$$\n{INTEGRAL}\n$$\n\nNext paragraph\n\nand more")
    md.render()
    assert md.highlights_pending and len(md.stable_blocks) == 1      # the formula is stable, as TeX
    assert INTEGRAL in md.stable_blocks[0] and "<img" not in md.stable_blocks[0]
    assert pool.wait(timeout=120)
    md.feed(" text")
    md.render()
    assert md.restyled_from == 0 and "<img" in md.stable_blocks[0] and not md.highlights_pending
    assert "Next paragraph" in md.html and "and more text" in md.tail_html
    md.finish()
    assert md.html == render_markdown(md.text, math=MathCache(FONT))


def test_a_hanging_render_falls_back_to_tex_within_the_deadline() -> None:
    slow = MathPool(deadline_s=0.5, handler="tests.helpers.slow:hang")
    try:
        md = IncrementalMarkdown(math=MathCache(FONT, 1.0, slow))
        md.feed(f"Inline ${EULER}$.\n")
        md.finish()                                  # returns at once: the caller never waits for the worker
        assert md.highlights_pending and slow.pending() == 1
        assert slow.wait(timeout=120)
        md.render()
        assert slow.fallbacks == 1 and not md.highlights_pending
        assert EULER in md.html and "<img" not in md.html                          # shown as TeX, for good
        done = slow.completed
        md2 = IncrementalMarkdown(math=MathCache(FONT, 1.0, slow))
        md2.feed(f"Inline ${EULER}$.\n")
        md2.finish()
        assert not md2.highlights_pending and slow.completed == done                 # remembered, not retried
    finally:
        slow.close()


def test_the_workers_start_up_work_runs_outside_the_first_jobs_deadline() -> None:
    """``init`` (fonts, caches) may take longer than a job's deadline: it runs once at the worker's start, and
    the first job is still answered in time."""
    from app.core.render.worker_pool import DeadlinePool

    class Pool(DeadlinePool[tuple[int], str]):
        def fallback(self, key: tuple[int]) -> str:
            return "fallback"

    pool = Pool("tests.helpers.slow:started", deadline_s=0.5, init="tests.helpers.slow:slow_start")
    try:
        assert pool.ask((1,)) is None
        assert pool.wait(timeout=120)
        assert pool.lookup((1,)) is True and pool.fallbacks == 0
    finally:
        pool.close()


def test_the_frozen_app_keeps_matplotlibs_font_cache(monkeypatch, tmp_path) -> None:
    """PyInstaller gives each frozen process an empty temporary MPLCONFIGDIR; the math worker uses one per
    bundle under the user's cache folder instead, so the font list is built once."""
    import sys

    from app.core.render import math_render

    assert math_render.matplotlib_config_dir() is None           # from source: matplotlib's own default
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("MPLCONFIGDIR", str(tmp_path / "pyinstaller-temp"))
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "_MEIPASS", str(tmp_path / "Brook" / "_internal"), raising=False)
    where = math_render.matplotlib_config_dir()
    assert where is not None and where.parent == tmp_path / "cache" / "Brook"
    math_render.prepare_worker()
    assert os.environ["MPLCONFIGDIR"] == str(where) and where.is_dir()
    monkeypatch.setattr(sys, "_MEIPASS", str(tmp_path / "moved" / "_internal"))
    assert math_render.matplotlib_config_dir() != where           # another bundle: another font list
