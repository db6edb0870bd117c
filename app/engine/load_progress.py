"""llama.cpp's load progress, reached through llama-cpp-python.

llama.cpp reports the progress of ``llama_model_load_from_file`` through ``llama_model_params.progress_callback``
(``bool cb(float progress, void *user_data)``; returning false aborts the load, and llama.cpp frees what it had
allocated). llama-cpp-python's ``Llama(...)`` (0.3.x) builds those params itself from
``llama_model_default_params()`` and takes no callback argument, so ``loading_with_progress`` wraps that one
function (once, for the process) to put the current thread's callback into the params it returns: a load in
another thread never sees it.

The same wrapper turns off llama.cpp's *extra buffer types* (``use_extra_bufts``: the CPU weight-repacking and
AMX buffers) unless ``BROOK_EXTRA_BUFTS=1``: on CPUs that advertise AMX but fault in it, llama.cpp's AMX kernels
kill the process (SIGSEGV/SIGILL) at the first longer prompt, and ``Llama`` does not expose the field.
``install_model_params`` also loads llama.cpp's backend modules (``app.engine.backends.load_backends``): a
portable build has no CPU backend until then.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Iterator
from typing import Any

from app.core.errors import LoadCancelled
from app.engine.backends import load_backends
from app.engine.base import ProgressCallback

log = logging.getLogger("brook.engine.load_progress")

_local = threading.local()
_install_lock = threading.Lock()
_installed = False


def extra_buffer_types() -> bool:
    """Whether llama.cpp may use its extra CPU buffer types (repacked weights, AMX): only with
    ``BROOK_EXTRA_BUFTS=1`` (see the module docstring)."""
    return os.environ.get("BROOK_EXTRA_BUFTS", "").strip() == "1"


def install_model_params() -> bool:
    """Wrap ``llama_cpp.llama_cpp.llama_model_default_params`` once. False when this llama-cpp-python has no
    such function or no ``progress_callback`` field (progress then stays a busy indicator). Loads llama.cpp's
    backend modules first (a portable llama.cpp registers no CPU backend until then)."""
    global _installed
    load_backends()
    with _install_lock:
        if _installed:
            return True
        try:
            import llama_cpp.llama_cpp as lib

            original = lib.llama_model_default_params
            fields = {field[0] for field in lib.llama_model_params._fields_}
            if "progress_callback" not in fields:
                return False
        except (ImportError, AttributeError, OSError):
            return False

        def default_params() -> Any:
            params = original()
            callback = getattr(_local, "callback", None)
            if callback is not None:
                params.progress_callback = callback
            if "use_extra_bufts" in fields and not extra_buffer_types():
                params.use_extra_bufts = False
            return params

        lib.llama_model_default_params = default_params
        _installed = True
        return True


class LoadWatch:
    """What happened in llama.cpp's callback during one load: ``calls`` (callbacks received) and
    ``cancelled`` (the ``LoadCancelled`` that ``progress`` raised; the callback then returned false)."""

    def __init__(self) -> None:
        self.calls = 0
        self.cancelled: LoadCancelled | None = None


@contextlib.contextmanager
def loading_with_progress(progress: ProgressCallback | None) -> Iterator[LoadWatch]:
    """While in the block, ``Llama(...)`` created on this thread reports llama.cpp's load progress to
    ``progress(fraction)``; ``progress`` raising ``LoadCancelled`` makes the callback return false, which
    aborts the load (``Llama`` then raises ``ValueError``; the caller checks ``watch.cancelled``)."""
    watch = LoadWatch()
    if not install_model_params() or progress is None:
        yield watch
        return
    import llama_cpp.llama_cpp as lib

    def on_progress(fraction: float, _user_data: Any) -> bool:
        watch.calls += 1
        if watch.cancelled is not None:
            return False
        try:
            progress(min(1.0, max(0.0, float(fraction))))
        except LoadCancelled as exc:
            watch.cancelled = exc
            return False
        except Exception:      # a broken progress view must not break the load (nor cross into C)
            log.exception("load progress callback failed")
        return True

    callback = lib.llama_progress_callback(on_progress)     # kept alive by this frame for the whole load
    _local.callback = callback
    try:
        yield watch
    finally:
        _local.callback = None
