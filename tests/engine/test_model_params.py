"""Brook's llama.cpp model params: the extra CPU buffer types (repacked weights, AMX) are off unless asked for,
because llama.cpp's AMX kernels kill the process on CPUs that advertise AMX but fault in it."""

from __future__ import annotations

import pytest

lib = pytest.importorskip("llama_cpp.llama_cpp")


def test_extra_buffer_types_are_off_unless_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    from app.engine.load_progress import install_model_params

    assert install_model_params()
    monkeypatch.delenv("BROOK_EXTRA_BUFTS", raising=False)
    assert lib.llama_model_default_params().use_extra_bufts is False
    monkeypatch.setenv("BROOK_EXTRA_BUFTS", "1")
    assert lib.llama_model_default_params().use_extra_bufts is True
