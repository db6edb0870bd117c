"""A portable llama-cpp-python for the installers: compiled once per version and flags, cached, never committed.

``pip install llama-cpp-python`` compiles llama.cpp with ``GGML_NATIVE=ON`` (``-march=native``): a bundle made
from it runs only on CPUs with every instruction of the build machine (AVX-512 and AMX on a server; SIGILL on an
AVX2 laptop). The installers bundle this build instead:

- Linux and Windows (x86-64, arm64 Linux): ``-DGGML_NATIVE=OFF -DGGML_BACKEND_DL=ON -DGGML_CPU_ALL_VARIANTS=ON``:
  one CPU module per instruction-set level (``libggml-cpu-x64.so`` … ``-sapphirerapids.so``); at run time ggml
  loads the best one this CPU can run (``app.engine.backends``). ``BROOK_LLAMA_GPU=vulkan`` adds
  ``-DGGML_VULKAN=ON`` (one more module, ``libggml-vulkan.so``, used where a Vulkan device exists). It needs
  Vulkan headers with ``VK_EXT_layer_settings`` (Debian 12's 1.3.239 lack it) and ``glslc``, found by CMake in
  ``$VULKAN_SDK`` (LunarG's SDK layout: ``include/``, ``lib/``, ``bin/``) before the system's; ``check_vulkan``
  says so before a compile that would fail half-way (packaging/README.md: headers from Debian 13's packages).
- macOS: ``-DGGML_NATIVE=OFF -DGGML_METAL=ON`` (Metal and the CPU code linked in; every Apple Silicon Mac runs
  an arm64 build made with ``GGML_NATIVE=OFF``; llama-cpp-python itself turns AVX off for x86-64 Macs).

The wheel (``pip wheel --no-binary llama-cpp-python``) is cached in ``CACHE/llama-cpp-python/<version>-<key>/``
(``CACHE``: ``$BROOK_BUILD_CACHE`` or ``~/.cache/brook-build``; ``key``: a hash of the flags and the platform),
and unpacked beside it into ``site/`` with the CPU and GPU modules moved into ``site/llama_cpp/lib`` (the wheel
puts them in ``bin/``): ``packaging/brook.spec`` puts ``site`` first on PyInstaller's path.

A compile takes 10-40 min on 2 cores (14 CPU variants); ``CMAKE_BUILD_PARALLEL_LEVEL`` sets its jobs.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import platform
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

#: The modules a portable build must have (file names, any platform): the CPU variants and GPU backends.
MODULE_RE = re.compile(
    r"^(?:lib)?ggml-(?:cpu-[A-Za-z0-9_.]+|vulkan|cuda|hip|metal|blas|rpc|sycl|opencl)\.(?:so|dll|dylib)$")
CPU_VARIANT_RE = re.compile(r"^(?:lib)?ggml-cpu-[A-Za-z0-9_.]+\.(?:so|dll)$")
#: The CPU variant every x86-64 CPU can run: a portable x86-64 build always has it.
BASELINE_VARIANT = {"x86_64": "x64", "AMD64": "x64", "amd64": "x64"}


#: A declaration llama.cpp's Vulkan backend uses (``VK_EXT_layer_settings``) that old Vulkan headers lack.
VULKAN_NEEDS = "VkLayerSettingsCreateInfoEXT"


class NativeBuildError(SystemExit):
    """The llama.cpp libraries are a native (this CPU only) build: the bundle would not run elsewhere."""


def cache_root() -> Path:
    return Path(os.environ.get("BROOK_BUILD_CACHE") or Path.home() / ".cache" / "brook-build")


def llama_version() -> str:
    """The llama-cpp-python version to build: the one installed here (what the tests ran against)."""
    return importlib.metadata.version("llama-cpp-python")


def cmake_args(gpu: str | None = None) -> list[str]:
    """The CMake flags of the portable build for this OS (see the module docstring); ``gpu``: ``vulkan`` or
    None (default: ``$BROOK_LLAMA_GPU``)."""
    gpu = (gpu if gpu is not None else os.environ.get("BROOK_LLAMA_GPU", "")).strip().lower() or None
    if sys.platform == "darwin":
        return ["-DGGML_NATIVE=OFF", "-DGGML_METAL=ON"]
    args = ["-DGGML_NATIVE=OFF", "-DGGML_BACKEND_DL=ON", "-DGGML_CPU_ALL_VARIANTS=ON"]
    if gpu == "vulkan":
        args.append("-DGGML_VULKAN=ON")
    elif gpu:
        raise SystemExit(f"BROOK_LLAMA_GPU={gpu!r}: only 'vulkan' is supported")
    return args


def cache_dir(version: str, args: list[str]) -> Path:
    key = hashlib.sha256("\n".join([sys.platform, platform.machine(), *args]).encode()).hexdigest()[:12]
    return cache_root() / "llama-cpp-python" / f"{version}-{key}"


def portable_site(*, compile_missing: bool = True, log: Path | None = None, args: list[str] | None = None) -> Path:
    """``site/`` of the cached portable build with ``args`` (default: ``cmake_args()``), compiling it first if it
    is not cached and ``compile_missing``; raises ``SystemExit`` saying how to build it otherwise, or when the
    compile fails (its log named)."""
    version = llama_version()
    args = cmake_args() if args is None else args
    where = cache_dir(version, args)
    site = where / "site"
    if (site / "llama_cpp" / "__init__.py").is_file():
        return site
    wheels = sorted(where.glob("llama_cpp_python-*.whl"))
    if not wheels:
        if not compile_missing:
            raise SystemExit(f"no portable llama-cpp-python {version} in {where}: run python3 packaging/build.py "
                             "(it compiles one, 10-40 min) or python3 packaging/llama_build.py")
        compile_wheel(version, args, where, log or where / "build.log")
        wheels = sorted(where.glob("llama_cpp_python-*.whl"))
    unpack(wheels[-1], site)
    return site


def vulkan_header(env: dict[str, str] | None = None) -> Path | None:
    """The ``vulkan/vulkan_core.h`` CMake's FindVulkan would take: ``$VULKAN_SDK/include`` (``Include`` on
    Windows) first, then the system's; None when there is none."""
    env = os.environ if env is None else env
    roots = [Path(env["VULKAN_SDK"]) / sub for sub in ("include", "Include")] if env.get("VULKAN_SDK") else []
    roots += [Path("/usr/include"), Path("/usr/local/include")]
    return next((r / "vulkan" / "vulkan_core.h" for r in roots if (r / "vulkan" / "vulkan_core.h").is_file()), None)


def check_vulkan(env: dict[str, str] | None = None) -> None:
    """Raise ``SystemExit`` saying what is missing when a Vulkan build cannot succeed here: no Vulkan headers,
    headers without ``VULKAN_NEEDS``, or no ``glslc`` (``$VULKAN_SDK/bin`` or ``PATH``)."""
    env = os.environ if env is None else env
    header = vulkan_header(env)
    how = ("set VULKAN_SDK to LunarG's Vulkan SDK, or to a folder with newer headers (packaging/README.md: "
           "Debian 13's libvulkan-dev and spirv-headers)")
    if header is None:
        raise SystemExit(f"BROOK_LLAMA_GPU=vulkan: no Vulkan headers (vulkan/vulkan_core.h): {how}")
    text = header.read_text("utf-8", "replace")
    if VULKAN_NEEDS not in text:
        found = re.search(r"#define VK_HEADER_VERSION (\d+)", text)
        version = found.group(1) if found else "?"
        raise SystemExit(f"BROOK_LLAMA_GPU=vulkan: the Vulkan headers {header} (version 1.x.{version}) lack "
                         f"{VULKAN_NEEDS} (VK_EXT_layer_settings), which llama.cpp's Vulkan backend uses: {how}")
    sdk_bin = Path(env["VULKAN_SDK"]) / "bin" if env.get("VULKAN_SDK") else None
    if shutil.which("glslc", path=env.get("PATH")) is None and not (sdk_bin and any(sdk_bin.glob("glslc*"))):
        raise SystemExit("BROOK_LLAMA_GPU=vulkan: glslc (the GLSL to SPIR-V compiler) is missing: "
                         "apt-get install glslc, or LunarG's Vulkan SDK")


def compile_wheel(version: str, args: list[str], where: Path, log: Path) -> Path:
    """``pip wheel`` llama-cpp-python ``version`` from its source with ``args`` into ``where``; output in ``log``.
    A Vulkan build is checked first (``check_vulkan``)."""
    if "-DGGML_VULKAN=ON" in args:
        check_vulkan()
    where.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "CMAKE_ARGS": " ".join(args)}
    env.setdefault("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 2))
    cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-binary", "llama-cpp-python", "--no-cache-dir",
           "-v", "-w", str(where), f"llama-cpp-python=={version}"]
    print(f"compiling llama-cpp-python {version} ({' '.join(args)}); log: {log}", file=sys.stderr, flush=True)
    with log.open("w", encoding="utf-8") as out:
        proc = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
    wheels = sorted(where.glob("llama_cpp_python-*.whl"))
    if proc.returncode != 0 or not wheels:
        raise SystemExit(f"compiling llama-cpp-python failed (exit {proc.returncode}); see {log}")
    return wheels[-1]


def unpack(wheel: Path, site: Path) -> None:
    """The wheel's ``llama_cpp`` package into ``site``, its backend modules (``bin/``, ``lib/``) moved into
    ``llama_cpp/lib`` where ``app.engine.backends`` loads them from."""
    tmp = site.with_name(site.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    with zipfile.ZipFile(wheel) as z:
        z.extractall(tmp)
    lib = tmp / "llama_cpp" / "lib"
    lib.mkdir(parents=True, exist_ok=True)
    for sub in ("bin", "lib"):
        for p in sorted((tmp / sub).glob("*")) if (tmp / sub).is_dir() else []:
            if MODULE_RE.match(p.name) and not (lib / p.name).exists():
                shutil.move(str(p), lib / p.name)
    for extra in list(tmp.iterdir()):
        if extra.name != "llama_cpp" and not extra.name.endswith(".dist-info"):
            shutil.rmtree(extra) if extra.is_dir() else extra.unlink()
    shutil.rmtree(site, ignore_errors=True)
    tmp.rename(site)


def check_portable(lib_dir: Path) -> list[str]:
    """The CPU variant modules in ``lib_dir`` (a bundle's ``llama_cpp/lib``); raises ``NativeBuildError`` when
    the libraries are a native build: no CPU variant modules but a ``libggml-cpu`` linked in (x86-64 Linux and
    Windows; macOS bundles the CPU code in ``libggml-cpu`` by design and is not checked)."""
    if sys.platform == "darwin":
        return []
    variants = sorted(p.name for p in lib_dir.iterdir() if CPU_VARIANT_RE.match(p.name)) if lib_dir.is_dir() else []
    baseline = BASELINE_VARIANT.get(platform.machine())
    if not variants or (baseline and not any(f"ggml-cpu-{baseline}." in v for v in variants)):
        linked = sorted(p.name for p in lib_dir.glob("*ggml-cpu*")) if lib_dir.is_dir() else []
        raise NativeBuildError(
            f"{lib_dir} holds a native llama.cpp build ({', '.join(linked) or 'no CPU backend'}; no per-variant "
            "ggml-cpu-* modules): it would run only on CPUs like this one (SIGILL elsewhere). Build the portable "
            "one (python3 packaging/build.py compiles it), or pass --allow-native for a local test bundle.")
    return variants


if __name__ == "__main__":      # compile (or find) the cached build and print its site folder
    print(portable_site())
