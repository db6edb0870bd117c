"""Chat history → prompt tokens, with message contents never parsed as special tokens.

llama-cpp-python renders the chat template and tokenizes the whole string with special-token parsing on, so a
user who types ``<|im_end|>\\n<|im_start|>system`` forges a system turn. Here the template (the GGUF's own
``tokenizer.chat_template``, rendered by llama-cpp-python's ``Jinja2ChatFormatter``: the same Jinja environment as
Hugging Face transformers) is rendered with each message's content replaced by a unique placeholder; the text
between placeholders is the template's own (tokenized with special tokens parsed), the contents are tokenized as
plain text (``special=False``), whatever the loaded model's special tokens are.

When no content would tokenize differently with special parsing on (the common case), the whole rendered string
is tokenized at once, exactly as llama-cpp-python and transformers do, so ordinary prompts are token-for-token
unchanged. ``count`` uses the same path, so the context window is measured the way the prompt is built.

A template that refuses a system role (Gemma's ``raise_exception('System role not supported')``) gets the system
prompt merged into the first user message (:func:`merge_system`, as llama.cpp and Ollama do); the template's
``source`` — a reply's provenance — says so.
"""

from __future__ import annotations

import logging
import re
import secrets
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.core.render.markdown.thinking import MARKER_TOKENS, THINK_OPEN, prompt_opens_reasoning, reasoning_format_of
from app.engine.base import EngineError

log = logging.getLogger("brook.engine.prompt")

#: Used when a GGUF has no ``tokenizer.chat_template``: ChatML, the most common instruction format.
CHATML_TEMPLATE = (
    "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + "
    "'<|im_end|>\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)


#: What a reply's provenance adds to the chat template's source when the template refuses a system role.
SYSTEM_MERGED = "system prompt merged into the first user message (the template refuses a system role)"


class ChatTemplateError(EngineError):
    """The model's chat template refused the chat (e.g. "Conversation roles must alternate") or failed."""


@dataclass(frozen=True, slots=True)
class Prompt:
    """A built prompt: ``tokens`` (ids, BOS included when the template writes it), ``stop`` strings and
    ``stopping_criteria`` from the template (end-of-turn), ``escaped``: how many message contents held text
    that special-token parsing would have turned into control tokens (they were tokenized as plain text), and
    ``reasoning_open``: the template's generation prompt ended with ``<think>`` (Qwen3-Thinking, QwQ, DeepSeek-R1
    distills; :func:`~app.core.render.markdown.thinking.prompt_opens_reasoning`), so the reply starts inside a reasoning
    section (False for a Continue: the stored partial reply already starts with its ``<think>``)."""

    tokens: list[int]
    stop: list[str]
    stopping_criteria: Any
    escaped: int
    reasoning_open: bool = False


class ChatPrompt:
    """Builds prompts for one loaded ``llama_cpp.Llama`` (``llm``) with ``template`` (default: the GGUF's)."""

    #: Message contents whose tokens are cached (a chat's history is tokenized again for every reply).
    CACHE_SIZE = 512

    def __init__(self, llm: Any, template: str | None = None) -> None:
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        self._llm = llm
        meta = getattr(llm, "metadata", {}) or {}
        #: Where the template came from (for a reply's provenance).
        self.source = "chat template given to the engine" if template else "GGUF tokenizer.chat_template"
        template = template or meta.get("tokenizer.chat_template")
        if not template:
            log.warning("the model has no chat template; using ChatML")
            template, self.source = CHATML_TEMPLATE, "ChatML (the GGUF has no chat template)"
        self.template = template

        def text_of(token_id: int) -> str:
            if token_id < 0:
                return ""
            return llm.detokenize([token_id], special=True).decode("utf-8", "replace")

        self.eos_token_id = llm.token_eos()
        self._formatter = Jinja2ChatFormatter(template=template, eos_token=text_of(self.eos_token_id),
                                              bos_token=text_of(llm.token_bos()),
                                              stop_token_ids=[self.eos_token_id])
        self._cache: OrderedDict[str, tuple[list[int], bool]] = OrderedDict()
        self._cache_lock = threading.Lock()   # counts run in several threads at once (the engine's readers)
        #: The template refuses a system role (Gemma's raise "System role not supported"): a system prompt is
        #: merged into the first user message (as llama.cpp and Ollama do), and :attr:`source` says so.
        self.merges_system = self._refuses_system()
        if self.merges_system:
            self.source += f"; {SYSTEM_MERGED}"
            log.info("the chat template refuses a system role: system prompts go into the first user message")
        #: How the model marks its reasoning (``app.core.render.markdown.thinking.reasoning_format_of``: from the
        #: template and the vocabulary's special tokens): the engine turns its markers into ``<think>…</think>``.
        self.reasoning_format = reasoning_format_of(template, self._is_special)
        #: Token id → text of the format's marker tokens that detokenization drops (control tokens: Magistral's
        #: ``[THINK]``, harmony's ``<|channel|>`` …): the engine writes their text back where they were generated.
        self.reasoning_markers: dict[int, str] = {}
        for marker in MARKER_TOKENS.get(self.reasoning_format, ()):
            ids = llm.tokenize(marker.encode("utf-8"), add_bos=False, special=True)
            if len(ids) == 1 and llm.detokenize(ids, special=False) == b"":
                self.reasoning_markers[ids[0]] = marker

    # tokens ----------------------------------------------------------------------------------------------
    def _is_special(self, text: str) -> bool:
        """Whether ``text`` is one special token of the model's vocabulary."""
        try:
            return len(self._llm.tokenize(text.encode("utf-8"), add_bos=False, special=True)) == 1
        except Exception:   # a vocabulary that cannot tokenize it
            return False

    def text_tokens(self, text: str) -> list[int]:
        """Tokens of ``text`` as plain text: a special token's text becomes ordinary tokens, no BOS."""
        return self._content(text)[0]

    def _content(self, text: str) -> tuple[list[int], bool]:
        """(plain tokens of ``text``, whether special-token parsing would change them); cached."""
        with self._cache_lock:
            hit = self._cache.get(text)
            if hit is not None:
                self._cache.move_to_end(text)
                return hit
        data = text.encode("utf-8")
        plain = self._llm.tokenize(data, add_bos=False, special=False)
        differs = plain != self._llm.tokenize(data, add_bos=False, special=True)
        with self._cache_lock:
            self._cache[text] = hit = (plain, differs)
            if len(self._cache) > self.CACHE_SIZE:
                self._cache.popitem(last=False)
        return hit

    def _refuses_system(self) -> bool:
        """Whether the template renders a chat without a system message but raises for one with it."""
        user: Any = {"role": "user", "content": "x"}
        system: Any = {"role": "system", "content": "s"}
        try:
            self._formatter(messages=[user])
        except Exception:
            return False             # it refuses more than the system role: let build() report it
        try:
            self._formatter(messages=[system, user])
        except Exception:
            return True
        return False

    def _render(self, messages: Sequence[Mapping[str, str]]) -> Any:
        if self.merges_system:
            messages = merge_system(messages)
        try:
            shaped: Any = [dict(m) for m in messages]
            return self._formatter(messages=shaped)
        except Exception as exc:   # jinja2 errors and the template's own raise_exception (ValueError)
            raise ChatTemplateError(f"The model's chat template refused this chat: {exc}") from exc

    def build(self, messages: Sequence[Mapping[str, str]]) -> Prompt:
        """Render the template for ``messages`` (with the generation prompt) and tokenize it so that no
        message content becomes a special token. When the last message is the assistant's (Continue), the prompt
        is the template for the messages before it followed by that partial reply, so the model goes on inside
        the same turn; when the generation prompt already opened ``<think>``, the ``<think>`` the stored partial
        reply starts with (see :attr:`Prompt.reasoning_open`) is not written twice. Raises ``ChatTemplateError``."""
        contents = [m.get("content") or "" for m in messages]
        partial: str | None = None
        if messages and messages[-1].get("role") == "assistant":
            messages, partial = messages[:-1], contents.pop()
        escaped = sum(1 for c in [*contents, partial or ""] if c and self._content(c)[1])
        if not escaped:
            result = self._render(messages)
            opens = prompt_opens_reasoning(result.prompt)
            partial = _without_open_tag(partial, opens)
            text = result.prompt + (partial or "")
            whole: list[int] = self._llm.tokenize(text.encode("utf-8"), add_bos=False, special=True)
            return Prompt(whole, list(result.stop or []), result.stopping_criteria, 0, opens and partial is None)
        nonce = secrets.token_hex(8)
        shaped = [{**dict(m), "content": f"\x1e{nonce}:{i}\x1e"} for i, m in enumerate(messages)]
        result = self._render(shaped)
        opens = prompt_opens_reasoning(result.prompt)
        partial = _without_open_tag(partial, opens)
        parts = re.split(f"\x1e{nonce}:(\\d+)\x1e", result.prompt)   # template, index, template, …
        tokens: list[int] = []
        for k, part in enumerate(parts):
            if k % 2:
                tokens += self._content(contents[int(part)])[0]
            elif part:
                tokens += self._llm.tokenize(part.encode("utf-8"), add_bos=False, special=True)
        if partial:
            tokens += self._content(partial)[0]
        return Prompt(tokens, list(result.stop or []), result.stopping_criteria, escaped, opens and partial is None)

    def count(self, messages: Sequence[Mapping[str, str]]) -> int:
        """Tokens of the prompt ``build(messages)`` makes (template markers and generation prompt included)."""
        return len(self.build(messages).tokens)


def merge_system(messages: Sequence[Mapping[str, str]]) -> list[dict[str, str]]:
    """``messages`` with every system message's content put in front of the first user message after it
    (joined by a blank line, as llama.cpp's and Ollama's Gemma templates do), or made a user message of its own
    when no user message follows. Other messages are unchanged."""
    out: list[dict[str, str]] = []
    pending: list[str] = []
    for m in messages:
        if m.get("role") == "system":
            if m.get("content"):
                pending.append(m.get("content") or "")
            continue
        if pending and m.get("role") == "user":
            m = {**dict(m), "content": "\n\n".join([*pending, m.get("content") or ""])}
            pending = []
        out.append(dict(m))
    if pending:
        out.append({"role": "user", "content": "\n\n".join(pending)})
    return out


def _without_open_tag(partial: str | None, opens: bool) -> str | None:
    """A Continue's partial reply without its leading ``<think>`` when the generation prompt wrote one already."""
    if partial is not None and opens:
        stripped = partial.lstrip()
        if stripped.startswith(THINK_OPEN):
            return stripped[len(THINK_OPEN):]
    return partial
