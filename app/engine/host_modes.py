"""Which engine-host mode worked for a model: remembered per model file and llama.cpp build.

A host that crashed while loading a model, or in its first reply, is started again in *safe mode* (see
``app.engine.hosted``); when that works, ``remember`` writes it to ``<data folder>/engine-modes.json`` so the
next start of the same file (path, size, modification time) on the same llama-cpp-python build goes straight
to safe mode instead of crashing first. A new build or a changed file starts from the normal mode again.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import json
import logging
import os
from pathlib import Path

log = logging.getLogger("brook.engine.host_modes")

FILE_NAME = "engine-modes.json"


def llama_build() -> str:
    """The llama.cpp build, as the version of llama-cpp-python that bundles it (without importing it)."""
    try:
        return f"llama-cpp-python {importlib.metadata.version('llama_cpp_python')}"
    except importlib.metadata.PackageNotFoundError:
        return "llama-cpp-python (unknown version)"


def model_key(path: str | Path) -> str:
    """``path|size|mtime_ns|build``: the same file on the same llama.cpp build (raises ``OSError``)."""
    p = Path(path).resolve()
    st = p.stat()
    return f"{p}|{st.st_size}|{st.st_mtime_ns}|{llama_build()}"


def _file() -> Path:
    from app.core.settings import data_dir

    return data_dir() / FILE_NAME


def _read() -> dict[str, str]:
    try:
        data = json.loads(_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def recall(path: str | Path) -> str | None:
    """The mode that worked for ``path`` on this build ("safe"), or None (not known: the normal mode)."""
    try:
        return _read().get(model_key(path))
    except OSError:
        return None


def remember(path: str | Path, mode: str) -> None:
    """Keep ``mode`` for ``path`` on this build (written atomically; a write error is logged, not raised)."""
    try:
        data = _read()
        data[model_key(path)] = mode
        target = _file()
        tmp = target.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=1, sort_keys=True), encoding="utf-8")
        os.replace(tmp, target)
        log.info("remembered the %s mode for %s", mode, Path(path).name)
    except OSError as exc:
        log.warning("could not remember the engine mode for %s: %s", path, exc)
        with contextlib.suppress(OSError):
            target.with_suffix(".tmp").unlink()
