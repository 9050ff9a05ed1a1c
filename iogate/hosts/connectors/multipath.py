"""`multipath`: an iSCSI or FC volume through its dm-multipath map.

The inner connector logs in / rescans and finds the path devices by WWN; this
one then waits for multipathd's map holding those paths. Connection.device stays
a path device (the guard verifies its WWN from sysfs; a dm map has none of its
own) and fio writes the map, which this connector has checked holds that path
and carries the same WWN in its dm uuid ("mpath-3<wwn>").
"""

from __future__ import annotations

import time
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict

from iogate.arrays.base import Volume
from iogate.errors import HostError
from iogate.hosts.connectors.base import Connection
from iogate.hosts.connectors.fc import FcConnector
from iogate.hosts.connectors.iscsi import IscsiConnector
from iogate.hosts.initiator import Initiator
from iogate.lab import ProtocolConfig
from iogate.run import Run

_HOLDER = r"""
for h in /sys/block/{name}/holders/dm-*; do
  [ -e "$h" ] || continue; d=${{h##*/}}
  case "$(cat /sys/block/$d/dm/uuid)" in mpath-*) echo "$d $(cat /sys/block/$d/dm/name) $(cat /sys/block/$d/dm/uuid)";; esac
done; true
"""


class MultipathOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    transport: Literal["iscsi", "fc"] = "iscsi"
    transport_options: dict[str, Any] = {}
    map_timeout_s: float = 60


class MultipathConnector:
    Options: ClassVar[type[BaseModel]] = MultipathOptions

    def __init__(self, protocol: ProtocolConfig, run: Run) -> None:
        self.protocol = protocol
        self.options = MultipathOptions.model_validate(protocol.options)
        inner = ProtocolConfig(name=protocol.name, connector=self.options.transport, options=self.options.transport_options)
        self.inner = IscsiConnector(inner, run) if self.options.transport == "iscsi" else FcConnector(inner, run)

    def connect(self, initiator: Initiator, volume: Volume) -> Connection:
        if initiator.run_unchecked("command -v multipathd && multipathd show status").rc != 0:
            raise HostError(f"host {initiator.name}: multipathd is not running (protocol {self.protocol.name})")
        path_connection = self.inner.connect(initiator, volume)
        path = path_connection.details["paths"][0]
        deadline = time.monotonic() + self.options.map_timeout_s
        while not (holder := initiator.run(_HOLDER.format(name=path.rsplit("/", 1)[-1])).stdout.split()):
            if time.monotonic() > deadline:
                self.inner.disconnect(initiator, path_connection)
                raise HostError(f"host {initiator.name}: no dm-multipath map over {path} after {self.options.map_timeout_s:.0f} s")
            initiator.run_unchecked("multipath -r >/dev/null 2>&1")
            time.sleep(1)
        dm, map_name, uuid = holder[:3]
        wanted = (volume.identity.wwn or "").lower().removeprefix("naa.")
        if wanted and not uuid.lower().endswith(wanted):
            self.inner.disconnect(initiator, path_connection)
            raise HostError(f"host {initiator.name}: map {map_name} ({uuid}) over {path} is not WWN {volume.identity.wwn}")
        return Connection(
            protocol=self.protocol.name,
            host=initiator.name,
            volume=volume,
            filename=f"/dev/mapper/{map_name}",
            device=path,
            details={**path_connection.details, "map": map_name, "dm": dm, "inner": path_connection},
        )

    def disconnect(self, initiator: Initiator, connection: Connection) -> None:
        initiator.run_unchecked("multipath -f %s", connection.details["map"])
        self.inner.disconnect(initiator, connection.details["inner"])
