"""VM placement shared by the procedures that lay out VMs (Hitachi tiles, NetApp): VMs -> hosts, volumes, regions.

Groups of VMs (tiles) go to hosts in contiguous blocks, and VM disks go
round-robin over the volumes (datastores), each VM on its own region; VMJobs
holds the fio jobs built from such a layout.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from iogate.arrays.base import Volume
from iogate.engines.workload import JobSpec
from iogate.hosts.connectors.base import Connection

# VM regions start on this boundary so every block size of the catalogs stays aligned.
REGION_ALIGN_BYTES = 64 << 10


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


# connect(volume, host) -> the Connection a job on that host uses for that volume.
ConnectFn = Callable[[Volume, str], Connection]


def connected(placements: Iterable[Placement], volumes: Sequence[Volume], connect: ConnectFn) -> Iterator[tuple[Placement, Connection]]:
    """Each placement with its region's volume connected on its host, one at a time as the caller takes them."""
    volume_by_name = {v.name: v for v in volumes}
    for placement in placements:
        yield placement, connect(volume_by_name[placement.region.volume], placement.host)


@dataclass(frozen=True)
class VMJobs:
    """The jobs of laid-out VMs, with each job's target IOPS and workload kind (SQL, Web ...)."""

    jobs: tuple[JobSpec, ...]
    targets: Mapping[str, float]
    kinds: Mapping[str, str]

    def of_kind(self, kind: str) -> list[str]:
        return [name for name, k in self.kinds.items() if k == kind]
