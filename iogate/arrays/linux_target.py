"""A Linux server as the array, driven over SSH: LIO iSCSI, nvmet NVMe/TCP, knfsd.

Pool: an LVM volume group with a thin pool on a block device dedicated to the
array (`pool_device`; refused if it holds anything). Volume = thin LV, exported
on one protocol: an iSCSI target of its own (LUN 0, ACL per initiator IQN, unit
serial set by us so its WWN is known), an nvmet subsystem (namespace NGUID set by
us, allowed host NQNs, linked to one port), or an ext4 file system on it exported
by knfsd. Snapshot = LVM thin snapshot. Dedupe = a dm-vdo pass (dedupe and
compression on): every volume is copied through a VDO device, the way a
post-process dedupe job reads the pool, and VDO's block counts give the savings.
Mirror = the volume is an md RAID1 with one leg; mirror_attach adds the second
leg and waits for the resync, which runs under whatever load is on the volume.
Replicate = an initial sync: the live volume read through its exported device
into a replica LV.

Everything is written to configfs directly (targetcli needs dbus) and journalled
as a remote resource with an idempotent undo script.
"""

from __future__ import annotations

import re
import shlex
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict

from iogate.arrays.base import ArraySample, Capability, Snapshot, Unsupported, Volume, unsupported
from iogate.arrays.clock import ArrayClock, not_read
from iogate.arrays.exports import IscsiExport, NfsExport, NvmeTcpExport
from iogate.errors import ArrayError, HostError
from iogate.hosts import remote
from iogate.hosts.initiator import Initiator
from iogate.lab import DeviceIdentity, HostConfig, Lab, QoS
from iogate.run import Run
from iogate.run.ledger import Entry
from iogate.run.resources import release

ExportKind = Literal["iscsi", "nvme-tcp", "nfs"]
CFS = "/sys/kernel/config"
# md's v1.2 superblock sits before the data: each leg is this much larger than the volume, and md is told the
# volume's size, so the exported LUN is exactly the size the array reports (md left alone exports the leg
# less its data offset: the highest regions of the volume did not exist, and the job placed there starved).
MD_DATA_OFFSET = "1M"
MD_DATA_OFFSET_BYTES = 1 << 20
# What the protocol names of a lab map to (connector name -> export kind).
EXPORT_OF_CONNECTOR: dict[str, ExportKind] = {
    "iscsi": "iscsi",
    "multipath": "iscsi",
    "nvme-tcp": "nvme-tcp",
    "nvme_tcp": "nvme-tcp",
    "nfs": "nfs",
}


class LinuxTargetOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    transport: str  # ssh://root@host[:port] of the target server
    ssh_key: str | None = None
    pool_device: str  # a block device the array may wipe, e.g. /dev/disk/by-id/virtio-iogate-pool
    volume_group: str = "iogate"
    thin_pool_percent: int = 60  # share of the VG for the thin pool; the rest serves VDO and mirror legs
    portal_address: str = "127.0.0.1"  # where initiators reach the target (iSCSI portal, NVMe traddr, NFS server)
    iscsi_port: int = 3260
    nvme_port: int = 4420
    iscsi_initiators: list[str] = ["self"]  # IQNs allowed per LUN; "self" = the target host's own
    nvme_hosts: list[str] = ["self"]  # host NQNs allowed per subsystem; "self" = the target host's own
    nfs_clients: str = "127.0.0.1"
    default_export: ExportKind = "iscsi"
    mirror: bool = False  # volumes are md RAID1 with one leg, so mirror_attach can add the second
    mirror_resync_min_kib_per_s: int = 200000  # keeps md from throttling the resync to a crawl under load
    vdo: bool = False
    vdo_physical_size: str = "6G"  # VDO keeps its dedupe index here (about 4 GiB), allocated lazily
    vdo_logical_size: str = "8G"
    # The qemu marker of a lab VM target: its resources vanish with the VM (cleanup then skips them).
    vanishes_with: str | None = None


@dataclass
class _Owned:
    volume: Volume
    lv: str  # the LV that holds the data (leg 0 for a mirror)
    device: str  # what is exported (the md device for a mirror)
    kind: ExportKind
    entry: Entry
    legs: list[str] = field(default_factory=list)
    replica: Entry | None = None  # the replica LV's journal entry, once replicate ran


def _leg_bytes(volume_bytes: int, *, mirrored: bool) -> int:
    """The LV under a volume: the volume itself, or for an md mirror leg the volume plus md's data offset."""
    return volume_bytes + MD_DATA_OFFSET_BYTES if mirrored else volume_bytes


def _lv_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.+-]", "_", text)


class LinuxTarget:
    """ArrayDriver over a Linux target server (see module docstring)."""

    Options: ClassVar[type[BaseModel]] = LinuxTargetOptions
    serves_all_protocols: ClassVar[bool] = False  # a volume is exported over one protocol
    capabilities: ClassVar[frozenset[Capability]] = frozenset(
        {Capability.SNAPSHOT, Capability.RESTORE, Capability.REPLICATE, Capability.DEDUPE, Capability.COMPRESSION, Capability.MIRROR}
    )

    def __init__(self, lab: Lab, run: Run) -> None:
        self.lab = lab
        self.run = run
        self.options = LinuxTargetOptions.model_validate(lab.array.options)
        # What this instance can do depends on its options (the class lists the most it can).
        caps = {Capability.SNAPSHOT, Capability.RESTORE, Capability.REPLICATE}
        if self.options.vdo:
            caps |= {Capability.DEDUPE, Capability.COMPRESSION}
        if self.options.mirror:
            caps.add(Capability.MIRROR)
        self.capabilities = frozenset(caps)  # type: ignore[misc]
        self.target = Initiator.from_config(
            HostConfig(name=f"array {lab.array.name}", transport=self.options.transport, ssh_key=self.options.ssh_key)
        )
        self.vg = self.options.volume_group
        self.tag = _lv_name(run.run_id)[-24:]
        self._own: list[Entry] = []
        self._volumes: dict[str, _Owned] = {}
        self._snapshots: dict[str, Entry] = {}
        self._nvme_port_id = ""
        self._iqns: list[str] = []
        self._nqns: list[str] = []

    # -- plumbing ----------------------------------------------------------------
    def sh(self, script: str, timeout_note: str = "") -> str:
        """Run a bash script on the target; ArrayError names the array and the failing script."""
        try:
            return str(self.target.run("bash -c %s", "set -euo pipefail\n" + script).stdout)
        except HostError as exc:
            raise ArrayError(f"array {self.lab.array.name}{timeout_note}: {exc}") from exc

    def _intend(self, what: str, undo: str) -> Entry:
        return remote.intend(self.run.ledger, self.target, what, undo, self.options.vanishes_with)

    # -- lifecycle -----------------------------------------------------------------
    def setup(self) -> None:
        modules = "configfs target_core_mod iscsi_target_mod target_core_iblock nvmet nvmet_tcp dm_thin_pool nfsd"
        modules += " raid1" if self.options.mirror else ""
        modules += " dm_vdo" if self.options.vdo else ""
        self.sh(f"modprobe -a {modules}; mountpoint -q {CFS} || mount -t configfs none {CFS}")
        self._iqns = [self._self_iqn() if i == "self" else i for i in self.options.iscsi_initiators]
        self._nqns = [self._self_nqn() if n == "self" else n for n in self.options.nvme_hosts]
        dev, vg = shlex.quote(self.options.pool_device), self.vg
        signature = self.sh(f"blkid -p -o value -s TYPE {dev} || true").strip()
        if signature:
            raise ArrayError(f"array {self.lab.array.name}: refusing pool_device {self.options.pool_device}: it holds {signature}")
        self._own.append(
            entry := self._intend(f"volume group {vg}", f"vgremove -q -ff -y {vg} 2>/dev/null; pvremove -q -ff -y {dev} 2>/dev/null; true")
        )
        self.sh(
            f"pvcreate -q -ff -y {dev} && vgcreate -q {vg} {dev} && "
            f"lvcreate -q -y -Wn -Zn -T -l {self.options.thin_pool_percent}%VG {vg}/thinpool"
        )
        self.run.ledger.created(entry)
        self._setup_nvme_port()
        self._own.append(entry := self._intend("NFS export root /srv/iogate", "rmdir /srv/iogate 2>/dev/null; true"))
        self.sh("mkdir -p /srv/iogate && { systemctl start nfs-server || systemctl start nfs-kernel-server; }")
        self.run.ledger.created(entry)
        if self.options.vdo:
            self._setup_vdo()

    def _self_iqn(self) -> str:
        return self.sh("sed -n 's/^InitiatorName=//p' /etc/iscsi/initiatorname.iscsi").strip()

    def _self_nqn(self) -> str:
        return self.sh("cat /etc/nvme/hostnqn").strip()

    def _setup_nvme_port(self) -> None:
        ports = f"{CFS}/nvmet/ports"
        used = self.sh(f"ls {ports}").split()
        self._nvme_port_id = str(max([int(p) for p in used if p.isdigit()] + [0]) + 1)
        port = f"{ports}/{self._nvme_port_id}"
        hosts = " ".join(shlex.quote(h) for h in self._nqns)
        undo = (
            f'for l in {port}/subsystems/*; do [ -L "$l" ] && rm -f "$l"; done; rmdir {port} 2>/dev/null; '
            f"for h in {hosts}; do rmdir {CFS}/nvmet/hosts/$h 2>/dev/null; done; true"
        )
        self._own.append(entry := self._intend(f"nvmet port {self._nvme_port_id}", undo))
        self.sh(
            f"mkdir {port} && cd {port} && echo tcp > addr_trtype && echo ipv4 > addr_adrfam && "
            f"echo {self.options.portal_address} > addr_traddr && echo {self.options.nvme_port} > addr_trsvcid; "
            f"for h in {hosts}; do mkdir -p {CFS}/nvmet/hosts/$h; done"
        )
        self.run.ledger.created(entry)

    def _setup_vdo(self) -> None:
        vg, store = self.vg, f"{self.vg}/vdo_store"
        name = f"iogate-vdo-{self.tag}"
        logical_sectors = _bytes(self.options.vdo_logical_size) // 512
        self._own.append(
            entry := self._intend(f"VDO device {name}", f"dmsetup remove {name} 2>/dev/null; lvremove -q -y {store} 2>/dev/null; true")
        )
        self.sh(
            f"lvcreate -q -y -Wn -Zn -L {self.options.vdo_physical_size} -n vdo_store {vg} && "
            f"vdoformat --force --logical-size={self.options.vdo_logical_size} /dev/{store} >/dev/null && "
            f"blocks=$(( $(blockdev --getsize64 /dev/{store}) / 4096 )) && "
            # dm-vdo V4 table: storage, its size in 4k blocks, min I/O, block map cache, era length; compression must be named.
            f'dmsetup create {name} --table "0 {logical_sectors} vdo V4 /dev/{store} $blocks 4096 32768 16380 '
            f'deduplication on compression on"'
        )
        self.run.ledger.created(entry)
        self.vdo_device = f"/dev/mapper/{name}"

    @classmethod
    def lab_problems(cls, lab: Lab, options: LinuxTargetOptions) -> list[tuple[tuple[str | int, ...], str]]:
        return []

    def settle(self) -> None:
        """Nothing is deferred: every script returns once the target has done it."""

    def teardown(self) -> None:
        for entry in list(self._snapshots.values()):
            release(self.run.ledger, [entry])
        self._snapshots.clear()
        for owned in list(self._volumes.values()):
            self.delete_volume(owned.volume)
        release(self.run.ledger, self._own)
        self._own.clear()

    def facts(self) -> dict[str, str]:
        probe = self.sh("uname -r; cat /sys/kernel/config/target/version 2>/dev/null | head -1 || true").splitlines()
        return {
            "array.driver": "linux_target",
            "array.model": f"Linux LIO/nvmet/knfsd on LVM thin ({self.options.pool_device})",
            "array.firmware": f"kernel {probe[0] if probe else 'unknown'}",
        }

    # -- volumes ---------------------------------------------------------------------
    def create_volume(self, name: str, size_bytes: int, qos: QoS | None = None, export: str | None = None) -> Volume:
        """Create and export a volume; `export` is a protocol connector name (iscsi, nvme-tcp, nfs)."""
        if qos is not None:
            raise unsupported("linux_target", Capability.QOS)
        if name in self._volumes:
            raise ArrayError(f"array {self.lab.array.name}: volume {name} exists already")
        kind = EXPORT_OF_CONNECTOR.get(export or self.options.default_export)
        if kind is None:
            raise ArrayError(
                f"array {self.lab.array.name}: volume {name}: cannot export over {export!r} (known: {', '.join(EXPORT_OF_CONNECTOR)})"
            )
        lv = _lv_name(f"{name}-{self.tag}")
        lv_dev = f"/dev/{self.vg}/{lv}"
        serial = uuid.uuid4().hex
        md = f"/dev/md/iogate-{serial[:8]}" if self.options.mirror else ""  # md names are short
        names = _export_names(lv, serial)
        device = md or lv_dev
        undo = "\n".join(
            [
                _undo_export(kind, names, self.options),
                f"if [ -e {md or '/nonexistent'} ]; then mdadm --stop {md} >/dev/null 2>&1 || true; fi" if md else "",
                f"lvremove -q -y {self.vg}/{lv}_leg1 >/dev/null 2>&1; lvremove -q -y {self.vg}/{lv} >/dev/null 2>&1; true",
            ]
        )
        entry = self._intend(f"volume {name} ({kind}, LV {self.vg}/{lv})", undo)
        # An NFS volume of N bytes must hold an N-byte file: give ext4 room for its metadata.
        lv_bytes = size_bytes + max(size_bytes // 8, 64 << 20) if kind == "nfs" else size_bytes
        self.sh(f"lvcreate -q -y -V {_leg_bytes(lv_bytes, mirrored=bool(md))}b -T {self.vg}/thinpool -n {lv} >/dev/null")
        if md:
            self.sh(f"mdadm --create {md} --run --quiet --level=1 --raid-devices=2 --metadata=1.2 --bitmap=none "
                    f"--data-offset={MD_DATA_OFFSET} --size={lv_bytes // 1024} {lv_dev} missing")
        exported = int(self.sh(f"blockdev --getsize64 {device}").strip())
        if exported < lv_bytes:
            raise ArrayError(f"array {self.lab.array.name}: volume {name}: {device} holds {exported} bytes, "
                             f"less than the {lv_bytes} asked for")
        self.sh(_export_script(kind, names, device, self.options, self._iqns, self._nqns, self._nvme_port_id))
        self.run.ledger.created(entry)
        volume = Volume(
            name=name, size_bytes=size_bytes, identity=_identity(kind, names, self.options), exports=(_export(kind, names, self.options),)
        )
        self._volumes[name] = _Owned(volume=volume, lv=lv, device=device, kind=kind, entry=entry)
        return volume

    def delete_volume(self, volume: Volume) -> None:
        owned = self._volumes.pop(volume.name, None)
        if owned is None:
            raise ArrayError(f"array {self.lab.array.name}: no volume {volume.name} of this run")
        for key in [k for k in self._snapshots if k.startswith(f"{volume.name}@")]:
            release(self.run.ledger, [self._snapshots.pop(key)])
        release(self.run.ledger, [owned.entry])

    def list_volumes(self) -> list[Volume]:
        return [owned.volume for owned in self._volumes.values()]

    def set_qos(self, volume: Volume, qos: QoS | None) -> None:
        if qos is not None:
            raise unsupported("linux_target", Capability.QOS)

    # -- snapshots ------------------------------------------------------------------
    def snapshot_create(self, volume: Volume, name: str) -> Snapshot:
        owned = self._owned(volume)
        snap = _lv_name(f"{owned.lv}.s.{name}")
        entry = self._intend(f"snapshot {volume.name}@{name}", f"lvremove -q -y {self.vg}/{snap} >/dev/null 2>&1; true")
        self._snapshots[f"{volume.name}@{name}"] = entry
        self.sh(f"lvcreate -q -y -s -n {snap} {self.vg}/{owned.lv} >/dev/null")
        self.run.ledger.created(entry)
        return Snapshot(name=name, volume=volume.name, location=f"{self.vg}/{snap}", evidence={"lv": f"{self.vg}/{snap}"})

    def snapshot_delete(self, snapshot: Snapshot) -> None:
        entry = self._snapshots.pop(f"{snapshot.volume}@{snapshot.name}")
        release(self.run.ledger, [entry])

    def snapshot_restore(self, volume: Volume, snapshot: Snapshot) -> None:
        """Copy the snapshot back through the exported device (a mirror stays in sync)."""
        owned = self._owned(volume)
        if owned.kind == "nfs":
            raise Unsupported("array driver linux_target: restoring an NFS volume under its mounted file system is not supported")
        lv = snapshot.location
        # A mirror leg holds md's superblock first: copy from md's data offset, exactly the md size.
        skip = f"$(( $(cat /sys/block/$(basename $(readlink -f {owned.device}))/md/dev-*/offset | head -1) * 512 ))"
        self.sh(
            f"lvchange -q -ay -K {lv} && size=$(blockdev --getsize64 {owned.device}) && "
            f"dd if=/dev/{lv} of={owned.device} bs=1M iflag=direct,skip_bytes,count_bytes skip={skip if self.options.mirror else 0} "
            f"count=$size oflag=direct status=none && lvchange -q -an {lv}"
        )

    # -- data services ----------------------------------------------------------------
    def vdo_used_bytes(self) -> int:
        status = self.sh(f"dmsetup status {self.vdo_device}").split()
        return int(status[-2]) * 4096  # "... <used physical blocks> <total physical blocks>"

    def dedupe_run(self, volumes: Sequence[Volume] = ()) -> dict[str, Any]:
        """One dedupe pass: the volumes (none given: every volume) read in full and written through dm-vdo
        (dedupe + compression)."""
        if not self.options.vdo:
            raise Unsupported(f"array driver linux_target (vdo: false) does not support {Capability.DEDUPE.value}")
        started = time.monotonic()
        before = self.vdo_used_bytes()
        offset_mib, limit_mib = 0, _bytes(self.options.vdo_logical_size) >> 20
        for owned in [self._owned(v) for v in volumes] or list(self._volumes.values()):
            size_mib = min(owned.volume.size_bytes >> 20, limit_mib - offset_mib)
            if size_mib <= 0:
                break
            self.sh(
                f"dd if=/dev/{self.vg}/{owned.lv} of={self.vdo_device} bs=1M count={size_mib} seek={offset_mib} "
                "iflag=direct oflag=direct status=none"
            )
            offset_mib += size_mib
        self.sh(f"sync; dmsetup message {self.vdo_device.rsplit('/', 1)[-1]} 0 'noop' 2>/dev/null || true")
        after = self.vdo_used_bytes()
        logical = offset_mib << 20
        # Hand the space back so the next pass starts from the same state.
        self.sh(f"blkdiscard -o 0 -l {logical} {self.vdo_device}")
        stored = max(after - before, 0)
        return {
            "logical_bytes": logical,
            "stored_bytes": stored,
            "saved_bytes": logical - stored,
            "dedupe_ratio": round(logical / stored, 2) if stored else None,
            "scope": ", ".join(v.name for v in volumes) if volumes else "every volume",
            "duration_s": round(time.monotonic() - started, 3),
        }

    def replicate(self, volume: Volume) -> dict[str, Any]:
        """Initial sync of a replica: the whole live volume read through its exported device and
        written to a replica LV (created once per volume, journalled; each call syncs it again)."""
        owned = self._owned(volume)
        replica = f"{owned.lv}_rep"
        if owned.replica is None:
            owned.replica = self._intend(
                f"replica of volume {volume.name} (LV {self.vg}/{replica})", f"lvremove -q -y {self.vg}/{replica} >/dev/null 2>&1; true"
            )
            self._own.append(owned.replica)
            self.sh(f"lvcreate -q -y -V $(blockdev --getsize64 {owned.device})b -T {self.vg}/thinpool -n {replica} >/dev/null")
            self.run.ledger.created(owned.replica)
        started = time.monotonic()
        self.sh(f"dd if={owned.device} of=/dev/{self.vg}/{replica} bs=1M iflag=direct oflag=direct status=none")
        return {"replica": f"{self.vg}/{replica}", "bytes": volume.size_bytes, "duration_s": round(time.monotonic() - started, 3)}

    def mirror_attach(self, volume: Volume, timeout_s: float = 1800) -> dict[str, Any]:
        """Add the second RAID1 leg and wait for the resync to finish; returns evidence."""
        owned = self._owned(volume)
        if not self.options.mirror:
            raise Unsupported(f"array driver linux_target (mirror: false) does not support {Capability.MIRROR.value}")
        leg = f"/dev/{self.vg}/{owned.lv}_leg1"
        md = owned.device
        started = time.monotonic()
        self.sh(
            f"lvcreate -q -y -V $(blockdev --getsize64 /dev/{self.vg}/{owned.lv})b -T {self.vg}/thinpool -n {owned.lv}_leg1 >/dev/null && "
            f"md=$(basename $(readlink -f {md})) && echo {self.options.mirror_resync_min_kib_per_s} > /sys/block/$md/md/sync_speed_min && "
            f"mdadm --manage {md} --add {leg}"
        )
        owned.legs.append(leg)
        md_name = self.sh(f"basename $(readlink -f {md})").strip()
        while True:
            state = self.sh(f"cat /sys/block/{md_name}/md/sync_action /sys/block/{md_name}/md/degraded").split()
            if state == ["idle", "0"]:
                break
            if time.monotonic() - started > timeout_s:
                raise ArrayError(
                    f"array {self.lab.array.name}: volume {volume.name}: mirror resync not done after {timeout_s:.0f} s ({state})"
                )
            time.sleep(1)
        return {"leg": leg, "bytes": volume.size_bytes, "resync_s": round(time.monotonic() - started, 3)}

    def mirror_detach(self, volume: Volume) -> None:
        owned = self._owned(volume)
        for leg in owned.legs:
            self.sh(f"mdadm --manage {owned.device} --fail {leg} --remove {leg} >/dev/null && lvremove -q -y {leg} >/dev/null")
        owned.legs.clear()

    def refusal(self, capability: Capability) -> str:
        if capability in self.capabilities:
            return ""
        return {
            Capability.DEDUPE: "the lab does not set array.options.vdo (volumes on dm-vdo)",
            Capability.COMPRESSION: "the lab does not set array.options.vdo (volumes on dm-vdo)",
            Capability.MIRROR: "the lab does not set array.options.mirror (volumes as md RAID1)",
            Capability.QOS: "the target has no per-volume QoS (LIO, nvmet and knfsd cap nothing)",
            Capability.METRICS: "the driver reads no target-side counters: the host's figures stand alone",
        }.get(capability, "not offered by this driver")

    def volume_metrics(self, volume: Volume, start: datetime, end: datetime) -> list[ArraySample]:
        raise unsupported("linux_target", Capability.METRICS)

    def array_clock(self) -> ArrayClock:
        return not_read("linux_target has no metrics, so its clock is not read")

    def mirror_state(self, volume: Volume) -> dict[str, str]:
        owned = self._owned(volume)
        md = self.sh(f"basename $(readlink -f {owned.device})").strip()
        action, degraded, raid_disks = self.sh(f"cd /sys/block/{md}/md && cat sync_action degraded raid_disks").split()
        return {"sync_action": action, "degraded": degraded, "raid_disks": raid_disks}

    def _owned(self, volume: Volume) -> _Owned:
        if volume.name not in self._volumes:
            raise ArrayError(f"array {self.lab.array.name}: no volume {volume.name} of this run")
        return self._volumes[volume.name]


def _bytes(size: str) -> int:
    from iogate.units import parse_size_bytes

    return parse_size_bytes(size)


def _export_names(lv: str, serial: str) -> dict[str, str]:
    slug = lv.lower().replace("_", "-").replace(".", "-")
    return {
        "lv": lv,
        "serial": serial,  # 32 hex digits: LIO builds the NAA WWN from them
        "iqn": f"iqn.2003-01.org.iogate:{slug}",
        "nqn": f"nqn.2014-08.org.iogate:{slug}",
        "nguid": str(uuid.UUID(serial)),
        "nfs_path": f"/srv/iogate/{lv}",
    }


def _identity(kind: ExportKind, names: dict[str, str], options: LinuxTargetOptions) -> DeviceIdentity:
    if kind == "iscsi":
        # NAA 6 with LIO's IEEE company id 001405, then the first 25 hex digits of the unit serial.
        return DeviceIdentity(wwn=f"naa.6001405{names['serial'][:25]}")
    if kind == "nvme-tcp":
        return DeviceIdentity(nguid=names["nguid"])
    return DeviceIdentity(nfs_export=f"{options.portal_address}:{names['nfs_path']}")


def _export(kind: ExportKind, names: dict[str, str], options: LinuxTargetOptions) -> IscsiExport | NvmeTcpExport | NfsExport:
    vanishes_with = options.vanishes_with
    if kind == "iscsi":
        portal = f"{options.portal_address}:{options.iscsi_port}"
        return IscsiExport(portal=portal, target_iqn=names["iqn"], lun=0, vanishes_with=vanishes_with)
    if kind == "nvme-tcp":
        return NvmeTcpExport(
            traddr=options.portal_address, subsys_nqn=names["nqn"], trsvcid=str(options.nvme_port), nsid=1, vanishes_with=vanishes_with
        )
    return NfsExport(server=options.portal_address, path=names["nfs_path"], vanishes_with=vanishes_with)


def _export_script(
    kind: ExportKind, names: dict[str, str], device: str, options: LinuxTargetOptions, iqns: list[str], nqns: list[str], port_id: str
) -> str:
    if kind == "iscsi":
        core = f"{CFS}/target/core/iblock_0/{names['lv']}"
        tpg = f"{CFS}/target/iscsi/{names['iqn']}/tpgt_1"
        acls = "".join(f"mkdir -p {tpg}/acls/{iqn}/lun_0 && ln -s {tpg}/lun/lun_0 {tpg}/acls/{iqn}/lun_0/lun_0\n" for iqn in iqns)
        return (
            f"mkdir -p {core} && echo udev_path={device} > {core}/control && echo {names['serial']} > {core}/wwn/vpd_unit_serial\n"
            f"echo 1 > {core}/enable\n"
            f"mkdir -p {tpg}/lun/lun_0 && ln -s {core} {tpg}/lun/lun_0/{names['lv']}\n"
            f"mkdir -p {tpg}/np/{options.portal_address}:{options.iscsi_port}\n"
            f"{acls}"
            f"echo 0 > {tpg}/attrib/authentication && echo 0 > {tpg}/attrib/generate_node_acls && echo 1 > {tpg}/enable\n"
        )
    if kind == "nvme-tcp":
        sub = f"{CFS}/nvmet/subsystems/{names['nqn']}"
        allowed = "".join(f"ln -s {CFS}/nvmet/hosts/{nqn} {sub}/allowed_hosts/{nqn}\n" for nqn in nqns)
        return (
            f"mkdir {sub} && echo 0 > {sub}/attr_allow_any_host && echo {names['serial'][:20]} > {sub}/attr_serial\n"
            f"mkdir {sub}/namespaces/1 && echo {device} > {sub}/namespaces/1/device_path\n"
            f"echo {names['nguid']} > {sub}/namespaces/1/device_nguid\n"
            f"echo 1 > {sub}/namespaces/1/enable\n"
            f"{allowed}"
            f"ln -s {sub} {CFS}/nvmet/ports/{port_id}/subsystems/{names['nqn']}\n"
        )
    path = names["nfs_path"]
    return (
        f"mkfs.ext4 -q -F -E nodiscard,lazy_itable_init=1,lazy_journal_init=1 {device} && mkdir -p {path} && mount {device} {path}\n"
        f"exportfs -o rw,sync,no_root_squash,no_subtree_check,insecure {options.nfs_clients}:{path}\n"
    )


def _undo_export(kind: ExportKind, names: dict[str, str], options: LinuxTargetOptions) -> str:
    if kind == "iscsi":
        target = f"{CFS}/target/iscsi/{names['iqn']}"
        tpg = f"{target}/tpgt_1"
        core = f"{CFS}/target/core/iblock_0/{names['lv']}"
        return f"""if [ -d {tpg} ]; then
  echo 0 > {tpg}/enable 2>/dev/null || true
  for a in {tpg}/acls/*/; do [ -d "$a" ] || continue
    for m in "$a"lun_*; do [ -d "$m" ] && find "$m" -maxdepth 1 -type l -delete && rmdir "$m"; done; rmdir "$a"; done
  for l in {tpg}/lun/lun_*; do [ -d "$l" ] && find "$l" -maxdepth 1 -type l -delete && rmdir "$l"; done
  for n in {tpg}/np/*; do [ -d "$n" ] && rmdir "$n"; done
  rmdir {tpg}
fi
[ -d {target} ] && rmdir {target}
[ -d {core} ] && rmdir {core}
true"""
    if kind == "nvme-tcp":
        sub = f"{CFS}/nvmet/subsystems/{names['nqn']}"
        return f"""rm -f {CFS}/nvmet/ports/*/subsystems/{names["nqn"]}
if [ -d {sub} ]; then
  find {sub}/allowed_hosts -maxdepth 1 -type l -delete
  if [ -d {sub}/namespaces/1 ]; then echo 0 > {sub}/namespaces/1/enable; rmdir {sub}/namespaces/1; fi
  rmdir {sub}
fi
true"""
    path = names["nfs_path"]
    return f"""exportfs -u {options.nfs_clients}:{path} 2>/dev/null || true
if mountpoint -q {path}; then umount {path} || umount -l {path}; fi
rmdir {path} 2>/dev/null; true"""
