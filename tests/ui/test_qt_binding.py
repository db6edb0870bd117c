"""Guards against a known-bad Qt binding: PySide6 6.12.0 drops a reference to True/False each time a
Python-defined ``Signal(bool)`` is emitted, until the interpreter aborts with ``bool_dealloc``."""

from __future__ import annotations

import sys

import pytest
from PySide6.QtCore import QObject, Signal

#: Emits per check: the bad build loses one reference per emit, far more than the noise of other code.
EMITS = 1000


class _Emitter(QObject):
    flag = Signal(bool)


@pytest.mark.skipif(sys.version_info >= (3, 12),
                    reason="False is immortal on Python ≥ 3.12: its reference count never changes (and the lost "
                           "references cannot free it), so the fault can neither be seen nor crash there")
def test_bool_signals_keep_reference_counts(qapp) -> None:
    e = _Emitter()
    received = [0]

    def count(value: bool) -> None:
        received[0] += value is False
    e.flag.connect(count)
    before = sys.getrefcount(False)
    for _ in range(EMITS):
        e.flag.emit(False)
    after = sys.getrefcount(False)
    assert received[0] == EMITS
    assert after - before > -EMITS // 10, f"this PySide6 build lost {before - after} references to False"
