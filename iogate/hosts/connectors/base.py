"""The Connector protocol and the Connection it returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict

from iogate.arrays.base import Volume
from iogate.errors import HostError
from iogate.lab import ProtocolConfig
from iogate.run import Run
from iogate.run.ledger import Entry
from iogate.run.resources import release

if TYPE_CHECKING:
    from iogate.hosts.initiator import Initiator


E = TypeVar("E")


def required_export(protocol: str, volume: Volume, kind: type[E], what: str, *fields: str, note: str | None = None) -> E:
    """The volume's `kind` record with every named field set; otherwise a HostError naming the protocol,
    the volume and the export it lacks, followed by `note` (by default the fields, in parentheses)."""
    record = volume.export_of(kind)
    if record is None or not all(getattr(record, name) for name in fields):
        detail = f" ({', '.join(fields)})" if note is None else note
        raise HostError(f"protocol {protocol}: volume {volume.name} has no {what} export{detail}")
    return record


class NoOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


@dataclass(frozen=True)
class Connection:
    """A volume reachable from one host over one protocol.

    `device` is the block device that the I/O lands on, on that host; the guard
    verifies its identity before any workload starts. `filename` and
    `fio_options` are what fio needs (a device path, a file in an NFS mount, or an
    nbd URI with ioengine=nbd).
    """

    protocol: str
    host: str
    volume: Volume
    filename: str
    device: str | None = None
    fio_options: dict[str, str] = field(default_factory=dict)
    cgroup: str | None = None
    details: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def to_device(cls, protocol: str, host: str, volume: Volume, device: str, *, cgroup: str | None = None,
                  details: dict[str, Any] | None = None) -> Connection:
        """I/O straight to a block device on the host: fio's filename is the device itself."""
        return cls(protocol=protocol, host=host, volume=volume, filename=device, device=device, cgroup=cgroup,
                   details=details if details is not None else {})


class Connector(Protocol):
    Options: ClassVar[type[BaseModel]]

    def __init__(self, protocol: ProtocolConfig, run: Run) -> None: ...

    def connect(self, initiator: Initiator, volume: Volume) -> Connection:
        """Log in / attach / mount; find the device by identity; journal it in the ledger."""

    def disconnect(self, initiator: Initiator, connection: Connection) -> None:
        """Undo connect, leaving no session, mount or process behind."""


class JournalledConnector:
    """Shared shape of connectors whose connect leaves one ledger entry per (host, volume)
    (a session, a controller, a mount) and whose disconnect releases it."""

    Options: ClassVar[type[BaseModel]]

    def __init__(self, protocol: ProtocolConfig, run: Run) -> None:
        self.protocol = protocol
        self.run = run
        self.options = self.Options.model_validate(protocol.options)
        self._entries: dict[tuple[str, str], Entry] = {}

    def disconnect(self, initiator: Initiator, connection: Connection) -> None:
        entry = self._entries.pop((initiator.name, connection.volume.name), None)
        if entry is not None:
            release(self.run.ledger, [entry])
