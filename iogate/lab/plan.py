"""What a run of a lab will provision, write and skip, and how long it is likely to take: said before it starts.

Each family's volumes follow the session fixtures (fixtures/volumes.py, fixtures/suite.py,
fixtures/events.py): the lab's volume set over the baseline protocol (baseline, tiles,
scaling); where the driver exports a volume over one protocol only, another set of the same
count and size for each other protocol (sweep, protocols); another for the KPI cases; and
one small volume per event test the driver can run. Every set is written in full once
(prefill) before it is measured. The run time is an estimate from the catalogs' points and
the profile's seconds per point, and says what it leaves out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from iogate.lab.checks import human_size
from iogate.lab.profiles import Profile
from iogate.units import parse_size_bytes

MIB = 1 << 20
# The event tests' own volumes (tests/test_snapshot_impact.py, test_dedupe_during_load.py,
# test_mirror_impact.py VOLUME_SIZE / VOLUME_MIB; selftests/unit/test_lab_check.py holds them equal).
EVENT_VOLUMES: tuple[tuple[str, str, int], ...] = (
    ("snapshot", "events-snap", 256 * MIB),
    ("dedupe", "events-dedupe", 160 * MIB),
    ("replicate", "events-mirror", 256 * MIB),
)
# Lab options without which a vendor driver never offers replication (setup() asks the array for the rest).
REPLICATION_OPTION = {"ontap": "snapmirror", "pure": "protection_group", "powerstore": "protection_policy_id"}
# What the estimate assumes for prefill (a sequential 256 KiB write): stated beside the figure.
PREFILL_ASSUMED_BYTES_PER_S = 1_000_000_000
# open-iscsi's per-session LUN queue depth unless the lab's node_settings raise it (iscsid.conf).
ISCSI_QUEUE_DEPTH = "node.session.queue_depth"
OPEN_ISCSI_QUEUE_DEPTH = 32
SCALING_SCHEDULE_LINES = 3  # tests/test_scaling.py SCHEDULE (smoke runs the first line only)


@dataclass(frozen=True)
class VolumeSetPlan:
    families: str
    protocol: str
    count: int
    size_bytes: int
    prefilled: bool

    @property
    def bytes(self) -> int:
        return self.count * self.size_bytes


@dataclass
class Plan:
    volume_sets: list[VolumeSetPlan] = field(default_factory=list)
    skips: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    points: dict[str, int] = field(default_factory=dict)  # family -> measured run points
    seconds: dict[str, float] = field(default_factory=dict)  # family -> estimated seconds

    @property
    def provisioned_bytes(self) -> int:
        return sum(s.bytes for s in self.volume_sets)

    @property
    def prefill_bytes(self) -> int:
        return sum(s.bytes for s in self.volume_sets if s.prefilled)

    @property
    def volume_count(self) -> int:
        return sum(s.count for s in self.volume_sets)

    @property
    def prefill_seconds(self) -> float:
        return self.prefill_bytes / PREFILL_ASSUMED_BYTES_PER_S

    def lines(self, profile: Profile) -> list[str]:
        out = [f"plan (profile {profile.name}: {profile.runtime_s:g} s per point after {profile.ramp_s:g} s ramp, "
               f"tiles {profile.tile_runtime_s:g} s, prefill {'on' if profile.prefill else 'off'}):"]
        for s in self.volume_sets:
            out.append(f"  volumes  {s.families} over {s.protocol}: {s.count} x {human_size(s.size_bytes)} = "
                       f"{human_size(s.bytes)}{', prefilled' if s.prefilled else ''}")
        out.append(f"  capacity {self.volume_count} volume(s), {human_size(self.provisioned_bytes)} provisioned at most at once; "
                   f"prefill writes {human_size(self.prefill_bytes)}")
        for skip in self.skips:
            out.append(f"  skip     {skip}")
        for note in self.notes:
            out.append(f"  note     {note}")
        for family, points in self.points.items():
            out.append(f"  time     {family}: {points} run point(s), ~{_duration(self.seconds[family])}")
        total = sum(self.seconds.values()) + self.prefill_seconds
        out.append(f"  time     prefill: ~{_duration(self.prefill_seconds)} at an assumed {PREFILL_ASSUMED_BYTES_PER_S / 1e9:g} GB/s")
        out.append(f"  estimate ~{_duration(total)} in all (measured points and prefill; provisioning, connecting, "
                   "event actions and the report come on top)")
        return out


def _duration(seconds: float) -> str:
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} h"
    if seconds >= 60:
        return f"{seconds / 60:.0f} min"
    return f"{seconds:.0f} s"


def offered(driver_name: str, driver: Any, options: Any) -> set[str]:
    """The capabilities the driver can offer this lab (the most; a vendor array may offer less at setup)."""
    capabilities = {c.value for c in getattr(driver, "capabilities", frozenset())}
    if driver_name == "static":  # what the lab's hooks do (iogate/arrays/static.py HOOK_CAPABILITY)
        from iogate.arrays.static import HOOK_CAPABILITY

        capabilities = {HOOK_CAPABILITY[hook].value for hook in getattr(options, "hooks", {}) if hook in HOOK_CAPABILITY}
    option = REPLICATION_OPTION.get(driver_name)
    if option and not getattr(options, option, None):
        capabilities.discard("replicate")
    return capabilities


def make_plan(lab: Any, driver: Any, options: Any, profile: Profile) -> Plan:
    plan = Plan()
    spec = lab.volumes
    capabilities = offered(lab.array.driver, driver, options)
    shared = "baseline, tiles, scaling, sweep, protocols"
    plan.volume_sets.append(VolumeSetPlan(shared, lab.baseline, spec.count, spec.size_bytes, profile.prefill))
    if getattr(driver, "serves_all_protocols", False):
        plan.notes.append(f"the {lab.array.driver} driver serves every protocol on the same volumes: one set for all")
    else:
        for protocol in lab.protocols:
            if protocol.name != lab.baseline:
                plan.volume_sets.append(VolumeSetPlan("sweep, protocols", protocol.name, spec.count, spec.size_bytes, profile.prefill))
    plan.volume_sets.append(VolumeSetPlan("kpi", lab.baseline, spec.count, spec.size_bytes, True))
    for capability, name, size_bytes in EVENT_VOLUMES:
        if capability in capabilities:
            plan.volume_sets.append(VolumeSetPlan(f"events ({name})", lab.baseline, 1, size_bytes, True))
    plan.skips += _skips(lab, capabilities)
    plan.notes += _listed_volumes(lab, options, plan)
    plan.notes += _iscsi_queue_depth(lab, profile)
    _estimate(plan, lab, profile, capabilities)
    return plan


def _listed_volumes(lab: Any, options: Any, plan: Plan) -> list[str]:
    """A static array hands out the volumes its lab lists: say where the whole suite would ask for more."""
    listed = getattr(options, "volumes", None)
    if lab.array.driver != "static" or not isinstance(listed, list):
        return []
    notes = []
    for connector in sorted({lab.protocol(s.protocol).connector for s in plan.volume_sets}):
        sets = [s for s in plan.volume_sets if lab.protocol(s.protocol).connector == connector]
        smallest = min(s.size_bytes for s in sets)
        usable = [v for v in listed if v.protocol == connector and parse_size_bytes(v.size) >= smallest]
        wanted = sum(s.count for s in sets)
        if len(usable) < wanted:
            notes.append(f"the whole suite asks the static array for {wanted} volume(s) over {connector}; the lab lists "
                         f"{len(usable)} of at least {human_size(smallest)}: list more, or run fewer families (-m)")
    return notes


def _iscsi_queue_depth(lab: Any, profile: Profile) -> list[str]:
    """A protocol comparison point that keeps more I/Os outstanding on a host's LUN than its iSCSI session queues:
    the host holds the rest back, so iSCSI is compared at a lower concurrency than the point offers (and than
    NVMe/TCP's 128)."""
    from iogate.procedures import netapp

    points = netapp.load_netapp().netapp.points(profile)
    hosts = [h.name for h in lab.hosts]
    outstanding = {p.id: netapp.outstanding_per_lun(p, hosts, lab.volumes.count, lab.volumes.size_bytes) for p in points}
    notes = []
    for protocol in lab.protocols:
        if protocol.connector != "iscsi":
            continue
        set_depth = dict(protocol.options.get("node_settings") or {}).get(ISCSI_QUEUE_DEPTH)
        depth = int(set_depth) if set_depth is not None else OPEN_ISCSI_QUEUE_DEPTH
        over = [f"{point} {n}" for point, n in outstanding.items() if n > depth]
        if over:
            said = "set in its node_settings" if set_depth is not None else "open-iscsi's default"
            notes.append(f"protocol {protocol.name}: the protocols points keep more I/Os outstanding on one host's LUN ({', '.join(over)}) "
                         f"than its iSCSI LUN queue depth {depth} ({ISCSI_QUEUE_DEPTH}, {said}): the host holds the rest back and "
                         f"iSCSI is compared at a lower concurrency; raise it in options.node_settings, or list more volumes")
    return notes


def _skips(lab: Any, capabilities: set[str]) -> list[str]:
    driver = lab.array.driver
    skips = []
    for capability, tests in (("snapshot", "test_snapshot_impact"), ("dedupe", "test_dedupe_during_load"),
                              ("replicate", "test_replica_initial_sync"), ("mirror", "test_synchronous_mirror")):
        if capability not in capabilities:
            why = f" (set array.options.{REPLICATION_OPTION[driver]})" if capability == "replicate" and driver in REPLICATION_OPTION else ""
            skips.append(f"{tests}: array driver {driver} lacks capability {capability}{why}")
    if "restore" not in capabilities:
        skips.append(f"state restore between tests: driver {driver} lacks capability restore (tests run on the state earlier ones left)")
    if len(lab.hosts) < 2:
        skips.append(f"test_client_stepping: needs >= 2 hosts; lab {lab.name} has {len(lab.hosts)}")
    if lab.datapath_limit_bytes_per_s is None:
        skips.append("test_datapath_efficiency: the lab declares no datapath_limit_bytes_per_s")
    return skips


def _estimate(plan: Plan, lab: Any, profile: Profile, capabilities: set[str]) -> None:
    from iogate.procedures import iogen, netapp, scaling
    from iogate.procedures.dell import load_sweeps

    point_s = profile.runtime_s + profile.ramp_s
    sweep = len(load_sweeps().dell.grid_for(profile).points()) * len(lab.protocols)
    protocols = len(netapp.load_netapp().netapp.points(profile)) * len(lab.protocols)
    kpi_spec = iogen.load_iogen().iogen
    kpi = len(kpi_spec.cases) * (1 + len(kpi_spec.throughput_steps(profile)))
    families = {"baseline": (1, point_s), "sweep": (sweep, sweep * point_s), "protocols": (protocols, protocols * point_s),
                "kpi": (kpi, kpi * point_s), "tiles": (1, profile.tile_runtime_s + profile.ramp_s)}
    if len(lab.hosts) >= 2:
        lines = 1 if profile.name == "smoke" else SCALING_SCHEDULE_LINES
        every = scaling.incremental_every(len(lab.hosts), profile.name)
        steps = len(scaling.plan_steps([h.name for h in lab.hosts], every)) * lines
        families["scaling"] = (steps, steps * point_s)
    # Three phases each (before, during, after the event): snapshot's three cases, dedupe, the replica's sync.
    events = 3 * (3 * ("snapshot" in capabilities) + ("dedupe" in capabilities) + ("replicate" in capabilities))
    if events:
        families["events"] = (events, events * point_s)
    for family, (points, seconds) in families.items():
        plan.points[family] = points
        plan.seconds[family] = seconds
