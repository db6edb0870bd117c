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

import re
from dataclasses import dataclass
from pathlib import Path

from app.core.errors import BrookError

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
    """The text file at ``path`` as an attachment (UTF-8, or UTF-16 with a BOM). Raises ``AttachmentError``
    naming the reason for a missing, too large or binary file."""
    p = Path(path)
    try:
        size = p.stat().st_size
        if size > max_bytes:
            raise AttachmentError(f"{p.name} is too large to attach ({size / 1e6:.1f} MB; at most "
                                  f"{max_bytes / 1e6:.0f} MB).")
        data = p.read_bytes()
    except OSError as exc:
        raise AttachmentError(f"Cannot read {p.name}: {exc.strerror or exc}") from None
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        text = data.decode("utf-16")
    else:
        if b"\x00" in data[:8192]:
            raise AttachmentError(f"{p.name} is not a text file (only text files can be attached).")
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise AttachmentError(f"{p.name} is not UTF-8 text (save it as UTF-8 and attach it again).") from None
    return Attachment(p.name, text.replace("\r\n", "\n"), _LANGS.get(p.suffix.lower(), "text"))


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
