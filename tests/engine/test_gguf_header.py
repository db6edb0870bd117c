"""Hostile GGUF headers: counts and lengths are checked against the file's size before anything is read, and a
header of millions of array elements is read in bounded memory (``app.engine.gguf_header``)."""

from __future__ import annotations

import json
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from app.engine.gguf_header import GGUFHeaderError, read_header
from app.engine.library import read_model_info
from tests.helpers import ROOT

U32, STRING, ARRAY, U8 = 4, 8, 9, 0


def s(text: str | bytes) -> bytes:
    raw = text.encode() if isinstance(text, str) else text
    return struct.pack("<Q", len(raw)) + raw


def kv_string(key: str, value: str) -> bytes:
    return s(key) + struct.pack("<I", STRING) + s(value)


def tensor(name: str, dims: tuple[int, ...], kind: int = 0) -> bytes:
    return s(name) + struct.pack("<I", len(dims)) + b"".join(struct.pack("<Q", d) for d in dims) + \
        struct.pack("<IQ", kind, 0)


def gguf_file(path: Path, kvs: list[bytes], tensors: list[bytes], *, n_kv: int | None = None,
              n_tensors: int | None = None, tail: bytes = b"\0" * 64) -> Path:
    head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors) if n_tensors is None else n_tensors,
                                 len(kvs) if n_kv is None else n_kv)
    path.write_bytes(head + b"".join(kvs) + b"".join(tensors) + tail)
    return path


ARCH = kv_string("general.architecture", "llama")
WEIGHT = tensor("token_embd.weight", (30, 100))


def empty_strings(n: int) -> bytes:
    return s("tokenizer.ggml.tokens") + struct.pack("<IIQ", ARRAY, STRING, n) + struct.pack("<Q", 0) * n


def test_a_sound_header_is_read_like_llama_cpp_s_reader(tmp_path: Path) -> None:
    f = gguf_file(tmp_path / "ok.gguf", [ARCH, kv_string("general.name", "Tiny"), empty_strings(3),
                                         s("llama.context_length") + struct.pack("<II", U32, 2048)], [WEIGHT])
    h = read_header(f)
    assert h.fields == {"general.architecture": "llama", "general.name": "Tiny", "tokenizer.ggml.tokens": None,
                        "llama.context_length": 2048}
    assert h.tensors == [("token_embd.weight", 3000, 0)]
    info = read_model_info(f)
    assert info.broken is None and info.parameters == 3000 and info.context_length == 2048


@pytest.mark.parametrize("name, kvs, tensors, counts", [
    ("array-count", [ARCH, s("a") + struct.pack("<IIQ", ARRAY, U8, 1 << 60)], [WEIGHT], {}),
    ("string-array-count", [ARCH, s("a") + struct.pack("<IIQ", ARRAY, STRING, 1 << 40)], [WEIGHT], {}),
    ("string-length", [ARCH, s("a") + struct.pack("<IQ", STRING, 1 << 62)], [WEIGHT], {}),
    ("key-length", [struct.pack("<Q", 1 << 50)], [WEIGHT], {}),
    ("kv-count", [ARCH], [WEIGHT], {"n_kv": 1 << 40}),
    ("tensor-count", [ARCH], [WEIGHT], {"n_tensors": 1 << 40}),
    ("dims", [ARCH], [s("t") + struct.pack("<I", 1 << 30)], {}),
    ("nested-arrays", [ARCH, s("a") + struct.pack("<II", ARRAY, ARRAY) + struct.pack("<Q", 1)
                       + struct.pack("<IQ", ARRAY, 1) * 200_000], [WEIGHT], {}),
    ("value-type", [ARCH, s("a") + struct.pack("<I", 77)], [WEIGHT], {}),
    ("cut-in-a-string-array", [ARCH, empty_strings(100_000)[:-400_000]], [], {"tail": b""}),
])
def test_a_header_that_lies_is_broken_at_once(tmp_path: Path, name: str, kvs: list[bytes], tensors: list[bytes],
                                              counts: dict) -> None:
    f = gguf_file(tmp_path / f"{name}.gguf", kvs, tensors, **counts)
    with pytest.raises(GGUFHeaderError):
        read_header(f)
    info = read_model_info(f)
    assert info.broken is not None and info.broken.startswith("the GGUF header is damaged or truncated: ")


_CHILD = textwrap.dedent("""
    import json, resource, sys
    sys.path.insert(0, {root!r})
    from app.engine.library import read_model_info
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    info = read_model_info({path!r})
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({{"broken": info.broken, "grew_mb": (after - before) / 1024}}))
""")


def test_millions_of_empty_strings_are_read_in_bounded_memory(tmp_path: Path) -> None:
    n = 1_100_000                                    # 8.8 MB of header: llama.cpp's reader took ~1.9 GB
    f = gguf_file(tmp_path / "strings.gguf", [ARCH, empty_strings(n),
                                              s("tokenizer.ggml.merges") + struct.pack("<IIQ", ARRAY, STRING, 0)],
                  [WEIGHT])
    assert f.stat().st_size > 8_000_000
    out = subprocess.run([sys.executable, "-c", _CHILD.format(root=str(ROOT), path=str(f))], capture_output=True,
                         text=True, timeout=120, check=True)
    got = json.loads(out.stdout)
    assert got["broken"] is None
    assert got["grew_mb"] < 40                       # the file's pages at most (mapped), no object per string
