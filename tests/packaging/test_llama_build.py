"""``packaging/llama_build.py``: the installers' llama.cpp is a portable build, and a native one is refused."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "packaging"))
import llama_build  # noqa: E402  (packaging/ is no package: its modules are scripts)

pytestmark = pytest.mark.skipif(sys.platform == "darwin", reason="macOS links its CPU code in by design")


def test_the_installed_native_llama_cpp_is_refused() -> None:
    """pip's own build (GGML_NATIVE=ON: -march=native, the CPU code linked into libggml-cpu) only runs on CPUs
    like the build machine's: build.py must not bundle it."""
    import llama_cpp

    lib = Path(llama_cpp.__file__).parent / "lib"
    with pytest.raises(llama_build.NativeBuildError, match=r"native llama\.cpp build"):
        llama_build.check_portable(lib)


def test_the_cmake_flags_ask_for_every_cpu_variant(monkeypatch) -> None:
    monkeypatch.delenv("BROOK_LLAMA_GPU", raising=False)
    args = llama_build.cmake_args()
    assert {"-DGGML_NATIVE=OFF", "-DGGML_BACKEND_DL=ON", "-DGGML_CPU_ALL_VARIANTS=ON"} <= set(args)
    assert "-DGGML_VULKAN=ON" in llama_build.cmake_args("vulkan")
    assert llama_build.cache_dir("0.3.36", args) != llama_build.cache_dir("0.3.36", llama_build.cmake_args("vulkan"))
    with pytest.raises(SystemExit, match="only 'vulkan'"):
        llama_build.cmake_args("cuda")


def test_a_missing_cache_says_how_to_build_it(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("BROOK_BUILD_CACHE", str(tmp_path))
    with pytest.raises(SystemExit, match="no portable llama-cpp-python"):
        llama_build.portable_site(compile_missing=False)


def test_the_cached_portable_build_passes_with_every_variant() -> None:
    try:
        site = llama_build.portable_site(compile_missing=False)
    except SystemExit as exc:
        pytest.skip(f"the portable llama-cpp-python is not cached: {exc}")
    variants = llama_build.check_portable(site / "llama_cpp" / "lib")
    assert "libggml-cpu-x64.so" in variants and "libggml-cpu-haswell.so" in variants
    assert not (site / "llama_cpp" / "lib" / "libggml-cpu.so").exists()


def test_a_vulkan_build_with_headers_too_old_is_refused_before_compiling(tmp_path) -> None:
    """Debian 12's Vulkan headers (1.3.239) lack VK_EXT_layer_settings: llama.cpp's Vulkan backend failed to
    compile after 40% of a 14-minute build. ``check_vulkan`` says so at once; headers that have it pass."""
    system = Path("/usr/include/vulkan/vulkan_core.h")
    if not system.is_file() or llama_build.VULKAN_NEEDS in system.read_text("utf-8", "replace"):
        pytest.skip("needs the system's old Vulkan headers (Debian 12's libvulkan-dev)")
    env = {"PATH": "/usr/bin:/bin", "VULKAN_SDK": str(tmp_path / "no-sdk")}
    assert llama_build.vulkan_header(env) == system
    with pytest.raises(SystemExit, match=r"1\.x\.\d+\) lack VkLayerSettingsCreateInfoEXT"):
        llama_build.check_vulkan(env)
    newer = sorted(llama_build.cache_root().glob("vulkan-sdk-*/include/vulkan/vulkan_core.h"))
    if not newer:
        pytest.skip("no newer Vulkan headers in the build cache (packaging/README.md says how to make them)")
    sdk = newer[-1].parents[2]
    llama_build.check_vulkan({"PATH": "/usr/bin:/bin", "VULKAN_SDK": str(sdk)})      # newer headers: no error
    assert llama_build.vulkan_header({"VULKAN_SDK": str(sdk)}) == newer[-1]
