"""`nfs`: mount the volume's export (vers, nconnect, options); fio runs on a file in it.

The volume's NfsExport carries `server` and `path`; its "server:path" is what
is mounted, and what Volume.identity.nfs_export says. Connection.device is None:
the guard instead checks that the file's directory is an NFS mount of exactly
that export. The ledger holds the umount and the mount point directory.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from iogate.arrays.base import Volume
from iogate.arrays.exports import NfsExport
from iogate.hosts import remote
from iogate.hosts.connectors.base import Connection, JournalledConnector, required_export
from iogate.hosts.initiator import Initiator


class NfsOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    vers: str = "4.1"
    nconnect: int | None = Field(default=None, ge=1, le=16)
    mount_options: list[str] = []  # e.g. ["rsize=1048576", "wsize=1048576", "hard"]
    mount_root: str = "/mnt/iogate"
    # The fio file fills this share of the volume (the rest is file-system overhead).
    # Share of the volume the fio file takes; the array sizes an NFS volume so that a
    # file of the full volume size fits, and workloads lay out regions over size_bytes.
    file_fill: float = Field(default=1.0, gt=0, le=1.0)


class NfsConnector(JournalledConnector):
    Options: ClassVar[type[BaseModel]] = NfsOptions
    options: NfsOptions

    def mount_options(self) -> str:
        options = [f"vers={self.options.vers}"]
        if self.options.nconnect:
            options.append(f"nconnect={self.options.nconnect}")
        return ",".join(options + list(self.options.mount_options))

    def connect(self, initiator: Initiator, volume: Volume) -> Connection:
        record = required_export(self.protocol.name, volume, NfsExport, "NFS", "server", "path", note="")
        export = record.source
        mountpoint = f"{self.options.mount_root}/{self.run.run_id}/{self.protocol.name}/{volume.name}"
        undo = (
            f"if mountpoint -q {mountpoint}; then umount {mountpoint} || umount -l {mountpoint}; fi; rmdir {mountpoint} 2>/dev/null; true"
        )
        entry = remote.intend(self.run.ledger, initiator, f"NFS mount {export} on {mountpoint}", undo, record.vanishes_with)
        self._entries[(initiator.name, volume.name)] = entry
        initiator.run("mkdir -p %s && mount -t nfs -o %s %s %s", mountpoint, self.mount_options(), export, mountpoint)
        self.run.ledger.created(entry)
        file_size_bytes = int(volume.size_bytes * self.options.file_fill) // (1 << 20) * (1 << 20)
        return Connection(
            protocol=self.protocol.name,
            host=initiator.name,
            volume=volume,
            filename=f"{mountpoint}/iogate-{volume.name}.dat",
            device=None,
            fio_options={"size": str(file_size_bytes)},
            details={"mountpoint": mountpoint, "export": export, "mount_options": self.mount_options()},
        )

