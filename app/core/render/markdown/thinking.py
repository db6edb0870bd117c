"""Reasoning sections (``<think>…</think>``): routing streamed text to the reasoning or the answer.

A reply that starts with ``<think>`` (after optional whitespace) carries reasoning up to ``</think>``; the
rest is the answer. :class:`ThinkingRouter` makes that split on a stream, holding back only the few characters
that could still be the start of a tag, so the same split results at any chunking (:func:`split_thinking` is
the one-shot version). The header the view shows above the reasoning is :func:`thinking_header_html`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"
#: A later reasoning section inside the answer (reasoning that arrived after answer text): ``<think>`` on a
#: line of its own after a blank line, ``</think>`` then a blank line (:func:`think_block` folds it there).
LATE_THINK_OPEN, LATE_THINK_CLOSE = "\n\n<think>\n", "\n</think>\n\n"
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


#: Around a later reasoning section's content in the answer's HTML: the view leaves it out while folded.
FOLD_START, FOLD_END = "<!--brook-fold-->", "<!--/brook-fold-->"
#: The link of a later section's header (the view folds and unfolds them all together).
LATER_TOGGLE = "brook-think:later"


def later_thinking_html(inner_html: str, done: bool) -> str:
    """A reasoning section inside the answer (a later ``<think>`` block), where it stands: a header link
    (:data:`LATER_TOGGLE`) and its content between :data:`FOLD_START` and :data:`FOLD_END`, which the view shows
    only when unfolded (:func:`fold_later_thinking`)."""
    label = "Thinking" if done else "Thinking…"
    return (
        f'<div class="brook-thinking" style="color:{THINK_DIM}"><p><a href="{LATER_TOGGLE}" '
        f'style="color:{THINK_DIM};text-decoration:none">▾ {label}</a></p>\n'
        f"{FOLD_START}{inner_html}{FOLD_END}</div>\n"
    )


_FOLDED = re.compile(re.escape(FOLD_START) + ".*?" + re.escape(FOLD_END), re.S)


def fold_later_thinking(html: str, expanded: bool) -> str:
    """``html`` as the view shows it: later reasoning sections folded (their content left out, ▸) unless
    ``expanded``."""
    if FOLD_START not in html or expanded:
        return html
    return _FOLDED.sub("", html.replace(f'href="{LATER_TOGGLE}" style="color:{THINK_DIM};text-decoration:none">▾',
                                        f'href="{LATER_TOGGLE}" style="color:{THINK_DIM};text-decoration:none">▸'))


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


# ---------------------------------------------------------------------------------------------------------
# reasoning formats: a model's own markers → Brook's <think>…</think>
# ---------------------------------------------------------------------------------------------------------

#: Brook's own form (DeepSeek-R1, Qwen3, QwQ …): ``<think>…</think>``, passed through as is.
FORMAT_THINK = "think"
#: Mistral's Magistral: ``[THINK]…[/THINK]`` before the answer.
FORMAT_MISTRAL = "mistral"
#: OpenAI's gpt-oss "harmony" channels: ``<|channel|>analysis<|message|>…<|end|><|start|>assistant<|channel|>final
#: <|message|>…``, or with the control tokens dropped by detokenization: ``analysis…assistantfinal…``.
FORMAT_HARMONY = "harmony"


def reasoning_format_of(template: str, is_special: Callable[[str], bool] = lambda _t: False) -> str:
    """The reasoning format of a model from its chat template (the GGUF's ``tokenizer.chat_template``) and its
    vocabulary (``is_special(text)``: whether ``text`` is one special token of it): :data:`FORMAT_HARMONY` when
    the template writes harmony channels (``<|channel|>``), :data:`FORMAT_MISTRAL` when the template or the
    vocabulary has ``[THINK]``, else :data:`FORMAT_THINK`. Never guessed from a reply's text."""
    if "<|channel|>" in template:
        return FORMAT_HARMONY
    if "[THINK]" in template or is_special("[THINK]"):
        return FORMAT_MISTRAL
    return FORMAT_THINK


#: The special tokens of each format whose text detokenization drops (control tokens): the engine writes them
#: back as text where they were generated, so :class:`ReasoningNormalizer` sees them.
MARKER_TOKENS: dict[str, tuple[str, ...]] = {
    FORMAT_MISTRAL: ("[THINK]", "[/THINK]"),
    FORMAT_HARMONY: ("<|channel|>", "<|message|>", "<|end|>", "<|start|>"),
}

#: Per format, per state: (anchored, [(marker, output, next state)], state when nothing matches). An anchored
#: state's markers count only at its start (leading blanks aside); there a mismatch moves to the fallback
#: state. Elsewhere a marker counts anywhere in the text.
_Step = tuple[str, str, str]
_MACHINES: dict[str, dict[str, tuple[bool, list[_Step], str]]] = {
    FORMAT_MISTRAL: {
        "start": (True, [("[THINK]", THINK_OPEN, "think")], "answer"),
        "think": (False, [("[/THINK]", THINK_CLOSE, "answer")], "think"),
    },
    FORMAT_HARMONY: {
        "start": (True, [("<|channel|>analysis<|message|>", THINK_OPEN, "think"),
                         ("<|channel|>commentary<|message|>", THINK_OPEN, "think"),
                         ("<|channel|>final<|message|>", "", "answer"),
                         ("analysis", THINK_OPEN, "think_plain")], "answer"),
        "think": (False, [("<|end|><|start|>assistant<|channel|>final<|message|>", THINK_CLOSE, "answer"),
                          ("<|start|>assistant<|channel|>final<|message|>", THINK_CLOSE, "answer"),
                          ("<|channel|>final<|message|>", THINK_CLOSE, "answer"),
                          ("<|end|>", "", "think")], "think"),
        "think_plain": (False, [("assistantfinal", THINK_CLOSE, "answer")], "think_plain"),
        "answer": (False, [("<|return|>", "", "answer"), ("<|end|>", "", "answer")], "answer"),
    },
}


#: Open and close the text of a special token the engine writes back (:func:`token_text`); never in a model's
#: own text.
TOKEN_OPEN, TOKEN_CLOSE = "\ue000", "\ue001"            # private-use characters (not blanks: lstrip keeps them)
_TOKEN_TEXT = re.compile("\ue000[^\ue001]*\ue001")


def token_text(marker: str) -> str:
    """How the engine writes back a generated marker *token* (see :class:`ReasoningNormalizer`'s ``tokens``)."""
    return f"{TOKEN_OPEN}{marker}{TOKEN_CLOSE}"


def _token_machine(machine: dict[str, tuple[bool, list[_Step], str]],
                   tokens: frozenset[str]) -> dict[str, tuple[bool, list[_Step], str]]:
    """``machine`` whose markers match only the written-back tokens (steps made of none of them are dropped)."""
    out: dict[str, tuple[bool, list[_Step], str]] = {}
    for state, (anchored, steps, fallback) in machine.items():
        kept: list[_Step] = []
        for marker, rep, nxt in steps:
            wrapped = marker
            for t in sorted(tokens, key=len, reverse=True):
                wrapped = wrapped.replace(t, token_text(t))
            if wrapped != marker:
                kept.append((wrapped, rep, nxt))
        out[state] = (anchored, kept, fallback)
    return out


class ReasoningNormalizer:
    """Turns a model's reasoning markers (``fmt``, see :func:`reasoning_format_of`) into ``<think>…</think>`` on
    a stream: :meth:`feed` returns the text to pass on, holding back only what could still be the start of a
    marker; :meth:`finish` returns what is held. The same output results at any chunking. In
    :data:`FORMAT_THINK` (or an unknown format) text passes unchanged. Markers count only where the format puts
    them: Magistral's ``[THINK]`` only at the start of the reply, so an answer that writes ``[THINK]`` in code
    keeps it.

    ``tokens``: the format's marker texts that are special tokens of the model (``MARKER_TOKENS``, the ones its
    detokenization drops): the engine writes each generated one back as :func:`token_text`, and only those count —
    the same text written by the model as ordinary tokens (quoting ``[THINK]``) stays text.
    """

    def __init__(self, fmt: str = FORMAT_THINK, tokens: frozenset[str] = frozenset()) -> None:
        machine = _MACHINES.get(fmt)
        if machine is not None and tokens:
            machine = _token_machine(machine, tokens)
        self._machine = machine
        self._tokens = tokens
        self._state = "start"
        self._buf = ""

    def feed(self, text: str) -> str:
        """The normalised text for ``text`` (may be "")."""
        if self._machine is None:
            return text
        self._buf += text
        return self._run(final=False)

    def finish(self) -> str:
        """End of stream: the text still held back."""
        if self._machine is None:
            return ""
        out = self._run(final=True)
        out += self._buf
        self._buf = ""
        return out

    def _run(self, final: bool) -> str:
        assert self._machine is not None
        out: list[str] = []
        while self._buf and self._state in self._machine:
            anchored, steps, fallback = self._machine[self._state]
            if anchored:
                body = self._buf.lstrip()
                if not body and not final:
                    break
                hit = next((s for s in steps if body.startswith(s[0])), None)
                if hit is not None:
                    self._buf = body[len(hit[0]):]
                    out.append(hit[1])
                    self._state = hit[2]
                    continue
                if not final and any(s[0].startswith(body) for s in steps):
                    break                                   # could still become a marker
                self._state = fallback
                continue
            found = [(self._buf.find(s[0]), -len(s[0]), s) for s in steps if s[0] in self._buf]
            if found:
                at, _n, (marker, rep, nxt) = min(found)
                out.append(self._buf[:at] + rep)
                self._buf = self._buf[at + len(marker):]
                self._state = nxt
                continue
            hold = 0 if final else max((_held_for(self._buf, s[0]) for s in steps), default=0)
            if self._tokens and not final:              # a written-back token not closed yet: keep it whole
                k = self._buf.rfind(TOKEN_OPEN)
                if k >= 0 and self._buf.find(TOKEN_CLOSE, k) < 0:
                    hold = max(hold, len(self._buf) - k)
            out.append(self._buf[: len(self._buf) - hold])
            self._buf = self._buf[len(self._buf) - hold:]
            break
        if self._state not in self._machine:
            out.append(self._buf)
            self._buf = ""
        text = "".join(out)
        # a written-back token no step took is a control token the reply never shows (llama.cpp drops it)
        return _TOKEN_TEXT.sub("", text) if self._tokens else text


def _held_for(buf: str, marker: str) -> int:
    """Length of the end of ``buf`` that could be the start of ``marker``."""
    for n in range(min(len(marker) - 1, len(buf)), 0, -1):
        if marker.startswith(buf[-n:]):
            return n
    return 0


# ---------------------------------------------------------------------------------------------------------
# a later reasoning section inside the answer
# ---------------------------------------------------------------------------------------------------------


def think_block(state: Any, start_line: int, end_line: int, silent: bool) -> bool:
    """Block rule: a top-level line starting with ``<think>`` opens a reasoning section inside the answer (a model
    that thinks again later; reasoning a server sent after the answer had started). It runs to the ``</think>`` or,
    never closed, to the end. Token ``think_block``:
    ``content`` the reasoning's markdown, ``meta["closed"]``; text after ``</think>`` on its line is a paragraph."""
    if state.level != 0 or state.blkIndent != 0 or state.is_code_block(start_line):
        return False
    first = state.bMarks[start_line] + state.tShift[start_line]
    if not state.src.startswith(THINK_OPEN, first):
        return False
    if silent:
        return True
    body_start = first + len(THINK_OPEN)
    line = start_line
    closed = False
    end = state.eMarks[end_line - 1] if end_line > start_line else state.eMarks[start_line]
    while line < end_line:
        lo = body_start if line == start_line else state.bMarks[line]
        at = state.src.find(THINK_CLOSE, lo, state.eMarks[line])
        if at >= 0:
            closed, end = True, at
            break
        line += 1
    token = state.push("think_block", "div", 0)
    token.block = True
    token.content = state.src[body_start:end].strip("\n")
    token.meta = {"closed": closed}
    token.map = [start_line, end_line if not closed else line + 1]
    state.line = token.map[1]
    rest = state.src[end + len(THINK_CLOSE) : state.eMarks[line]].strip(" \t") if closed else ""
    if rest:
        # the rest of the closing line is a paragraph of the answer (no map: no block boundary is taken there)
        state.push("paragraph_open", "p", 1)
        inline = state.push("inline", "", 0)
        inline.content, inline.children = rest, []
        state.push("paragraph_close", "p", -1)
    return True
