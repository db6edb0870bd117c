"""Continue on the real bundled model: the model goes on from the partial reply, in the same message."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from app.core.conversation import Conversation, Message, MessageStatus, Role
from app.core.streaming.generation import generate
from app.core.streaming.scheduler import FairScheduler
from app.core.types import GenerationParams
from app.engine.llama import LlamaEngine

pytestmark = [pytest.mark.model, pytest.mark.timeout(180)]


def test_continue_goes_on_from_the_partial_text(bundled_model: Path) -> None:
    engine = LlamaEngine(bundled_model, n_ctx=1024)
    engine.load()
    try:
        conv = Conversation()
        conv.add(Message(Role.USER, "Count from 1 to 20, separated by commas."))
        reply = conv.add(Message(Role.ASSISTANT, status=MessageStatus.WAITING))
        params = GenerationParams(temperature=0.0, seed=1, max_tokens=12)
        asyncio.run(generate(engine, FairScheduler(1), conv, reply, params))
        first = reply.text
        assert reply.stop_reason == "length" and first.strip()

        assert engine._prompt is not None
        built = engine._prompt.build([*conv.prompt_messages(upto=reply), {"role": "assistant", "content": first}])
        prompt = engine._llm.detokenize(built.tokens, special=True).decode()
        assert prompt.endswith("<|im_start|>assistant\n" + first) and "<|im_end|>" not in prompt[-len(first) - 30:]

        asyncio.run(generate(engine, FairScheduler(1), conv, reply, params.__class__(temperature=0.0, seed=1,
                                                                                         max_tokens=24)))
        assert reply.text.startswith(first) and len(reply.text) > len(first)
        assert reply.status is MessageStatus.DONE and len(conv.messages) == 2
        # the same as generating the whole reply in one go (greedy decoding)
        once = Conversation()
        once.add(Message(Role.USER, "Count from 1 to 20, separated by commas."))
        whole = once.add(Message(Role.ASSISTANT, status=MessageStatus.WAITING))
        asyncio.run(generate(engine, FairScheduler(1), once, whole, GenerationParams(temperature=0.0, seed=1,
                                                                                     max_tokens=36)))
        assert whole.text.startswith(reply.text[: len(first) + 5])
    finally:
        engine.unload()
