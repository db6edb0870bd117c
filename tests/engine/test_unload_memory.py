"""Unload frees the model: the process's RSS goes back near where it was before the load (real bundled model)."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from app.bench._util import rss_mb
from app.engine.llama import LlamaEngine

pytestmark = [pytest.mark.model, pytest.mark.timeout(180)]


def test_unload_returns_the_memory_of_weights_and_kv_cache(bundled_model: Path) -> None:
    gc.collect()
    before = rss_mb()
    engine = LlamaEngine(bundled_model, n_ctx=4096)
    engine.load()
    engine.count_tokens("touch the vocabulary")
    engine._llm.eval(engine._llm.tokenize(b"Hello there, " * 20))    # weights paged in, KV cache used
    loaded = rss_mb()
    engine.unload()
    gc.collect()
    after = rss_mb()
    assert not engine.loaded
    assert loaded - before > 50, (before, loaded)          # the model really took memory …
    assert after - before < 0.25 * (loaded - before), (before, loaded, after)   # … and gave it back
