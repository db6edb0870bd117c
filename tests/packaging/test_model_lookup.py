"""``bundled_model_path()``: one lookup for the source install (package metadata) and the frozen bundle
(``sys._MEIPASS/models``, no metadata)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from app.engine.base import ModelNotFoundError
from app.engine.models import BUNDLED_MODEL_DIR, bundle_dir, bundled_model_path


def _freeze(monkeypatch: pytest.MonkeyPatch, meipass: Path) -> None:
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "_MEIPASS", str(meipass), raising=False)


def test_source_install_finds_the_model_through_package_metadata(bundled_model):
    assert bundle_dir() is None
    assert bundled_model_path() == bundled_model
    assert bundled_model.suffix == ".gguf" and bundled_model.is_file()


def test_frozen_finds_the_model_in_the_bundle(tmp_path, monkeypatch):
    model = tmp_path / BUNDLED_MODEL_DIR / "SmolLM2-135M-Instruct.Q4_1.gguf"
    model.parent.mkdir()
    model.write_bytes(b"GGUF" + bytes(20))
    _freeze(monkeypatch, tmp_path)
    # the frozen app has no dist-info: package metadata must not be consulted
    monkeypatch.setattr("importlib.metadata.files", lambda _name: pytest.fail("metadata consulted when frozen"))
    assert bundle_dir() == tmp_path
    assert bundled_model_path() == model


def test_frozen_without_the_model_says_what_to_do(tmp_path, monkeypatch):
    (tmp_path / BUNDLED_MODEL_DIR).mkdir()
    _freeze(monkeypatch, tmp_path)
    with pytest.raises(ModelNotFoundError, match=r"bundled model is missing .*Reinstall Brook, or open a GGUF"):
        bundled_model_path()
