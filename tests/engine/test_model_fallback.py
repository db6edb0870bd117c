"""A remembered model that is gone falls back to the bundled one with a notice (issue 10, item 7).

The whole kind: the model in the settings can no longer be opened — moved or deleted, a folder in its place, an
unreadable or non-GGUF file, a header cut short — while the user did not ask for it on the command line. Covered:
each of those through ``choose_model``; the real app started with such a setting (it answers on the bundled
model and names the missing file); and the load error of a truncated model reads as one sentence (no ".).").
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.engine.base import InvalidModelError
from app.engine.llama import LlamaEngine
from app.engine.models import bundled_model_path, choose_model

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("kind", ["moved", "folder", "not gguf", "short header"])
def test_a_remembered_model_that_cannot_be_opened_falls_back(tmp_path: Path, kind: str) -> None:
    bad = tmp_path / "my-model.gguf"
    if kind == "folder":
        bad.mkdir()
    elif kind == "not gguf":
        bad.write_bytes(b"<html>a download error page</html>")
    elif kind == "short header":
        bad.write_bytes(b"GGUF\x03\x00")
    path, notice = choose_model(None, str(bad))
    assert path == bundled_model_path()
    assert notice is not None and str(bad) in notice and "bundled model" in notice and "Open model" in notice
    assert ".)." not in notice


def test_an_explicit_or_good_model_is_kept(tmp_path: Path, bundled_model: Path) -> None:
    assert choose_model(str(tmp_path / "asked-for.gguf"), None) == (tmp_path / "asked-for.gguf", None)
    assert choose_model(None, str(bundled_model)) == (bundled_model, None)
    assert choose_model(None, None) == (bundled_model_path(), None)


def test_a_truncated_model_error_is_one_sentence(tmp_path: Path, bundled_model: Path) -> None:
    truncated = tmp_path / "broken.gguf"
    truncated.write_bytes(bundled_model.read_bytes()[:1_000_000])
    with pytest.raises(InvalidModelError) as info:
        LlamaEngine(truncated).load()
    text = str(info.value)
    assert ".)." not in text and text.endswith(").")
    assert text.count("broken.gguf") <= 2


@pytest.mark.model
@pytest.mark.timeout(240)
def test_the_app_starts_on_the_bundled_model_when_the_remembered_one_moved(tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.mkdir()
    moved = tmp_path / "Models" / "llama-3-8b.Q4_K_M.gguf"
    (config / "settings.json").write_text(json.dumps({"model_path": str(moved), "watchdog_threshold_ms": 0}))
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", BROOK_DATA_DIR=str(tmp_path / "data"),
               BROOK_CONFIG_DIR=str(config))
    proc = subprocess.run([sys.executable, str(ROOT / "main.py"), "--smoke-test"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=230)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["model"] == bundled_model_path().stem and out["reply_chars"] > 0
    assert str(moved) in proc.stderr and "bundled model" in proc.stderr
    assert json.loads((config / "settings.json").read_text())["model_path"] == str(moved)   # not forgotten
