"""The safety guard: fio writes destroy data, so every target is checked first.

A workload may only touch a device that this run provisioned or that the lab
file explicitly allows, and the check is by identity (loop backing file, WWN,
NGUID, serial) read from the kernel on the host that will do the I/O, never by
device name. Anything else is refused before fio starts.

Identity is not enough: a device that is mounted, held (LVM, md, dm), active
swap or carries file systems is refused always, whatever the allow list or a
static lab says (iogate.hosts.usage), and the refusal names the mount or holder.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from iogate.errors import GuardRefused
from iogate.hosts import identity, usage
from iogate.hosts.connectors.base import Connection
from iogate.hosts.initiator import Initiator
from iogate.lab import DeviceIdentity


@dataclass
class Guard:
    """Identities this run may write: provisioned volumes plus the lab's allow list."""

    allowed: list[DeviceIdentity] = field(default_factory=list)
    provisioned: list[DeviceIdentity] = field(default_factory=list)

    def admit(self, volume_identity: DeviceIdentity) -> None:
        """Called by the volume factory right after the array created the volume."""
        self.provisioned.append(volume_identity)

    def revoke(self, volume_identity: DeviceIdentity) -> None:
        if volume_identity in self.provisioned:
            self.provisioned.remove(volume_identity)

    def check_device(self, initiator: Initiator, device: str, expected: DeviceIdentity | None = None) -> dict[str, str]:
        """Refuse unless the device on this host is one we may write; its sysfs facts when it is."""
        facts = identity.read_identity(initiator, device)
        permitted = self.provisioned + self.allowed
        candidates = [expected] if expected is not None else permitted
        matched = [c for c in candidates if c in permitted and identity.matches(facts, c)]
        reasons = usage.in_use(facts, destructive=any(c.destructive for c in matched))
        if reasons:
            raise GuardRefused(f"refusing {device} on host {initiator.name}: in use: {'; '.join(reasons)} ({identity.describe(facts)})")
        if matched:
            return facts
        raise GuardRefused(
            f"refusing {device} on host {initiator.name}: not provisioned by this run and not allowed by the lab "
            f"({identity.describe(facts)})"
        )

    def check(self, initiator: Initiator, connection: Connection) -> None:
        """Check one connection before a workload uses it."""
        if connection.volume.identity not in self.provisioned + self.allowed:
            raise GuardRefused(
                f"refusing volume {connection.volume.name} on host {initiator.name}: "
                f"{connection.volume.identity.describe()} was not provisioned by this run"
            )
        if connection.device is not None:
            facts = self.check_device(initiator, connection.device, connection.volume.identity)
            require_volume_size(initiator, connection, facts)
        elif connection.volume.identity.nfs_export is None:
            raise GuardRefused(f"refusing {connection.filename} on host {initiator.name}: connection has no device to verify")
        else:
            self.check_nfs_file(initiator, connection.filename, connection.volume.identity.nfs_export)

    def check_nfs_file(self, initiator: Initiator, filename: str, export: str) -> None:
        """Refuse unless the file's directory is an NFS mount of exactly this export."""
        directory = filename.rsplit("/", 1)[0] or "/"
        found = initiator.run_unchecked("findmnt -n -o SOURCE,FSTYPE --target %s", directory).stdout.split()
        if len(found) != 2 or found[0] != export or not found[1].startswith("nfs"):
            mounted = " ".join(found) or "nothing"
            raise GuardRefused(f"refusing {filename} on host {initiator.name}: not in an NFS mount of {export} (mounted there: {mounted})")


def require_volume_size(initiator: Initiator, connection: Connection, facts: dict[str, str]) -> None:
    """Refuse a device smaller than the volume the array reported: the jobs placed on the volume's last bytes
    would run past the device's end, where fio neither fails nor says so, it only starves them (the lab VM's
    md LUNs were 1 MiB short: the protocol comparison's last VM did no I/O in 3 runs of 5)."""
    device, volume = connection.device, connection.volume
    size = facts.get("size_bytes", "")
    if not size.isdigit():
        raise GuardRefused(f"refusing {device} on host {initiator.name}: its size in sysfs reads {size or 'nothing'}")
    if int(size) < volume.size_bytes:
        raise GuardRefused(f"refusing {device} on host {initiator.name}: it holds {int(size)} bytes, less than the "
                           f"{volume.size_bytes} bytes of volume {volume.name} the array reported: I/O placed on the "
                           f"volume's last {volume.size_bytes - int(size)} bytes would run past the device's end")


def distinct(connections: Iterable[Connection]) -> list[Connection]:
    """Each connection once: 32 VMs on regions of one datastore are one device to verify, not 32
    (each check costs SSH round trips, seconds apiece on a slow host)."""
    seen: dict[tuple[str, str, str, str | None], Connection] = {}
    for connection in connections:
        seen.setdefault((connection.host, connection.protocol, connection.filename, connection.device), connection)
    return list(seen.values())
