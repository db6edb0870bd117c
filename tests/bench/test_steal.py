"""The pipeline bench's steal accounting: the hypervisor's share of the CPUs between two /proc/stat readings."""

import sys

import pytest

from app.bench._util import cpu_ticks, steal_share


def test_steal_share_is_the_stolen_part_of_the_ticks_between_two_readings() -> None:
    assert steal_share((10, 1_000), (25, 1_300)) == pytest.approx(0.05)
    assert steal_share((10, 1_000), (10, 1_300)) == 0.0


def test_steal_share_without_two_readings_or_time_between_is_unknown() -> None:
    assert steal_share(None, (1, 2)) is None
    assert steal_share((1, 2), None) is None
    assert steal_share((1, 500), (1, 500)) is None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/stat is Linux's")
def test_cpu_ticks_reads_steal_and_the_total_from_proc_stat() -> None:
    with open("/proc/stat", encoding="ascii") as f:
        fields = [int(x) for x in f.readline().split()[1:9]]
    got = cpu_ticks()
    assert got is not None
    steal, total = got
    assert fields[7] <= steal <= total       # read again: the counters only grow
    assert total >= sum(fields)
