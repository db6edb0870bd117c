"""Loading a GGUF reports llama.cpp's own progress, and a Cancel really stops the load: llama.cpp aborts its
loader when our progress callback says so, nothing stays loaded and the memory goes back (real bundled model).
Cancellation is deterministic: it comes from inside a given progress callback, never after a delay."""

from __future__ import annotations

import asyncio
import gc
from pathlib import Path

import pytest

from app.bench._util import rss_mb
from app.core.chat.session import ChatSession, ModelState, NoticeKind, SessionListener
from app.core.errors import LoadCancelled
from app.engine.llama import LlamaEngine

pytestmark = [pytest.mark.model, pytest.mark.timeout(180)]


def test_load_reports_llama_cpps_progress_up_to_one(bundled_model: Path) -> None:
    seen: list[float] = []
    engine = LlamaEngine(bundled_model, n_ctx=512)
    engine.load(seen.append)
    try:
        assert engine.loaded
        inside = [f for f in seen if 0.0 < f < 1.0]
        assert len(inside) > 10, seen[:20]                # llama.cpp's loader, not only our 0 and 1
        assert seen == sorted(seen) and seen[0] == 0.0 and seen[-1] == 1.0
    finally:
        engine.unload()


def _cancel_at(call: int) -> tuple[list[float], object]:
    seen: list[float] = []

    def progress(fraction: float) -> None:
        seen.append(fraction)
        if len(seen) >= call:
            raise LoadCancelled("test")
    return seen, progress


def test_cancel_in_llama_cpps_first_callback_aborts_the_load_and_frees_it(bundled_model: Path) -> None:
    gc.collect()
    before = rss_mb()
    engine = LlamaEngine(bundled_model, n_ctx=4096)
    seen, progress = _cancel_at(2)           # call 1: ours (0.0) before llama.cpp starts; call 2: llama.cpp's first
    with pytest.raises(LoadCancelled):
        engine.load(progress)                 # type: ignore[arg-type]
    gc.collect()
    cancelled = rss_mb()
    assert not engine.loaded
    assert len(seen) == 2, seen               # llama.cpp stopped calling: the loader was aborted, not finished
    # scale: what a finished load of the same model takes
    engine.load()
    engine._llm.eval(engine._llm.tokenize(b"Hello there, " * 20))
    loaded = rss_mb()
    engine.unload()
    assert loaded - before > 50, (before, loaded)
    assert cancelled - before < 0.25 * (loaded - before), (before, cancelled, loaded)


def test_cancel_after_llama_cpps_last_callback_frees_the_finished_model(bundled_model: Path) -> None:
    engine = LlamaEngine(bundled_model, n_ctx=4096)
    probe: list[float] = []
    engine.load(probe.append)                 # how many reports a whole load makes, and what it takes
    engine._llm.eval(engine._llm.tokenize(b"Hello there, " * 20))
    loaded = rss_mb()
    engine.unload()
    gc.collect()
    before = rss_mb()
    assert probe[-2:] == [1.0, 1.0]           # llama.cpp's last report, then ours once the model is ready
    seen, progress = _cancel_at(len(probe))   # ours: after the model and its context exist
    with pytest.raises(LoadCancelled):
        engine.load(progress)                 # type: ignore[arg-type]
    gc.collect()
    after = rss_mb()
    assert not engine.loaded and seen[-1] == 1.0
    assert loaded - before > 50, (before, loaded)
    assert after - before < 0.25 * (loaded - before), (before, after, loaded)


class Notes(SessionListener):
    def __init__(self) -> None:
        self.notices: list[str] = []
        self.states: list[ModelState] = []

    def notice(self, text: str, kind: NoticeKind) -> None:
        self.notices.append(text)

    def model_state_changed(self, state: ModelState) -> None:
        self.states.append(state)


def test_a_cancelled_switch_keeps_the_old_model(bundled_model: Path, tmp_path: Path) -> None:
    async def main() -> None:
        notes = Notes()
        old = LlamaEngine(bundled_model, n_ctx=512)
        session = ChatSession(old, listener=notes)
        assert await session.load()

        class CancelledFromItsFirstReport(LlamaEngine):
            """A Cancel pressed while llama.cpp loads: ``cancel_load`` from llama.cpp's first report."""

            def load(self, progress=None):  # type: ignore[no-untyped-def]
                calls = []

                def report(fraction: float) -> None:
                    calls.append(fraction)
                    if len(calls) == 2:
                        assert session.cancel_load()
                    progress(fraction)
                super().load(report)

        new = CancelledFromItsFirstReport(bundled_model, n_ctx=1024)
        assert not await session.switch_engine(new)
        assert session.engine is old and old.loaded and not new.loaded
        assert session.model_state is ModelState.IDLE and not session.cancel_load()
        assert notes.notices == [f"Kept {old.name}: loading {new.name} was cancelled."]
        old.unload()

    asyncio.run(main())
