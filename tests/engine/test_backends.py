"""``app.engine.backends``: llama.cpp's backends, from the installed llama-cpp-python and from the portable build
the installers bundle (every CPU variant as a module; ggml picks the best one for this CPU at run time)."""

from __future__ import annotations

import json
import os
import shutil
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


def test_layers_that_fit_share_the_weights_and_the_kv_cache() -> None:
    gib = 1 << 30
    reserve = backends.GPU_RESERVE_BYTES
    # a 7B Q4 (4 GiB, 32 blocks + output) with a 1 GiB KV cache: 33 layers of 5/33 GiB each
    assert backends.layers_that_fit(4 * gib, 32, gib, 8 * gib) == 33                  # everything fits
    assert backends.layers_that_fit(4 * gib, 32, gib, 3 * gib + reserve) == 19        # 3 GiB: 19 layers
    assert backends.layers_that_fit(4 * gib, 32, gib, reserve) == 0                   # nothing beyond the reserve
    assert backends.layers_that_fit(4 * gib, 0, gib, 8 * gib) == 0


def test_as_many_as_fit_is_the_cpu_without_a_gpu() -> None:
    cpu_only = backends.Backends(cpu_variant="x64", devices=(backends.Device("CPU", "a CPU", "cpu", 1, 2),))
    assert backends.gpu_layers_for(backends.AS_MANY_AS_FIT, "unused.gguf", 4096, cpu_only) == 0
    assert backends.gpu_layers_for(7, "unused.gguf", 4096, cpu_only) == 7           # asked for: as it is


def test_as_many_as_fit_on_a_small_gpu_from_the_gguf_header() -> None:
    from app.engine.library import read_model_info
    from app.engine.models import bundled_model_path

    path = bundled_model_path()
    info = read_model_info(path)
    assert info.n_layers == 30
    per_layer = (info.size_bytes + (info.kv_cache_bytes(4096) or 0)) / 31
    for free_layers, expect in ((10.5, 10), (100, 31)):
        gpu = backends.Device("Vulkan0", "a GPU", "gpu", int(backends.GPU_RESERVE_BYTES + free_layers * per_layer),
                              8 << 30)
        found = backends.Backends(cpu_variant="x64", devices=(gpu, backends.Device("CPU", "a CPU", "cpu", 1, 2)))
        assert backends.gpu_layers_for(backends.AS_MANY_AS_FIT, path, 4096, found) == expect


VULKAN_PROBE = """
import asyncio, json
from app.engine.load_progress import install_model_params
install_model_params()
from app.core.conversation import Conversation, Message, MessageStatus, Role
from app.core.streaming.generation import generate
from app.core.streaming.provenance import describe
from app.core.streaming.scheduler import FairScheduler
from app.core.types import GenerationParams
from app.engine.llama import LlamaEngine
from app.engine.models import bundled_model_path
engine = LlamaEngine(bundled_model_path(), n_ctx=1024)          # n_gpu_layers: as many as fit
engine.load()
conv = Conversation()
conv.add(Message(Role.USER, "Say hello."))
reply = conv.add(Message(Role.ASSISTANT, status=MessageStatus.WAITING))
asyncio.run(generate(engine, FairScheduler(1), conv, reply, GenerationParams(temperature=0.0, seed=1, max_tokens=24)))
print(json.dumps({"runtime": engine.runtime(), "text": reply.text, "status": reply.status.value,
                  "tokens": (reply.metrics or {}).get("decode_tokens"), "provenance": reply.provenance,
                  "device_row": dict(describe(reply)).get("device")}))
"""


@pytest.mark.model
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Mesa's lavapipe ICD is a Linux path")
def test_a_reply_with_every_layer_on_the_vulkan_device_of_lavapipe() -> None:
    """Mesa's software Vulkan device (lavapipe, ``mesa-vulkan-drivers``) stands in for a GPU: the portable
    build with ``BROOK_LLAMA_GPU=vulkan`` offloads all 31 layers (as many as fit) and streams a reply, whose
    provenance names the device and the layers on it."""
    icd = Path("/usr/share/vulkan/icd.d/lvp_icd.x86_64.json")
    if not icd.is_file():
        pytest.skip("lavapipe is not installed (apt-get install mesa-vulkan-drivers)")
    try:
        site = llama_build.portable_site(compile_missing=False, args=llama_build.cmake_args("vulkan"))
    except SystemExit as exc:
        pytest.skip(f"no cached Vulkan build (BROOK_LLAMA_GPU=vulkan python3 packaging/llama_build.py): {exc}")
    # ggml skips CPU-type Vulkan devices unless they are named: lavapipe is one
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)]), "VK_ICD_FILENAMES": str(icd),
           "GGML_VK_VISIBLE_DEVICES": "0"}
    proc = subprocess.run([sys.executable, "-c", VULKAN_PROBE], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=280)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    runtime, prov = out["runtime"], out["provenance"]
    assert runtime["backend"].startswith("Vulkan") and "llvmpipe" in runtime["device"]
    assert runtime["gpu_layers"] == runtime["n_layers"] + 1 == 31
    assert out["status"] == "done" and len(out["text"].strip()) > 0 and out["tokens"] > 0
    assert {k: prov[k] for k in ("backend", "device", "gpu_layers")} == {k: runtime[k] for k in
                                                                        ("backend", "device", "gpu_layers")}
    assert out["device_row"] == f"{runtime['device']} ({runtime['backend']}), 31 of 31 layers"


@pytest.mark.model
def test_a_failed_gpu_load_falls_back_to_the_cpu(monkeypatch) -> None:
    """A device too small (or a driver that fails) makes llama.cpp refuse the load with layers on the GPU:
    the engine loads the model again on the CPU."""
    from app.engine import llama as llama_mod
    from app.engine.models import bundled_model_path

    real = llama_mod.import_llama()
    asked: list[int] = []

    def llama_with_a_failing_gpu(**kwargs):
        asked.append(kwargs["n_gpu_layers"])
        if kwargs["n_gpu_layers"] > 0:
            raise ValueError("Failed to load model from file: out of device memory")
        return real(**kwargs)

    monkeypatch.setattr(llama_mod, "import_llama", lambda: llama_with_a_failing_gpu)
    monkeypatch.setattr(backends, "gpu_layers_for", lambda *_a, **_k: 31)
    engine = llama_mod.LlamaEngine(bundled_model_path(), n_ctx=512)
    engine.load()
    try:
        assert asked == [31, 0] and engine.gpu_layers == 0
        assert engine.runtime()["gpu_layers"] == 0 and engine.runtime()["backend"] == "CPU"
    finally:
        engine.unload()


QEMU_PROBE = """
import json, threading
from app.engine.load_progress import install_model_params
install_model_params()
from app.core.types import GenerationParams
from app.engine.llama import LlamaEngine
from app.engine.models import bundled_model_path
engine = LlamaEngine(bundled_model_path(), n_ctx=256, n_threads=2)
engine.load()
chunks = list(engine.stream([{"role": "user", "content": "Hi"}], GenerationParams(temperature=0.0, seed=1,
                                                                                   max_tokens=12), threading.Event()))
print(json.dumps({"runtime": engine.runtime(), "tokens": sum(c.n_tokens for c in chunks)}))
"""


@pytest.mark.model
@pytest.mark.timeout(2400)
@pytest.mark.skipif(os.environ.get("BROOK_TEST_QEMU") != "1",
                    reason="emulated CPUs take minutes per run: BROOK_TEST_QEMU=1 (and apt-get install qemu-user)")
@pytest.mark.parametrize(("cpu", "variant"), [("Haswell", "haswell"), ("Nehalem", "sse42")])
def test_the_portable_build_runs_on_older_cpus_under_emulation(cpu: str, variant: str) -> None:
    """An AVX2 laptop (Haswell) and a CPU without AVX (Nehalem), emulated by ``qemu-x86_64 -cpu``: the build
    made on this AVX-512/AMX machine loads the model on each one's variant and decodes (the native one died with
    SIGILL). In-process: an engine host would be exec'd outside qemu."""
    if shutil.which("qemu-x86_64") is None or os.uname().machine != "x86_64":
        pytest.skip("needs qemu-x86_64 on x86-64")
    site = _portable_site()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    proc = subprocess.run(["qemu-x86_64", "-cpu", cpu, sys.executable, "-c", QEMU_PROBE], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=2300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["runtime"]["cpu_variant"] == variant and out["tokens"] > 0
