"""The fake VAST VMS at behaviour depth: its block volumes are nvmet namespaces in the lab VM.

A block volume (in its own subsystem view) is a thin LV exported as a namespace of the emulated
cluster's one NVMe subsystem, with the NGUID the VMS reported for it, at the volume's id as nsid; a
block host's NQN is allowed into that subsystem; a mapping (applied when its async task completes)
is the namespace; a snapshot of a view path is an LVM thin snapshot of each volume of that view.

Simplification, written where it shows: VAST gives each subsystem view an NQN of its own; the
emulated cluster answers every block view with the one subsystem NQN the guest serves, so all the
run's volumes are namespaces of one subsystem. NFS views are not backed (knfsd is not wired to the
fake): the emulated VAST lab serves NVMe/TCP only.
"""

from __future__ import annotations

from selftests.vendors.fake_vast import FakeVast
from selftests.vendors.guest_backing import Desired, GuestBacking, VolumeSpec
from selftests.vendors.server import Reply, Request

EMULATED_RELEASE = "5.5.0-emulated"  # what facts() report: this is no VAST cluster


class BackedVast(FakeVast):
    def __init__(self, password: str, backing: GuestBacking) -> None:
        super().__init__(password)
        self.backing = backing
        self.cluster |= {"name": "vast-emulated", "sw_version": EMULATED_RELEASE, "build": f"release-{EMULATED_RELEASE}"}

    def __call__(self, request: Request) -> Reply:
        reply = super().__call__(request)
        if request.method == "POST" and request.path.rstrip("/").endswith("/views") and reply.status < 300 and "nqn" in reply.body:
            self.views[reply.body["id"]]["nqn"] = reply.body["nqn"] = self.backing.nqn
        # A mapping is applied when its task is looked at (GET /vtasks/<id>/): the guest follows every answer.
        if reply.status < 300:
            self.backing.sync(self.desired())
        return reply

    def desired(self) -> Desired:
        volumes = {str(vid): VolumeSpec(size_bytes=int(v["size"]), nguid=str(v["nguid"])) for vid, v in self.volumes.items()}
        nqn_of = {hid: str(h["nqn"]) for hid, h in self.hosts.items()}
        by_path: dict[str, list[str]] = {}
        for vid, volume in self.volumes.items():
            view = self.views.get(volume["view_id"])
            if view is not None:
                by_path.setdefault(view["path"], []).append(str(vid))
        return Desired(
            volumes=volumes,
            nvme_hosts=set(nqn_of.values()),
            nvme_maps={str(vid): int(vid) for vid, hid in self.mappings if hid in nqn_of},
            snapshots={f"{sid}/{vid}": vid for sid, snap in self.snapshots.items() for vid in by_path.get(snap["path"], [])},
        )
