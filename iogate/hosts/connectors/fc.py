"""`fc`: Fibre Channel (SCSI-FCP). The array maps the LUN; the host rescans and finds it by WWN.

Nothing to log in to (the volume's FcExport says the array mapped it over FC;
its LUN number is the array's, informative): connect rescans the SCSI hosts that are FC HBAs
(/sys/class/fc_host) and waits for a device whose VPD 0x83 WWN is the volume's.
Disconnect flushes and deletes the path devices so no stale path outlives the
array's unmap. With dm-multipath on the host, use the `multipath` connector.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict

from iogate.arrays.base import Volume
from iogate.arrays.exports import FcExport
from iogate.errors import HostError
from iogate.hosts.connectors import scan
from iogate.hosts.connectors.base import Connection, required_export
from iogate.hosts.initiator import Initiator
from iogate.lab import ProtocolConfig
from iogate.run import Run

RESCAN = r"""
found=0
for h in /sys/class/fc_host/host*; do
  [ -e "$h" ] || continue; found=1
  echo '- - -' > /sys/class/scsi_host/${h##*/}/scan
done
[ $found = 1 ] || { echo 'no FC HBA (/sys/class/fc_host is empty)' >&2; exit 3; }
"""


class FcOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    device_timeout_s: float = 60
    delete_on_disconnect: bool = True


class FcConnector:
    Options: ClassVar[type[BaseModel]] = FcOptions

    def __init__(self, protocol: ProtocolConfig, run: Run) -> None:
        self.protocol = protocol
        self.options = FcOptions.model_validate(protocol.options)

    def connect(self, initiator: Initiator, volume: Volume) -> Connection:
        required_export(self.protocol.name, volume, FcExport, "FC", note=" (the array did not map it over FC)")
        if not volume.identity.wwn:
            raise HostError(f"protocol {self.protocol.name}: volume {volume.name} has no WWN to find it by ({volume.identity.describe()})")
        initiator.run(RESCAN)
        return scan.device_connection(self.protocol.name, initiator, volume, self.options.device_timeout_s, f"FC LUN {volume.identity.wwn}")

    def disconnect(self, initiator: Initiator, connection: Connection) -> None:
        if not self.options.delete_on_disconnect:
            return
        for path in connection.details.get("paths", []):
            name = path.rsplit("/", 1)[-1]
            initiator.run("blockdev --flushbufs %s 2>/dev/null; echo 1 > /sys/block/%s/device/delete 2>/dev/null; true", path, name)
