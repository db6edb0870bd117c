"""The lexer pool: pygments runs in a worker process with a deadline; results are remembered."""

from __future__ import annotations

import time

import pytest

from app.core.render.lexer_pool import LexerPool
from app.core.render.markdown import IncrementalMarkdown, render_markdown

#: An rst fence body on which pygments' rst lexer backtracks exponentially (~7 s here, ×1.7 per backslash).
SLOW_RST = ":" + "\\" * 36 + "\n"


@pytest.fixture
def pool():
    p = LexerPool(deadline_s=1.0)
    yield p
    p.close()


def test_a_lexer_past_its_deadline_gives_plain_text_once(pool: LexerPool) -> None:
    assert pool.request("rst", "light", SLOW_RST) is None          # pending: the caller never waits
    assert pool.request("python", "light", "x = 1\n") is None
    assert pool.wait(timeout=120)
    assert pool.fallbacks == 1
    assert pool.result("rst", "light", SLOW_RST) == SLOW_RST        # plain text (nothing to escape here)
    assert "<span" in (pool.result("python", "light", "x = 1\n") or "")  # a fresh worker took the next job
    done = pool.completed
    assert pool.request("rst", "light", SLOW_RST) == SLOW_RST       # remembered: not lexed again
    assert pool.completed == done and pool.pending() == 0


def test_streamed_with_a_pool_equals_one_shot_once_colours_arrive(pool: LexerPool, corpus_dir) -> None:
    for path in sorted((corpus_dir / "answers").glob("*.md")):
        text = path.read_text(encoding="utf-8")
        md = IncrementalMarkdown(pool=pool)
        stable_seen: list[str] = []
        for i in range(0, len(text), 5):
            md.feed(text[i : i + 5])
            md.render()
            assert md.stable_blocks[: len(stable_seen)] == stable_seen, path.name  # never restyled while streaming
            stable_seen = list(md.stable_blocks)
        md.finish()
        while md.highlights_pending:
            assert pool.wait(timeout=120)
            md.render()
        assert md.html == render_markdown(text), path.name


def test_no_worker_is_started_once_the_process_exits(pool: LexerPool) -> None:
    """At exit (``wait_for_start``) a job asked later gets plain text and starts no worker process: a worker
    started while the interpreter finalises is left with half of its start-up data and prints a traceback."""
    pool.wait_for_start(5)
    assert pool.request("python", "light", "x = 1\n") is None
    assert pool.wait(timeout=120)
    assert pool.result("python", "light", "x = 1\n") == "x = 1\n"      # the fallback: plain text
    assert pool.fallbacks == 1                                           # no worker lexed it


def test_a_listener_hears_of_each_result_and_a_failing_one_stops_nothing(pool: LexerPool) -> None:
    heard: list[int] = []

    def listener() -> None:
        heard.append(pool.completed)          # called once the result is stored

    def broken() -> None:
        raise RuntimeError("a listener's bug")

    pool.add_listener(broken)
    pool.add_listener(listener)
    assert pool.request("python", "light", "a = 1\n") is None
    assert pool.request("python", "light", "b = 2\n") is None
    assert pool.wait(timeout=120)
    deadline = time.monotonic() + 60
    while len(heard) < 2 and time.monotonic() < deadline:    # the listener runs just after the result is stored
        time.sleep(0.01)
    assert heard == [1, 2]
    pool.remove_listener(listener)
    pool.remove_listener(listener)            # removing twice: nothing happens
    assert pool.request("python", "light", "c = 3\n") is None
    assert pool.wait(timeout=120)
    assert pool.result("python", "light", "c = 3\n") is not None
    assert heard == [1, 2]


def test_a_finished_text_fed_in_slices_does_not_hold_its_blocks_behind_pending_code(pool: LexerPool) -> None:
    code = "".join(f"held_{k} = {k} * {time.monotonic_ns()}\n" for k in range(5))     # never lexed before
    text = f"First.\n\n```python\n{code}```\n\n" + "".join(f"Paragraph {k} after the code.\n\n" for k in range(30))
    held, final = IncrementalMarkdown(pool=pool), IncrementalMarkdown(pool=pool, final_text=True)
    for md in (held, final):
        for i in range(0, len(text), 40):
            md.feed(text[i : i + 40])
            md.render()
    # a stream keeps the code block, and all after it, in its tail until the colours come (held, here while the
    # fresh pool's worker starts); a finished text makes them stable at once, not parsed again at every slice
    assert len(final.stable_blocks) > 25
    for md in (held, final):
        md.finish()
        while md.highlights_pending:
            assert pool.wait(timeout=120)
            md.render()
    assert final.html == held.html == render_markdown(text)
