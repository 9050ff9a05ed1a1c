"""The Dell sweep table (iogate.procedures.dell.point_row, relative_rows); expected values worked out by hand."""

from __future__ import annotations

from dataclasses import dataclass, field

from iogate.metrics.types import Dir, Direction, JobResult, RunResult, Series
from iogate.procedures.dell import GridPoint, point_row, relative_rows


@dataclass(frozen=True)
class Figures:
    iops: float
    latency_mean_ns: float
    latency_pct_ns: dict[float, float] = field(default_factory=dict)


def job(name: str, host: str, read: tuple[float, float], write: tuple[float, float]) -> JobResult:
    """read / write as (IOPS, bytes per second)."""
    return JobResult(name, host, {
        Dir.READ: Direction(Dir.READ, ios=1, iops=read[0], bw_bytes_per_s=read[1]),
        Dir.WRITE: Direction(Dir.WRITE, ios=1, iops=write[0], bw_bytes_per_s=write[1]),
        Dir.TRIM: Direction(Dir.TRIM),
    })


def test_point_row_is_the_points_figures_and_the_hosts_cpu() -> None:
    result = RunResult("block-rd70-4k-t8", (
        job("v1", "h1", (3000, 12_288_000), (1000, 4_096_000)),
        job("v2", "h2", (1000, 4_096_000), (0, 0)),
    ), Series(), 0, 0, cpu_busy_pct={"h1": 20.0, "h2": 10.0})
    measured = Figures(4000.04, 250_000, {99.0: 1_234_567})
    row = point_row("block", GridPoint(70, "4k", 8), measured, result, {"h1": 8})
    # MB/s: (12.288 + 4.096 + 4.096) MB/s = 20.48. h1: 4000 IOPS at 20 % busy = 5 % per kIOPS, 0.2 x 8 CPUs x 1e6 / 4000 = 400 µs per I/O;
    # h2: 1000 IOPS at 10 % = 10 % per kIOPS, no CPU count (0 µs). Means over the two hosts: 15 %, 7.5 %, 200 µs.
    assert row == {
        "protocol": "block", "point": "rd70-4k-t8", "read_pct": 70, "bs": "4k", "threads": 8,
        "iops": 4000.0, "mb_per_s": 20.48, "mean_latency_ms": 0.25, "p99_latency_ms": 1.2346,
        "host_cpu_pct": 15.0, "host_cpu_pct_per_kiops": 7.5, "cpu_us_per_io": 200.0,
    }


def test_relative_rows_put_each_points_iops_against_the_baselines() -> None:
    rows = [{"point": "a", "iops": 150.0}, {"point": "b", "iops": 50.0}, {"point": "c", "iops": 10.0}]
    base = [{"point": "a", "iops": 120.0}, {"point": "b", "iops": 0.0}]
    assert relative_rows(rows, base, "block") == [
        {"point": "a", "iops": 150.0, "iops_vs_block_pct": 125.0},  # 150 / 120 = 1.25
        {"point": "b", "iops": 50.0, "iops_vs_block_pct": ""},  # baseline measured 0 IOPS
        {"point": "c", "iops": 10.0, "iops_vs_block_pct": ""},  # baseline did not measure c
    ]
    assert [r["iops_vs_block_pct"] for r in relative_rows(base, base, "block")] == [100.0, ""]
