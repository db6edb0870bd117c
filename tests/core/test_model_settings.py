"""Per-model settings: stored by file, bad values dropped, and the order app < model < chat for sampling."""

from __future__ import annotations

import json
from pathlib import Path

from app.core.chat.presets import chat_params
from app.core.conversation import Conversation
from app.core.model_settings import ModelSettings, ModelSettingsStore
from app.core.types import GenerationParams


def test_settings_are_kept_per_model_file(tmp_path: Path) -> None:
    store = ModelSettingsStore(tmp_path / "m.json")
    a, b = tmp_path / "a.gguf", tmp_path / "b.gguf"
    store.put(a, ModelSettings(n_ctx=8192, n_gpu_layers=-1, sampling={"temperature": 0.2},
                               chat_template="{{ messages }}"))
    again = ModelSettingsStore(tmp_path / "m.json")
    assert again.get(a) == ModelSettings(8192, -1, {"temperature": 0.2}, "{{ messages }}")
    assert again.get(b) == ModelSettings() and again.get(b).empty
    again.put(a, ModelSettings())                       # empty: forgotten
    assert json.loads((tmp_path / "m.json").read_text()) == {}


def test_a_hand_edited_file_loses_only_its_bad_values(tmp_path: Path) -> None:
    key = str((tmp_path / "a.gguf").resolve())
    (tmp_path / "m.json").write_text(json.dumps({key: {"n_ctx": 5, "n_gpu_layers": "all", "chat_template": "  ",
                                                       "sampling": {"temperature": 0.3, "bogus": 1}}}))
    got = ModelSettingsStore(tmp_path / "m.json").get(tmp_path / "a.gguf")
    assert got == ModelSettings(None, None, {"temperature": 0.3}, None)
    (tmp_path / "m.json").write_text("{not json")
    assert ModelSettingsStore(tmp_path / "m.json").get(tmp_path / "a.gguf").empty


def test_the_chats_own_settings_win_over_the_models_which_win_over_the_apps() -> None:
    app = GenerationParams(temperature=0.7, top_k=40)
    model = ModelSettings(sampling={"temperature": 0.2, "top_k": 20})
    conv = Conversation()
    assert chat_params(conv, app).temperature == 0.7
    assert (chat_params(conv, app, model).temperature, chat_params(conv, app, model).top_k) == (0.2, 20)
    conv.params = {"temperature": 1.1}
    got = chat_params(conv, app, model)
    assert (got.temperature, got.top_k) == (1.1, 20)
