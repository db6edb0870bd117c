"""A reply's stored figures (``metrics``) read back: the fast check gives exactly what the pydantic schema gives,
for any stored value, and realistic figures never need pydantic."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.history import schema
from app.core.history.schema import MAX_COUNT, MAX_MS, Metrics, clean_metrics

_FIELDS = sorted(Metrics.model_fields)
_value = st.one_of(
    st.none(), st.booleans(), st.text(max_size=3),
    st.integers(min_value=-5, max_value=2 * MAX_COUNT), st.sampled_from([MAX_COUNT, MAX_COUNT + 1, -1, 0]),
    st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([MAX_MS, -MAX_MS, MAX_MS * 1.5, -0.0, 1e-300]),
    st.lists(st.integers(), max_size=2),
)
_figures = st.dictionaries(st.sampled_from([*_FIELDS, "a_newer_field"]), _value, max_size=8)


def _slow(value: Any) -> dict[str, Any] | None:
    return schema._clean(Metrics, value, "figures")


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    return type(a) is type(b) and a == b


@settings(max_examples=400, deadline=None)
@given(_figures)
def test_the_fast_check_gives_what_pydantic_gives(value: dict[str, Any]) -> None:
    assert _same(clean_metrics(dict(value)), _slow(dict(value)))


@pytest.mark.parametrize("raw", ['{"ttft_ms": 1}', '{"chunks": 3.0}', '{"ticks": true}', '{"total_ms": NaN}',
                                 '{"wait_ms": -1e13}', '{"left_out": -1}', '[1, 2]', '"x"', "not json", "[" * 5000])
def test_stored_text_of_any_shape_cleans_as_json_loads_would(raw: str) -> None:
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):
        value = None
    assert _same(clean_metrics(schema.loads_json(raw)), _slow(value))


def test_a_real_replys_figures_are_checked_without_pydantic(monkeypatch: pytest.MonkeyPatch) -> None:
    figures = {"ttft_ms": 812.3, "prefill_ms": 700.1, "first_paint_ms": 830.2, "wait_ms": 0.0, "decode_tokens": 412,
               "decode_tokens_per_s": 46.7, "chunks": 412, "chunks_painted": 412, "queue_high_water": 3,
               "backpressure_waits": 0, "backpressure_wait_ms": 0.0, "ticks": 300, "longest_tick_ms": 12.1,
               "stop_latency_ms": None, "total_ms": 9500.2, "left_out": 0}
    asked: list[Any] = []
    monkeypatch.setattr(schema, "_clean", lambda *a: asked.append(a))
    out = clean_metrics(schema.loads_json(json.dumps(figures)))
    assert out == figures and out is not figures
    assert asked == []
