"""`nbd`: the volume exported by nbdkit over a Unix socket, driven by fio's nbd engine.

A second real protocol path on the local lab: the I/O leaves fio as NBD requests,
crosses a socket and lands on the same loop device through nbdkit's file plugin.
The array's record is the volume's BlockExport (the device nbdkit serves): the
NBD export itself is made here, by the connector.
nbdkit runs in the volume's blkio cgroup so the array's QoS caps still apply.
"""

from __future__ import annotations

import hashlib
import tempfile
import time
from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from iogate.arrays.base import Volume
from iogate.arrays.exports import BlockExport
from iogate.errors import HostError
from iogate.hosts.connectors.base import Connection
from iogate.hosts.initiator import Initiator
from iogate.lab import ProtocolConfig
from iogate.run import Run
from iogate.run.ledger import Entry
from iogate.run.resources import release


class NbdOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    threads: int = Field(default=16, ge=1, le=256)


class NbdConnector:
    Options: ClassVar[type[BaseModel]] = NbdOptions

    def __init__(self, protocol: ProtocolConfig, run: Run) -> None:
        self.protocol = protocol
        self.run = run
        self.options = NbdOptions.model_validate(protocol.options)
        self._entries: dict[str, list[Entry]] = {}

    def connect(self, initiator: Initiator, volume: Volume) -> Connection:
        if not initiator.is_local:
            raise HostError(f"protocol {self.protocol.name}: nbd export is only wired for the local host, not {initiator.name}")
        export = volume.export_of(BlockExport)
        if export is None or not export.device:
            raise HostError(f"protocol {self.protocol.name}: volume {volume.name} has no local block device for nbdkit to serve")
        device = export.device
        # A Unix socket path must fit in 108 bytes: keep it short, not under the run directory.
        digest = hashlib.sha1(f"{self.run.run_dir}/{volume.name}".encode()).hexdigest()[:12]
        socket = Path(tempfile.gettempdir()) / f"iogate-nbd-{digest}.sock"
        pidfile = self.run.path("nbd", f"{volume.name}.pid")
        ledger = self.run.ledger
        entries = [ledger.intend("file", path=str(socket))]
        entries.append(ledger.intend("process", name="nbdkit", marker=str(socket)))
        cgroup = export.cgroup
        join = f"echo $$ > {cgroup}/cgroup.procs && " if cgroup else ""
        # nbdkit forks into the background once the socket is ready; the socket path is its ledger marker.
        initiator.run(f"sh -c '{join}exec nbdkit -U {socket} -P {pidfile} -t {self.options.threads} file file={device} cache=none'")
        ledger.created(entries[1])
        _wait_for(socket, f"nbdkit for volume {volume.name}")
        self._entries[volume.name] = entries
        return Connection(
            protocol=self.protocol.name,
            host=initiator.name,
            volume=volume,
            filename=f"nbd-{volume.name}",
            device=device,
            fio_options={"ioengine": "nbd", "uri": f"nbd+unix:///?socket={socket}"},
            details={"socket": str(socket), "server": "nbdkit file plugin"},
        )

    def disconnect(self, initiator: Initiator, connection: Connection) -> None:
        release(self.run.ledger, self._entries.pop(connection.volume.name, []))


def _wait_for(path: Path, what: str, timeout_s: float = 10) -> None:
    deadline = time.monotonic() + timeout_s
    while not path.exists():
        if time.monotonic() > deadline:
            raise HostError(f"{what}: socket {path} did not appear within {timeout_s:.0f} s")
        time.sleep(0.05)
