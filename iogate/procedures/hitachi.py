"""Hitachi VM tiles (workloads/vm_tiles.yaml): 25 VMs, per-VM IOPS targets, four I/O profiles.

A tile's VMs are laid out by placement.place_vms: tiles go to hosts in
contiguous blocks, as Hitachi spread them (tiles 1-5 on host 1, 6-10 on host 2),
and VM disks go round-robin over the volumes (datastores), each VM on its own
region.

>>> tile = load_tiles().tile
>>> tile.total_iops, len(tile.vms_of_tile())
(625.0, 25)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, model_validator

from iogate.arrays.base import Volume
from iogate.engines.workload import Extent, JobSpec, RateProcess, WorkloadSpec, parse_block_size
from iogate.lab.profiles import Profile
from iogate.procedures.common import BlockSizeStr, Catalog, DataPattern, Pct, Positive, Strict, load_catalog
from iogate.procedures.placement import ConnectFn, Region, VMJobs, connected, place_vms


class IOProfile(Strict):
    bs: BlockSizeStr  # "8k", or a mix "4k/50:64k/50"
    random_pct: Pct
    read_pct: Pct


class VMClass(Strict):
    profile: str
    level: Literal["light", "medium", "heavy"]
    weight: Positive
    count: Positive


@dataclass(frozen=True)
class TileVM:
    """One VM of a tile: its name in the tile ("sql-light-2"), I/O profile and target."""

    name: str
    kind: str  # the I/O profile: SQL, Web, Exchange, OLTP
    level: str
    target_iops: float
    io: IOProfile


class TileSpec(Strict):
    description: str = ""
    iops_per_weight: float = Field(gt=0)
    disk_gb: float = Field(gt=0)
    disk_fill_pct: Pct
    io_span_pct: Annotated[int, Field(gt=0, le=100)]
    iodepth: Positive = 4
    rate_process: RateProcess = RateProcess.LINEAR
    judge_interval_s: Positive = 5
    min_intervals: Positive = 4
    data_pattern: DataPattern = DataPattern()
    io_profiles: dict[str, IOProfile]
    vms: list[VMClass] = Field(min_length=1)
    tiles: dict[str, Positive] = Field(default_factory=dict)
    baseline_hours: float = Field(gt=0)

    @model_validator(mode="after")
    def _profiles_exist(self) -> TileSpec:
        unknown = sorted({vm.profile for vm in self.vms} - set(self.io_profiles))
        if unknown:
            raise ValueError(f"vms use I/O profiles {unknown} not defined under io_profiles ({', '.join(self.io_profiles)})")
        return self

    @property
    def vm_count(self) -> int:
        return sum(vm.count for vm in self.vms)

    @property
    def total_iops(self) -> float:
        return sum(vm.weight * vm.count * self.iops_per_weight for vm in self.vms)

    @property
    def read_fraction(self) -> float:
        """Share of the tile's target IOPS that are reads (to cap a volume per direction)."""
        reads = sum(vm.weight * vm.count * self.iops_per_weight * self.io_profiles[vm.profile].read_pct / 100 for vm in self.vms)
        return reads / self.total_iops

    def vms_of_tile(self, scale: float = 1.0) -> list[TileVM]:
        """The tile's VMs with targets x scale (a functional lab's load_scale, the ground-truth self-tests)."""
        out = []
        for vm in self.vms:
            for index in range(1, vm.count + 1):
                out.append(TileVM(f"{vm.profile.lower()}-{vm.level}-{index}", vm.profile, vm.level,
                                  round(vm.weight * self.iops_per_weight * scale, 3), self.io_profiles[vm.profile]))
        return out

    @property
    def judge_interval_ms(self) -> int:
        return 1000 * self.judge_interval_s

    def judge_interval_ms_at(self, scale: float) -> int:
        """The judging interval of a tile at `scale` (a functional lab's load_scale): stretched by 1 / scale
        to whole seconds, so a VM's interval holds as many I/Os as the procedure's. At 0.25 a light VM does
        2 IOPS: over 5 s, one I/O that the TCG guest issued a second late was 10 % of its interval."""
        return 1000 * math.ceil(self.judge_interval_s / scale - 1e-9)

    def runtime_s(self, profile_runtime_s: float, scale: float = 1.0) -> float:
        """The profile's tile time, but at least min_intervals judged intervals, + 2 s: fio's exit second is not
        judged (resample.judged_series) and a job's grid may begin up to half a second after the measured start
        (metrics.grid), so with + 1 s a tile judged one 5 s interval fewer than min_intervals."""
        return max(profile_runtime_s, self.min_intervals * self.judge_interval_ms_at(scale) / 1000 + 2)

    def tiles_for(self, profile: Profile) -> int:
        return self.tiles.get(profile.name, 1)

    def workload(self, vm: TileVM, region: Region, runtime_s: float, ramp_s: float) -> WorkloadSpec:
        """The VM's fio job: rate = its target, I/O on the first io_span_pct of its disk region."""
        spec = WorkloadSpec(
            vm.name, read_pct=vm.io.read_pct, random_pct=vm.io.random_pct, bs=parse_block_size(vm.io.bs), iodepth=self.iodepth,
            size=Extent.of_bytes(region.span_bytes), offset=Extent.of_bytes(region.offset_bytes), runtime_s=runtime_s, ramp_s=ramp_s,
            rate_iops=max(1, round(vm.target_iops)),  # split per direction by engines.workload.rate_split
            rate_process=self.rate_process,
        )
        return self.data_pattern.apply(spec)


class TileCatalog(Catalog):
    tile: TileSpec


def load_tiles(path: Path | None = None) -> TileCatalog:
    return load_catalog(TileCatalog, "vm_tiles.yaml", path)



def tile_jobs(tile: TileSpec, tiles: int, hosts: Sequence[str], volumes: Sequence[Volume], connect: ConnectFn, *,
              runtime_s: float, ramp_s: float, scale: float = 1.0) -> VMJobs:
    """`tiles` tiles of VMs as fio jobs: one job per VM, rate = target, own region of a volume."""
    vms = tile.vms_of_tile(scale)
    by_name = {vm.name: vm for vm in vms}
    placements = place_vms([[vm.name for vm in vms]] * tiles, hosts, volumes, span_pct=tile.io_span_pct)
    jobs, targets, kinds = [], {}, {}
    for placement, target in connected(placements, volumes, connect):
        vm = by_name[placement.name.split("-", 1)[1]]
        workload = tile.workload(vm, placement.region, runtime_s, ramp_s)
        # Judged against what fio paces (whole IOPS), not a scaled fraction it was never asked for:
        # at scale 0.25 a 10 IOPS VM runs at 2, and judged against 2.5 it would miss by design.
        paced = float(workload.rate_iops or vm.target_iops)
        jobs.append(JobSpec(placement.name, workload, target, target_iops=paced))
        targets[placement.name] = paced
        kinds[placement.name] = vm.kind
    return VMJobs(tuple(jobs), targets, kinds)
