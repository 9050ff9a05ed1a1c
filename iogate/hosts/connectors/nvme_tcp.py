"""`nvme-tcp`: nvme-cli discover + connect to the volume's subsystem; the namespace is found by NGUID.

The volume's NvmeTcpExport carries `traddr`, `trsvcid` and `subsys_nqn`. The
host NQN is the initiator's own (/etc/nvme/hostnqn) unless the options name
one; the array must allow it. The ledger holds the disconnect.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict

from iogate.arrays.base import Volume
from iogate.arrays.exports import NvmeTcpExport
from iogate.errors import HostError
from iogate.hosts import remote
from iogate.hosts.connectors import scan
from iogate.hosts.connectors.base import Connection, JournalledConnector, required_export
from iogate.hosts.initiator import Initiator


class NvmeTcpOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    hostnqn: str | None = None
    nr_io_queues: int | None = None
    queue_size: int | None = None
    ctrl_loss_tmo_s: int | None = None
    discovery: bool = True
    device_timeout_s: float = 60


class NvmeTcpConnector(JournalledConnector):
    Options: ClassVar[type[BaseModel]] = NvmeTcpOptions
    options: NvmeTcpOptions

    def connect(self, initiator: Initiator, volume: Volume) -> Connection:
        export = required_export(self.protocol.name, volume, NvmeTcpExport, "NVMe/TCP", "traddr", "subsys_nqn")
        traddr, trsvcid, nqn = export.traddr, str(export.trsvcid or 4420), export.subsys_nqn
        initiator.run("modprobe nvme-tcp 2>/dev/null || true")
        entry = remote.intend(
            self.run.ledger,
            initiator,
            f"NVMe/TCP controller {nqn}",
            f"nvme disconnect -n {nqn} >/dev/null 2>&1; true",
            export.vanishes_with,
        )
        self._entries[(initiator.name, volume.name)] = entry
        host_args = ["-q", self.options.hostnqn] if self.options.hostnqn else []
        if self.options.discovery:
            log = initiator.run("nvme discover -t tcp -a %s -s %s" + " %s" * len(host_args), traddr, trsvcid, *host_args).stdout
            if nqn not in log:
                raise HostError(f"host {initiator.name}: discovery at {traddr}:{trsvcid} does not list {nqn}")
        extra = host_args[:]
        for flag, value in (
            ("--nr-io-queues", self.options.nr_io_queues),
            ("--queue-size", self.options.queue_size),
            ("--ctrl-loss-tmo", self.options.ctrl_loss_tmo_s),
        ):
            if value is not None:
                extra += [flag, str(value)]
        initiator.run("nvme connect -t tcp -a %s -s %s -n %s" + " %s" * len(extra), traddr, trsvcid, nqn, *extra)
        self.run.ledger.created(entry)
        return scan.device_connection(self.protocol.name, initiator, volume, self.options.device_timeout_s, f"NVMe/TCP {nqn}",
                                      {"subsys_nqn": nqn, "traddr": f"{traddr}:{trsvcid}"})

