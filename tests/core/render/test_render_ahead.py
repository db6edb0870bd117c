"""Finished replies rendered in a worker process (app/core/render/render_ahead.py): the render equals the UI's own
once its colours and formulas arrived, it brings the formula images its HTML names, a job past the deadline
answers the fallback, and jobs nobody waits for any more are dropped (``DeadlinePool.retain``)."""

from __future__ import annotations

import re

import pytest

from app.core.render.lexer_pool import LexerPool
from app.core.render.markdown import IncrementalMarkdown, render_markdown
from app.core.render.math_render import WARM_UP_KEY, MathCache, MathPool, image_name, render_formula
from app.core.render.render_ahead import AheadPool, render_finished

FONT, DPR = WARM_UP_KEY[3], WARM_UP_KEY[4]
#: An rst fence body on which pygments' rst lexer backtracks exponentially (~7 s here).
SLOW_RST = ":" + "\\" * 36 + "\n"
TABLE = "| n | square |\n|---:|---:|\n" + "".join(f"| {k} | {k * k} |\n" for k in range(30))


@pytest.fixture(scope="module")
def pools():
    ahead, lexer, math = AheadPool(), LexerPool(), MathPool()
    yield ahead, lexer, math
    for p in (ahead, lexer, math):
        p.close()


def _ui_render(text: str, lexer: LexerPool, math: MathPool) -> IncrementalMarkdown:
    """The render the UI makes of a finished reply: code and formulas from the worker pools, waited for."""
    md = IncrementalMarkdown(theme="light", pool=lexer, math=MathCache(FONT, DPR, math), final_text=True)
    md.feed(text)
    md.finish()
    while md.highlights_pending:
        assert lexer.wait(timeout=120) and math.wait(timeout=120)
        md.render()
    return md


def test_the_workers_render_equals_the_uis_with_the_images_it_names(pools, corpus_dir) -> None:
    ahead, lexer, math = pools
    texts = [p.read_text(encoding="utf-8") + "\n\n" + TABLE for p in sorted((corpus_dir / "answers").glob("*.md"))]
    keys = [("light", t, FONT, DPR) for t in texts]
    for key in keys:
        assert ahead.ask(key) is None                  # never waits: queued
    assert ahead.wait(timeout=180)
    formulas = 0
    for key, text in zip(keys, texts, strict=True):
        out = ahead.lookup(key)
        assert isinstance(out, tuple), text[:40]
        md, images = out
        assert md.finished and not md.highlights_pending
        assert md.html == _ui_render(text, lexer, math).html
        named = set(re.findall(r'src="(brook-math:[^"]+)"', md.html))
        assert named == {img.name for _k, img in images if img.ok}
        for k, img in images:                          # each image is the one its key draws
            assert img.name == image_name(k) and k[3] == FONT
        formulas += len(named)
    assert formulas > 3                                # the corpus writes formulas: they were drawn and named


def test_a_render_pickled_back_holds_no_worker_state() -> None:
    import pickle

    out = render_finished("light", "Code:\n\n```python\nx = 1\n```\n\nA formula: $x^2$.\n", FONT, DPR)
    assert out is not None
    md = pickle.loads(pickle.dumps(out[0]))
    assert md.html == out[0].html
    assert isinstance(md.math, MathCache) and md.math.pool is None and md.math.font == FONT
    assert md._pool is None                            # the worker's lexer is not pickled back


def test_a_reply_past_the_deadline_answers_the_fallback() -> None:
    pool = AheadPool(deadline_s=1.0)
    try:
        key = ("light", f"Slow:\n\n```rst\n{SLOW_RST}```\n", FONT, DPR)
        quick = ("light", "Quick: **yes**.\n", FONT, DPR)
        pool.ask(key)
        pool.ask(quick)
        assert pool.wait(timeout=180)
        assert pool.lookup(key) is False               # the list renders it itself
        quick_out = pool.lookup(quick)                 # a fresh worker took the next job
        assert isinstance(quick_out, tuple) and quick_out[0].html == render_markdown("Quick: **yes**.\n")
    finally:
        pool.close()


def test_retain_drops_the_queued_jobs_nobody_waits_for() -> None:
    pool = LexerPool(deadline_s=1.0)
    try:
        slow, a, b = ("rst", "light", SLOW_RST), ("python", "light", "a = 1\n"), ("python", "light", "b = 2\n")
        for key in (slow, a, b):
            pool.ask(key)
        pool.retain({slow, b})                         # the worker is on `slow` (≥ 1 s): `a` is still queued
        assert pool.wait(timeout=120)
        assert pool.lookup(a) is None                  # dropped, never lexed
        lexed = pool.lookup(b)
        assert lexed is not None and "<span" in lexed
        assert pool.ask(a) is None and pool.wait(timeout=120)    # asked again: done this time
        lexed = pool.lookup(a)
        assert lexed is not None and "<span" in lexed
    finally:
        pool.close()


def test_an_image_stored_in_the_math_pool_is_found_by_its_name_and_not_drawn_again() -> None:
    pool = MathPool()
    try:
        key = ("a^2 + b^2", False, "#000000", FONT, DPR)
        img = render_formula(*key)
        assert img.ok
        pool.store(key, img)
        assert pool.image(img.name) is img
        assert pool.request(key) is img and pool.pending() == 0     # no job: the result is there
    finally:
        pool.close()
