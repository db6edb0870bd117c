"""Reasoning sections (``<think>…</think>``): routing streamed text to the reasoning or the answer.

A reply that starts with ``<think>`` (after optional whitespace) carries reasoning up to ``</think>``; the
rest is the answer. :class:`ThinkingRouter` makes that split on a stream, holding back only the few characters
that could still be the start of a tag, so the same split results at any chunking (:func:`split_thinking` is
the one-shot version). The header the view shows above the reasoning is :func:`thinking_header_html`.
"""

from __future__ import annotations

from dataclasses import dataclass

THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"
#: Colour of the reasoning text and its header.
THINK_DIM = "#888888"


def split_thinking(text: str) -> tuple[str | None, str, bool]:
    """Split a reply into ``(thinking, answer, thinking_done)``.

    ``thinking`` is None when the reply does not start with ``<think>``. Without a closing tag all the rest is
    reasoning and ``answer`` is "".
    """
    stripped = text.lstrip()
    if not stripped.startswith(THINK_OPEN):
        return None, text, False
    rest = stripped[len(THINK_OPEN) :]
    end = rest.find(THINK_CLOSE)
    if end < 0:
        return rest, "", False
    return rest[:end], rest[end + len(THINK_CLOSE) :], True


def thinking_section_html(inner_html: str, done: bool) -> str:
    """The dimmed section that holds the reasoning HTML, placed before the answer (the renderer's ``html``)."""
    title = "Thinking" if done else "Thinking…"
    return (
        f'<div class="brook-thinking" style="color:{THINK_DIM}"><p><i>{title}</i></p>\n{inner_html}</div>\n'
    )


def thinking_header_html(expanded: bool, active: bool) -> str:
    """The clickable header the view shows above the reasoning: an arrow (▾ unfolded, ▸ folded) and
    "Thinking…" while the model reasons (``active``), "Thinking" after."""
    arrow = "▾" if expanded else "▸"
    label = "Thinking…" if active else "Thinking"
    return (
        f'<p><a href="brook-think:toggle" style="color:{THINK_DIM};text-decoration:none">'
        f"{arrow} {label}</a></p>"
    )


@dataclass(frozen=True)
class Route:
    """One step of routing: ``kind`` is ``"open"`` (reasoning starts), ``"think"`` (reasoning text),
    ``"close"`` (reasoning ended) or ``"answer"`` (answer text); ``text`` is "" for open and close."""

    kind: str
    text: str = ""


class ThinkingRouter:
    """Splits a stream into reasoning and answer; :meth:`feed` and :meth:`finish` return :class:`Route` steps.

    ``detect``: False routes everything to the answer.
    """

    def __init__(self, detect: bool = True) -> None:
        self.mode = "detect" if detect else "answer"  # "detect" → "think" → "answer", or "detect" → "answer"
        self._buf = ""  # text held back: the undecided start ("detect") or a possible "</think>" start ("think")

    def feed(self, text: str) -> list[Route]:
        """Route a chunk of the reply."""
        if self.mode == "answer":
            return [Route("answer", text)] if text else []
        if self.mode == "think":
            return self._think(text)
        buf = self._buf + text
        stripped = buf.lstrip()
        if not stripped or (len(stripped) < len(THINK_OPEN) and THINK_OPEN.startswith(stripped)):
            self._buf = buf
            return []
        self._buf = ""
        if stripped.startswith(THINK_OPEN):
            self.mode = "think"
            return [Route("open"), *self._think(stripped[len(THINK_OPEN) :])]
        self.mode = "answer"
        return [Route("answer", buf)]

    def _think(self, text: str) -> list[Route]:
        buf = self._buf + text
        end = buf.find(THINK_CLOSE)
        if end >= 0:
            self._buf = ""
            self.mode = "answer"
            out = [Route("think", buf[:end])] if end else []
            rest = buf[end + len(THINK_CLOSE) :]
            return [*out, Route("close"), *([Route("answer", rest)] if rest else [])]
        hold = 0
        for n in range(min(len(THINK_CLOSE) - 1, len(buf)), 0, -1):
            if THINK_CLOSE.startswith(buf[-n:]):
                hold = n
                break
        self._buf = buf[len(buf) - hold :] if hold else ""
        shown = buf[: len(buf) - hold]
        return [Route("think", shown)] if shown else []

    def finish(self) -> list[Route]:
        """End of stream: what was held back. An unclosed reasoning section ends without a ``"close"`` step."""
        buf, self._buf = self._buf, ""
        if self.mode == "detect":
            self.mode = "answer"
            return [Route("answer", buf)] if buf else []
        if self.mode == "think":
            return [Route("think", buf)] if buf else []
        return []
