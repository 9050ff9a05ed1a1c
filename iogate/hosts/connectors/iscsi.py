"""`iscsi`: open-iscsi login to the volume's target; the LUN is found by WWN.

The volume's IscsiExport carries `portal` ("ip:port") and `target_iqn`. Only
this target's node record is created (discovery runs non-persistent, as a check
that the portal advertises it), and the ledger holds the logout + node delete,
so a crashed run leaves no session and no node record behind. CHAP comes from
the connector's options (the password as a reference, resolved at login and
redacted), never from the record.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict

from iogate.arrays.base import Volume
from iogate.arrays.exports import IscsiExport
from iogate.errors import HostError
from iogate.hosts import remote
from iogate.hosts.connectors import scan
from iogate.hosts.connectors.base import Connection, JournalledConnector, required_export
from iogate.hosts.initiator import Initiator
from iogate.lab.secrets import resolve


class IscsiOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    chap_user: str | None = None
    chap_password: str | None = None
    discovery: bool = True  # check with a SendTargets discovery that the portal advertises the target
    device_timeout_s: float = 60
    node_settings: dict[str, str] = {}  # extra `iscsiadm -m node -o update` settings (e.g. queue depth)


class IscsiConnector(JournalledConnector):
    Options: ClassVar[type[BaseModel]] = IscsiOptions
    options: IscsiOptions

    def connect(self, initiator: Initiator, volume: Volume) -> Connection:
        export = required_export(self.protocol.name, volume, IscsiExport, "iSCSI", "portal", "target_iqn")
        portal, iqn = export.portal, export.target_iqn
        node = f"iscsiadm -m node -T {iqn} -p {portal}"
        undo = f"{node} -u >/dev/null 2>&1; {node} -o delete >/dev/null 2>&1; true"
        entry = remote.intend(self.run.ledger, initiator, f"iSCSI session {iqn} via {portal}", undo, export.vanishes_with)
        self._entries[(initiator.name, volume.name)] = entry
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
        self.run.ledger.created(entry)
        return scan.device_connection(self.protocol.name, initiator, volume, self.options.device_timeout_s, f"iSCSI {iqn}",
                                      {"target_iqn": iqn, "portal": portal})

