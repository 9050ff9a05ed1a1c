"""The fake OceanStor / Dorado at behaviour depth: its LUNs are LIO LUNs / nvmet namespaces in the lab VM.

A LUN gets an NAA 6 WWN with a Huawei company id (the fake of the contract tests makes a 31-digit
one, which no SCSI target can show) and becomes an LV exported through LIO with that WWN, or an
nvmet namespace with the LUN's NGUID; an initiator bound to a host gets an ACL / is allowed into the
array's one NVMe subsystem; a direct mapping (or a mapping view's host group x LUN group) is the LUN
/ the namespace, at the LUN's id; a snapshot is an LVM thin snapshot taken when it is activated (the
point in time of an OceanStor snapshot); a rollback copies the snapshot's LV over the LUN's before
the array answers, so the rollback the driver then polls has already brought the blocks back. The
performance statistics switch is off: the emulated array has no counters of its own to report.
"""

from __future__ import annotations

from typing import Any

from selftests.vendors.fake_huawei import BASE, FakeHuawei
from selftests.vendors.guest_backing import Desired, GuestBacking, VolumeSpec
from selftests.vendors.server import Reply, Request

EMULATED_VERSION = "V600R005C03-emulated"  # what facts() report: this is no OceanStor
HUAWEI_COMPANY_ID = "643e8c"  # NAA 6 company id of OceanStor LUN WWNs (6643e8c1...)


class BackedHuawei(FakeHuawei):
    def __init__(self, username: str, password: str, backing: GuestBacking, serial: str = "2102354JTB10N1000007") -> None:
        super().__init__(username, password, serial=serial)
        self.backing = backing
        self.perf_switch = "0"

    def __call__(self, request: Request) -> Reply:
        reply = super().__call__(request)
        path = request.path.removeprefix(BASE + "/").partition("/")[2]
        if request.method == "POST" and path == "lun" and _ok(reply):
            lun = self.luns[str(reply.body["data"]["ID"])]
            lun["WWN"] = f"6{HUAWEI_COMPANY_ID}{int(lun['ID']):025x}"
            reply.body["data"]["WWN"] = lun["WWN"]
        if request.method == "PUT" and path == "snapshot/rollback" and _ok(reply):
            snap = self.snapshots[str((request.body or {})["ID"])]
            self.backing.overwrite(snap["PARENTID"], snap["ID"])
        if request.method != "GET" and _ok(reply):
            self.backing.sync(self.desired())
        return reply

    def _system(self, method: str, rest: list[str], body: dict[str, Any], query: dict[str, str]) -> Reply:
        reply = super()._system(method, rest, body, query)
        reply.body["data"] |= {"NAME": "oceanstor-emulated", "PRODUCTVERSION": EMULATED_VERSION}
        return reply

    def desired(self) -> Desired:
        volumes = {lid: VolumeSpec(size_bytes=int(lun["CAPACITY"]) * 512, wwn=f"naa.{lun['WWN']}", nguid=str(lun["NGUID"]))
                   for lid, lun in self.luns.items()}
        iqns = {i: o["PARENTID"] for i, o in self.initiators["iscsi_initiator"].items() if o.get("PARENTID")}
        nqns = {i: o["PARENTID"] for i, o in self.initiators["nvme_over_tcp_initiator"].items() if o.get("PARENTID")}
        pairs = {(m["hostId"], m["lunId"]) for m in self.mappings}
        for view in self.views.values():
            hosts = self.hostgroups.get(view["hostgroup"], {}).get("hosts", [])
            luns = self.lungroups.get(view["lungroup"], {}).get("luns", [])
            pairs |= {(h, lun) for h in hosts for lun in luns}
        pairs = {(h, lun) for h, lun in pairs if lun in self.luns}
        return Desired(
            volumes=volumes,
            iscsi_hosts=set(iqns),
            iscsi_maps={(lun, iqn): int(lun) for h, lun in pairs for iqn, owner in iqns.items() if owner == h},
            nvme_hosts=set(nqns),
            nvme_maps={lun: int(lun) for h, lun in pairs if h in nqns.values()},
            snapshots={sid: s["PARENTID"] for sid, s in self.snapshots.items() if s["RUNNINGSTATUS"] == "active"},
        )


def _ok(reply: Reply) -> bool:
    """DeviceManager answers every call with HTTP 200: success is error.code 0."""
    return reply.status == 200 and isinstance(reply.body, dict) and (reply.body.get("error") or {}).get("code") == 0
