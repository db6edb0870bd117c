"""Unloading while another thread tokenizes (the context meter, an attachment's count) waits for that call instead
of freeing the model under it (a use-after-free: the whole app died with a segmentation fault). Real bundled
model; the race runs in a child process so that a crash fails the test instead of ending the run."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest

from app.engine.base import EngineNotLoadedError
from app.engine.llama import LlamaEngine

pytestmark = [pytest.mark.model, pytest.mark.timeout(240)]
ROOT = Path(__file__).resolve().parents[2]

RACE = """
import sys, threading, time
from app.engine.base import EngineNotLoadedError
from app.engine.llama import LlamaEngine

engine = LlamaEngine(sys.argv[1], n_ctx=512)
words = "word " * 20000                       # ~50 ms per count: unload lands in the middle of one
for round_ in range(4):
    engine.load()
    counting, counts, ended = threading.Event(), [], []

    def count():
        try:
            while True:
                counts.append(engine.count_tokens(f"{len(counts)} {words}"))   # new text: no cached count
                counting.set()
        except EngineNotLoadedError:
            ended.append("not loaded")

    worker = threading.Thread(target=count)
    worker.start()
    counting.wait()                          # counting runs: unload lands in the middle of a count
    time.sleep(0.05)
    engine.unload()
    worker.join()
    print(round_, counts[0], ended[0], flush=True)
"""


def test_unload_waits_for_a_running_token_count(bundled_model: Path) -> None:
    done = subprocess.run([sys.executable, "-c", RACE, str(bundled_model)], cwd=ROOT, capture_output=True,
                          text=True, timeout=200)
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    lines = done.stdout.split("\n")[:-1]
    assert len(lines) == 4, done.stdout
    for line in lines:
        _, count, ended = line.split(" ", 2)
        assert int(count) >= 20000 and ended == "not loaded", line


def test_unload_blocks_until_the_reader_returns_and_later_reads_are_refused(bundled_model: Path) -> None:
    engine = LlamaEngine(bundled_model, n_ctx=512)
    engine.load()
    unloaded = threading.Event()
    with engine._reading() as chat:
        unloader = threading.Thread(target=lambda: (engine.unload(), unloaded.set()))
        unloader.start()
        unloader.join(0.3)
        assert not unloaded.is_set()                     # still waiting: the model is in use
        assert chat.text_tokens("still works")           # and using it is safe
    unloader.join()
    assert unloaded.is_set() and not engine.loaded
    with pytest.raises(EngineNotLoadedError):
        engine.count_tokens("after")
    assert engine.runtime() == {}
