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


def split_thinking(text: str, reasoning_open: bool = False) -> tuple[str | None, str, bool]:
    """Split a finished reply into ``(thinking, answer, thinking_done)``.

    Reasoning is the text after a leading ``<think>`` (after optional whitespace) — or from the start when
    ``reasoning_open`` (the chat template's generation prompt ended with ``<think>``) — up to ``</think>``. A
    reply that only closes (``…</think>``: the template pre-filled the opening tag, as Qwen3 and R1 distills do)
    has everything before ``</think>`` as reasoning (unless a ``<think>`` comes before it mid-text: then the tags
    are plain text of the answer). A section that never closes is shown as the answer:
    ``(None, its text, False)``. ``thinking`` is None when there is no reasoning.
    """
    stripped = text.lstrip()
    if stripped.startswith(THINK_OPEN):
        rest = stripped[len(THINK_OPEN) :]
    elif reasoning_open:
        rest = text
    else:
        end = text.find(THINK_CLOSE)
        if end < 0 or THINK_OPEN in text[:end]:
            return None, text, False
        return text[:end], text[end + len(THINK_CLOSE) :], True
    end = rest.find(THINK_CLOSE)
    if end < 0:
        return None, rest, False
    return rest[:end], rest[end + len(THINK_CLOSE) :], True


def prompt_opens_reasoning(generation_prompt: str) -> bool:
    """Whether a chat template's generation prompt (the text it appends for the assistant's turn) leaves the
    reply inside a reasoning section: it ends with ``<think>`` (Qwen3, DeepSeek-R1 distills)."""
    return generation_prompt.rstrip().endswith(THINK_OPEN)


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
    ``"close"`` (reasoning ended), ``"answer"`` (answer text), ``"retro"`` (a ``</think>`` came with no opening
    tag: ``text`` — everything routed to the answer so far — was reasoning, now closed) or ``"unclosed"`` (the
    stream ended inside reasoning: ``text`` — all of it — is the answer after all)."""

    kind: str
    text: str = ""


def _held(buf: str) -> int:
    """Length of the end of ``buf`` that could be the start of ``</think>``."""
    for n in range(min(len(THINK_CLOSE) - 1, len(buf)), 0, -1):
        if THINK_CLOSE.startswith(buf[-n:]):
            return n
    return 0


class ThinkingRouter:
    """Splits a stream into reasoning and answer; :meth:`feed` and :meth:`finish` return :class:`Route` steps.

    ``detect``: False routes everything to the answer. ``reasoning_open``: the reply starts inside reasoning
    (the chat template's generation prompt ended with ``<think>``). Same split as :func:`split_thinking`.
    """

    def __init__(self, detect: bool = True, reasoning_open: bool = False) -> None:
        # "detect" → "think" → "answer", "detect" → "answer" (a later "</think>" still makes it reasoning),
        # or "answer" for good ("final")
        self.mode = "final" if not detect else ("think" if reasoning_open else "detect")
        self._buf = ""  # text held back: the undecided start, or a possible "</think>" start
        self._seen: list[str] = []  # text routed so far in the current mode (for "retro" / "unclosed")

    def start(self) -> list[Route]:
        """The steps due before any text (an "open" when the reply starts inside reasoning)."""
        return [Route("open")] if self.mode == "think" else []

    def feed(self, text: str) -> list[Route]:
        """Route a chunk of the reply."""
        if self.mode == "final":
            return [Route("answer", text)] if text else []
        if self.mode == "think":
            return self._think(text)
        if self.mode == "answer":
            return self._answer(text)
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
        return self._answer(buf)

    def _answer(self, text: str) -> list[Route]:
        """Answer text that may still turn out to be reasoning closed by a lone ``</think>``."""
        buf = self._buf + text
        end = buf.find(THINK_CLOSE)
        if end >= 0:
            before = "".join(self._seen) + buf[:end]
            self._buf, self._seen, self.mode = "", [], "final"
            if THINK_OPEN in before:  # tags written inside the answer (e.g. explained): plain text
                return [Route("answer", buf)]
            rest = buf[end + len(THINK_CLOSE) :]
            return [Route("retro", before), *([Route("answer", rest)] if rest else [])]
        hold = _held(buf)
        self._buf = buf[len(buf) - hold :]
        shown = buf[: len(buf) - hold]
        self._seen.append(shown)
        return [Route("answer", shown)] if shown else []

    def _think(self, text: str) -> list[Route]:
        buf = self._buf + text
        end = buf.find(THINK_CLOSE)
        if end >= 0:
            self._buf, self._seen, self.mode = "", [], "final"
            out = [Route("think", buf[:end])] if end else []
            rest = buf[end + len(THINK_CLOSE) :]
            return [*out, Route("close"), *([Route("answer", rest)] if rest else [])]
        hold = _held(buf)
        self._buf = buf[len(buf) - hold :]
        shown = buf[: len(buf) - hold]
        self._seen.append(shown)
        return [Route("think", shown)] if shown else []

    def finish(self) -> list[Route]:
        """End of stream: what was held back; a reasoning section that never closed becomes the answer."""
        buf, self._buf = self._buf, ""
        if self.mode == "think":
            self.mode = "final"
            return [Route("unclosed", "".join(self._seen) + buf)]
        self.mode = "final"
        return [Route("answer", buf)] if buf else []
