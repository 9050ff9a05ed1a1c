"""The fake VSP at behaviour depth: its LDEVs are LIO LUNs / nvmet namespaces in the lab VM.

An LDEV becomes a thin LV exported through LIO with the LDEV's naaId as its WWN (60060e80: Hitachi's
company id 0060e8), or as an nvmet namespace of the array's one NVMe subsystem with the naaId as its
NGUID (what the driver takes an NVMe namespace's identity to be); an iSCSI host group is the array's
one iSCSI target (the host groups the run makes all answer with its IQN, on a port whose address is
the guest's portal), its IQNs get ACLs and its LUNs are the LDEVs at the LUN numbers the array gave; a
registered host NQN is allowed into the subsystem, a namespace is the LDEV at its nsid; a Thin Image
pair is an LVM thin snapshot, and a restore copies the snapshot's LV over the LDEV's before the array
answers (the job the driver then polls is done).
"""

from __future__ import annotations

from typing import Any

from selftests.vendors.fake_hitachi import FakeHitachi
from selftests.vendors.guest_backing import Desired, GuestBacking, VolumeSpec
from selftests.vendors.server import Reply, Request

EMULATED_MODEL = "VSP E990-emulated"  # what facts() report: this is no VSP
BLOCK_BYTES = 512


class BackedHitachi(FakeHitachi):
    def __init__(self, username: str, password: str, backing: GuestBacking, portal: str = "127.0.0.1") -> None:
        super().__init__(username, password)
        self.backing = backing
        self.ports["CL1-B"] |= {"ipv4Address": portal, "tcpPort": 3260}

    def __call__(self, request: Request) -> Reply:
        reply = super().__call__(request)
        if request.method != "GET" and reply.status < 300:
            self.backing.sync(self.desired())
        return reply

    def _read(self, parts: list[str], query: dict[str, list[str]]) -> Reply:
        reply = super()._read(parts, query)
        if parts in (["storages", "instance"], ["storages"]) and reply.status == 200:
            for item in reply.body.get("data", [reply.body]):
                item["model"] = EMULATED_MODEL
        return reply

    def _post_host_groups(self, rest: list[str], body: dict[str, Any]) -> list[str] | Reply:
        made = super()._post_host_groups(rest, body)
        for group in self.host_groups.values():
            if "iscsiName" in group:
                group["iscsiName"] = self.backing.iqn
        return made

    def _put_snapshots(self, rest: list[str], body: dict[str, Any]) -> list[str] | Reply:
        made = super()._put_snapshots(rest, body)
        if not isinstance(made, Reply):  # the restore was accepted: the blocks come back before the answer
            pvol = rest[0].split(",")[0]
            self.backing.overwrite(pvol, rest[0])
        return made

    def desired(self) -> Desired:
        volumes = {str(i): VolumeSpec(size_bytes=int(ldev["blockCapacity"]) * BLOCK_BYTES, wwn=f"naa.{self.naa(i)}", nguid=self.naa(i))
                   for i, ldev in self.ldevs.items()}
        iqns: dict[tuple[str, int], list[str]] = {}
        for w in self.host_iscsis:
            iqns.setdefault((w["portId"], int(w["hostGroupNumber"])), []).append(w["iscsiName"])
        return Desired(
            volumes=volumes,
            iscsi_hosts={w["iscsiName"] for w in self.host_iscsis},
            iscsi_maps={(str(ldev), iqn): lun for (port, group, lun), ldev in self.luns.items() for iqn in iqns.get((port, group), [])},
            nvme_hosts=set(self.host_nqns),
            nvme_maps={str(ldev): nsid for nsid, ldev in self.namespaces.items() if any(n == nsid for _, n in self.namespace_paths)},
            snapshots={f"{pvol},{mu}": str(pvol) for pvol, mu in self.snapshots},
        )
