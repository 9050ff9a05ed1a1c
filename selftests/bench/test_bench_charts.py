"""Chart render time: a 10-minute, 8-job run (the Dell/Hitachi scale) must chart in well under a second or two.

Run with `pytest selftests/bench`; pytest-benchmark prints the table.
"""

from __future__ import annotations

import pytest

from iogate import charts
from iogate.metrics.types import Dir, Sample, Series

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


def test_bench_knee_96_points(benchmark) -> None:
    points = [(1000.0 * i, 100_000.0 + 50.0 * i * i) for i in range(1, 97)]
    png = benchmark.pedantic(charts.knee_png, args=(points, 60), kwargs={"point_labels": [str(i) for i in range(96)]},
                             rounds=5, iterations=1)
    assert png.startswith(b"\x89PNG")
    assert benchmark.stats["mean"] < RENDER_BUDGET_S


def test_bench_vm_targets_250_vms(benchmark) -> None:
    rows = [(f"vm{i:03d}", 3.0, 2.9 if i % 7 else 3.2) for i in range(250)]
    png = benchmark.pedantic(charts.vm_targets_png, args=(rows,), rounds=5, iterations=1)
    assert png.startswith(b"\x89PNG")
    assert benchmark.stats["mean"] < RENDER_BUDGET_S
