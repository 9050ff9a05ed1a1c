"""IOgen KPI cases (workloads/iogen.yaml): frontend/backend read/write, SPEED/THROUGHPUT."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from iogate.engines.workload import Extent, WorkloadSpec, parse_block_size
from iogate.errors import LabFileError
from iogate.lab.profiles import Profile
from iogate.procedures.common import Catalog, DataPattern, Pct, Positive, SizeStr, Strict, load_catalog, pick_grid


class IOgenCase(Strict):
    read_pct: Pct
    working_set: Literal["frontend", "backend"]
    description: str = ""


class SpeedView(Strict):
    processes: Positive = 1
    iodepth: Positive = 1


class ThroughputView(Strict):
    iodepth: Positive = 1
    processes: list[Positive] = Field(min_length=1)
    grids: dict[str, list[Positive]] = Field(default_factory=dict)


class IOgenSpec(Strict):
    description: str = ""
    bs: SizeStr
    random_pct: Pct
    frontend_working_set: SizeStr
    data_pattern: DataPattern = DataPattern()
    cases: dict[str, IOgenCase]
    speed: SpeedView
    throughput: ThroughputView

    def throughput_steps(self, profile: Profile) -> list[int]:
        """Process counts of the THROUGHPUT auto-scale for this profile (ascending)."""
        override = profile.grids.get("kpi_parallelism") if profile.grids else None
        if override is not None:
            if not isinstance(override, list) or not override or not all(isinstance(n, int) and n > 0 for n in override):
                raise LabFileError(f"profile {profile.name}: grids.kpi_parallelism must be a list of positive integers, got {override!r}")
            return sorted(override)
        steps = (self.throughput.processes if profile.grid == "all"
                 else pick_grid(self.throughput.grids, profile.grid, "workloads/iogen.yaml"))
        return sorted(steps)

    def workload(self, case: str, processes: int, iodepth: int, runtime_s: float, ramp_s: float) -> WorkloadSpec:
        """`processes` fio processes (numjobs) of the case on one volume."""
        spec_case = self.cases[case]
        size = Extent.parse(self.frontend_working_set) if spec_case.working_set == "frontend" else None
        spec = WorkloadSpec(f"{case}-p{processes}", read_pct=spec_case.read_pct, random_pct=self.random_pct, bs=parse_block_size(self.bs),
                            iodepth=iodepth, numjobs=processes, size=size, runtime_s=runtime_s, ramp_s=ramp_s)
        return self.data_pattern.apply(spec)


class IOgenCatalog(Catalog):
    iogen: IOgenSpec


def load_iogen(path: Path | None = None) -> IOgenCatalog:
    return load_catalog(IOgenCatalog, "iogen.yaml", path)
