"""The prompt a chat template builds for a sample chat, read from the GGUF without loading it; a broken template
explains why; open_engine applies the model file's own settings."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.model_settings import ModelSettings, ModelSettingsStore
from app.engine.chat_prompt import CHATML_TEMPLATE, ChatTemplateError
from app.engine.open import EngineSpec, open_engine
from app.engine.template_preview import gguf_template, render_preview


def test_the_bundled_models_template_renders_the_sample_chat(bundled_model: Path) -> None:
    t = gguf_template(bundled_model)
    assert t.template and "im_start" in t.template
    prompt = render_preview(t.template, t.bos, t.eos)
    assert "<|im_start|>user\nWhat is the capital of France?<|im_end|>" in prompt
    assert prompt.rstrip().endswith("<|im_start|>assistant")


def test_a_template_that_fails_says_why() -> None:
    with pytest.raises(ChatTemplateError, match="does not render: TemplateSyntaxError"):
        render_preview("{% for m in messages %}{{ m.content }")
    refusing = "{% if messages[0].role == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}"
    with pytest.raises(ChatTemplateError, match="System role not supported"):
        render_preview(refusing)
    assert "<|im_start|>system" in render_preview(CHATML_TEMPLATE)


def test_open_engine_uses_the_model_files_own_settings(bundled_model: Path) -> None:
    ModelSettingsStore().put(bundled_model, ModelSettings(n_ctx=2048, n_gpu_layers=0, chat_template=CHATML_TEMPLATE))
    e = open_engine(EngineSpec(model_path=bundled_model, n_ctx=4096))
    assert (e.n_ctx, e.chat_template) == (2048, CHATML_TEMPLATE)
    plain = open_engine(EngineSpec(model_path=bundled_model, n_ctx=4096, model_settings=False))
    assert (plain.n_ctx, plain.chat_template) == (4096, None)
