"""Hostile attachments: only regular files are read, never more than the cap whatever the file says, and the
encoding is found (byte-order marks, UTF-16 without one) or refused with a sentence."""

from __future__ import annotations

import codecs
import os
import sys
from pathlib import Path

import pytest

from app.core.chat.attachments import AttachmentError, read_attachment

pytestmark = pytest.mark.timeout(60)        # a FIFO that blocked would hang here
posix = pytest.mark.skipif(sys.platform == "win32", reason="FIFOs and /dev files are POSIX")


@posix
def test_a_fifo_without_a_writer_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.txt"
    os.mkfifo(fifo)
    with pytest.raises(AttachmentError, match=r"pipe\.txt is not a regular file \(a pipe\)"):
        read_attachment(fifo)


@posix
@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom", "/dev/null"])
def test_a_device_is_refused_without_reading_it(tmp_path: Path, device: str) -> None:
    link = tmp_path / "looks-like.txt"
    link.symlink_to(device)
    for path in (Path(device), link):
        with pytest.raises(AttachmentError, match=r"is not a regular file \(a device\)"):
            read_attachment(path)


def test_a_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(AttachmentError, match=r"not a regular file \(a folder\)"):
        read_attachment(tmp_path)


def test_no_more_than_the_cap_is_read(tmp_path: Path) -> None:
    big = tmp_path / "big.txt"
    big.write_bytes(b"a" * 5000)
    with pytest.raises(AttachmentError, match="too large"):
        read_attachment(big, max_bytes=1000)
    assert read_attachment(big, max_bytes=5000).text == "a" * 5000


@pytest.mark.parametrize("codec, bom", [
    ("utf-8", codecs.BOM_UTF8), ("utf-16-le", codecs.BOM_UTF16_LE), ("utf-16-be", codecs.BOM_UTF16_BE),
    ("utf-32-le", codecs.BOM_UTF32_LE), ("utf-32-be", codecs.BOM_UTF32_BE),
    ("utf-16-le", b""), ("utf-16-be", b""),
])
def test_the_encoding_is_found(tmp_path: Path, codec: str, bom: bytes) -> None:
    f = tmp_path / "t.txt"
    f.write_bytes(bom + "line one\r\nzwei 宽字符 🙂\n".encode(codec))
    assert read_attachment(f).text == "line one\nzwei 宽字符 🙂\n"


@pytest.mark.parametrize("data, words", [
    (codecs.BOM_UTF16_LE + "odd".encode("utf-16-le") + b"x", "is UTF-16 text cut short"),
    (codecs.BOM_UTF16_BE + "odd".encode("utf-16-be") + b"x", "is UTF-16 text cut short"),
    ("odd length".encode("utf-16-le") + b"x", "is UTF-16 text cut short"),
    (codecs.BOM_UTF32_LE + "x".encode("utf-32-le") + b"yz", "is UTF-32 text cut short"),
    (codecs.BOM_UTF16_LE + b"\x00\xd8a\x00", "is not valid UTF-16 text"),      # a lone surrogate
    (codecs.BOM_UTF32_LE + b"\xff\xff\xff\x7f", "is not valid UTF-32 text"),
    (b"caf\xe9", "is not UTF-8 text"),
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x01", "is not a text file"),
])
def test_a_wrong_encoding_is_refused_with_a_sentence(tmp_path: Path, data: bytes, words: str) -> None:
    f = tmp_path / "t.txt"
    f.write_bytes(data)
    with pytest.raises(AttachmentError, match=words):
        read_attachment(f)
