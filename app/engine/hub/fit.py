"""Does a model file fit this machine? Its memory estimate (``app.engine.library.estimate_memory_bytes``) against
the machine's RAM, or its GPU's memory once layers are offloaded to a GPU.

RAM: ``/proc/meminfo`` on Linux (``MemTotal``, ``MemAvailable``), ``GlobalMemoryStatusEx`` on Windows, the page
count elsewhere (available = total there). VRAM: ``nvidia-smi`` when it is on the PATH (other GPUs: unknown, and
the verdict says so).
"""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from enum import StrEnum

from app.engine.library import estimate_memory_bytes


@dataclass(frozen=True, slots=True)
class Memory:
    """Bytes of memory: ``total`` and ``available`` (free now, counting what the system can reclaim)."""

    total: int
    available: int


class Fit(StrEnum):
    FITS = "fits"              # fits in what is free now
    TIGHT = "tight"            # fits in the total, not in what is free now (close other programs)
    TOO_LARGE = "too large"    # more than the machine has
    UNKNOWN = "unknown"


def system_memory() -> Memory | None:
    """The machine's RAM, or None when it cannot be read."""
    try:
        if sys.platform.startswith("linux"):
            values: dict[str, int] = {}
            with open("/proc/meminfo", encoding="ascii") as fh:
                for line in fh:
                    key, _, rest = line.partition(":")
                    values[key] = int(rest.split()[0]) * 1024
            total = values["MemTotal"]
            return Memory(total, values.get("MemAvailable", values.get("MemFree", total)))
        if sys.platform == "win32":
            class MEMORYSTATUSEX(ctypes.Structure):
                _fields_ = [("dwLength", ctypes.c_ulong), ("dwMemoryLoad", ctypes.c_ulong),
                            ("ullTotalPhys", ctypes.c_ulonglong), ("ullAvailPhys", ctypes.c_ulonglong),
                            ("ullTotalPageFile", ctypes.c_ulonglong), ("ullAvailPageFile", ctypes.c_ulonglong),
                            ("ullTotalVirtual", ctypes.c_ulonglong), ("ullAvailVirtual", ctypes.c_ulonglong),
                            ("ullAvailExtendedVirtual", ctypes.c_ulonglong)]

            st = MEMORYSTATUSEX()
            st.dwLength = ctypes.sizeof(MEMORYSTATUSEX)
            if ctypes.windll.kernel32.GlobalMemoryStatusEx(ctypes.byref(st)):  # type: ignore[attr-defined]
                return Memory(int(st.ullTotalPhys), int(st.ullAvailPhys))
            return None
        total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        return Memory(total, total)
    except (OSError, ValueError, KeyError, AttributeError):
        return None


def gpu_memory() -> Memory | None:
    """The first NVIDIA GPU's memory (``nvidia-smi``), or None (no NVIDIA GPU, or no ``nvidia-smi``)."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return None
    try:
        out = subprocess.run([exe, "--query-gpu=memory.total,memory.free", "--format=csv,noheader,nounits"],
                             capture_output=True, text=True, timeout=5, check=True).stdout
        total_mib, free_mib = (int(x) for x in out.splitlines()[0].split(","))
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return None
    return Memory(total_mib << 20, free_mib << 20)


def fit(size_bytes: int, n_ctx: int, memory: Memory | None, kv_bytes: int | None = None) -> tuple[Fit, int]:
    """``(verdict, bytes needed)`` for a GGUF of ``size_bytes`` with ``n_ctx`` tokens of context in
    ``memory`` (RAM, or VRAM when the model runs on the GPU)."""
    need = estimate_memory_bytes(size_bytes, n_ctx, kv_bytes)
    if memory is None:
        return Fit.UNKNOWN, need
    if need <= memory.available:
        return Fit.FITS, need
    if need <= memory.total:
        return Fit.TIGHT, need
    return Fit.TOO_LARGE, need
