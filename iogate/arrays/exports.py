"""What a connector needs to reach a volume: one frozen record per protocol family.

A driver puts on each Volume the records of the protocols it serves the volume
over (`Volume.exports`); a connector asks for its own type with
`Volume.export_of(IscsiExport)` and fails naming the volume and its protocol
when the volume has none. The local array serves every protocol of its lab from
one loop device, so its volumes carry a BlockExport (the `block` and `nbd`
connectors both read it: nbdkit is started by the connector, not the array);
linux_target, static and the vendor drivers export a volume over the one
protocol chosen at creation, so their volumes carry one record.

Records hold addresses and names only, never a secret: CHAP credentials stay in
the iSCSI connector's options, as references (`${env:NAME}`, `${file:PATH}`)
resolved at login and registered for redaction (iogate.lab.secrets).

`vanishes_with` (NetworkExport, the base of the network records; a keyword) is
the qemu marker of a lab-VM target: what a host connector journals against that
target vanishes with the VM (iogate.hosts.remote).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class BlockExport:
    """A block device on the machine that runs the I/O (the local array's loop device)."""

    device: str  # /dev/loopN
    cgroup: str | None = None  # the blkio cgroup the I/O must run in (the local array's QoS)


@dataclass(frozen=True)
class NetworkExport:
    """What every record a host reaches over the network carries, as a keyword: the lab-VM marker."""

    vanishes_with: str | None = field(default=None, kw_only=True)


@dataclass(frozen=True)
class IscsiExport(NetworkExport):
    portal: str  # "address:port"
    target_iqn: str
    lun: int | None = None  # as the array reported it; the connector finds the LUN by WWN


@dataclass(frozen=True)
class NvmeTcpExport(NetworkExport):
    traddr: str
    subsys_nqn: str
    trsvcid: str = "4420"
    nsid: int | None = None  # as the array reported it; the connector finds the namespace by NGUID


@dataclass(frozen=True)
class NfsExport(NetworkExport):
    server: str
    path: str

    @property
    def source(self) -> str:
        """What `mount -t nfs` takes and /proc/mounts shows: "server:path"."""
        return f"{self.server}:{self.path}"


@dataclass(frozen=True)
class FcExport:
    """A LUN mapped over Fibre Channel: nothing to log in to, the host rescans and finds it by WWN."""

    lun: int | None = None


Export = BlockExport | IscsiExport | NvmeTcpExport | NfsExport | FcExport
