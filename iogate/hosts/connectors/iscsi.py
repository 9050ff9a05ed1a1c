"""`iscsi`: open-iscsi login to the volume's target; the LUN is found by WWN.

The volume's IscsiExport carries `portal` ("ip:port") and `target_iqn`. A vendor
array presents one target for every volume mapped to a host, so the session is
shared (iogate.hosts.connectors.sessions): the first volume of the run on a
(host, target, portal) logs in, the next ones rescan the session, and the last
one to go logs out. Only this target's node record is created (discovery runs
non-persistent, as a check that the portal advertises it), and the ledger holds
the logout + node delete, so a crashed run leaves no session and no node record
behind; a session that existed before the run is used, never logged out.
Disconnecting a volume deletes only its own SCSI device (journalled too, by WWN).
CHAP comes from the connector's options (the password as a reference, resolved
at login and redacted), never from the record.
"""

from __future__ import annotations

import re
from typing import ClassVar

from pydantic import BaseModel, ConfigDict

from iogate.arrays.base import Volume
from iogate.arrays.exports import IscsiExport
from iogate.errors import HostError
from iogate.hosts import identity, remote
from iogate.hosts.connectors import scan, sessions
from iogate.hosts.connectors.base import Connection, JournalledConnector, required_export
from iogate.hosts.initiator import Initiator
from iogate.lab.secrets import resolve
from iogate.run.resources import release

# `iscsiadm -m session`: "tcp: [3] 10.0.0.5:3260,1 iqn.2003-01.org.example:t1 (non-flash)"
_SESSION = re.compile(r"^\S+:\s+\[(\d+)\]\s+(\S+),\d+\s+(\S+)")

# The volume's own SCSI devices, by WWN (what a crashed run's cleanup can still tell apart).
_DELETE_BY_WWN = r"""
for d in /sys/block/sd*; do
  [ -r "$d/device/wwid" ] || continue
  w=$(tr -d '\0\n' < "$d/device/wwid" | tr 'A-Z' 'a-z' | tr -d -)
  case "$w" in *{wwn}) blockdev --flushbufs /dev/${{d##*/}} 2>/dev/null; echo 1 > "$d/device/delete";; esac
done; true
"""


class IscsiOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    chap_user: str | None = None
    chap_password: str | None = None
    discovery: bool = True  # check with a SendTargets discovery that the portal advertises the target
    device_timeout_s: float = 60
    node_settings: dict[str, str] = {}  # extra `iscsiadm -m node -o update` settings (e.g. queue depth)


def session_id(initiator: Initiator, iqn: str, portal: str) -> str | None:
    """The id of the host's session to `iqn` via `portal`, if there is one."""
    for line in initiator.run_unchecked("iscsiadm -m session 2>/dev/null").stdout.splitlines():
        found = _SESSION.match(line.strip())
        if found and found.group(3) == iqn and found.group(2) == portal:
            return found.group(1)
    return None


def delete_devices_script(wwn: str) -> str:
    return _DELETE_BY_WWN.format(wwn=identity.normalized(wwn))


class IscsiConnector(JournalledConnector):
    Options: ClassVar[type[BaseModel]] = IscsiOptions
    options: IscsiOptions

    def connect(self, initiator: Initiator, volume: Volume) -> Connection:
        export = required_export(self.protocol.name, volume, IscsiExport, "iSCSI", "portal", "target_iqn")
        portal, iqn = export.portal, export.target_iqn
        at = sessions.key(self.run, initiator.name, iqn, portal)

        def rescan(sid: str) -> None:
            initiator.run("iscsiadm -m session -r %s -R", sid)

        shared = sessions.acquire(
            self.run, at, volume.name,
            existing=lambda: session_id(initiator, iqn, portal),
            rescan=rescan,
            log_in=lambda: self._log_in(initiator, iqn, portal, export.vanishes_with),
        )
        device_entry = None
        if volume.identity.wwn:
            device_entry = remote.intend(self.run.ledger, initiator, f"SCSI device {volume.identity.wwn} of iSCSI {iqn}",
                                         delete_devices_script(volume.identity.wwn), export.vanishes_with)
            self._entries[(initiator.name, volume.name)] = device_entry
        try:
            connection = scan.device_connection(self.protocol.name, initiator, volume, self.options.device_timeout_s, f"iSCSI {iqn}",
                                                {"target_iqn": iqn, "portal": portal, "session": shared.handle},
                                                rescan=f"iscsiadm -m session -r {shared.handle} -R >/dev/null 2>&1")
        except HostError:
            self._entries.pop((initiator.name, volume.name), None)
            if device_entry is not None:
                sessions.release_quietly(self.run, device_entry)
            sessions.drop(self.run, at, volume.name, quiet=True)
            raise
        if device_entry is not None:
            self.run.ledger.created(device_entry)
        return connection

    def _log_in(self, initiator: Initiator, iqn: str, portal: str, vanishes_with: str | None) -> sessions.Shared:
        node = f"iscsiadm -m node -T {iqn} -p {portal}"
        undo = f"{node} -u >/dev/null 2>&1; {node} -o delete >/dev/null 2>&1; true"
        entry = remote.intend(self.run.ledger, initiator, f"iSCSI session {iqn} via {portal}", undo, vanishes_with)
        try:
            if self.options.discovery:
                advertised = initiator.run("iscsiadm -m discovery -t sendtargets -p %s -o nonpersistent", portal).stdout
                if iqn not in advertised:
                    raise HostError(f"host {initiator.name}: portal {portal} does not advertise {iqn}: {advertised.strip()}")
            initiator.run("iscsiadm -m node -T %s -p %s -o new", iqn, portal)
            settings = dict(self.options.node_settings)
            # The password may be a reference (${env:NAME}, ${file:PATH}): resolved only here, and redacted.
            password = resolve(self.options.chap_password) if self.options.chap_password else None
            if self.options.chap_user:
                settings |= {
                    "node.session.auth.authmethod": "CHAP",
                    "node.session.auth.username": self.options.chap_user,
                    "node.session.auth.password": password or "",
                }
            secrets = [password] if password else []
            for name, value in settings.items():
                initiator.run("iscsiadm -m node -T %s -p %s -o update -n %s -v %s", iqn, portal, name, value, secrets=secrets)
            initiator.run("iscsiadm -m node -T %s -p %s -l", iqn, portal)
        except HostError:
            sessions.release_quietly(self.run, entry)
            raise
        self.run.ledger.created(entry)
        sid = session_id(initiator, iqn, portal)
        if sid is None:
            sessions.release_quietly(self.run, entry)
            raise HostError(f"host {initiator.name}: logged in to {iqn} via {portal}, but `iscsiadm -m session` does not list it")
        return sessions.Shared(sid, entry)

    def disconnect(self, initiator: Initiator, connection: Connection) -> None:
        export = connection.volume.export_of(IscsiExport)
        entry = self._entries.pop((initiator.name, connection.volume.name), None)
        if entry is not None:
            release(self.run.ledger, [entry])
        elif not connection.volume.identity.wwn:
            # Found by another identity: its path devices, by the names found at connect.
            for path in connection.details.get("paths", []):
                name = path.rsplit("/", 1)[-1]
                initiator.run("blockdev --flushbufs %s 2>/dev/null; echo 1 > /sys/block/%s/device/delete 2>/dev/null; true", path, name)
        if export is not None:
            sessions.drop(self.run, sessions.key(self.run, initiator.name, export.target_iqn, export.portal), connection.volume.name)
