"""Dell PowerStore sweep (workloads/sweeps.yaml): read % x block size x threads."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import Field

from iogate.engines.workload import WorkloadSpec
from iogate.lab.profiles import Profile
from iogate.lab.yamlfile import load_model
from iogate.procedures.common import WORKLOADS_DIR, DataPattern, Pct, Positive, SizeStr, Strict, grid_override, pick_grid
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
        spec = WorkloadSpec(point.id, read_pct=point.read_pct, random_pct=self.random_pct, bs=point.bs,
                            iodepth=point.threads, runtime_s=runtime_s, ramp_s=ramp_s)
        return self.data_pattern.apply(spec)


class SweepCatalog(Strict):
    version: Literal[1]
    dell: DellSweep


def load_sweeps(path: Path | None = None) -> SweepCatalog:
    return load_model(SweepCatalog, path or WORKLOADS_DIR / "sweeps.yaml")
