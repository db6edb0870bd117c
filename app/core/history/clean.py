"""Plain values read back from the history file, made safe to show: a time and an optional text. No pydantic
(``app.core.history.schema`` checks the structured fields), so listing the chats at start-up imports none of it."""

from __future__ import annotations

import math
from typing import Any

#: Latest time accepted, in seconds since the epoch (9999-12-31 23:59:59 UTC: the end of ``datetime``'s range).
MAX_TIME = 253_402_300_799.0


def clean_time(value: Any, default: float = 0.0) -> float:
    """A stored time (s since the epoch) within ``0 … MAX_TIME``, else ``default``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return default
    t = float(value)
    return t if math.isfinite(t) and 0 <= t <= MAX_TIME else default


def clean_text(value: Any) -> str | None:
    """A stored optional text: a string or None; bytes are decoded, anything else is shown as its JSON."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)
