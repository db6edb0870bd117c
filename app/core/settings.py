"""Settings and folders (platformdirs), stored as JSON in the user's config folder.

``BROOK_CONFIG_DIR`` / ``BROOK_DATA_DIR`` override the folders (tests point them at a temporary folder).
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import platformdirs

from app.core.types import GenerationParams

log = logging.getLogger("brook.settings")
APP_NAME = "Brook"


def config_dir() -> Path:
    p = Path(os.environ.get("BROOK_CONFIG_DIR") or platformdirs.user_config_dir(APP_NAME, appauthor=False))
    p.mkdir(parents=True, exist_ok=True)
    return p


def data_dir() -> Path:
    p = Path(os.environ.get("BROOK_DATA_DIR") or platformdirs.user_data_dir(APP_NAME, appauthor=False))
    p.mkdir(parents=True, exist_ok=True)
    return p


def log_dir() -> Path:
    p = data_dir() / "logs"
    p.mkdir(parents=True, exist_ok=True)
    return p


@dataclass
class AppSettings:
    """User settings. Times in seconds, sizes in tokens.

    ``first_token_timeout_s`` / ``total_timeout_s``: see ``app.core.generation.StreamSettings``;
    ``n_ctx``: the llama.cpp context window; ``model_path``: ``None`` = the bundled model.
    """

    model_path: str | None = None
    n_ctx: int = 4096
    first_token_timeout_s: float = 120.0
    total_timeout_s: float = 600.0
    system_prompt: str = ""
    theme: str = "system"           # "system" | "light" | "dark"
    generation: GenerationParams = field(default_factory=GenerationParams)
    recent_models: list[str] = field(default_factory=list)

    @classmethod
    def load(cls, path: Path | None = None) -> AppSettings:
        """Read settings; a missing or unreadable file gives the defaults (logged, never raised)."""
        path = path or config_dir() / "settings.json"
        try:
            raw: dict[str, Any] = json.loads(path.read_text("utf-8"))
        except FileNotFoundError:
            return cls()
        except (OSError, ValueError) as exc:
            log.warning("settings file %s unreadable (%s); using defaults", path, exc)
            return cls()
        known = {f.name for f in fields(cls)}
        kwargs = {k: v for k, v in raw.items() if k in known and k != "generation"}
        gen_known = {f.name for f in fields(GenerationParams)}
        gen = {k: v for k, v in (raw.get("generation") or {}).items() if k in gen_known}
        if "stop" in gen:
            gen["stop"] = tuple(gen["stop"])
        try:
            return cls(**kwargs, generation=GenerationParams(**gen))
        except TypeError as exc:
            log.warning("settings file %s has bad values (%s); using defaults", path, exc)
            return cls()

    def save(self, path: Path | None = None) -> None:
        """Write atomically (temp file + rename) so a crash never leaves a half-written file."""
        path = path or config_dir() / "settings.json"
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(self), indent=2), "utf-8")
        os.replace(tmp, path)
