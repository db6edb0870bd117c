"""Text attachments: a file (code, markdown, logs, CSV …) or a very long paste added to a message.

An attachment becomes part of the user message's text as a fenced block under a marker line, so the model sees
it, search finds it, exports keep it and the chat reopens with it, with no extra schema::

    📎 main.py · 1,234 tokens
    ````python
    …the file…
    ````

The fence is one backtick longer than the longest run of backticks inside the text (CommonMark), so a file that
contains code fences stays one block. ``split_attachments`` finds them again (the view shows each collapsed, with
its name and token count).
"""

from __future__ import annotations

import codecs
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from app.core.errors import BrookError
from app.core.text import valid_text

#: Files larger than this are refused (bytes): a local model's context holds far less anyway.
MAX_BYTES = 2_000_000
#: A paste longer than this (characters) becomes an attachment instead of a huge bubble.
LONG_PASTE_CHARS = 4_000
MARKER = "📎 "

_LANGS = {".py": "python", ".js": "javascript", ".ts": "typescript", ".rs": "rust", ".go": "go", ".c": "c",
          ".h": "c", ".cpp": "cpp", ".hpp": "cpp", ".java": "java", ".kt": "kotlin", ".rb": "ruby", ".sh": "bash",
          ".md": "markdown", ".json": "json", ".yaml": "yaml", ".yml": "yaml", ".toml": "toml", ".csv": "csv",
          ".sql": "sql", ".html": "html", ".css": "css", ".xml": "xml", ".log": "text", ".txt": "text"}
_BLOCK = re.compile(r"^📎 (?P<name>[^\n]*?)(?: · (?P<tokens>[\d,]+) tokens)?\n(?P<fence>`{3,})(?P<lang>[^\n`]*)\n",
                    re.MULTILINE)


class AttachmentError(BrookError):
    """A file that cannot be attached (binary, too large, unreadable)."""


@dataclass(frozen=True, slots=True)
class Attachment:
    """``name``: what the marker shows (a file name, or "pasted text"); ``language``: the fence's info string;
    ``tokens``: its token count under the loaded model (``None`` when unknown)."""

    name: str
    text: str
    language: str = "text"
    tokens: int | None = None

    def as_markdown(self) -> str:
        longest = max((len(m) for m in re.findall(r"`+", self.text)), default=0)
        fence = "`" * max(3, longest + 1)
        count = f" · {self.tokens:,} tokens" if self.tokens is not None else ""
        body = self.text if self.text.endswith("\n") else self.text + "\n"
        return f"{MARKER}{self.name}{count}\n{fence}{self.language}\n{body}{fence}"


def read_attachment(path: str | Path, max_bytes: int = MAX_BYTES) -> Attachment:
    """The text file at ``path`` as an attachment. Blocking (call it off the UI thread): at most ``max_bytes`` + 1
    bytes are read, whatever the file says its size is.

    Only regular files are read: a FIFO, a socket or a device (``/dev/zero``, a terminal) is refused without
    blocking (opened with ``O_NONBLOCK`` and checked with ``fstat``). The encoding is found from a byte-order mark
    (UTF-8, UTF-16 and UTF-32, either byte order) or, without one, from the zero bytes UTF-16 text has in every
    other byte; else the text must be UTF-8. Raises ``AttachmentError`` naming the reason for a missing,
    unreadable, special, too large, binary or wrongly encoded file (a UTF-16 file cut to an odd length, say)."""
    p = Path(path)
    data = _read_capped(p, max_bytes)
    text = decode_text(data, p.name)
    return Attachment(p.name, text.replace("\r\n", "\n"), _LANGS.get(p.suffix.lower(), "text"))


def _read_capped(p: Path, max_bytes: int) -> bytes:
    try:
        st = p.stat()
        if not stat.S_ISREG(st.st_mode):
            raise AttachmentError(f"{p.name} is not a regular file ({_kind(st.st_mode)}); only text files can be "
                                  "attached.")
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
        with os.fdopen(fd, "rb") as fh:
            st = os.fstat(fh.fileno())           # the file opened, not the one stat saw (it may have changed)
            if not stat.S_ISREG(st.st_mode):
                raise AttachmentError(f"{p.name} is not a regular file ({_kind(st.st_mode)}); only text files can "
                                      "be attached.")
            data = fh.read(max_bytes + 1)
    except OSError as exc:
        raise AttachmentError(f"Cannot read {p.name}: {exc.strerror or exc}") from None
    if len(data) > max_bytes:
        raise AttachmentError(f"{p.name} is too large to attach (over {max_bytes / 1e6:g} MB; at most "
                              f"{max_bytes / 1e6:g} MB).")
    return data


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a plain file"


_BOMS = ((codecs.BOM_UTF32_LE, "utf-32-le", "UTF-32"), (codecs.BOM_UTF32_BE, "utf-32-be", "UTF-32"),
         (codecs.BOM_UTF8, "utf-8", "UTF-8"), (codecs.BOM_UTF16_LE, "utf-16-le", "UTF-16"),
         (codecs.BOM_UTF16_BE, "utf-16-be", "UTF-16"))


def decode_text(data: bytes, name: str = "the file") -> str:
    """``data`` as text (see ``read_attachment`` for how the encoding is found). Raises ``AttachmentError``."""
    for bom, codec, label in _BOMS:
        if data.startswith(bom):
            return _decode(data[len(bom):], codec, label, name)
    head = data[:8192]
    if b"\x00" in head:
        utf16 = _utf16_without_bom(head)
        if utf16 is None:
            raise AttachmentError(f"{name} is not a text file (only text files can be attached).")
        return _decode(data, utf16, "UTF-16", name)
    return _decode(data, "utf-8", "UTF-8", name)


def _utf16_without_bom(head: bytes) -> str | None:
    """"utf-16-le" / "utf-16-be" when the zero bytes of ``head`` are all on odd / even offsets and make up a good
    share of them (ASCII-range text in UTF-16), else None (binary)."""
    even, odd = head[0::2], head[1::2]
    if not odd:
        return None
    if even.count(0) == 0 and odd.count(0) >= len(odd) // 4:
        return "utf-16-le"
    if odd.count(0) == 0 and even.count(0) >= len(even) // 4:
        return "utf-16-be"
    return None


def _decode(data: bytes, codec: str, label: str, name: str) -> str:
    unit = 4 if label == "UTF-32" else 2 if label == "UTF-16" else 1
    if len(data) % unit:
        raise AttachmentError(f"{name} is {label} text cut short ({len(data):,} bytes, not a whole number of "
                              f"{unit}-byte units); it cannot be attached as it is.")
    try:
        text = data.decode(codec)
    except UnicodeDecodeError:
        if label == "UTF-8":
            raise AttachmentError(f"{name} is not UTF-8 text (save it as UTF-8 and attach it again).") from None
        raise AttachmentError(f"{name} is not valid {label} text; it cannot be attached as it is.") from None
    if "\x00" in text:
        raise AttachmentError(f"{name} is not a text file (only text files can be attached).")
    return valid_text(text)


def compose(message: str, attachments: list[Attachment]) -> str:
    """The user message text with its attachments after it (blank line between)."""
    parts = [message.strip()] if message.strip() else []
    parts += [a.as_markdown() for a in attachments]
    return "\n\n".join(parts)


def split_attachments(text: str) -> tuple[str, list[Attachment]]:
    """The inverse of ``compose``: the message's own words and its attachments."""
    atts: list[Attachment] = []
    own: list[str] = []
    pos = 0
    while (m := _BLOCK.search(text, pos)) is not None:
        close = text.find("\n" + m["fence"], m.end() - 1)
        if close == -1:
            break
        own.append(text[pos:m.start()])
        tokens = int(m["tokens"].replace(",", "")) if m["tokens"] else None
        atts.append(Attachment(m["name"], text[m.end():close + 1], m["lang"] or "text", tokens))
        pos = close + 1 + len(m["fence"])
    own.append(text[pos:])
    return "".join(own).strip(), atts
