"""The fake FlashArray at behaviour depth: its volumes are LIO LUNs / nvmet namespaces in the lab VM.

A volume's serial gives the guest device Pure's identity (WWN naa.624a9370 +
serial, NGUID from the serial, the driver's own functions being what the host
must match); a host's IQN gets an ACL on the array's one iSCSI target, its NQN
is allowed into the array's one NVMe subsystem; a connection is the LUN / the
namespace; a volume snapshot is an LVM thin snapshot; a protection-group
snapshot with replicate_now copies each member volume into a replica LV in the
guest, and the transfer reports progress until that copy has finished.
"""

from __future__ import annotations

from typing import Any

from iogate.arrays.pure import nguid_of_serial, wwn_of_serial
from selftests.vendors.fake_pure import FakePure
from selftests.vendors.guest_backing import Desired, GuestBacking, VolumeSpec
from selftests.vendors.server import Reply, Request

EMULATED_MODEL = "FA-emulated"  # what facts() report: this is no FlashArray


class BackedPure(FakePure):
    def __init__(self, api_token: str, backing: GuestBacking) -> None:
        super().__init__(api_token)
        self.backing = backing
        self.replicated: dict[str, list[str]] = {}  # protection-group snapshot -> replica names

    def __call__(self, request: Request) -> Reply:
        reply = super().__call__(request)
        if request.method != "GET" and reply.status < 300:
            self.backing.sync(self.desired())
        return reply

    def desired(self) -> Desired:
        volumes = {
            name: VolumeSpec(size_bytes=int(v["provisioned"]), wwn=wwn_of_serial(v["serial"]), nguid=nguid_of_serial(v["serial"]))
            for name, v in self.volumes.items()
        }
        iqn_of = {h: iqn for h, host in self.hosts.items() for iqn in host["iqns"]}
        nqn_of = {h: nqn for h, host in self.hosts.items() for nqn in host["nqns"]}
        iscsi_maps = {(c["volume"]["name"], iqn_of[c["host"]["name"]]): c["lun"] for c in self.connections if c["host"]["name"] in iqn_of}
        nvme_maps = {c["volume"]["name"]: c["lun"] for c in self.connections if c["host"]["name"] in nqn_of}
        snapshots = {name: s["source"]["name"] for name, s in self.snapshots.items()}
        replicas = {f"{pg}/{vol}": vol for pg, vols in self.replicated.items() if pg in self.pgroup_snapshots for vol in vols}
        return Desired(
            volumes=volumes,
            iscsi_hosts=set(iqn_of.values()),
            iscsi_maps=iscsi_maps,
            nvme_hosts=set(nqn_of.values()),
            nvme_maps=nvme_maps,
            snapshots=snapshots,
            replicas=replicas,
        )

    def _volumes(self, request: Request, q: dict[str, list[str]]) -> Reply:
        reply = super()._volumes(request, q)
        if request.method == "POST" and q.get("overwrite") == ["true"] and reply.status < 300:
            # A copy over a volume (the driver's restore): the guest's LV gets the source's blocks before the answer.
            name, source = self.restores[-1]
            self.backing.overwrite(name, source)
        return reply

    def _arrays(self, request: Request, q: dict[str, list[str]]) -> Reply:
        return self._items([{"name": "fa-emulated", "id": "5e8f3f4c-0000-4000-8000-0000000000e1", "os": "Purity//FA", "version": "6.7.1"}])

    def _controllers(self, request: Request, q: dict[str, list[str]]) -> Reply:
        reply = super()._controllers(request, q)
        for item in reply.body["items"]:
            item["model"] = EMULATED_MODEL
        return reply

    def _protection_group_snapshots(self, request: Request, q: dict[str, list[str]]) -> Reply:
        reply = super()._protection_group_snapshots(request, q)
        if request.method == "POST" and reply.status < 300 and q.get("replicate_now", ["false"])[0].lower() == "true":
            name = reply.body["items"][0]["name"]
            group = reply.body["items"][0]["source"]["name"]
            self.replicated[name] = list(self.pgroups[group]["members"])
        return reply

    def _protection_group_snapshots__transfer(self, request: Request, q: dict[str, list[str]]) -> Reply:
        """Progress as the guest's copy stands: done only once every member's copy has finished."""
        reply = super()._protection_group_snapshots__transfer(request, q)
        for item in reply.body["items"]:
            members = self.replicated.get(item["name"], [])
            finished = all(self.backing.replica_done(f"{item['name']}/{vol}") for vol in members)
            copied_bytes = sum(int(self.volumes.get(vol, {}).get("provisioned", 0)) for vol in members)
            item |= _transfer(finished, copied_bytes)
        return reply


def _transfer(finished: bool, bytes_copied: int) -> dict[str, Any]:
    return {
        "progress": 1.0 if finished else 0.5,
        "completed": 1763900000000 if finished else None,
        "data_transferred": bytes_copied if finished else 0,
    }
