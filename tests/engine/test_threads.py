"""Default decode threads leave the window a core: physical cores, minus one on a machine with up to 8."""

from __future__ import annotations

import os

import pytest

from app.engine import llama


@pytest.mark.parametrize("cores, threads", [(1, 1), (2, 1), (4, 3), (8, 7), (9, 9), (32, 32)])
def test_default_threads_keep_a_core_for_the_window_on_small_machines(monkeypatch: pytest.MonkeyPatch,
                                                                       cores: int, threads: int) -> None:
    monkeypatch.setattr(llama, "physical_cores", lambda: cores)
    assert llama.default_threads() == threads


def test_physical_cores_are_at_most_the_logical_cpus_this_process_may_use() -> None:
    n = llama.physical_cores()
    allowed = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    assert 1 <= n <= allowed
