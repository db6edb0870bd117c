"""Finished replies rendered in a worker process: markdown → HTML, code colours included, off the UI loop.

A long chat scrolled to a screen it has not shown yet waits for each reply there: markdown → HTML (15-60 ms of
the UI thread for a 2-8 KB reply with code and a table), then the Qt document build (35-55 ms), then the code
colours from the lexer pool. Measured on ``python -m app.bench history --pairs 1000`` (2 cores), the render was
a third of the wait, and it ran on the same thread as the build, after it or before it, never beside it.

So the message list asks an :class:`AheadPool` for the render of a reply the moment it shows its plain-text
preview (during the scroll step): the worker renders it on the other core while the list waits for the scrolling
to pause, and the list then only builds the documents. The worker lexes code itself (pygments in the worker,
under the job's deadline), so the render arrives with its colours: nothing is shown plain, then coloured.

The result is the finished :class:`~app.core.render.markdown.IncrementalMarkdown` itself (pickled back by the
pool's pipe, ~0.2 ms to load a 7 KB reply's), equal to the UI's own render once its colours arrived. A reply's
formulas come with their images, drawn in the worker for the view's font (the key says which) and handed to the
UI's math pool (``MathPool.store``), which the view asks for the images its HTML names. When the worker runs
past :data:`AHEAD_DEADLINE_S` (a backtracking lexer, a pathological formula) it answers the fallback, ``False``,
and the list renders the reply itself, as it does while the worker starts (~1-2 s: matplotlib's fonts).

The machinery (one supervisor thread feeding the worker one job at a time, the deadline, the LRU of results) is
:class:`~app.core.render.worker_pool.DeadlinePool`; :meth:`~.worker_pool.DeadlinePool.retain` drops jobs for
replies the person has scrolled past before the worker reached them.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from app.core.render.lexer_pool import lex_segment
from app.core.render.worker_pool import DeadlinePool, shared_pool

if TYPE_CHECKING:
    from app.core.render.markdown import IncrementalMarkdown
    from app.core.render.math_render import Font, MathCache, MathImage
    from app.core.render.math_render import Key as MathKey

__all__ = ["AHEAD_DEADLINE_S", "AheadPool", "default_ahead_pool", "render_finished"]

#: Seconds the worker may spend on one reply (the list renders it itself after that; a 7 KB reply takes 15-60 ms).
AHEAD_DEADLINE_S = 2.0
#: How much the worker lowers its priority (``os.nice``; POSIX): rendering ahead must not take a core from the window.
AHEAD_NICE = 5
#: Renders the pool keeps after delivering them (the list keeps its own, ``RenderCache``).
AHEAD_ENTRIES = 32

#: (theme, the reply's text, the text's font and the screen's pixel ratio as ``MathCache`` keys them)
Key = tuple[str, str, "Font", float]
#: The finished render and the formula images it names (drawn here: ``MathPool.store`` gives them to the UI's)
Rendered = tuple["IncrementalMarkdown", list[tuple["MathKey", "MathImage"]]]
Result = Rendered | bool


class _JobMath:
    """The worker's formulas for one job: drawn by a ``MathCache`` the worker keeps for that font (a formula seen
    in an earlier reply is not drawn again), noting the images this job's HTML names. Pickled back (inside the
    render) as an empty ``MathCache`` of the same font, not the worker's images."""

    pool = None

    def __init__(self, shared: MathCache) -> None:
        self.shared = shared
        self.font = shared.font
        self.dpr = shared.dpr
        self.used: dict[MathKey, MathImage] = {}

    def get(self, tex: str, display: bool, color: str) -> tuple[MathImage | None, bool]:
        img, pending = self.shared.get(tex, display, color)
        if img is not None:
            self.used[self.shared.key(tex, display, color)] = img
        return img, pending

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self.shared), (self.font, self.dpr))


def _nothing() -> None:
    return None


class _Lexer:
    """The worker's lexer, as a ``LexerPool`` for its renderers: pygments here, at once, segments kept across
    jobs (a reply whose code differs from an earlier one's in a line lexes that segment only, as the UI's lexer
    pool would). Pickled back (inside the render) as None: the render holds nothing pending."""

    completed = 0

    def __init__(self, max_entries: int = 4096) -> None:
        self._data: OrderedDict[tuple[str, str, str], str] = OrderedDict()
        self._max = max_entries

    def request(self, lang: str, theme: str, code: str) -> str:
        key = (lang, theme, code)
        hit = self._data.get(key)
        if hit is None:
            hit = self._data[key] = lex_segment(lang, theme, code)
            if len(self._data) > self._max:
                self._data.popitem(last=False)
        else:
            self._data.move_to_end(key)
        return hit

    def __reduce__(self) -> tuple[Any, ...]:
        return (_nothing, ())


_MATH: dict[tuple[Font, float], MathCache] = {}
_LEXER = _Lexer()


def render_finished(theme: str, text: str, font: Font, dpr: float) -> Rendered | None:
    """In the worker: the finished render of ``text`` in ``theme`` (``final_text``; code lexed and formulas drawn
    here, for ``font`` at ``dpr``), with the formula images it names; None if some code is still pending (the
    pool then answers the fallback)."""
    from app.core.render.markdown import IncrementalMarkdown
    from app.core.render.math_render import MathCache

    shared = _MATH.get((font, dpr))
    if shared is None:
        shared = _MATH[(font, dpr)] = MathCache(font, dpr, max_entries=4096)   # no pool: drawn here
    math = _JobMath(shared)
    md = IncrementalMarkdown(theme=theme, pool=_LEXER, math=math, final_text=True)   # type: ignore[arg-type]
    md.feed(text)
    md.finish()
    if md.highlights_pending:
        return None
    return md, list(math.used.items())


def warm() -> None:
    """In the worker, once before its first job: lower its priority (``AHEAD_NICE``), import the renderer, a
    common lexer and matplotlib's mathtext (else the first job pays 0.5-2 s of imports and font loading)."""
    from app.core.render.math_render import WARM_UP_KEY, prepare_worker

    if hasattr(os, "nice"):      # background work: on a busy machine the window's thread goes first
        os.nice(AHEAD_NICE)
    prepare_worker()
    render_finished("light", "# a\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```python\nx = 1\n```\n",
                    WARM_UP_KEY[3], WARM_UP_KEY[4])


class AheadPool(DeadlinePool[Key, Result]):
    """Renders finished replies in a worker process; never blocks its callers (except :meth:`wait`).

    A job's key is ``(theme, text, font, dpr)`` (the last two as ``MathCache`` keys formulas); its result the
    finished ``IncrementalMarkdown`` and its formula images (:func:`render_finished`), or ``False`` (the fallback:
    a job past ``deadline_s``, a worker that died): the caller renders it itself."""

    def __init__(self, deadline_s: float = AHEAD_DEADLINE_S, max_entries: int = AHEAD_ENTRIES) -> None:
        super().__init__("app.core.render.render_ahead:render_finished", deadline_s, max_entries,
                         name="brook-ahead", init="app.core.render.render_ahead:warm")

    def fallback(self, key: Key) -> Result:
        return False


#: The process's shared pool (made on first use; its thread starts with the message list, its worker on the first
#: job).
default_ahead_pool = shared_pool(AheadPool)
