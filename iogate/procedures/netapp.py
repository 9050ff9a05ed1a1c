"""NetApp protocol comparison (workloads/netapp.yaml): VM-count scaling and a single VM."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import Field

from iogate.arrays.base import Volume
from iogate.engines.workload import Extent, JobSpec, WorkloadSpec, parse_block_size
from iogate.lab.model import DeviceIdentity
from iogate.lab.profiles import Profile
from iogate.procedures.common import Catalog, DataPattern, Pct, Positive, SizeStr, Strict, grid_override, load_catalog, pick_grid
from iogate.procedures.placement import ConnectFn, Region, VMJobs, connected, place_vms
from iogate.units import format_size, parse_size_bytes


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
        grid = grid_override(profile, "netapp", NetAppGrid)
        if grid is None:
            grid = (NetAppGrid(vms=self.scaling.vms, bs=self.scaling.bs, single_vm=True) if profile.grid == "all"
                    else pick_grid(self.grids, profile.grid, "workloads/netapp.yaml"))
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
        spec = WorkloadSpec(name, read_pct=point.read_pct, random_pct=point.random_pct, bs=parse_block_size(point.bs),
                            iodepth=point.outstanding_per_vm, size=Extent.of_bytes(region.span_bytes),
                            offset=Extent.of_bytes(region.offset_bytes), runtime_s=runtime_s, ramp_s=ramp_s)
        return self.data_pattern.apply(spec)


class NetAppCatalog(Catalog):
    netapp: NetAppSpec


def load_netapp(path: Path | None = None) -> NetAppCatalog:
    return load_catalog(NetAppCatalog, "netapp.yaml", path)



def outstanding_per_lun(point: NetAppPoint, hosts: Sequence[str], volumes: int, volume_size_bytes: int) -> int:
    """The most I/Os one host keeps outstanding on one volume at this point, placed as netapp_jobs places them:
    what that host's LUN queue (an iSCSI session's node.session.queue_depth) must hold."""
    stand_ins = [Volume(f"v{n}", volume_size_bytes, DeviceIdentity(serial=f"v{n}")) for n in range(volumes)]
    groups = [[f"vm{n:03d}-d{d + 1}" for d in range(point.disks_per_vm)] for n in range(1, point.vms + 1)]
    per_lun = Counter((p.host, p.region.volume) for p in place_vms(groups, hosts, stand_ins, prefix="g"))
    return max(per_lun.values(), default=0) * point.outstanding_per_vm


def netapp_jobs(spec: NetAppSpec, point: NetAppPoint, hosts: Sequence[str], volumes: Sequence[Volume], connect: ConnectFn, *,
                runtime_s: float, ramp_s: float) -> VMJobs:
    """A NetApp point's VMs: each VM's disk(s) a region of a datastore, `outstanding_per_vm` I/Os per disk.

    VMs spread over hosts in contiguous blocks; a multi-disk VM (the single-VM
    test's 2 disks) has one job per disk, its disks on different volumes where
    the lab has them.
    """
    groups = [[f"vm{n:03d}-d{d + 1}" for d in range(point.disks_per_vm)] for n in range(1, point.vms + 1)]
    placements = place_vms(groups, hosts, volumes, prefix="g")
    jobs, kinds = [], {}
    for placement, target in connected(placements, volumes, connect):
        name = placement.name.split("-", 1)[1]
        jobs.append(JobSpec(name, spec.workload(point, name, placement.region, runtime_s, ramp_s), target))
        kinds[name] = point.id
    return VMJobs(tuple(jobs), {}, kinds)
