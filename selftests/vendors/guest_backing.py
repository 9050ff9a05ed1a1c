"""Behaviour depth: a vendor fake whose objects are real block devices in the lab VM.

The fake arrays of the contract tests keep their state in dicts. Backed, every
change of that state (after a successful write request) is mirrored into the lab
VM: a volume becomes an LVM thin LV (in the VG and thin pool that linux_target's
setup makes), exported through LIO with the vendor's NAA company id and unit
serial so the kernel's WWN is the vendor's, or through nvmet with the vendor's
NGUID; a host becomes an ACL (iSCSI) or an allowed host NQN (nvmet); a mapping
a LUN or namespace; a snapshot an LVM thin snapshot; a replication a copy of the
live LV into a replica LV, running in the guest while the fake reports the
transfer's progress. Deleting on the fake deletes in the guest.

Every guest object is journalled (remote resource, idempotent undo) in the
backing's own run before it is made, so a failed test leaves nothing behind
either. The fakes compute a `Desired` state; `GuestBacking.sync` makes the
guest match it (creates in dependency order, removals in reverse).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

from iogate.arrays.linux_target import CFS, LinuxTarget
from iogate.hosts import remote
from iogate.lab import Lab
from iogate.run import Run
from iogate.run.ledger import Entry
from iogate.run.resources import release

TPG = "tpgt_1"
LUN_SIZE_ALIGN_BYTES = 1 << 20
BLKIO = "/sys/fs/cgroup/blkio"
# The emulated array's own background copies (replication, restore) run here: cgroup v1 throttling
# is flat, so a process in a child group is not held by the caps set on the root group.
INTERNAL_CGROUP = f"{BLKIO}/iogate-emu-internal"


@dataclass(frozen=True)
class VolumeSpec:
    size_bytes: int
    wwn: str | None = None  # naa.6 + 6 hex company id + 25 hex vendor-specific: LIO backstore
    nguid: str | None = None  # 32 hex digits: nvmet namespace
    uuid: str | None = None  # nvmet namespace uuid (ONTAP's namespace identity)


@dataclass
class Desired:
    """What the fake array holds, in the terms the guest needs."""

    volumes: dict[str, VolumeSpec] = field(default_factory=dict)
    iscsi_hosts: set[str] = field(default_factory=set)  # initiator IQNs with an ACL
    iscsi_maps: dict[tuple[str, str], int] = field(default_factory=dict)  # (volume, IQN) -> LUN
    nvme_hosts: set[str] = field(default_factory=set)  # host NQNs allowed into the subsystem
    nvme_maps: dict[str, int] = field(default_factory=dict)  # volume -> nsid in the subsystem
    snapshots: dict[str, str] = field(default_factory=dict)  # snapshot -> its volume
    replicas: dict[str, str] = field(default_factory=dict)  # replica -> the volume copied into it


def lio_wwn_parts(wwn: str) -> tuple[str, str]:
    """(company id, unit serial) that make LIO report `wwn` as its NAA 6 designator.

    LIO builds NAA 6 from its company id (6 hex digits) and the first 25 hex digits
    of the unit serial (target_core_spc.c spc_gen_naa_6h_vendor_specific)."""
    digits = wwn.lower().removeprefix("naa.")
    if not re.fullmatch(r"6[0-9a-f]{31}", digits):
        raise ValueError(f"not an NAA 6 registered extended WWN: {wwn}")
    return f"0x{digits[1:7]}", digits[7:]


def lv_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.+-]", "_", text)[:100]


class GuestBacking:
    """The guest side of an emulated vendor array (see module docstring)."""

    def __init__(self, lab: Lab, run: Run, iops_per_volume: int | None = None, *, pool: GuestBacking | None = None,
                 prefix: str = "emu-") -> None:
        # linux_target's own setup: the VG and thin pool on the pool disk, the nvmet port, its sh(). With `pool`,
        # another emulated array on that backing's pool (set up by it; this one is only opened and closed), its
        # objects named with `prefix` (e.g. "emu-pure-") so several arrays' LVs and backstores never collide.
        plain = {**lab.array.options, "vdo": False, "mirror": False}
        self.target = pool.target if pool is not None else \
            LinuxTarget(lab.model_copy(update={"array": lab.array.model_copy(update={"options": plain})}), run)
        self.prefix = prefix
        self.run = run
        self.iqn = ""  # the emulated array's one iSCSI target and one NVMe subsystem (open_array)
        self.nqn = ""
        self.vg = self.target.vg
        self.entries: dict[str, Entry] = {}
        self.state = Desired()
        self.lv_of: dict[str, str] = {}
        # The emulated array's service level: reads and writes of each volume capped at this many IOPS each.
        self.iops_per_volume = iops_per_volume

    # -- plumbing ------------------------------------------------------------------
    def _make(self, key: str, what: str, undo: str, script: str) -> None:
        entry = remote.intend(self.run.ledger, self.target.target, what, undo, self.target.options.vanishes_with)
        self.entries[key] = entry
        self.target.sh(script)
        self.run.ledger.created(entry)

    def _drop(self, key: str) -> None:
        entry = self.entries.pop(key, None)
        if entry is not None:
            release(self.run.ledger, [entry])

    @property
    def tpg(self) -> str:
        return f"{CFS}/target/iscsi/{self.iqn}/{TPG}"

    @property
    def subsystem(self) -> str:
        return f"{CFS}/nvmet/subsystems/{self.nqn}"

    # -- lifecycle -----------------------------------------------------------------
    def setup(self) -> None:
        self.target.setup()
        if self.iops_per_volume:
            self._open_service_level()

    def _open_service_level(self) -> None:
        """Cap the array side, as an array's own service level does: the root blkio group's throttle on each
        volume's LV holds every kernel submitter of LIO and nvmet (their threads live in the root group).
        cgroup v2 has no throttle on its root group, so the guest must boot with the v1 hierarchy."""
        self._make(
            "service-level",
            f"blkio group {INTERNAL_CGROUP} for the emulated array's own copies",
            f'if [ -d {INTERNAL_CGROUP} ]; then for p in $(cat {INTERNAL_CGROUP}/cgroup.procs); do '
            f'echo "$p" > {BLKIO}/cgroup.procs 2>/dev/null || true; done; rmdir {INTERNAL_CGROUP}; fi; true',
            f"if [ ! -w {BLKIO}/blkio.throttle.read_iops_device ]; then echo 'the lab VM has no cgroup v1 blkio "
            f"throttle at {BLKIO} (booted with systemd.unified_cgroup_hierarchy=0?): an emulated service level "
            f"needs it' >&2; exit 1; fi; mkdir -p {INTERNAL_CGROUP}",
        )

    def _internal(self, command: str) -> str:
        """`command` run outside the service level's caps (the array's own copies)."""
        if not self.iops_per_volume:
            return command
        return f"echo $$ > {INTERNAL_CGROUP}/cgroup.procs && {command}"

    def open_array(self, iscsi_target_iqn: str, nvme_subsys_nqn: str) -> None:
        """The emulated array's iSCSI target (portal as linux_target's) and NVMe subsystem (on its nvmet port)."""
        self.iqn, self.nqn = iscsi_target_iqn, nvme_subsys_nqn
        opts = self.target.options
        tpg, target = self.tpg, f"{CFS}/target/iscsi/{self.iqn}"
        self._make(
            "iscsi-target",
            f"iSCSI target {self.iqn} of the emulated array",
            f'if [ -d {tpg} ]; then echo 0 > {tpg}/enable; for n in {tpg}/np/*; do [ -d "$n" ] && rmdir "$n"; done; '
            f"rmdir {tpg}; fi; [ -d {target} ] && rmdir {target}; true",
            f"mkdir -p {tpg}/np/{opts.portal_address}:{opts.iscsi_port} && echo 0 > {tpg}/attrib/authentication && "
            f"echo 0 > {tpg}/attrib/generate_node_acls && echo 0 > {tpg}/attrib/demo_mode_discovery && echo 1 > {tpg}/enable",
        )
        sub, port = self.subsystem, f"{CFS}/nvmet/ports/{self.target._nvme_port_id}"
        self._make(
            "nvme-subsystem",
            f"nvmet subsystem {self.nqn} of the emulated array",
            f"rm -f {port}/subsystems/{self.nqn}; if [ -d {sub} ]; then find {sub}/allowed_hosts -maxdepth 1 -type l -delete; "
            f"rmdir {sub}; fi; true",
            f"mkdir {sub} && echo 0 > {sub}/attr_allow_any_host && ln -s {sub} {port}/subsystems/{self.nqn}",
        )

    def close_array(self) -> None:
        """Everything of the emulated array removed from the guest (the pool stays)."""
        self.sync(Desired())
        for key in ["nvme-subsystem", "iscsi-target", "service-level"]:
            self._drop(key)

    def teardown(self) -> None:
        self.close_array()
        self.target.teardown()

    # -- the one entry point of the fakes ------------------------------------------------
    def sync(self, desired: Desired) -> None:
        """Make the guest hold what `desired` says: removals first (reverse dependency order)."""
        have = self.state
        for rep in have.replicas.keys() - desired.replicas.keys():
            self._drop(f"replica:{rep}")
        for snap in have.snapshots.keys() - desired.snapshots.keys():
            self._drop(f"snapshot:{snap}")
        for key in have.iscsi_maps.keys() - desired.iscsi_maps.keys():
            self._drop(f"iscsi-map:{key[0]}:{key[1]}")
        for vol in have.nvme_maps.keys() - desired.nvme_maps.keys():
            self._drop(f"nvme-map:{vol}")
        for iqn in have.iscsi_hosts - desired.iscsi_hosts:
            self._drop(f"iscsi-host:{iqn}")
        for nqn in have.nvme_hosts - desired.nvme_hosts:
            self._drop(f"nvme-host:{nqn}")
        for vol in have.volumes.keys() - desired.volumes.keys():
            self._drop(f"cap:{vol}")
            self._drop(f"backstore:{vol}")
            self._drop(f"volume:{vol}")
            self.lv_of.pop(vol, None)
        for vol, spec in desired.volumes.items():
            if vol not in have.volumes:
                self._add_volume(vol, spec)
        for iqn in desired.iscsi_hosts - have.iscsi_hosts:
            self._add_iscsi_host(iqn)
        for nqn in desired.nvme_hosts - have.nvme_hosts:
            self._add_nvme_host(nqn)
        for (vol, iqn), lun in desired.iscsi_maps.items():
            if (vol, iqn) not in have.iscsi_maps:
                self._add_iscsi_map(vol, iqn, lun)
        for vol, nsid in desired.nvme_maps.items():
            if vol not in have.nvme_maps:
                self._add_nvme_map(vol, nsid, desired.volumes[vol])
        for snap, vol in desired.snapshots.items():
            if snap not in have.snapshots:
                self._add_snapshot(snap, vol)
        for rep, vol in desired.replicas.items():
            if rep not in have.replicas:
                self._start_replica(rep, vol)
        self.state = Desired(
            volumes=dict(desired.volumes),
            iscsi_hosts=set(desired.iscsi_hosts),
            iscsi_maps=dict(desired.iscsi_maps),
            nvme_hosts=set(desired.nvme_hosts),
            nvme_maps=dict(desired.nvme_maps),
            snapshots=dict(desired.snapshots),
            replicas=dict(desired.replicas),
        )

    # -- objects ---------------------------------------------------------------------------
    def _add_volume(self, vol: str, spec: VolumeSpec) -> None:
        lv = lv_name(f"{self.prefix}{vol}")
        self.lv_of[vol] = lv
        size = -(-spec.size_bytes // LUN_SIZE_ALIGN_BYTES) * LUN_SIZE_ALIGN_BYTES
        self._make(
            f"volume:{vol}",
            f"emulated volume {vol} (LV {self.vg}/{lv})",
            f"lvremove -q -y {self.vg}/{lv} >/dev/null 2>&1; true",
            f"lvcreate -q -y -V {size}b -T {self.vg}/thinpool -n {lv} >/dev/null",
        )
        if self.iops_per_volume:
            self._cap(vol, lv, self.iops_per_volume)
        if spec.wwn:
            company_id, unit_serial = lio_wwn_parts(spec.wwn)
            core = f"{CFS}/target/core/iblock_0/{lv}"
            # company_id must be set before the device is exported (LIO refuses it afterwards).
            self._make(
                f"backstore:{vol}",
                f"LIO backstore {lv} ({spec.wwn})",
                f"[ -d {core} ] && rmdir {core}; true",
                f"mkdir -p {core} && echo udev_path=/dev/{self.vg}/{lv} > {core}/control && "
                f"echo {unit_serial} > {core}/wwn/vpd_unit_serial && echo {company_id} > {core}/wwn/company_id && "
                f"echo 1 > {core}/enable",
            )

    def _cap(self, vol: str, lv: str, iops: int) -> None:
        numbers = f"$(lsblk -dno MAJ:MIN /dev/{self.vg}/{lv} 2>/dev/null | tr -d ' ' || true)"
        rules = [f"{BLKIO}/blkio.throttle.{direction}_iops_device" for direction in ("read", "write")]

        def write(value: int) -> str:
            return " && ".join(f'echo "$d {value}" > {rule}' for rule in rules)

        self._make(
            f"cap:{vol}",
            f"service level of emulated volume {vol}: {iops} read + {iops} write IOPS (LV {self.vg}/{lv})",
            f"d={numbers}; if [ -n \"$d\" ]; then {write(0)}; fi; true",
            f"d={numbers} && [ -n \"$d\" ] && {write(iops)} && grep -qx \"$d {iops}\" {rules[0]}",
        )

    def _add_iscsi_host(self, iqn: str) -> None:
        acl = f"{self.tpg}/acls/{iqn}"
        self._make(
            f"iscsi-host:{iqn}",
            f"iSCSI ACL {iqn}",
            f'if [ -d {acl} ]; then for m in {acl}/lun_*; do [ -d "$m" ] && find "$m" -maxdepth 1 -type l -delete && rmdir "$m"; '
            f"done; rmdir {acl}; fi; true",
            f"mkdir -p {acl}",
        )

    def _add_iscsi_map(self, vol: str, iqn: str, lun: int) -> None:
        lv = self.lv_of[vol]
        core = f"{CFS}/target/core/iblock_0/{lv}"
        tpg_lun = f"{self.tpg}/lun/lun_{lun}"
        mapped = f"{self.tpg}/acls/{iqn}/lun_{lun}"
        self._make(
            f"iscsi-map:{vol}:{iqn}",
            f"LUN {lun} of {lv} for {iqn}",
            f"[ -d {mapped} ] && find {mapped} -maxdepth 1 -type l -delete && rmdir {mapped}; "
            f"[ -d {tpg_lun} ] && find {tpg_lun} -maxdepth 1 -type l -delete && rmdir {tpg_lun}; true",
            f"mkdir -p {tpg_lun} && ln -s {core} {tpg_lun}/{lv} && mkdir -p {mapped} && ln -s {tpg_lun} {mapped}/lun_{lun}",
        )

    def _add_nvme_host(self, nqn: str) -> None:
        host, link = f"{CFS}/nvmet/hosts/{nqn}", f"{self.subsystem}/allowed_hosts/{nqn}"
        self._make(
            f"nvme-host:{nqn}",
            f"nvmet allowed host {nqn}",
            f"rm -f {link}; rmdir {host} 2>/dev/null; true",
            f"mkdir -p {host} && ln -s {host} {link}",
        )

    def _add_nvme_map(self, vol: str, nsid: int, spec: VolumeSpec) -> None:
        ns = f"{self.subsystem}/namespaces/{nsid}"
        ids = f"echo {spec.nguid} > {ns}/device_nguid && " if spec.nguid else ""
        ids += f"echo {spec.uuid} > {ns}/device_uuid && " if spec.uuid else ""
        self._make(
            f"nvme-map:{vol}",
            f"nvmet namespace {nsid} of {self.lv_of[vol]}",
            f"if [ -d {ns} ]; then echo 0 > {ns}/enable; rmdir {ns}; fi; true",
            f"mkdir {ns} && echo /dev/{self.vg}/{self.lv_of[vol]} > {ns}/device_path && {ids}echo 1 > {ns}/enable",
        )

    def _add_snapshot(self, snap: str, vol: str) -> None:
        lv = lv_name(f"{self.prefix}snap-{snap}")
        self._make(
            f"snapshot:{snap}",
            f"emulated snapshot {snap} (LV {self.vg}/{lv})",
            f"lvremove -q -y {self.vg}/{lv} >/dev/null 2>&1; true",
            f"lvcreate -q -y -s -n {lv} {self.vg}/{self.lv_of[vol]} >/dev/null",
        )

    def overwrite(self, vol: str, source: str) -> None:
        """A copy over a live volume (a vendor's restore from a snapshot, or a copy of another volume): the
        source's blocks are written over the volume's LV in the guest before the fake answers; the LV and so its
        LUN / namespace and identity stay. A thin snapshot is created with LVM's activation skip, so it is
        activated for the copy and deactivated again."""
        if source in self.state.snapshots:
            src, activate = lv_name(f"{self.prefix}snap-{source}"), True
        elif source in self.lv_of:
            src, activate = self.lv_of[source], False
        else:
            raise ValueError(f"emulated array: no snapshot or volume {source} to copy over {vol}")
        path = f"{self.vg}/{src}"
        copy = self._internal(
            f"dd if=/dev/{path} of=/dev/{self.vg}/{self.lv_of[vol]} bs=1M iflag=direct oflag=direct conv=fsync status=none"
        )
        if activate:
            copy = f"lvchange -q -ay -K {path} && {{ {copy}; rc=$?; lvchange -q -an {path}; exit $rc; }}"
        self.target.sh(copy)

    def _replica_paths(self, rep: str) -> tuple[str, str]:
        lv = lv_name(f"{self.prefix}rep-{rep}")
        return lv, f"/run/iogate-emu-{lv}"

    def _start_replica(self, rep: str, vol: str) -> None:
        """The copy runs in the guest in the background; replica_done() says when it finished."""
        lv, flag = self._replica_paths(rep)
        source = f"/dev/{self.vg}/{self.lv_of[vol]}"
        copy = shlex.quote(
            self._internal(f"dd if={source} of=/dev/{self.vg}/{lv} bs=1M iflag=direct oflag=direct status=none && touch {flag}.done")
        )
        self._make(
            f"replica:{rep}",
            f"emulated replica {rep} of {vol} (LV {self.vg}/{lv})",
            f"[ -f {flag}.pid ] && kill $(cat {flag}.pid) 2>/dev/null; sleep 1; rm -f {flag}.pid {flag}.done; "
            f"lvremove -q -y {self.vg}/{lv} >/dev/null 2>&1; true",
            f"lvcreate -q -y -V $(blockdev --getsize64 {source})b -T {self.vg}/thinpool -n {lv} >/dev/null && "
            f"(nohup sh -c {copy} >/dev/null 2>&1 & echo $! > {flag}.pid)",
        )

    def replica_done(self, rep: str) -> bool:
        _, flag = self._replica_paths(rep)
        return self.target.sh(f"[ -e {flag}.done ] && echo yes || echo no").strip() == "yes"

    # -- evidence for the tests -------------------------------------------------------------
    def leftovers(self) -> str:
        """Emulated-array objects in the guest (LVs, backstores, LUNs, ACLs, namespaces, hosts); '' when none."""
        return self.target.sh(
            f"lvs --noheadings -o lv_name {self.vg} 2>/dev/null | grep -v thinpool | grep emu- || true; "
            f"ls {CFS}/target/core/iblock_0 2>/dev/null | grep emu- || true; "
            f"ls {self.tpg}/lun {self.tpg}/acls {self.subsystem}/namespaces {self.subsystem}/allowed_hosts 2>/dev/null "
            "| grep -v -e ':$' -e '^$' || true"
        ).strip()
