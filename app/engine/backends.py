"""llama.cpp's compute backends: which CPU variant and which devices this process runs on.

A *portable* llama.cpp (what Brook's installers bundle; ``packaging/llama_build.py``) is built with
``GGML_BACKEND_DL=ON`` and ``GGML_CPU_ALL_VARIANTS=ON``: its CPU code is not in ``libggml``, but in one module per
instruction-set level (``libggml-cpu-x64.so``, ``-sse42``, ``-haswell``, ``-skylakex``, ``-sapphirerapids``, …;
``ggml-cpu-*.dll`` on Windows) beside GPU modules such as ``libggml-vulkan.so``. Nothing is registered until
someone loads them: ``load_backends`` asks ggml to load every module in llama-cpp-python's library folder
(``ggml_backend_load_all_from_path``); ggml keeps, of the CPU variants, the one whose ``ggml_backend_score``
is highest on this CPU (0 = an instruction it needs is missing). A build from source (``pip install
llama-cpp-python``: ``GGML_NATIVE=ON``, backends linked in) has its backends registered already and is left as
it is; its variant is reported as ``"built-in"``.

``install_model_params`` (``app.engine.load_progress``) calls ``load_backends`` before any model is loaded, so
every ``Llama`` of the process finds its backends.

**GPU layers.** ``gpu_layers_for`` turns the ``n_gpu_layers`` setting into the number a load asks llama.cpp
for: ``-1`` (the default) is "as many as fit": 0 without a GPU device, else as many of the model's layers as
the first GPU's free memory holds (``layers_that_fit``: each layer an equal share of the file's weights and of
the KV cache for the context window, ``GPU_RESERVE_BYTES`` kept free); a number ≥ 0 is taken as it is.
``LlamaEngine.load`` falls back to the CPU (0 layers) when a load with layers on the GPU fails.
"""

from __future__ import annotations

import ctypes
import logging
import re
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger("brook.engine.backends")

#: ``enum ggml_backend_dev_type`` (ggml-backend.h)
DEV_TYPES = {0: "cpu", 1: "gpu", 2: "igpu", 3: "accel"}
#: A CPU variant module's file name → its variant (``libggml-cpu-haswell.so`` → ``haswell``).
CPU_VARIANT_RE = re.compile(r"^(?:lib)?ggml-cpu-(?P<variant>[A-Za-z0-9_.]+)\.(?:so|dll|dylib)$")


@dataclass(frozen=True)
class Device:
    """One ggml device: ``name`` (ggml's, e.g. ``CPU``, ``Vulkan0``), ``description`` (the hardware, e.g. the
    CPU's model name or ``llvmpipe (LLVM 15.0.6, 256 bits)``), ``kind`` (``cpu``/``gpu``/``igpu``/``accel``),
    ``free_bytes``/``total_bytes`` (its memory as ggml reports it; for the CPU, the system's)."""

    name: str
    description: str
    kind: str
    free_bytes: int
    total_bytes: int


@dataclass(frozen=True)
class Backends:
    """What ``load_backends`` found: ``cpu_variant`` (the CPU module ggml uses: ``haswell``, ``x64``, …;
    ``built-in`` for a llama.cpp with its backends linked in; ``None`` when llama.cpp is not available),
    ``loaded_from`` (the folder the modules were loaded from, or None), ``devices`` (every device, CPU last
    as ggml lists them) and ``error`` (why llama.cpp's library could not be reached, or None)."""

    cpu_variant: str | None
    loaded_from: str | None = None
    devices: tuple[Device, ...] = field(default_factory=tuple)
    error: str | None = None

    def gpus(self) -> list[Device]:
        """The devices a model's layers can be offloaded to (GPU, integrated GPU), in ggml's order."""
        return [d for d in self.devices if d.kind in ("gpu", "igpu")]


_lock = threading.Lock()
_result: Backends | None = None
#: Device memory left free beyond the layers (compute buffers, the driver, the desktop): 512 MiB.
GPU_RESERVE_BYTES = 512 * 1024 * 1024
#: The ``n_gpu_layers`` value that means "as many as fit" (llama.cpp's own -1 means "all").
AS_MANY_AS_FIT = -1


def layers_that_fit(model_bytes: int, n_layers: int, kv_bytes: int, free_bytes: int,
                    reserve_bytes: int = GPU_RESERVE_BYTES) -> int:
    """How many of a model's ``n_layers`` + 1 layers (its blocks and the output layer) fit in ``free_bytes`` of
    device memory, each costing an equal share of ``model_bytes`` (the GGUF's size) and ``kv_bytes`` (the KV
    cache), with ``reserve_bytes`` kept free. 0 … ``n_layers`` + 1."""
    if n_layers <= 0 or free_bytes <= reserve_bytes:
        return 0
    per_layer = (max(0, model_bytes) + max(0, kv_bytes)) / (n_layers + 1)
    if per_layer <= 0:
        return n_layers + 1
    return max(0, min(n_layers + 1, int((free_bytes - reserve_bytes) // per_layer)))


def gpu_layers_for(requested: int, model_path: str | Path, n_ctx: int, found: Backends | None = None) -> int:
    """The ``n_gpu_layers`` to load ``model_path`` with (see the module docstring): ``requested`` ≥ 0 as it is;
    ``AS_MANY_AS_FIT`` (or any negative value): 0 without a GPU, else what fits on the first GPU (sizes from
    the GGUF header: ``app.engine.library.read_model_info``; all layers when the header lacks them and the
    file fits)."""
    if requested >= 0:
        return requested
    gpus = (found or load_backends()).gpus()
    if not gpus:
        return 0
    from app.engine.library import read_model_info

    info = read_model_info(model_path)
    gpu = gpus[0]
    n_layers = info.n_layers or 0
    if n_layers <= 0:           # no block count in the header: all or nothing, by the file's size
        return 10_000 if info.size_bytes + GPU_RESERVE_BYTES < gpu.free_bytes else 0
    fit = layers_that_fit(info.size_bytes, n_layers, info.kv_cache_bytes(n_ctx) or 0, gpu.free_bytes)
    log.info("GPU layers: %d of %d fit on %s (%s free)", fit, n_layers + 1, gpu.description, gpu.free_bytes)
    return fit


def cpu_variant_modules(lib_dir: Path) -> dict[str, Path]:
    """The CPU variant modules in ``lib_dir``: ``{variant: path}`` (empty for a build without them)."""
    found = {}
    if lib_dir.is_dir():
        for p in sorted(lib_dir.iterdir()):
            m = CPU_VARIANT_RE.match(p.name)
            if m:
                found[m.group("variant")] = p
    return found


def variant_scores(modules: dict[str, Path]) -> dict[str, int]:
    """``ggml_backend_score()`` of each CPU variant module on this CPU (0: it cannot run here), the number
    ggml itself picks the variant by. A module that cannot be opened scores 0."""
    import _ctypes

    close = getattr(_ctypes, "FreeLibrary", None) or getattr(_ctypes, "dlclose", None)
    scores = {}
    for variant, path in modules.items():
        try:
            lib = ctypes.CDLL(str(path))
        except OSError as exc:
            log.warning("cannot open %s: %s", path, exc)
            scores[variant] = 0
            continue
        try:
            fn = lib.ggml_backend_score
            fn.restype = ctypes.c_int
            fn.argtypes = []
            scores[variant] = int(fn())
        except AttributeError:
            scores[variant] = 0
        finally:
            if close is not None:
                close(lib._handle)
    return scores


def _ggml(lib: Any) -> Any:
    """Declare the ggml-backend functions used here on ``lib`` (libllama's handle: ``dlsym`` on it finds its
    dependency libggml's symbols, the very copy libllama uses; on Windows ggml.dll's own handle)."""
    p, sz = ctypes.c_void_p, ctypes.c_size_t
    for name, res, args in (
            ("ggml_backend_reg_count", sz, []), ("ggml_backend_dev_count", sz, []),
            ("ggml_backend_dev_get", p, [sz]), ("ggml_backend_dev_name", ctypes.c_char_p, [p]),
            ("ggml_backend_dev_description", ctypes.c_char_p, [p]), ("ggml_backend_dev_type", ctypes.c_int, [p]),
            ("ggml_backend_dev_memory", None, [p, ctypes.POINTER(sz), ctypes.POINTER(sz)]),
            ("ggml_backend_load_all_from_path", None, [ctypes.c_char_p])):
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = res, args
    return lib


def _devices(lib: Any) -> tuple[Device, ...]:
    out = []
    for i in range(lib.ggml_backend_dev_count()):
        dev = lib.ggml_backend_dev_get(i)
        free, total = ctypes.c_size_t(0), ctypes.c_size_t(0)
        lib.ggml_backend_dev_memory(dev, ctypes.byref(free), ctypes.byref(total))
        out.append(Device(name=(lib.ggml_backend_dev_name(dev) or b"").decode(errors="replace"),
                          description=(lib.ggml_backend_dev_description(dev) or b"").decode(errors="replace").strip(),
                          kind=DEV_TYPES.get(lib.ggml_backend_dev_type(dev), "unknown"),
                          free_bytes=int(free.value), total_bytes=int(total.value)))
    return tuple(out)


def load_backends() -> Backends:
    """Load llama.cpp's backend modules once per process (see the module docstring) and describe them.
    Never raises: when llama-cpp-python or its library is missing, ``error`` says why (the model load then
    reports it to the user)."""
    global _result
    with _lock:
        if _result is not None:
            return _result
        try:
            import llama_cpp.llama_cpp as llama_lib

            lib_dir = Path(llama_lib._base_path)
            handle = llama_lib._lib
            if sys.platform == "win32" and (lib_dir / "ggml.dll").is_file():
                # GetProcAddress searches one DLL only; loading ggml.dll by path gives the one llama.dll uses
                handle = ctypes.CDLL(str(lib_dir / "ggml.dll"))
            lib = _ggml(handle)
        except (ImportError, OSError, RuntimeError, AttributeError) as exc:
            _result = Backends(cpu_variant=None, error=f"{type(exc).__name__}: {exc}")
            return _result
        loaded_from = None
        variant: str | None = "built-in"
        if lib.ggml_backend_reg_count() == 0:       # a GGML_BACKEND_DL build: nothing is registered yet
            lib.ggml_backend_load_all_from_path(str(lib_dir).encode(sys.getfilesystemencoding()))
            loaded_from = str(lib_dir)
            scores = variant_scores(cpu_variant_modules(lib_dir))
            best = max(scores.items(), key=lambda kv: kv[1], default=(None, 0))
            variant = best[0] if best[1] > 0 else None
            if lib.ggml_backend_reg_count() == 0:
                log.error("no llama.cpp backend could be loaded from %s", lib_dir)
        _result = Backends(cpu_variant=variant, loaded_from=loaded_from, devices=_devices(lib))
        log.info("llama.cpp backends: CPU variant %s; devices %s", _result.cpu_variant,
                 ", ".join(f"{d.name} ({d.description})" for d in _result.devices))
        return _result
