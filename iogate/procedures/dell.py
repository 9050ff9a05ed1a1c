"""Dell PowerStore sweep (workloads/sweeps.yaml): read % x block size x threads.

Besides the catalog and the point's workload: the table Dell reports, one row
per measured point (point_row), and each transport's IOPS as % of the baseline
transport's at the same point (relative_rows).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from pydantic import Field

from iogate.engines.workload import WorkloadSpec, parse_block_size
from iogate.lab.profiles import Profile
from iogate.metrics.hostcpu import host_cpu, mean_pct_per_kiops
from iogate.metrics.types import RunResult
from iogate.procedures.common import Catalog, DataPattern, Pct, Positive, SizeStr, Strict, grid_override, load_catalog, pick_grid
from iogate.units import format_size, parse_size_bytes


class SweepGrid(Strict):
    read_pct: list[Pct] = Field(min_length=1)
    bs: list[SizeStr] = Field(min_length=1)
    threads: list[Positive] = Field(min_length=1)

    def points(self) -> list[GridPoint]:
        """Every point; threads innermost so each curve (read %, bs) runs in load order."""
        return [GridPoint(r, b, t) for r in self.read_pct for b in self.bs for t in sorted(self.threads)]


@dataclass(frozen=True)
class GridPoint:
    read_pct: int
    bs: str
    threads: int

    @property
    def curve(self) -> str:
        """The load curve this point lies on: same mix and block size, threads varying."""
        return f"rd{self.read_pct}-{format_size(parse_size_bytes(self.bs))}"

    @property
    def id(self) -> str:
        return f"{self.curve}-t{self.threads}"


class Prefill(Strict):
    bs: SizeStr
    threads: Positive


class DellSweep(Strict):
    description: str = ""
    random_pct: Pct
    warmup_s: float = Field(ge=0)
    elapsed_s: float = Field(gt=0)
    data_pattern: DataPattern
    prefill: Prefill
    grid: SweepGrid
    grids: dict[str, SweepGrid] = Field(default_factory=dict)

    def grid_for(self, profile: Profile) -> SweepGrid:
        """The profile file's sweep grid, else the profile's named grid (`all` = the paper's)."""
        override = grid_override(profile, "sweep", SweepGrid)
        if override is not None:
            return override
        return self.grid if profile.grid == "all" else pick_grid(self.grids, profile.grid, "workloads/sweeps.yaml")

    def workload(self, point: GridPoint, runtime_s: float, ramp_s: float) -> WorkloadSpec:
        """One point as fio runs it: vdbench threads = outstanding I/Os = iodepth of one job per volume."""
        spec = WorkloadSpec(point.id, read_pct=point.read_pct, random_pct=self.random_pct, bs=parse_block_size(point.bs),
                            iodepth=point.threads, runtime_s=runtime_s, ramp_s=ramp_s)
        return self.data_pattern.apply(spec)


class SweepCatalog(Catalog):
    dell: DellSweep


def load_sweeps(path: Path | None = None) -> SweepCatalog:
    return load_catalog(SweepCatalog, "sweeps.yaml", path)


class PointFigures(Protocol):
    """A sweep point's measured figures (criteria.points.SweepPoint has them)."""

    @property
    def iops(self) -> float: ...

    @property
    def latency_mean_ns(self) -> float: ...

    @property
    def latency_pct_ns(self) -> Mapping[float, float]: ...


def point_row(protocol: str, point: GridPoint, measured: PointFigures, result: RunResult, cpus: dict[str, int]) -> dict[str, Any]:
    """One row of the sweep table: the point, its IOPS, MB/s (read + write), mean and p99 latency,
    and host CPU (mean busy %, % per kIOPS, µs per I/O over the hosts; `cpus` = each host's CPU count)."""
    read, write = result.total("read"), result.total("write")
    cpu = host_cpu(result, cpus)
    return {
        "protocol": protocol, "point": point.id, "read_pct": point.read_pct, "bs": point.bs, "threads": point.threads,
        "iops": round(measured.iops, 1),
        "mb_per_s": round((read.bw_bytes_per_s + write.bw_bytes_per_s) / 1e6, 2),
        "mean_latency_ms": round(measured.latency_mean_ns / 1e6, 4),
        "p99_latency_ms": round(measured.latency_pct_ns[99.0] / 1e6, 4),
        "host_cpu_pct": round(sum(c.busy_pct for c in cpu) / max(len(cpu), 1), 1),
        "host_cpu_pct_per_kiops": round(mean_pct_per_kiops(cpu), 4),
        "cpu_us_per_io": round(sum(c.cpu_us_per_io or 0 for c in cpu) / max(len(cpu), 1), 2),
    }


def relative_rows(rows: Sequence[Mapping[str, Any]], baseline_rows: Sequence[Mapping[str, Any]], baseline: str) -> list[dict[str, Any]]:
    """Each point's row (point_row) with its IOPS as % of the baseline transport's at the same point, in
    column "iops_vs_<baseline>_pct": the baseline itself reads 100 (as the protocols family reads it); Dell
    quotes the difference, 100 less. A point the baseline did not measure (or measured at 0 IOPS) reads ""."""
    base = {r["point"]: r["iops"] for r in baseline_rows}
    return [{**r, f"iops_vs_{baseline}_pct": round(100.0 * r["iops"] / base[r["point"]], 1) if base.get(r["point"]) else ""}
            for r in rows]
