"""The pipeline bench's speed-free figure: how much longer per token a path's decode thread was off a CPU than
the raw loop's, as a share of raw's time per token."""

import pytest

from app.bench.pipeline import _per_token, offcpu_added_share


def test_offcpu_added_share_is_the_extra_wait_and_block_per_raw_token() -> None:
    raw = {"cpu_ms": 20.0, "wait_ms": 0.1, "blocked_ms": 0.1}
    ours = {"cpu_ms": 25.0, "wait_ms": 0.3, "blocked_ms": 0.3}       # a slower CPU in its round: not counted
    assert offcpu_added_share(raw, ours, 20.0) == pytest.approx(0.02)
    assert offcpu_added_share(ours, raw, 20.0) == pytest.approx(-0.02)


def test_offcpu_added_share_without_a_figure_is_unknown() -> None:
    raw = {"cpu_ms": 20.0, "wait_ms": None, "blocked_ms": None}
    ours = {"cpu_ms": 20.0, "wait_ms": 0.1, "blocked_ms": 0.0}
    assert offcpu_added_share(raw, ours, 20.0) is None
    assert offcpu_added_share(ours, ours, 0.0) is None


def test_per_token_splits_a_decode_threads_wall_time() -> None:
    got = _per_token({"tokens": 10, "cpu_ms": 200.0, "wait_ms": 5.0, "wall_ms": 230.0})
    assert got == pytest.approx({"cpu_ms": 20.0, "wait_ms": 0.5, "blocked_ms": 2.5})
    assert offcpu_added_share(_per_token({"tokens": 10, "cpu_ms": 200.0, "wait_ms": 0.0, "wall_ms": 200.0}),
                              got, 20.0) == pytest.approx(0.15)
