"""python -m app.bench search runs on a history of today's schema: it makes the file an old one (no index, no
triggers, whatever they are named now), builds the index again and finds the same messages as a LIKE scan."""

from __future__ import annotations

import json

from app.bench import search


def test_the_search_bench_runs_and_finds_what_a_scan_finds(capsys) -> None:
    assert search.main(["--messages", "400", "--rounds", "1"]) == 0
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert result["bench"] == "search" and result["migration_ms"] > 0
    assert result["rare_en"]["hits"] == 1 and result["rare_zh"]["hits"] == 1
