"""A GGUF file's header read with a memory bound: the metadata values the model library shows and the tensor
table, never the weights, and never one Python object per array element.

``gguf.GGUFReader`` (llama.cpp's reader) builds numpy views for every element of every metadata array: a file of
9 MB holding a million empty strings costs it ~1.9 GB. This reader walks the same layout (the GGUF spec,
``ggml/docs/gguf.md``: magic ``GGUF``, version 2 or 3, tensor count, metadata count, then key/type/value triples
and the tensor infos; little-endian, or big-endian files) over a memory map and keeps only scalars and strings of
at most ``MAX_KEPT_STRING`` bytes (longer ones are remembered as present). Before walking anything it checks each
count and length against the bytes left in the file (an array of *n* elements of *s* bytes needs *n × s* bytes, a
string at least its length; a tensor info at least 28 bytes), so a lying header is refused at once, in O(1) memory:
arrays of fixed-size elements are skipped by arithmetic, string arrays by reading their 8-byte lengths.
Raises ``GGUFHeaderError`` naming what is wrong.
"""

from __future__ import annotations

import mmap
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: Strings longer than this (bytes) are not kept, only noted as present (a chat template, a long license).
MAX_KEPT_STRING = 1 << 16
#: Most dimensions of one tensor (llama.cpp's GGML_MAX_DIMS is 4).
MAX_DIMS = 8

_SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
_STRING, _ARRAY = 8, 9
_MIN_KV = 8 + 4 + 1            # an empty key, its type, the smallest value
_MIN_TENSOR = 8 + 4 + 4 + 8    # an empty name, n_dims, type, offset (0 dims)


class GGUFHeaderError(ValueError):
    """The GGUF header is malformed or truncated; ``str()`` says where."""


@dataclass
class GGUFHeader:
    """``fields``: metadata key → a scalar, a string, or ``None`` for a value not kept (an array, a string over
    ``MAX_KEPT_STRING``: the key is present); ``tensors``: (name, element count, GGML type number)."""

    version: int
    fields: dict[str, Any] = field(default_factory=dict)
    tensors: list[tuple[str, int, int]] = field(default_factory=list)


class _Cursor:
    def __init__(self, buf: mmap.mmap, order: str) -> None:
        self.buf, self.order, self.pos, self.size = buf, order, 0, len(buf)

    def left(self) -> int:
        return self.size - self.pos

    def need(self, n: int, what: str) -> None:
        if n < 0 or n > self.left():
            raise GGUFHeaderError(f"{what} needs {n:,} bytes but the file has {self.left():,} left (truncated, or "
                                  "a count that lies)")

    def unpack(self, fmt: str, what: str) -> Any:
        n = struct.calcsize(fmt)
        self.need(n, what)
        (v,) = struct.unpack_from(self.order + fmt, self.buf, self.pos)
        self.pos += n
        return v

    def string(self, what: str, keep: int = MAX_KEPT_STRING) -> str | None:
        n = self.unpack("Q", what)
        self.need(n, what)
        raw = self.buf[self.pos:self.pos + n] if n <= keep else None
        self.pos += n
        return None if raw is None else raw.decode("utf-8", "replace")

    def skip_strings(self, count: int, what: str) -> None:
        buf, order, pos, size = self.buf, self.order + "Q", self.pos, self.size
        for _ in range(count):
            if pos + 8 > size:
                raise GGUFHeaderError(f"{what} is truncated")
            (n,) = struct.unpack_from(order, buf, pos)
            pos += 8 + n
            if pos > size:
                raise GGUFHeaderError(f"{what}: a string of {n:,} bytes runs past the end of the file")
        self.pos = pos


def _value(c: _Cursor, kind: int, key: str, depth: int = 0) -> Any:
    if kind in _SCALARS:
        return c.unpack(_SCALARS[kind], key)
    if kind == _STRING:
        return c.string(key)
    if kind == _ARRAY:
        elem = c.unpack("I", key)
        count = c.unpack("Q", key)
        if elem in _SCALARS:
            n = count * struct.calcsize(_SCALARS[elem])
            c.need(n, f"{key} ({count:,} elements)")
            c.pos += n
        elif elem == _STRING:
            c.need(count * 8, f"{key} ({count:,} strings)")
            c.skip_strings(count, key)
        elif elem == _ARRAY:
            if depth >= 4:
                raise GGUFHeaderError(f"{key}: arrays nested more than 4 deep")
            c.need(count * 12, f"{key} ({count:,} arrays)")
            for _ in range(count):
                _value(c, _ARRAY, key, depth + 1)
        else:
            raise GGUFHeaderError(f"{key}: unknown array element type {elem}")
        return None
    raise GGUFHeaderError(f"{key}: unknown value type {kind}")


def read_header(path: str | Path) -> GGUFHeader:
    """The header of the GGUF at ``path`` (see the module docstring). Memory: O(tensors + kept values), not
    O(array elements); time: O(header bytes) for string arrays, O(1) for other arrays. Raises
    ``GGUFHeaderError`` for a malformed header, ``OSError`` for an unreadable file."""
    with open(path, "rb") as fh:
        size = fh.seek(0, 2)
        if size < 24:
            raise GGUFHeaderError("the file is too short for a GGUF header")
        with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as buf:
            if buf[:4] != b"GGUF":
                raise GGUFHeaderError("no GGUF magic")
            order = "<"
            version = struct.unpack_from("<I", buf, 4)[0]
            if version & 0xFFFF == 0 and version > 0xFFFF:      # a big-endian file
                order, version = ">", struct.unpack_from(">I", buf, 4)[0]
            if version not in (2, 3):
                raise GGUFHeaderError(f"GGUF version {version} is not read (2 and 3 are)")
            c = _Cursor(buf, order)
            c.pos = 8
            n_tensors = c.unpack("Q", "the tensor count")
            n_kv = c.unpack("Q", "the metadata count")
            c.need(n_kv * _MIN_KV + n_tensors * _MIN_TENSOR, f"{n_kv:,} metadata entries and {n_tensors:,} tensors")
            header = GGUFHeader(version)
            for _ in range(n_kv):
                key = c.string("a metadata key", keep=1 << 16)
                if key is None:
                    raise GGUFHeaderError("a metadata key is longer than 64 KiB")
                header.fields[key] = _value(c, c.unpack("I", key), key)
            for _ in range(n_tensors):
                name = c.string("a tensor name", keep=1 << 16) or ""
                dims = c.unpack("I", name)
                if dims > MAX_DIMS:
                    raise GGUFHeaderError(f"tensor {name!r} has {dims} dimensions")
                c.need(dims * 8 + 12, f"tensor {name!r}")
                n = 1
                for _ in range(dims):
                    n *= c.unpack("Q", name)
                kind = c.unpack("I", name)
                c.unpack("Q", name)          # offset in the data section
                header.tensors.append((name, n, kind))
            return header
