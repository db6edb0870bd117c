"""Text entering the core is made valid Unicode once, at the boundary.

Python ``str`` can hold lone UTF-16 surrogates (U+D800–U+DFFF): JSON's ``"\\ud83d"`` escape, a clipboard from
another program, a file read with ``errors="surrogateescape"``. Such a string cannot be encoded as UTF-8, so it
fails later and far away (tokenizing the prompt, saving to SQLite: "surrogates not allowed"). Every boundary —
settings, the input box and clipboard, files and imports, JSON from servers, rows of the history file — passes
text through ``valid_text`` once; inside the core text is then always encodable.
"""

from __future__ import annotations

from typing import Any


def valid_text(text: str) -> str:
    """``text`` as valid Unicode: a surrogate pair written as two code points (``"\\ud83d\\ude00"``) becomes the
    one character it encodes (😀); a lone surrogate becomes U+FFFD (the replacement character). Everything else
    is unchanged. O(len): text that is ASCII or encodes as UTF-8 (which fails only on a surrogate; 3-4× faster than
    a regular-expression scan for it) is returned as it is."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def valid_json(value: Any) -> Any:
    """``value`` (parsed JSON: dicts, lists, strings, numbers) with every string, keys included, passed through
    ``valid_text``."""
    if isinstance(value, str):
        return valid_text(value)
    if isinstance(value, list):
        return [valid_json(v) for v in value]
    if isinstance(value, dict):
        return {valid_text(k) if isinstance(k, str) else k: valid_json(v) for k, v in value.items()}
    return value


def decode_utf8(data: bytes) -> str:
    """Bytes from outside (a file, an HTTP body, a SQLite text column) as text: invalid UTF-8 sequences become
    U+FFFD instead of raising."""
    return data.decode("utf-8", "replace")


def QT_TRANSLATE_NOOP(context: str, text: str) -> str:
    """Marks ``text`` for Qt's lupdate (the UI translates it with ``QCoreApplication.translate(context, …)``);
    returns it unchanged. Defined in the core because ``app.core`` never imports Qt."""
    return text


def format_bytes(n: float) -> str:
    """A size for a person, in decimal units as disks and the Hub count them: ``"1.2 GB"``, ``"135 MB"``,
    ``"12 KB"``, ``"512 B"`` (1 GB = 10⁹ bytes; one decimal below 10 units, none above)."""
    for div, unit in ((1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "KB")):
        if n >= div:
            v = n / div
            return f"{v:.1f} {unit}" if v < 10 else f"{v:,.0f} {unit}"
    return f"{int(n)} B"
