"""Chart render time: a 10-minute, 8-job run (the Dell/Hitachi scale) must chart in well under a second or two.

Run with `pytest selftests/bench`; pytest-benchmark prints the table.
"""

from __future__ import annotations

import pytest

from iogate.metrics.types import Dir, Sample, Series
from iogate.report import charts

START_MS = 1_700_000_000_000
RENDER_BUDGET_S = 2.0  # generous: the machine is shared and has 2 cores


def big_series(seconds: int = 600, jobs: int = 8) -> Series:
    samples = [
        Sample(START_MS + t * 1000 + j, f"vm{j}", "h1", direction, 1000.0 + t % 50, 250_000.0 + 1000 * (t % 30))
        for t in range(1, seconds + 1) for j in range(jobs) for direction in (Dir.READ, Dir.WRITE)
    ]
    return Series(tuple(samples))


@pytest.fixture(scope="module")
def series() -> Series:
    return big_series()


def test_bench_timeline_600s_8_jobs(benchmark, series: Series) -> None:
    events = [("snapshot", START_MS + 100_000, START_MS + 200_000), ("dedupe", START_MS + 300_000, START_MS + 500_000)]
    png = benchmark.pedantic(charts.timeline_png, args=(series, events), kwargs={"start_ms": START_MS}, rounds=5, iterations=1)
    assert png.startswith(b"\x89PNG")
    assert benchmark.stats["mean"] < RENDER_BUDGET_S

