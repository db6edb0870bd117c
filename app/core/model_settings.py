"""Settings of one model file: its context window, GPU layers, sampling defaults and a chat-template override.

Kept in ``model-settings.json`` in the config folder, by the model file's absolute path. What a model's settings
leave unset (``None``, or a sampling field not named) comes from the app's settings; a chat's own preset and
overrides still win over the model's sampling defaults (``app.core.chat.presets.chat_params``):

    app settings  <  the model's settings  <  the chat's own settings

A file that cannot be read gives no per-model settings (logged); a value of the wrong type is dropped.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from app.core.settings import SettingsError, config_dir
from app.core.types import GenerationParams

log = logging.getLogger("brook.model_settings")

#: The sampling fields a model may set (``GenerationParams``'s).
SAMPLING_FIELDS = frozenset(f.name for f in fields(GenerationParams))


@dataclass
class ModelSettings:
    """``n_ctx`` (tokens) and ``n_gpu_layers`` (-1 = all): ``None`` = the app's; ``sampling``: the
    ``GenerationParams`` fields this model sets (e.g. ``{"temperature": 0.6}``); ``chat_template``: a Jinja
    template used instead of the GGUF's ``tokenizer.chat_template`` (``None`` = the GGUF's own)."""

    n_ctx: int | None = None
    n_gpu_layers: int | None = None
    sampling: dict[str, Any] = field(default_factory=dict)
    chat_template: str | None = None

    @property
    def empty(self) -> bool:
        return self == ModelSettings()

    def params(self, base: GenerationParams) -> GenerationParams:
        """``base`` with this model's sampling defaults on top (unknown fields ignored)."""
        from dataclasses import replace

        known: dict[str, Any] = {k: (tuple(v) if k == "stop" and isinstance(v, list) else v)
                 for k, v in self.sampling.items() if k in SAMPLING_FIELDS}
        return replace(base, **known) if known else base


def _key(model_path: str | Path) -> str:
    return str(Path(model_path).expanduser().resolve())


class ModelSettingsStore:
    """Every model's settings, in ``path`` (default ``<config>/model-settings.json``)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or config_dir() / "model-settings.json"
        self._models: dict[str, ModelSettings] = {}
        try:
            raw = json.loads(self.path.read_text("utf-8"))
        except FileNotFoundError:
            return
        except (OSError, ValueError) as exc:
            log.warning("model settings %s unreadable (%s); none used", self.path, exc)
            return
        if not isinstance(raw, dict):
            return
        for key, entry in raw.items():
            if isinstance(entry, dict):
                self._models[key] = _checked(entry)

    def get(self, model_path: str | Path) -> ModelSettings:
        """The settings of ``model_path`` (empty ones when it has none)."""
        return self._models.get(_key(model_path), ModelSettings())

    def put(self, model_path: str | Path, settings: ModelSettings) -> None:
        """Set (empty settings: forget) ``model_path``'s settings and save. Raises ``SettingsError``."""
        key = _key(model_path)
        if settings.empty:
            self._models.pop(key, None)
        else:
            self._models[key] = settings
        tmp = self.path.with_suffix(".tmp")
        try:
            tmp.write_text(json.dumps({k: asdict(v) for k, v in self._models.items()}, indent=1), "utf-8")
            os.replace(tmp, self.path)
        except OSError as exc:
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)
            raise SettingsError(f"The model's settings could not be saved to {self.path} "
                                f"({exc.strerror or exc}).") from exc


def _checked(entry: dict[str, Any]) -> ModelSettings:
    def opt_int(v: Any) -> int | None:
        return v if isinstance(v, int) and not isinstance(v, bool) else None

    sampling = entry.get("sampling")
    template = entry.get("chat_template")
    n_ctx = opt_int(entry.get("n_ctx"))
    return ModelSettings(n_ctx=n_ctx if n_ctx is None or 128 <= n_ctx <= 1 << 20 else None,
                         n_gpu_layers=opt_int(entry.get("n_gpu_layers")),
                         sampling={k: v for k, v in sampling.items() if k in SAMPLING_FIELDS}
                         if isinstance(sampling, dict) else {},
                         chat_template=template if isinstance(template, str) and template.strip() else None)
