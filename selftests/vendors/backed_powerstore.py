"""The fake PowerStore at behaviour depth: its volumes are LIO LUNs / nvmet namespaces in the lab VM.

A volume's `wwn` (naa.68ccf098...) becomes the LIO LUN's NAA designator and its
`nguid` the nvmet namespace's NGUID (at the volume's `nsid`, in the appliance's
one subsystem); a host's initiators get an ACL / are allowed into the subsystem;
an attach is the LUN / the namespace; a snapshot (a volume of type Snapshot) an
LVM thin snapshot; a replication session sync copies the live volume into a
replica LV in the guest, and the session reports the new last_sync_timestamp
only once that copy has finished.
"""

from __future__ import annotations

from typing import Any

from selftests.vendors.fake_powerstore import FakePowerStore
from selftests.vendors.guest_backing import Desired, GuestBacking, VolumeSpec
from selftests.vendors.server import Reply, Request

EMULATED_RELEASE = "4.1.0.0-emulated"  # what facts() report: this is no PowerStore


class BackedPowerStore(FakePowerStore):
    def __init__(self, username: str, password: str, backing: GuestBacking) -> None:
        super().__init__(username, password, release=EMULATED_RELEASE)
        self.backing = backing
        self.syncs: dict[str, list[str]] = {}  # session -> its syncs' replica names (the last may still run)
        self.pending: dict[str, Any] = {}  # session -> the timestamp it reports once its last copy is done

    def __call__(self, request: Request) -> Reply:
        reply = super().__call__(request)
        if request.method != "GET" and reply.status < 300:
            self.backing.sync(self.desired())
        return reply

    def desired(self) -> Desired:
        primaries = {vid: v for vid, v in self.volumes.items() if v["type"] == "Primary"}
        volumes = {
            vid: VolumeSpec(size_bytes=int(v["size"]), wwn=v["wwn"], nguid=str(v["nguid"]).removeprefix("nguid."))
            for vid, v in primaries.items()
        }
        ports = {hid: {i["port_type"]: i["port_name"] for i in host["initiators"]} for hid, host in self.hosts.items()}
        iscsi_maps = {
            (m["volume_id"], ports[m["host_id"]]["iSCSI"]): m["logical_unit_number"]
            for m in self.mappings
            if "iSCSI" in ports.get(m["host_id"], {}) and m["volume_id"] in primaries
        }
        nvme_maps = {
            m["volume_id"]: int(primaries[m["volume_id"]]["nsid"])
            for m in self.mappings
            if "NVMe" in ports.get(m["host_id"], {}) and m["volume_id"] in primaries
        }
        sessions = {sid: s["local_resource_id"] for sid, s in self.sessions.items()}
        return Desired(
            volumes=volumes,
            iscsi_hosts={p["iSCSI"] for p in ports.values() if "iSCSI" in p},
            iscsi_maps=iscsi_maps,
            nvme_hosts={p["NVMe"] for p in ports.values() if "NVMe" in p},
            nvme_maps=nvme_maps,
            snapshots={vid: v["protection_data"]["source_id"] for vid, v in self.volumes.items() if v["type"] == "Snapshot"},
            replicas={rep: sessions[sid] for sid, reps in self.syncs.items() if sid in sessions for rep in reps},
        )

    def _replication_session(self, request: Request, rest: list[str]) -> Reply:
        session = self.sessions.get(rest[0]) if rest else None
        if session is not None and len(rest) > 1 and rest[1] == "sync":
            before = session["last_sync_timestamp"]
            reply = super()._replication_session(request, rest)
            # The sync is done when the guest's copy is: until then the session shows the previous sync.
            self.pending[session["id"]] = session["last_sync_timestamp"]
            session["last_sync_timestamp"] = before
            reps = self.syncs.setdefault(session["id"], [])
            reps.append(f"{session['id']}.{len(reps) + 1}")
            return reply
        if session is not None and session["id"] in self.pending and self.backing.replica_done(self.syncs[session["id"]][-1]):
            session["last_sync_timestamp"] = self.pending.pop(session["id"])
        return super()._replication_session(request, rest)
