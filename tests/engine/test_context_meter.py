"""The context meter counts what llama.cpp will really prefill (real bundled model)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.chat.context_meter import measure
from app.core.conversation import Conversation, Message, Role
from app.core.types import GenerationParams
from app.engine.llama import LlamaEngine

pytestmark = [pytest.mark.model, pytest.mark.timeout(180)]


def test_count_equals_the_engines_own_prompt_tokens_and_old_messages_left_out_are_reported(bundled_model: Path):
    engine = LlamaEngine(bundled_model, n_ctx=512)
    engine.load()
    try:
        conv = Conversation(system_prompt="You are terse.")
        conv.add(Message(Role.USER, "你好！Say hi in three languages."))
        conv.add(Message(Role.ASSISTANT, "Hello, Bonjour, Hola."))
        usage = measure(engine, conv, "And in German?")
        real = engine._llm.create_chat_completion(
            messages=[*conv.prompt_messages(), {"role": "user", "content": "And in German?"}], max_tokens=1,
            temperature=0.0)["usage"]["prompt_tokens"]
        assert usage.used == real and usage.left_out == 0 and usage.window == 512 and not usage.warning

        for i in range(30):
            conv.add(Message(Role.USER if i % 2 == 0 else Role.ASSISTANT, f"message {i}: " + "words " * 20))
        full = measure(engine, conv, params=GenerationParams(max_tokens=128))
        assert full.left_out > 0 and full.warning and full.used <= 512 - 128
    finally:
        engine.unload()
