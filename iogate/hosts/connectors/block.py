"""`block`: the volume's own block device on the same machine (local lab, netns lab).

A host that is a network namespace of this machine reaches the device directly
too; its processes join the volume's QoS cgroup here (iogate/hosts/cgroup.py),
so the array's caps hold for every engine that runs there."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel

from iogate.arrays.base import Volume
from iogate.arrays.exports import BlockExport
from iogate.errors import HostError
from iogate.hosts.cgroup import join_namespace
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
        if export.cgroup and initiator.config.namespace:
            join_namespace(export.cgroup, initiator.config.namespace, initiator.name)
        return Connection.to_device(self.protocol.name, initiator.name, volume, export.device, cgroup=export.cgroup)

    def disconnect(self, initiator: Initiator, connection: Connection) -> None:
        """Nothing to undo: the device belongs to the array driver."""
