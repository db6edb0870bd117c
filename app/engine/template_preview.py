"""A chat template's prompt for a sample chat, without loading the model: what Settings of this model shows.

``gguf_template(path)`` reads ``tokenizer.chat_template`` and the BOS/EOS token texts from the GGUF's header
(llama.cpp's ``gguf`` reader; no weights are read). ``render_preview`` renders a template with llama-cpp-python's
``Jinja2ChatFormatter`` (the environment the model's replies use, ``app.engine.chat_prompt``) over
``SAMPLE_CHAT``; a template that fails raises ``ChatTemplateError`` saying why (the Jinja error, or the template's
own ``raise_exception`` message, e.g. "Conversation roles must alternate").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.engine.chat_prompt import ChatTemplateError

#: The chat the preview renders: a system prompt, a question, an answer, a follow-up.
SAMPLE_CHAT: list[dict[str, str]] = [
    {"role": "system", "content": "You are a helpful assistant."},
    {"role": "user", "content": "What is the capital of France?"},
    {"role": "assistant", "content": "Paris."},
    {"role": "user", "content": "And of Italy?"},
]


@dataclass(frozen=True, slots=True)
class GgufTemplate:
    """``template``: the GGUF's ``tokenizer.chat_template`` (None when it has none); ``bos`` / ``eos``: the
    texts of its BOS and EOS tokens ("" when unknown)."""

    template: str | None
    bos: str = ""
    eos: str = ""


def gguf_template(path: str | Path) -> GgufTemplate:
    """The chat template and BOS/EOS of the GGUF at ``path``. Raises ``OSError``/``ValueError`` for a file the
    reader cannot parse."""
    import gguf

    reader = gguf.GGUFReader(Path(path), "r")

    def value(key: str) -> Any:
        f = reader.fields.get(key)
        return None if f is None else f.contents()

    template = value("tokenizer.chat_template")
    tokens = reader.fields.get("tokenizer.ggml.tokens")

    def token_text(key: str) -> str:
        tid = value(key)
        if tokens is None or not isinstance(tid, int):
            return ""
        try:
            return str(tokens.contents(tid))
        except (IndexError, TypeError, ValueError):
            return ""

    return GgufTemplate(template if isinstance(template, str) else None, token_text("tokenizer.ggml.bos_token_id"),
                        token_text("tokenizer.ggml.eos_token_id"))


def render_preview(template: str, bos: str = "", eos: str = "",
                   messages: Sequence[Mapping[str, str]] = SAMPLE_CHAT) -> str:
    """The prompt ``template`` builds for ``messages`` (with the generation prompt). Raises ``ChatTemplateError``
    with the reason when it does not render."""
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    try:
        formatter = Jinja2ChatFormatter(template=template, eos_token=eos, bos_token=bos)
        return str(formatter(messages=[dict(m) for m in messages]).prompt)   # type: ignore[misc]
    except Exception as exc:      # jinja2's TemplateSyntaxError, the template's raise_exception, a TypeError…
        raise ChatTemplateError(f"The chat template does not render: {type(exc).__name__}: {exc}") from exc
