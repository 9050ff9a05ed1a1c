"""`block`: the volume's own block device on the same machine (local lab)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel

from iogate.arrays.base import Volume
from iogate.arrays.exports import BlockExport
from iogate.errors import HostError
from iogate.hosts.connectors.base import Connection, NoOptions
from iogate.hosts.initiator import Initiator
from iogate.lab import ProtocolConfig
from iogate.run import Run


class BlockConnector:
    Options: ClassVar[type[BaseModel]] = NoOptions

    def __init__(self, protocol: ProtocolConfig, run: Run) -> None:
        self.protocol = protocol

    def connect(self, initiator: Initiator, volume: Volume) -> Connection:
        export = volume.export_of(BlockExport)
        if export is None or not export.device:
            raise HostError(f"protocol {self.protocol.name}: volume {volume.name} has no local block device")
        return Connection.to_device(self.protocol.name, initiator.name, volume, export.device, cgroup=export.cgroup)

    def disconnect(self, initiator: Initiator, connection: Connection) -> None:
        """Nothing to undo: the device belongs to the array driver."""
