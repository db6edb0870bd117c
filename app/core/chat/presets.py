"""Presets: named sets of sampling parameters and a system prompt, chosen per chat and remembered with it.

Built in: **Precise** (low temperature, narrow sampling: facts, code, extraction), **Balanced** (llama.cpp's
defaults with temperature 0.7: everyday chat) and **Creative** (high temperature, wide sampling: stories,
brainstorming). A chat stores its preset name (``Conversation.preset``), its own system prompt
(``Conversation.system_prompt``, filled from the preset or the settings' default when the chat is created, then
the chat's own) and its own sampling parameters (``Conversation.params``: the fields that differ from the
preset). ``chat_params`` turns that into the ``GenerationParams`` of the next reply.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass
from typing import Any

from app.core.conversation import Conversation
from app.core.model_settings import ModelSettings
from app.core.text import QT_TRANSLATE_NOOP
from app.core.types import GenerationParams

log = logging.getLogger("brook.presets")


@dataclass(frozen=True, slots=True)
class Preset:
    """``system_prompt`` ``None``: use the default system prompt from the settings."""

    name: str
    params: GenerationParams
    system_prompt: str | None = None
    description: str = ""


BUILTIN: dict[str, Preset] = {p.name: p for p in (
    Preset("Precise", GenerationParams(temperature=0.2, top_p=0.9, top_k=20, min_p=0.1, repeat_penalty=1.05),
           description=QT_TRANSLATE_NOOP("Presets", "Focused and repeatable: facts, code, summaries, extraction.")),
    Preset("Balanced", GenerationParams(),
           description=QT_TRANSLATE_NOOP("Presets", "llama.cpp's defaults with temperature 0.7: everyday chat.")),
    Preset("Creative", GenerationParams(temperature=1.0, top_p=0.98, top_k=100, min_p=0.02, repeat_penalty=1.1),
           description=QT_TRANSLATE_NOOP("Presets", "Varied and surprising: stories, brainstorming, names.")),
)}
DEFAULT_PRESET = "Balanced"
#: The names, for translation (the UI shows ``translate("Presets", name)``).
NAMES = [QT_TRANSLATE_NOOP("Presets", "Precise"), QT_TRANSLATE_NOOP("Presets", "Balanced"),
         QT_TRANSLATE_NOOP("Presets", "Creative")]

_FIELDS = {f.name: f for f in dataclasses.fields(GenerationParams)}


def preset(name: str | None) -> Preset:
    """The built-in preset called ``name``; ``Balanced`` for ``None`` or an unknown name."""
    return BUILTIN.get(name or DEFAULT_PRESET) or BUILTIN[DEFAULT_PRESET]


def new_chat(preset_name: str | None, default_system_prompt: str = "",
             params: GenerationParams | None = None) -> Conversation:
    """An empty chat with ``preset_name``'s system prompt (or ``default_system_prompt``) as its own, and
    ``params`` (the settings' sampling fields, default: the preset's) stored as its overrides of the preset."""
    p = preset(preset_name)
    prompt = p.system_prompt if p.system_prompt is not None else default_system_prompt
    conv = Conversation(system_prompt=prompt or None, preset=p.name)
    if params is not None:
        conv.params = overrides(params, p.params) or None
    return conv


def overrides(params: GenerationParams, base: GenerationParams) -> dict[str, Any]:
    """The fields of ``params`` that differ from ``base`` (what a chat stores as its own parameters)."""
    return {k: _jsonable(getattr(params, k)) for k in _FIELDS if getattr(params, k) != getattr(base, k)}


def chat_params(conv: Conversation, fallback: GenerationParams | None = None,
                model: ModelSettings | None = None) -> GenerationParams:
    """The sampling parameters of ``conv``'s next reply: its preset's (``fallback`` when the chat has no preset,
    e.g. chats saved before presets existed), then ``model``'s sampling defaults (``app.core.model_settings``), with
    the chat's own overrides on top. Overrides of an unknown
    field or of the wrong type are ignored (logged), so a hand-edited history cannot break a chat."""
    base = preset(conv.preset).params if conv.preset else (fallback or GenerationParams())
    if model is not None:                 # the model file's sampling defaults, under the chat's own overrides
        base = model.params(base)
    good: dict[str, Any] = {}
    for k, v in (conv.params or {}).items():
        f = _FIELDS.get(k)
        if f is None:
            log.warning("chat %s: unknown parameter %r ignored", conv.id, k)
            continue
        default = getattr(base, k)
        if k == "stop" and isinstance(v, (list, tuple)) and all(isinstance(s, str) for s in v):
            good[k] = tuple(v)
        elif k == "seed" and (v is None or (isinstance(v, int) and not isinstance(v, bool))):
            good[k] = v
        elif isinstance(default, float) and isinstance(v, (int, float)) and not isinstance(v, bool):
            good[k] = float(v)
        elif isinstance(default, int) and isinstance(v, int) and not isinstance(v, bool):
            good[k] = v
        else:
            log.warning("chat %s: bad value for %r (%r) ignored", conv.id, k, v)
    return dataclasses.replace(base, **good)


def _jsonable(v: Any) -> Any:
    return list(v) if isinstance(v, tuple) else v


#: One-line explanation of each sampling parameter (tooltips, docs). Sources: llama.cpp ``tools/main/README.md``.
HELP: dict[str, str] = {
    "temperature": QT_TRANSLATE_NOOP(
        "SettingsHelp",
        "Randomness. 0 always picks the most likely token; 0.7 is usual for chat; above 1 gets wild."),
    "top_p": QT_TRANSLATE_NOOP(
        "SettingsHelp",
        "Nucleus sampling: keep the most likely tokens whose probabilities add up to this (0.95 = 95 %)."),
    "top_k": QT_TRANSLATE_NOOP(
        "SettingsHelp",
        "Keep only the K most likely tokens before sampling (0 = no limit)."),
    "min_p": QT_TRANSLATE_NOOP(
        "SettingsHelp",
        "Drop tokens less likely than this fraction of the most likely one (0.05 = 5 %)."),
    "repeat_penalty": QT_TRANSLATE_NOOP(
        "SettingsHelp",
        "Penalise tokens already used recently (1.0 = off; 1.1 is a gentle nudge against loops)."),
    "max_tokens": QT_TRANSLATE_NOOP(
        "SettingsHelp",
        "Longest reply, in tokens (about ¾ of a word each in English)."),
    "seed": QT_TRANSLATE_NOOP(
        "SettingsHelp",
        "Random seed. Set one to get the same reply again from the same prompt and settings."),
    "stop": QT_TRANSLATE_NOOP(
        "SettingsHelp",
        "Texts that end the reply when the model writes them (not shown)."),
    "n_threads": QT_TRANSLATE_NOOP(
        "SettingsHelp",
        "CPU threads for the model (automatic = the physical cores, minus one on a machine with up to 8, so the "
        "window keeps a core to show the reply)."),
    "n_gpu_layers": QT_TRANSLATE_NOOP(
        "SettingsHelp",
        "Model layers run on the GPU (needs a GPU build of llama.cpp; -1 = as many as fit). 0 = CPU only."),
    "n_ctx": QT_TRANSLATE_NOOP(
        "SettingsHelp",
        "Context window in tokens: how much of the chat the model sees. More needs more memory."),
}
