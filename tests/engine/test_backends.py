"""``app.engine.backends``: llama.cpp's backends, from the installed llama-cpp-python and from the portable build
the installers bundle (every CPU variant as a module; ggml picks the best one for this CPU at run time)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.engine import backends

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "packaging"))
import llama_build  # noqa: E402  (packaging/ is no package: its modules are scripts)

pytestmark = pytest.mark.timeout(300)


def _portable_site() -> Path:
    try:
        return llama_build.portable_site(compile_missing=False)
    except SystemExit as exc:
        pytest.skip(f"the portable llama-cpp-python is not cached (python3 packaging/llama_build.py): {exc}")


def test_the_installed_llama_cpp_has_its_backends_built_in() -> None:
    found = backends.load_backends()
    assert found.error is None
    assert found.cpu_variant == "built-in" and found.loaded_from is None
    cpu = [d for d in found.devices if d.kind == "cpu"]
    assert len(cpu) == 1 and cpu[0].name == "CPU" and cpu[0].description


def test_cpu_variant_modules_are_found_by_their_file_names(tmp_path: Path) -> None:
    for name in ("libggml-cpu-haswell.so", "libggml-cpu-x64.so", "ggml-cpu-sse42.dll", "libggml-base.so",
                 "libggml-cpu.so", "libggml-vulkan.so"):
        (tmp_path / name).write_bytes(b"")
    assert set(backends.cpu_variant_modules(tmp_path)) == {"haswell", "x64", "sse42"}
    assert backends.variant_scores({"haswell": tmp_path / "libggml-cpu-haswell.so"}) == {"haswell": 0}


PROBE = """
import json, sys
from app.engine.load_progress import install_model_params
from app.engine.llama import LlamaEngine
from app.engine.models import bundled_model_path
install_model_params()
from app.engine.backends import cpu_variant_modules, load_backends, variant_scores
found = load_backends()
scores = variant_scores(cpu_variant_modules(__import__("pathlib").Path(found.loaded_from)))
engine = LlamaEngine(bundled_model_path(), n_ctx=512)
engine.load()
maps = [line.split()[-1] for line in open("/proc/self/maps") if "libggml-cpu-" in line]
print(json.dumps({"runtime": engine.runtime(), "scores": scores, "mapped": sorted(set(maps))}))
"""


@pytest.mark.model
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/maps")
def test_the_portable_build_loads_the_best_cpu_variant_for_this_cpu() -> None:
    """The variant ggml loaded (the one mapped into the process) is the one ``runtime()`` names, and the
    highest-scoring one; variants this CPU cannot run score 0, the baseline ``x64`` runs everywhere."""
    site = _portable_site()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    proc = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    runtime, scores = out["runtime"], out["scores"]
    assert runtime["cpu_variant"] == max(scores, key=scores.get)
    assert [Path(p).name for p in out["mapped"]] == [f"libggml-cpu-{runtime['cpu_variant']}.so"]
    assert runtime["backend"] == "CPU" and runtime["gpu_layers"] == 0 and runtime["n_layers"] == 30
    assert scores["x64"] > 0 and len(scores) >= 10
