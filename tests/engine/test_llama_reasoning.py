"""A chat template whose generation prompt opens ``<think>`` (Qwen3-Thinking-2507, QwQ, DeepSeek-R1 distills),
on the real bundled model: the reply's text starts with ``<think>``, so it renders with a Thinking section live
and when reopened; a Continue does not write ``<think>`` twice; the next turn's prompt drops the reasoning."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.conversation import Conversation, Message, Role
from app.core.render.markdown import prompt_opens_reasoning, render_markdown, split_thinking
from app.core.types import GenerationParams
from app.engine.llama import LlamaEngine
from tests.helpers.replies import reply_through_pipeline

pytestmark = [pytest.mark.model, pytest.mark.timeout(240)]

#: The shape of Qwen3-4B-Thinking-2507's ``tokenizer.chat_template`` (tools left out): earlier assistant turns
#: lose their reasoning (``content.split('</think>')``), the generation prompt opens ``<think>``.
QWEN3_THINKING_TEMPLATE = (
    "{%- if messages[0].role == 'system' %}{{- '<|im_start|>system\\n' + messages[0].content + '<|im_end|>\\n' }}"
    "{%- endif %}"
    "{%- for message in messages %}"
    "{%- if message.role == 'user' or (message.role == 'system' and not loop.first) %}"
    "{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + '\\n' }}"
    "{%- elif message.role == 'assistant' %}"
    "{%- set content = message.content %}"
    "{%- if '</think>' in content %}{%- set content = content.split('</think>')[-1].lstrip('\\n') %}{%- endif %}"
    "{{- '<|im_start|>' + message.role + '\\n' + content + '<|im_end|>\\n' }}"
    "{%- endif %}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n<think>\\n' }}{%- endif %}"
)
#: Qwen3 (hybrid) with thinking switched off writes an empty, closed section: the reply is not inside one.
QWEN3_NO_THINKING_PROMPT = "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"
PARAMS = GenerationParams(temperature=0.0, seed=1, max_tokens=10)


def test_generation_prompts_that_open_reasoning() -> None:
    assert prompt_opens_reasoning("<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n")
    assert prompt_opens_reasoning("<｜User｜>Hi<｜Assistant｜><think>\n")                 # R1 distills
    assert not prompt_opens_reasoning(QWEN3_NO_THINKING_PROMPT)
    assert not prompt_opens_reasoning("<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n")


def test_a_template_that_opens_reasoning_makes_a_reply_inside_it(bundled_model: Path) -> None:
    engine = LlamaEngine(bundled_model, n_ctx=1024, chat_template=QWEN3_THINKING_TEMPLATE)
    engine.load()
    try:
        chat = engine._prompt
        assert chat is not None
        question = [{"role": "user", "content": "What is 2+2?"}]
        built = chat.build(question)
        prompt = engine._llm.detokenize(built.tokens, special=True).decode()
        assert prompt.endswith("<|im_start|>assistant\n<think>\n") and built.reasoning_open

        conv = Conversation()
        conv.add(Message(Role.USER, "What is 2+2?"))
        reply, _ = reply_through_pipeline(engine, conv, PARAMS)
        assert reply.text.startswith("<think>") and len(reply.text) > len("<think>")
        # rendered as reasoning (it never closed within 10 tokens: at the end it is shown as the answer)
        thinking, answer, _done = split_thinking(reply.text)
        assert thinking is None and answer == reply.text[len("<think>"):]
        assert "&lt;think&gt;" not in render_markdown(reply.text)

        # Continue: the partial reply's own "<think>" is not written after the template's
        cont = chat.build([*question, {"role": "assistant", "content": reply.text}])
        text = engine._llm.detokenize(cont.tokens, special=True).decode()
        assert text.endswith("<|im_start|>assistant\n<think>\n" + reply.text[len("<think>"):])
        assert "<think>\n<think>" not in text and not cont.reasoning_open

        # the next turn: the template drops the earlier reasoning, the stored "<think>" does no harm
        closed = "<think>\nadd them\n</think>\n\nFour."
        nxt = chat.build([*question, {"role": "assistant", "content": closed}, {"role": "user", "content": "And 3+3?"}])
        text = engine._llm.detokenize(nxt.tokens, special=True).decode()
        assert "<|im_start|>assistant\nFour.<|im_end|>" in text and "add them" not in text and nxt.reasoning_open
    finally:
        engine.unload()


def test_an_ordinary_template_adds_nothing(bundled_model: Path) -> None:
    engine = LlamaEngine(bundled_model, n_ctx=1024)
    engine.load()
    try:
        conv = Conversation()
        conv.add(Message(Role.USER, "What is 2+2?"))
        reply, _ = reply_through_pipeline(engine, conv, PARAMS)
        assert reply.text and not reply.text.startswith("<think>")
    finally:
        engine.unload()


def test_a_marker_token_that_detokenization_drops_is_written_back_where_it_was_generated(
        bundled_model: Path) -> None:
    """Magistral's ``[THINK]`` and harmony's ``<|channel|>`` are control tokens: llama-cpp-python's text drops
    them. The engine notes each generated one (``ChatPrompt.reasoning_markers``) and writes its text back at its
    place (as :func:`token_text`, so only it counts, not the same text typed). SmolLM2 has no such token, so one
    of its ordinary tokens stands in for it here."""
    import threading

    from app.core.render.markdown.thinking import token_text

    e = LlamaEngine(bundled_model, n_ctx=512)
    e.load()
    try:
        assert e._prompt is not None and e._prompt.reasoning_markers == {}    # ChatML: no format, no markers
        msgs = [{"role": "user", "content": "Say hi."}]
        params = GenerationParams(temperature=0.0, seed=1, max_tokens=64)
        chunks = list(e.stream(msgs, params, threading.Event()))
        assert chunks[-1].finish_reason == "stop"                            # ended by its end-of-turn token
        plain = [c.text for c in chunks]
        pieces = [p for p in plain if p]
        assert len(pieces) >= 4
        for k in (1, len(pieces) - 1):           # a token mid-reply, and the reply's last one
            token = e._llm.tokenize(pieces[k].encode(), add_bos=False, special=False)
            assert len(token) == 1
            e._prompt.reasoning_markers = {token[0]: "[/THINK]"}
            marked = "".join(c.text for c in e.stream(msgs, params, threading.Event()))
            head = "".join(pieces[: k + 1])
            assert marked == head + token_text("[/THINK]") + "".join(plain)[len(head):]
    finally:
        e.unload()
