"""Settings and folders (platformdirs), stored as JSON in the user's config folder.

``BROOK_CONFIG_DIR`` / ``BROOK_DATA_DIR`` override the folders (tests point them at a temporary folder).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import platformdirs

from app.core.errors import BrookError
from app.core.text import decode_utf8, valid_json
from app.core.types import GenerationParams

log = logging.getLogger("brook.settings")
APP_NAME = "Brook"


def _folder(p: Path) -> Path:
    """``p``, created if missing; never raises (a read-only disk is reported where files are opened)."""
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        log.warning("cannot create folder %s: %s", p, exc)
    return p


def config_dir() -> Path:
    """Settings folder (platformdirs' user config dir, or ``BROOK_CONFIG_DIR``)."""
    return _folder(Path(os.environ.get("BROOK_CONFIG_DIR") or platformdirs.user_config_dir(APP_NAME, appauthor=False)))


def data_dir() -> Path:
    """History and logs folder (platformdirs' user data dir, or ``BROOK_DATA_DIR``)."""
    return _folder(Path(os.environ.get("BROOK_DATA_DIR") or platformdirs.user_data_dir(APP_NAME, appauthor=False)))


def log_dir() -> Path:
    return _folder(data_dir() / "logs")


@dataclass
class AppSettings:
    """User settings. Times in seconds, sizes in tokens.

    ``first_token_timeout_s`` / ``total_timeout_s``: see ``app.core.streaming.generation.StreamSettings``;
    ``n_ctx``: the llama.cpp context window; ``model_path``: ``None`` = the bundled model;
    ``watchdog_threshold_ms``: see ``app.core.streaming.watchdog`` (0 turns the watchdog off).
    """

    model_path: str | None = None
    n_ctx: int = 4096
    first_token_timeout_s: float = 120.0
    total_timeout_s: float = 600.0
    system_prompt: str = ""
    theme: str = "system"           # "system" | "light" | "dark"
    generation: GenerationParams = field(default_factory=GenerationParams)
    recent_models: list[str] = field(default_factory=list)
    n_threads: int | None = None    # decode threads; None = llama.cpp's choice
    n_gpu_layers: int = -1          # layers offloaded to the GPU (with a GPU build of llama.cpp); -1 = as many as fit
    models_dir: str | None = None   # the model library folder; None = <data folder>/models
    preset: str = "Balanced"        # preset of new chats (app.core.chat.presets)
    language: str = "system"        # UI language: "system" | "en" | "zh_CN"
    #: event-loop watchdog: warn when the loop has not turned for longer than this (ms); 0 = off
    watchdog_threshold_ms: float = 100.0
    idle_unload_minutes: float = 0.0   # unload the model after this long without a reply; 0 = never
    #: the window as it was closed: the chat shown, the window geometry (Qt's saveGeometry, base64) and the
    #: sidebar width (px; 0 = collapsed), so a restart opens where the person left off
    last_conversation_id: int | None = None
    window_geometry: str = ""
    sidebar_width: int = 220

    @classmethod
    def load(cls, path: Path | None = None) -> AppSettings:
        """Read settings; never raises. A missing or unreadable file gives the defaults; a value of the wrong
        type or out of range is replaced by its default (each logged), so a hand-edited file cannot stop the app."""
        path = path or config_dir() / "settings.json"
        try:
            raw: Any = valid_json(json.loads(decode_utf8(path.read_bytes())))
        except FileNotFoundError:
            return cls()
        except (OSError, ValueError) as exc:
            log.warning("settings file %s unreadable (%s); using defaults", path, exc)
            return cls()
        if not isinstance(raw, dict):
            log.warning("settings file %s is not a JSON object; using defaults", path)
            return cls()
        defaults = cls()
        kwargs = _checked(raw, defaults, path)
        gen_raw = raw.get("generation")
        gen = defaults.generation
        if isinstance(gen_raw, dict):
            gen = GenerationParams(**_checked(gen_raw, gen, path))
        elif gen_raw is not None:
            log.warning("settings file %s: 'generation' is not an object; using defaults", path)
        kwargs.pop("generation", None)
        return cls(**kwargs, generation=gen)
    def save(self, path: Path | None = None) -> None:
        """Write atomically (temp file + rename) so a crash never leaves a half-written file. Raises
        ``SettingsError`` (a ``BrookError`` for the window, and an ``OSError``) when the file cannot be written:
        a read-only or missing config folder, a full disk."""
        path = path or config_dir() / "settings.json"
        tmp = path.with_suffix(".tmp")
        try:
            tmp.write_text(json.dumps(asdict(self), indent=2), "utf-8")
            os.replace(tmp, path)
        except OSError as exc:
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)
            log.warning("saving settings to %s failed: %s", path, exc)
            raise SettingsError(f"Settings could not be saved to {path} ({exc.strerror or exc}); they apply until "
                                "you close Brook. Check that the folder exists and can be written.") from exc


class SettingsError(BrookError, OSError):
    """The settings file could not be written (the message says where and why)."""


#: Allowed ranges of numeric settings (inclusive); values outside fall back to the default.
_RANGES: dict[str, tuple[float, float]] = {
    "n_ctx": (128, 1 << 20), "first_token_timeout_s": (0.1, 86400.0), "total_timeout_s": (0.1, 7 * 86400.0),
    "temperature": (0.0, 5.0), "top_p": (0.0, 1.0), "top_k": (0, 100000), "repeat_penalty": (0.0, 10.0),
    "max_tokens": (1, 1 << 20), "seed": (0, (1 << 32) - 1), "min_p": (0.0, 1.0), "n_threads": (1, 1024),
    "n_gpu_layers": (-1, 100000), "watchdog_threshold_ms": (0.0, 60000.0),
    "idle_unload_minutes": (0.0, 7 * 24 * 60.0), "sidebar_width": (0, 4000),
}


def _checked(raw: dict[str, Any], defaults: Any, path: Path) -> dict[str, Any]:
    """The entries of ``raw`` that name a field of ``defaults`` and have that field's type (and range)."""
    out: dict[str, Any] = {}
    for f in fields(defaults):
        if f.name not in raw:
            continue
        value, default = raw[f.name], getattr(defaults, f.name)
        ok = _same_kind(value, default, f.name)
        if ok and isinstance(value, (int, float)) and not isinstance(value, bool) and f.name in _RANGES:
            lo, hi = _RANGES[f.name]
            ok = lo <= value <= hi
        if ok:
            out[f.name] = tuple(value) if isinstance(default, tuple) else value
        else:
            log.warning("settings file %s: bad value for %r (%r); using %r", path, f.name, value, default)
    return out


def _same_kind(value: Any, default: Any, name: str) -> bool:
    if isinstance(value, bool) or isinstance(default, bool):
        return isinstance(value, bool) and isinstance(default, bool)
    if default is None:                      # optional fields: model_path (str), seed (int)
        return value is None or isinstance(value, str if name in ("model_path", "models_dir") else int)
    if isinstance(default, float):
        return isinstance(value, (int, float))
    if isinstance(default, int):
        return isinstance(value, int)
    if isinstance(default, str):
        return isinstance(value, str)
    if isinstance(default, (list, tuple)):
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    return isinstance(value, dict)

