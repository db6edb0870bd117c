"""The worker process of a ``DeadlinePool`` (app/core/render/worker_pool.py): what its imports and warm-up made is
frozen out of the collector's reach before its first job."""

from __future__ import annotations

from app.core.render.worker_pool import DeadlinePool


class _FrozenCount(DeadlinePool[tuple[()], int]):
    """A pool whose job answers the worker's ``gc.get_freeze_count()`` (objects in the permanent generation)."""

    def __init__(self) -> None:
        super().__init__("gc:get_freeze_count", deadline_s=30.0, name="brook-test-gc")

    def fallback(self, key: tuple[()]) -> int:
        return -1


def test_worker_freezes_its_start_up_heap_before_the_first_job() -> None:
    pool = _FrozenCount()
    try:
        assert pool.ask(()) is None          # queued: the worker starts
        assert pool.wait(60)
        frozen = pool.lookup(())
    finally:
        pool.close()
    # a spawned interpreter holds thousands of tracked objects after its imports; unfrozen, the count is 0
    assert frozen is not None and frozen > 1000, frozen
