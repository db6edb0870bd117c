"""Model library: GGUF headers read without loading weights; broken files listed with the reason; cache."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from app.engine.library import LibraryCache, read_model_info, scan_models

gguf = pytest.importorskip("gguf")


def write_gguf(path: Path, *, arch: str = "llama", tensors: bool = True, template: bool = True) -> None:
    """A small but real GGUF file (llama.cpp's own writer): metadata and two F32 tensors (3,000 + 96 elements)."""
    w = gguf.GGUFWriter(str(path), arch)
    w.add_name("Tiny Test Model")
    w.add_context_length(2048)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_Q8_0)
    if template:
        w.add_chat_template("{% for m in messages %}{{ m.content }}{% endfor %}")
    if tensors:
        w.add_tensor("token_embd.weight", np.ones((100, 30), dtype=np.float32))
        w.add_tensor("output_norm.weight", np.ones(96, dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def test_header_is_described(tmp_path: Path) -> None:
    write_gguf(tmp_path / "tiny.gguf")
    info = read_model_info(tmp_path / "tiny.gguf")
    assert info.broken is None
    assert (info.name, info.architecture, info.parameters, info.quantization, info.context_length) == \
        ("Tiny Test Model", "llama", 3096, "Q8_0", 2048)
    assert info.has_chat_template and info.size_bytes == (tmp_path / "tiny.gguf").stat().st_size
    assert info.parameters_label == "3.1K"
    write_gguf(tmp_path / "plain.gguf", template=False)
    assert read_model_info(tmp_path / "plain.gguf").has_chat_template is False


def test_broken_files_are_listed_with_a_reason_and_the_scan_goes_on(tmp_path: Path) -> None:
    models = tmp_path / "models"
    (models / "sub").mkdir(parents=True)
    write_gguf(models / "sub" / "good.gguf")
    data = (models / "sub" / "good.gguf").read_bytes()
    (models / "cut.gguf").write_bytes(data[:200])                  # truncated inside the metadata
    (models / "notes.gguf").write_text("this is not a model", "utf-8")
    (models / "empty.gguf").write_bytes(b"")
    write_gguf(models / "vocab.gguf", tensors=False)
    (models / "readme.txt").write_text("ignored", "utf-8")
    seen: list[str] = []
    infos = {Path(i.path).name: i for i in scan_models(models, on_model=lambda i: seen.append(i.file_name))}
    assert sorted(infos) == sorted(seen) == ["cut.gguf", "empty.gguf", "good.gguf", "notes.gguf", "vocab.gguf"]
    assert infos["good.gguf"].broken is None
    assert "damaged or truncated" in (infos["cut.gguf"].broken or "")
    assert "not a GGUF" in (infos["notes.gguf"].broken or "")
    assert "not a GGUF" in (infos["empty.gguf"].broken or "") or "truncated" in (infos["empty.gguf"].broken or "")
    assert "no weights" in (infos["vocab.gguf"].broken or "")
    assert scan_models(tmp_path / "missing") == []


def test_rescan_uses_the_cache_until_the_file_changes(tmp_path: Path) -> None:
    write_gguf(tmp_path / "m.gguf")
    cache = LibraryCache(tmp_path / "lib.json")
    [first] = scan_models(tmp_path, cache)
    fake = dataclasses.replace(first, name="from cache")
    cache.put(tmp_path / "m.gguf", fake)
    cache.save()
    assert scan_models(tmp_path, LibraryCache(tmp_path / "lib.json"))[0].name == "from cache"
    write_gguf(tmp_path / "m.gguf", template=False)              # rewritten: size/mtime differ
    [again] = scan_models(tmp_path, LibraryCache(tmp_path / "lib.json"))
    assert again.name == "Tiny Test Model" and again.has_chat_template is False


@pytest.mark.model
@pytest.mark.slow
def test_bundled_model_is_described(bundled_model: Path) -> None:
    info = read_model_info(bundled_model)
    assert info.broken is None and info.architecture == "llama" and info.has_chat_template
    assert 100e6 < (info.parameters or 0) < 200e6 and info.context_length == 8192
    # SmolLM2-135M: 30 layers, 576 wide, 9 heads, 3 KV heads → 2 × 30 × 4096 × 192 × 2 bytes
    assert (info.n_layers, info.n_embd, info.n_head, info.n_head_kv) == (30, 576, 9, 3)
    assert info.kv_cache_bytes(4096) == 2 * 30 * 4096 * 192 * 2
