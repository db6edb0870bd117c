"""Presets and the chat's own system prompt and parameters, kept in a real history file."""

from __future__ import annotations

from pathlib import Path

from app.core.chat.presets import BUILTIN, chat_params, new_chat, overrides, preset
from app.core.conversation import Message, Role
from app.core.history.store import Store
from app.core.types import GenerationParams


def test_builtin_presets_differ_where_they_should() -> None:
    assert list(BUILTIN) == ["Precise", "Balanced", "Creative"]
    assert preset("Precise").params.temperature < preset("Balanced").params.temperature \
        < preset("Creative").params.temperature
    assert preset("Balanced").params == GenerationParams()
    assert preset("nonsense").name == preset(None).name == "Balanced"


def test_a_chat_keeps_its_preset_system_prompt_and_overrides_across_a_restart(tmp_path: Path) -> None:
    store = Store(tmp_path / "h.sqlite3")
    conv = new_chat("Creative", default_system_prompt="You are terse.")
    assert (conv.preset, conv.system_prompt) == ("Creative", "You are terse.")
    tuned = GenerationParams(temperature=1.3, top_p=0.98, top_k=100, min_p=0.02, repeat_penalty=1.1,
                             stop=("END",), seed=5)
    conv.params = overrides(tuned, preset("Creative").params)
    assert conv.params == {"temperature": 1.3, "stop": ["END"], "seed": 5}
    store.save_message(conv, conv.add(Message(Role.USER, "a story please")))
    conv.system_prompt = "You write in rhymes."          # edited in the chat, after it was created
    store.save_chat_settings(conv)
    store.close()

    again = Store(tmp_path / "h.sqlite3").load_conversation(conv.id or 0)
    assert (again.preset, again.system_prompt) == ("Creative", "You write in rhymes.")
    assert chat_params(again) == tuned
    assert again.prompt_messages()[0] == {"role": "system", "content": "You write in rhymes."}


def test_bad_overrides_are_ignored_and_old_chats_use_the_fallback() -> None:
    conv = new_chat("Precise")
    conv.params = {"temperature": "hot", "top_k": 7, "nonsense": 1, "stop": [1, 2], "seed": True}
    p = chat_params(conv)
    assert p.temperature == preset("Precise").params.temperature and p.top_k == 7 and p.stop == () and p.seed is None
    conv.preset = None
    fallback = GenerationParams(temperature=0.33)
    conv.params = None
    assert chat_params(conv, fallback) == fallback
