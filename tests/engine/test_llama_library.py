"""A missing or broken llama.cpp shared library is an explained engine error (issue 10, item 8).

The whole kind: llama-cpp-python's ctypes loader failing — the library absent (``FileNotFoundError``), or present
but not loadable (``RuntimeError``: wrong architecture, truncated, missing dependency). Both simulated honestly
in a fresh process through llama-cpp-python's own ``LLAMA_CPP_LIB_PATH`` override.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = """
import sys
from app.engine.base import EngineError
from app.engine.llama import LlamaEngine
try:
    LlamaEngine(sys.argv[1]).load()
except EngineError as exc:
    print("ENGINE ERROR:", exc)
"""


@pytest.mark.parametrize("library", [None, b"\x7fELF not really a shared library"], ids=["missing", "broken"])
def test_the_library_cannot_be_loaded(tmp_path: Path, bundled_model: Path, library: bytes | None) -> None:
    if library is not None:
        (tmp_path / "libllama.so").write_bytes(library)
        (tmp_path / "libllama.dylib").write_bytes(library)
        (tmp_path / "llama.dll").write_bytes(library)
    env = dict(os.environ, LLAMA_CPP_LIB_PATH=str(tmp_path))
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(bundled_model)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "ENGINE ERROR: llama.cpp's shared library could not be loaded" in proc.stdout, proc.stdout
    assert "Reinstall llama-cpp-python" in proc.stdout
    assert "Traceback" not in proc.stderr
