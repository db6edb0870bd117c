"""Guards against a known-bad Qt binding: PySide6 6.12.0 drops a reference to True/False each time a
Python-defined ``Signal(bool)`` is emitted, until the interpreter aborts with ``bool_dealloc``."""

from __future__ import annotations

import sys

from PySide6.QtCore import QObject, Signal


class _Emitter(QObject):
    flag = Signal(bool)


def test_bool_signals_keep_reference_counts(qapp) -> None:
    e = _Emitter()
    got: list[bool] = []
    e.flag.connect(got.append)
    before = sys.getrefcount(False)
    for _ in range(50):
        e.flag.emit(False)
    del got[:]
    assert sys.getrefcount(False) - before >= 0, "this PySide6 build under-counts bool references"
