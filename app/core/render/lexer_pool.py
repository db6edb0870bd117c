"""Syntax highlighting off the loop: pygments runs in a worker process with a deadline per job.

pygments' lexers are regular expressions, and some backtrack exponentially on short inputs (an ``rst`` fence
holding ``:`` and 36 backslashes takes ~7 s). Python's ``re`` holds the GIL while it matches, so a thread does
not help: the loop stalls for the whole match (``python -m app.bench lexing`` measures it). So the UI's
renderers never lex: they ask a :class:`LexerPool` for a segment's HTML, show plain text while it is pending,
and a worker process lexes. A job that runs past :data:`LEX_DEADLINE_S` gets its worker killed (and restarted
for the next job); the segment's result is then its plain text, remembered like any other, so a chat reopened
later does not pay again.

The machinery (one supervisor thread feeding the worker one job at a time, the deadline, the LRU of results)
is :class:`~app.core.render.worker_pool.DeadlinePool`. Results are shared by every renderer of the process
(:func:`default_pool`).
"""

from __future__ import annotations

import html

from app.core.render.lexers import format_segment, get_lexer
from app.core.render.worker_pool import START_TIMEOUT_S, DeadlinePool, shared_pool

__all__ = ["LEX_DEADLINE_S", "START_TIMEOUT_S", "LexerPool", "default_pool", "lex_segment"]

#: Seconds a worker may spend on one segment before it is killed and the segment shown as plain text.
LEX_DEADLINE_S = 2.0

Key = tuple[str, str, str]  # (language, theme, segment text)


def lex_segment(lang: str, theme: str, code: str) -> str:
    """In the worker: a segment's highlighted HTML (escaped plain text for an unknown language)."""
    lexer = get_lexer(lang)
    return format_segment(code, lexer, theme) if lexer is not None else html.escape(code, quote=False)


class LexerPool(DeadlinePool[Key, str]):
    """Highlights segments in a worker process; never blocks its callers (except :meth:`wait`).

    ``deadline_s``: seconds one segment may take (then plain text); ``max_entries``: results kept (LRU).
    Attributes: ``completed`` (results stored so far, a counter renderers poll), ``fallbacks`` (jobs that ran
    past the deadline), ``lexed_s`` (seconds the worker spent on successful jobs).
    """

    def __init__(self, deadline_s: float = LEX_DEADLINE_S, max_entries: int = 4096) -> None:
        super().__init__("app.core.render.lexer_pool:lex_segment", deadline_s, max_entries, name="brook-lexer")

    def fallback(self, key: Key) -> str:
        """A segment past the deadline (or whose lexer failed) stays plain: its escaped text."""
        return html.escape(key[2], quote=False)

    @property
    def lexed_s(self) -> float:
        """Seconds the worker spent on segments lexed in time."""
        return self.busy_s

    def result(self, lang: str, theme: str, code: str) -> str | None:
        """The HTML of a segment if known (lexed, or plain after a deadline), else None (not asked or pending)."""
        return self.lookup((lang, theme, code))

    def request(self, lang: str, theme: str, code: str) -> str | None:
        """:meth:`result`, and when it is None the segment is queued for the worker (once)."""
        return self.ask((lang, theme, code))


#: The process's shared pool (made on first use; its worker starts on the first request).
default_pool = shared_pool(LexerPool)
