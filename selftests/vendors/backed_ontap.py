"""The fake ONTAP at behaviour depth (iSCSI): its LUNs are LIO LUNs in the lab VM.

A LUN's serial number gives the guest LUN NetApp's WWN (naa.600a0980 +
hex(serial), the driver's own function being what the host must match) on the
SVM's one iSCSI target; an igroup's initiators get ACLs; a LUN map is the LUN
at its logical unit number; a FlexVol snapshot is an LVM thin snapshot of every
LUN in the FlexVol; a SnapMirror transfer copies every LUN into a replica LV in
the guest, and the transfer stays "transferring" until those copies finished.
(NVMe namespaces are not backed: ONTAP gives each host a subsystem of its own,
the backing has one.) The FlexVol has dedupe off (efficiency.dedupe none): LVM
thin LVs share no blocks, so an efficiency scanner here would save nothing and a
dedupe-during-load run would fail its dedupe_took_effect check on the emulation,
not on ONTAP. The driver refuses dedupe with that reason and the test is skipped.
"""

from __future__ import annotations

from iogate.arrays.ontap import wwn_of_serial
from selftests.vendors.fake_ontap import FakeOntap
from selftests.vendors.guest_backing import Desired, GuestBacking, VolumeSpec
from selftests.vendors.server import Reply, Request

EMULATED_MODEL = "FAS-emulated"  # what facts() report: this is no ONTAP cluster


class BackedOntap(FakeOntap):
    def __init__(self, username: str, password: str, backing: GuestBacking) -> None:
        super().__init__(username, password)
        self.backing = backing
        self.flexvol["efficiency"] = {**self.flexvol["efficiency"], "dedupe": "none"}  # module docstring

    def __call__(self, request: Request) -> Reply:
        reply = super().__call__(request)
        if request.path == "/api/cluster/nodes" and isinstance(reply.body, dict):
            for node in reply.body.get("records", []):
                if "model" in node:
                    node["model"] = EMULATED_MODEL
        if request.method != "GET" and reply.status < 300:
            self.backing.sync(self.desired())
        if request.path.startswith("/api/snapmirror/relationships") and request.path.count("/") == 6 and reply.status < 300:
            self._hold_until_copied(reply)
        return reply

    def desired(self) -> Desired:
        luns = self.objects["luns"]
        volumes = {
            uuid: VolumeSpec(size_bytes=int(lun["space"]["size"]), wwn=wwn_of_serial(lun["serial_number"])) for uuid, lun in luns.items()
        }
        iqns = {uuid: [i["name"] for i in group.get("initiators", [])] for uuid, group in self.objects["igroups"].items()}
        iscsi_maps = {
            (m["lun"]["uuid"], iqn): int(m["logical_unit_number"]) for m in self.lun_maps for iqn in iqns.get(m["igroup"]["uuid"], [])
        }
        return Desired(
            volumes=volumes,
            iscsi_hosts={iqn for names in iqns.values() for iqn in names},
            iscsi_maps=iscsi_maps,
            # A FlexVol snapshot holds every LUN of the FlexVol; a SnapMirror transfer copies every one.
            snapshots={f"{snap}/{lun}": lun for snap in self.snapshots for lun in luns},
            replicas={f"{transfer}/{lun}": lun for transfer in self.transfers for lun in luns},
        )

    def _hold_until_copied(self, reply: Reply) -> None:
        transfer = reply.body
        copies = [rep for rep in self.backing.state.replicas if rep.startswith(f"{transfer['uuid']}/")]
        if not all(self.backing.replica_done(rep) for rep in copies):
            transfer.update(state="transferring", bytes_transferred=0)
            self.transfers[transfer["uuid"]].update(state="transferring", bytes_transferred=0)
        else:
            copied_bytes = sum(self.backing.state.volumes[rep.split("/", 1)[1]].size_bytes for rep in copies)
            transfer.update(state="success", bytes_transferred=copied_bytes)
            self.transfers[transfer["uuid"]].update(state="success", bytes_transferred=copied_bytes)
