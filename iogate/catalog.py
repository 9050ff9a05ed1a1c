"""Workload catalogs (workloads/*.yaml): the published procedures as data, and their fio jobs.

Four catalogs, each validated with file:line errors before any test runs:

    sweeps.yaml    Dell PowerStore grid: read % x block size x threads
    vm_tiles.yaml  Hitachi tile: 25 VMs, per-VM IOPS targets, four I/O profiles
    iogen.yaml     IOgen KPI cases: frontend/backend read/write, SPEED/THROUGHPUT
    netapp.yaml    NetApp protocol comparison: VM-count scaling and a single VM

The run profile (smoke/quick/full) picks how much of each grid runs; a profile
file (--profile-file) may replace a grid under `grids:` (keys sweep,
kpi_parallelism, netapp).

VMs (tiles, NetApp) are laid out by `place_vms`: groups of VMs (tiles) go to
hosts in contiguous blocks, as Hitachi spread them (tiles 1-5 on host 1, 6-10
on host 2), and VM disks go round-robin over the volumes (datastores), each VM
on its own region.

>>> tile = load_tiles().tile
>>> tile.total_iops, len(tile.vms_of_tile())
(625.0, 25)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, model_validator

from iogate.arrays.base import Volume
from iogate.engines.workload import JobSpec, WorkloadSpec
from iogate.errors import LabFileError
from iogate.hosts.connectors.base import Connection
from iogate.lab.profiles import Profile
from iogate.lab.yamlfile import load_model
from iogate.units import format_size, parse_size_bytes

WORKLOADS_DIR = Path(__file__).resolve().parent.parent / "workloads"
# VM regions start on this boundary so every block size of the catalogs stays aligned.
REGION_ALIGN_BYTES = 64 << 10


def _size(value: str) -> str:
    parse_size_bytes(value)
    return value


Pct = Annotated[int, Field(ge=0, le=100)]
SizeStr = Annotated[str, AfterValidator(_size)]
Positive = Annotated[int, Field(gt=0)]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class DataPattern(Strict):
    """Reducible data for writes: compratio 2 = compress_pct 50, dedupratio 2 = dedupe_pct 50."""

    compress_pct: Pct = 0
    dedupe_pct: Pct = 0

    def apply(self, workload: WorkloadSpec) -> WorkloadSpec:
        """The pattern on a writing workload; a pure-read workload is returned unchanged."""
        if not workload.writes:
            return workload
        return workload.with_(compress_pct=self.compress_pct, dedupe_pct=self.dedupe_pct)


def _grid_override(profile: Profile, key: str, model: type[BaseModel]) -> Any:
    """A grid the profile file replaced (profile.grids[key]), validated; None when not replaced."""
    raw = profile.grids.get(key) if profile.grids else None
    if raw is None:
        return None
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
        raise LabFileError(f"profile {profile.name}: grids.{key}: {problems}") from None


def _pick(grids: Mapping[str, Any], name: str, catalog: str) -> Any:
    try:
        return grids[name]
    except KeyError:
        raise LabFileError(f"{catalog}: no grid {name!r} for this profile (has: all, {', '.join(grids)})") from None


# -- Dell PowerStore sweep ---------------------------------------------------------


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
        override = _grid_override(profile, "sweep", SweepGrid)
        if override is not None:
            return override
        return self.grid if profile.grid == "all" else _pick(self.grids, profile.grid, "workloads/sweeps.yaml")

    def workload(self, point: GridPoint, runtime_s: float, ramp_s: float) -> WorkloadSpec:
        """One point as fio runs it: vdbench threads = outstanding I/Os = iodepth of one job per volume."""
        spec = WorkloadSpec(point.id, read_pct=point.read_pct, random_pct=self.random_pct, bs=point.bs,
                            iodepth=point.threads, runtime_s=runtime_s, ramp_s=ramp_s)
        return self.data_pattern.apply(spec)


class SweepCatalog(Strict):
    version: Literal[1]
    dell: DellSweep


# -- Hitachi VM tiles --------------------------------------------------------------


class IOProfile(Strict):
    bs: SizeStr
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
    rate_process: Literal["linear", "poisson"] = "linear"
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
        """The tile's VMs with targets x scale (scale only for ground-truth self-tests)."""
        out = []
        for vm in self.vms:
            for index in range(1, vm.count + 1):
                out.append(TileVM(f"{vm.profile.lower()}-{vm.level}-{index}", vm.profile, vm.level,
                                  round(vm.weight * self.iops_per_weight * scale, 3), self.io_profiles[vm.profile]))
        return out

    @property
    def judge_interval_ms(self) -> int:
        return 1000 * self.judge_interval_s

    def runtime_s(self, profile_runtime_s: float) -> float:
        """The profile's tile time, but at least min_intervals judged intervals (+1 s: fio's exit flush is not judged)."""
        return max(profile_runtime_s, self.min_intervals * self.judge_interval_s + 1)

    def tiles_for(self, profile: Profile) -> int:
        return self.tiles.get(profile.name, 1)

    def workload(self, vm: TileVM, region: Region, runtime_s: float, ramp_s: float) -> WorkloadSpec:
        """The VM's fio job: rate = its target, I/O on the first io_span_pct of its disk region."""
        spec = WorkloadSpec(
            vm.name, read_pct=vm.io.read_pct, random_pct=vm.io.random_pct, bs=vm.io.bs, iodepth=self.iodepth,
            size=str(region.span_bytes), offset=str(region.offset_bytes), runtime_s=runtime_s, ramp_s=ramp_s,
            rate_iops=max(1, round(vm.target_iops)),  # split per direction by engines.workload.rate_split
            extra={"rate_process": self.rate_process},
        )
        return self.data_pattern.apply(spec)


class TileCatalog(Strict):
    version: Literal[1]
    tile: TileSpec


# -- IOgen KPI cases ---------------------------------------------------------------


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
        steps = self.throughput.processes if profile.grid == "all" else _pick(self.throughput.grids, profile.grid, "workloads/iogen.yaml")
        return sorted(steps)

    def workload(self, case: str, processes: int, iodepth: int, runtime_s: float, ramp_s: float) -> WorkloadSpec:
        """`processes` fio processes (numjobs) of the case on one volume."""
        spec_case = self.cases[case]
        size = self.frontend_working_set if spec_case.working_set == "frontend" else None
        spec = WorkloadSpec(f"{case}-p{processes}", read_pct=spec_case.read_pct, random_pct=self.random_pct, bs=self.bs,
                            iodepth=iodepth, numjobs=processes, size=size, runtime_s=runtime_s, ramp_s=ramp_s)
        return self.data_pattern.apply(spec)


class IOgenCatalog(Strict):
    version: Literal[1]
    iogen: IOgenSpec


# -- NetApp protocol comparison ----------------------------------------------------


class NetAppScaling(Strict):
    vms: list[Positive] = Field(min_length=1)
    outstanding_per_vm: Positive
    bs: list[SizeStr] = Field(min_length=1)
    read_pct: Pct
    random_pct: Pct


class NetAppSingleVM(Strict):
    bs: SizeStr
    read_pct: Pct
    random_pct: Pct
    outstanding: Positive
    disks: Positive


class NetAppGrid(Strict):
    vms: list[Positive] = Field(default_factory=list)
    bs: list[SizeStr] = Field(default_factory=list)
    single_vm: bool = True


@dataclass(frozen=True)
class NetAppPoint:
    """One comparison point: `vms` VMs (jobs) of `outstanding` I/Os each, spread over `disks` regions."""

    id: str
    vms: int
    bs: str
    read_pct: int
    random_pct: int
    outstanding_per_vm: int
    disks_per_vm: int = 1

    @property
    def outstanding_total(self) -> int:
        return self.vms * self.outstanding_per_vm


class NetAppSpec(Strict):
    description: str = ""
    ramp_s: float = Field(ge=0)
    measure_s: float = Field(gt=0)
    restore_between_tests: bool = True
    data_pattern: DataPattern = DataPattern()
    scaling: NetAppScaling
    single_vm: NetAppSingleVM
    grids: dict[str, NetAppGrid] = Field(default_factory=dict)

    def points(self, profile: Profile) -> list[NetAppPoint]:
        grid = _grid_override(profile, "netapp", NetAppGrid)
        if grid is None:
            grid = (NetAppGrid(vms=self.scaling.vms, bs=self.scaling.bs, single_vm=True) if profile.grid == "all"
                    else _pick(self.grids, profile.grid, "workloads/netapp.yaml"))
        s = self.scaling
        points = [NetAppPoint(f"vms{n}-{format_size(parse_size_bytes(bs))}", n, bs, s.read_pct, s.random_pct, s.outstanding_per_vm)
                  for bs in grid.bs for n in sorted(grid.vms)]
        if grid.single_vm:
            one = self.single_vm
            per_disk = max(1, one.outstanding // one.disks)
            points.append(NetAppPoint(f"single-vm-{format_size(parse_size_bytes(one.bs))}-qd{one.outstanding}", 1, one.bs,
                                      one.read_pct, one.random_pct, per_disk, one.disks))
        return points

    def workload(self, point: NetAppPoint, name: str, region: Region, runtime_s: float, ramp_s: float) -> WorkloadSpec:
        spec = WorkloadSpec(name, read_pct=point.read_pct, random_pct=point.random_pct, bs=point.bs, iodepth=point.outstanding_per_vm,
                            size=str(region.span_bytes), offset=str(region.offset_bytes), runtime_s=runtime_s, ramp_s=ramp_s)
        return self.data_pattern.apply(spec)


class NetAppCatalog(Strict):
    version: Literal[1]
    netapp: NetAppSpec


# -- loaders -----------------------------------------------------------------------


def load_sweeps(path: Path | None = None) -> SweepCatalog:
    return load_model(SweepCatalog, path or WORKLOADS_DIR / "sweeps.yaml")


def load_tiles(path: Path | None = None) -> TileCatalog:
    return load_model(TileCatalog, path or WORKLOADS_DIR / "vm_tiles.yaml")


def load_iogen(path: Path | None = None) -> IOgenCatalog:
    return load_model(IOgenCatalog, path or WORKLOADS_DIR / "iogen.yaml")


def load_netapp(path: Path | None = None) -> NetAppCatalog:
    return load_model(NetAppCatalog, path or WORKLOADS_DIR / "netapp.yaml")


# -- layout: VMs -> hosts, volumes, regions ----------------------------------------


@dataclass(frozen=True)
class Region:
    """A VM's disk on a volume: [offset, offset + region) with I/O on the first span bytes."""

    volume: str
    offset_bytes: int
    region_bytes: int
    span_bytes: int


@dataclass(frozen=True)
class Placement:
    group: int  # 1-based tile (or VM group) number
    name: str  # unique job name, e.g. "t01-sql-light-2"
    host: str
    region: Region


def hosts_for_groups(groups: int, hosts: Sequence[str]) -> list[str]:
    """Contiguous blocks, as Hitachi spread tiles: 10 tiles on 2 hosts = 1-5 on the first, 6-10 on the second."""
    if not hosts:
        raise ValueError("no hosts to place VMs on")
    per_host = math.ceil(groups / len(hosts))
    return [hosts[index // per_host] for index in range(groups)]


def place_vms(groups: Sequence[Sequence[str]], hosts: Sequence[str], volumes: Sequence[Volume], *,
              span_pct: float = 100, prefix: str = "t") -> list[Placement]:
    """Place VMs (named within their group) on hosts and volume regions.

    Groups go to hosts in contiguous blocks (hosts_for_groups). VM disks go
    round-robin over the volumes in order, so every datastore carries a like
    share of every group; each VM gets its own equal, aligned region of its
    volume, and its I/O stays on the first span_pct % of that region.
    """
    if not volumes:
        raise ValueError("no volumes to place VMs on")
    total = sum(len(g) for g in groups)
    if total == 0:
        return []
    slots = math.ceil(total / len(volumes))
    smallest = min(v.size_bytes for v in volumes)
    region = (smallest // slots) // REGION_ALIGN_BYTES * REGION_ALIGN_BYTES
    if region < REGION_ALIGN_BYTES:
        raise ValueError(f"{total} VMs do not fit on {len(volumes)} volume(s) of {smallest} bytes: "
                         f"each needs at least {REGION_ALIGN_BYTES} bytes")
    span = max(REGION_ALIGN_BYTES, int(region * span_pct / 100) // REGION_ALIGN_BYTES * REGION_ALIGN_BYTES)
    group_hosts = hosts_for_groups(len(groups), hosts)
    width = max(2, len(str(len(groups))))
    placements = []
    index = 0
    for number, (vms, host) in enumerate(zip(groups, group_hosts, strict=True), 1):
        for vm in vms:
            volume = volumes[index % len(volumes)]
            slot = index // len(volumes)
            placements.append(Placement(number, f"{prefix}{number:0{width}d}-{vm}", host,
                                        Region(volume.name, slot * region, region, span)))
            index += 1
    return placements


# -- catalog entries -> jobs -------------------------------------------------------

# connect(volume, host) -> the Connection a job on that host uses for that volume.
ConnectFn = Callable[[Volume, str], Connection]


@dataclass(frozen=True)
class VMJobs:
    """The jobs of laid-out VMs, with each job's target IOPS and workload kind (SQL, Web ...)."""

    jobs: tuple[JobSpec, ...]
    targets: Mapping[str, float]
    kinds: Mapping[str, str]

    def of_kind(self, kind: str) -> list[str]:
        return [name for name, k in self.kinds.items() if k == kind]


def tile_jobs(tile: TileSpec, tiles: int, hosts: Sequence[str], volumes: Sequence[Volume], connect: ConnectFn, *,
              runtime_s: float, ramp_s: float, scale: float = 1.0) -> VMJobs:
    """`tiles` tiles of VMs as fio jobs: one job per VM, rate = target, own region of a volume."""
    vms = tile.vms_of_tile(scale)
    by_name = {vm.name: vm for vm in vms}
    placements = place_vms([[vm.name for vm in vms]] * tiles, hosts, volumes, span_pct=tile.io_span_pct)
    volume_by_name = {v.name: v for v in volumes}
    jobs, targets, kinds = [], {}, {}
    for placement in placements:
        vm = by_name[placement.name.split("-", 1)[1]]
        target = connect(volume_by_name[placement.region.volume], placement.host)
        workload = tile.workload(vm, placement.region, runtime_s, ramp_s)
        jobs.append(JobSpec(placement.name, workload, target, target_iops=vm.target_iops))
        targets[placement.name] = vm.target_iops
        kinds[placement.name] = vm.kind
    return VMJobs(tuple(jobs), targets, kinds)


def netapp_jobs(spec: NetAppSpec, point: NetAppPoint, hosts: Sequence[str], volumes: Sequence[Volume], connect: ConnectFn, *,
                runtime_s: float, ramp_s: float) -> VMJobs:
    """A NetApp point's VMs: each VM's disk(s) a region of a datastore, `outstanding_per_vm` I/Os per disk.

    VMs spread over hosts in contiguous blocks; a multi-disk VM (the single-VM
    test's 2 disks) has one job per disk, its disks on different volumes where
    the lab has them.
    """
    groups = [[f"vm{n:03d}-d{d + 1}" for d in range(point.disks_per_vm)] for n in range(1, point.vms + 1)]
    placements = place_vms(groups, hosts, volumes, prefix="g")
    volume_by_name = {v.name: v for v in volumes}
    jobs, kinds = [], {}
    for placement in placements:
        name = placement.name.split("-", 1)[1]
        target = connect(volume_by_name[placement.region.volume], placement.host)
        jobs.append(JobSpec(name, spec.workload(point, name, placement.region, runtime_s, ramp_s), target))
        kinds[name] = point.id
    return VMJobs(tuple(jobs), {}, kinds)
