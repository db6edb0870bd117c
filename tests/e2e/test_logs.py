"""The log file stays small (issue 10, item 9).

The whole kind: any library logging at DEBUG/INFO (markdown-it traces every rule it tries; asyncio, PIL,
httpx, …) must not reach the file unless ``--debug``; the file rotates instead of growing without limit.
Covered: a real reply on the bundled model through the real window (``--smoke-test``: model load, a
200-token reply with code rendered by markdown-it and pygments) adds < 2 KB; third-party debug/info records
are dropped while Brook's own INFO and every WARNING are kept; the file handler rotates.
"""

from __future__ import annotations

import json
import logging
import logging.handlers
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.logs import MAX_BYTES, setup_logging

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def restore_logging() -> Iterator[None]:
    root = logging.getLogger()
    saved = (root.level, list(root.handlers), logging.getLogger("brook").level)
    yield
    for h in list(root.handlers):
        if h not in saved[1]:
            root.removeHandler(h)
            h.close()
    root.setLevel(saved[0])
    logging.getLogger("brook").setLevel(saved[2])


def test_third_party_chatter_stays_out_of_the_file(tmp_path: Path, restore_logging: None) -> None:
    path = setup_logging(False, tmp_path)
    assert path == tmp_path / "brook.log"
    logging.getLogger("markdown_it.rules_block.code").debug("entering code: StateBlock(line=0,level=0,tokens=0)")
    logging.getLogger("asyncio").info("poll took 12 ms")
    logging.getLogger("brook.engine.llama").info("loaded a model")
    logging.getLogger("brook.generation").debug("reply 1 timing")
    logging.getLogger("PIL").warning("a real warning")
    setup_logging(False, tmp_path)                   # idempotent: no second file handler
    for h in logging.getLogger().handlers:
        h.flush()
    text = path.read_text("utf-8")
    assert "loaded a model" in text and "a real warning" in text
    assert "entering code" not in text and "poll took" not in text and "reply 1 timing" not in text
    files = [h for h in logging.getLogger().handlers
             if isinstance(h, logging.FileHandler) and Path(h.baseFilename).parent == tmp_path]
    assert len(files) == 1 and isinstance(files[0], logging.handlers.RotatingFileHandler)
    assert files[0].maxBytes == MAX_BYTES


def test_debug_lets_everything_through(tmp_path: Path, restore_logging: None) -> None:
    path = setup_logging(True, tmp_path)
    assert path is not None
    logging.getLogger("markdown_it.x").debug("trace line")
    logging.getLogger("brook.generation").debug("reply 1 timing")
    for h in logging.getLogger().handlers:
        h.flush()
    text = path.read_text("utf-8")
    assert "trace line" in text and "reply 1 timing" in text


@pytest.mark.model
@pytest.mark.timeout(240)
def test_a_reply_adds_less_than_2_kb(tmp_path: Path) -> None:
    # The loop watchdog (settings: watchdog_threshold_ms) logs a stack per real stall, at most one per its
    # min_interval_s: a deliberate diagnostic whose stalls depend on how busy this machine is, so it is off here.
    (tmp_path / "config").mkdir(exist_ok=True)
    (tmp_path / "config" / "settings.json").write_text('{"watchdog_threshold_ms": 0}', "utf-8")
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", BROOK_DATA_DIR=str(tmp_path / "data"),
               BROOK_CONFIG_DIR=str(tmp_path / "config"))
    # Event-loop stall reports (a WARNING with a stack) depend on how busy the machine is, not on the reply:
    # the watchdog is off here and tested on its own (tests/core/streaming/test_watchdog.py).
    (tmp_path / "config").mkdir(exist_ok=True)
    (tmp_path / "config" / "settings.json").write_text(json.dumps({"watchdog_threshold_ms": 0}), "utf-8")
    proc = subprocess.run([sys.executable, str(ROOT / "main.py"), "--smoke-test"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=230)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["chunks"] >= 20 and out["code_blocks"] >= 1          # a real reply, rendered
    log = tmp_path / "data" / "logs" / "brook.log"
    assert log.exists()
    assert log.stat().st_size < 2048, log.read_text("utf-8")[:3000]
