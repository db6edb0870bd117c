"""PySide6's check of every imported module, made cheap (:func:`install`; the launcher runs it).

PySide6 replaces ``builtins.__import__`` for its opt-in ``from __feature__ import …`` switches, and after every
import it asks whether the new module uses PySide6 (``shibokensupport.feature._mod_uses_pyside``):
``inspect.getsource`` of the whole module, searched for "PySide6". That reads each module's source through
``linecache``, which keeps it (5.3 MB by the first reply of a start), and costs most where Brook imports big packages
lazily, on the loop: the start's second step (the message list's modules, right after the first frame) took a
median 295 ms, 246 with the check below (seven runs each of ``main.py --scripted --smoke-test``); the history
schema's import (pydantic) 182-206 → 163-190 ms.

:func:`uses_pyside` gives the same answer from the file's bytes: the module's ``.py`` file holds "PySide6" (an
ASCII word, the same bytes in any encoding Python reads source in); a module without a readable ``.py`` file
(built in, an extension, frozen) does not, as ``inspect.getsource`` fails on those and PySide6 then answers False
too (``tests/ui/window/test_feature_check.py`` compares both answers on every module a window imports). Brook selects no
``__feature__``, so either answer only ever picks PySide6's default class dictionaries.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

#: PySide6's own check, kept by :func:`install` (the tests compare both answers).
original: Callable[[ModuleType], bool] | None = None


def uses_pyside(module: ModuleType) -> bool:
    """Whether ``module``'s source file mentions PySide6 (False without a readable ``.py`` file); never raises."""
    path = getattr(module, "__file__", None)
    if not isinstance(path, str) or not path.endswith(".py"):
        return False
    try:
        with open(path, "rb") as f:
            return b"PySide6" in f.read()
    except OSError:
        return False


def install() -> bool:
    """Have PySide6's import hook use :func:`uses_pyside`; False (nothing changed) where this PySide6 has no such
    check. Idempotent."""
    import PySide6.QtCore  # noqa: F401 - makes shiboken's support modules

    try:
        from shibokensupport import feature
    except ImportError:
        return False
    check = getattr(feature, "_mod_uses_pyside", None)
    if not callable(check):
        return False
    if check is not uses_pyside:
        global original
        original = check
        feature._mod_uses_pyside = uses_pyside
    return True
