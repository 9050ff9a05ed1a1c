"""The ArrayDriver protocol every array (local, linux_target, static, vendors) fills.

Every driver has every operation of the protocol; `capabilities` says which of
the optional ones (snapshot, restore, dedupe, replicate, mirror, qos, metrics)
it can do, and the others raise Unsupported. A test whose event or reset the
driver cannot do is skipped with a reason naming the driver, the capability and
the driver's `refusal` (the lab option to set, or why its array's API has none):
callers check `capabilities`, never whether a method exists.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any, ClassVar, Protocol, TypeVar

from pydantic import BaseModel

from iogate.arrays.clock import ArrayClock
from iogate.arrays.exports import Export
from iogate.lab import DeviceIdentity, Lab, QoS

E = TypeVar("E", bound=Export)


class Capability(StrEnum):
    SNAPSHOT = "snapshot"  # create/delete a point-in-time copy of a volume
    RESTORE = "restore"  # roll a volume back to a snapshot (state reset between tests)
    DEDUPE = "dedupe"  # run a deduplication pass on demand
    COMPRESSION = "compression"
    REPLICATE = "replicate"  # initial sync of a replica during load
    MIRROR = "mirror"  # synchronous mirror attach/detach
    QOS = "qos"  # per-volume IOPS / bandwidth caps (also the degrade event)
    METRICS = "metrics"  # the array's own per-volume IOPS / latency samples (evidence beside the host's)


@dataclass(frozen=True)
class Volume:
    """A volume the array created for this run.

    `identity` is what initiators verify before writing; `exports` holds what a
    connector needs to reach it, one record per protocol family the array serves
    it over (iogate.arrays.exports: a loop device, an iSCSI target, an NVMe
    subsystem...); a connector takes its own with `export_of`.
    """

    name: str
    size_bytes: int
    identity: DeviceIdentity
    exports: tuple[Export, ...] = ()

    def __post_init__(self) -> None:
        kinds = [type(record).__name__ for record in self.exports]
        if len(set(kinds)) != len(kinds):
            raise ValueError(f"volume {self.name}: more than one export of a kind ({', '.join(kinds)})")

    def export_of(self, kind: type[E]) -> E | None:
        """The volume's export record of this kind; None when the array does not serve it that way."""
        return next((record for record in self.exports if isinstance(record, kind)), None)


@dataclass(frozen=True)
class Snapshot:
    """A snapshot the array took. `location` is where the array keeps it (a reflink file, an LV
    "vg/lv", the array's object name; "" when the driver cannot tell); `evidence` is what the
    event records beside its name (driver-specific: ids, hook results)."""

    name: str
    volume: str
    location: str = ""
    evidence: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ArraySample:
    """One sample of a volume's performance as the array measured it (METRICS): its own counters,
    evidence beside the host's figures, never a replacement for them.

    `time` is the array's stamp of the sample, timezone-aware (what the vendor documents it as:
    ONTAP "the timestamp of the performance data", Pure "the time the sample was taken"; whether
    it opens or closes the interval is the array's convention). `interval_s` is how long the
    sample averages over, as the array reports it (ONTAP `duration`) or asked for it (Pure's
    resolution). Rates are operations per second; latencies are the array's mean time per
    operation in microseconds, as the array counts it (not the host's round trip). A figure the
    array did not report is None, never 0. `note` is the array's remark on the sample (an ONTAP
    status other than "ok", e.g. "backfilled_data"), "" when there is none.
    """

    time: datetime
    interval_s: float | None
    read_iops: float | None
    write_iops: float | None
    read_latency_us: float | None
    write_latency_us: float | None
    note: str = ""

    def __post_init__(self) -> None:
        if self.time.tzinfo is None:
            raise ValueError(f"array sample at {self.time}: the time must carry its time zone")


def check_window(start: datetime, end: datetime) -> None:
    """The window volume_metrics is asked for: timezone-aware, start before end (ValueError otherwise)."""
    if start.tzinfo is None or end.tzinfo is None:
        raise ValueError(f"metrics window {start} .. {end}: give timezone-aware times (the array's clock is UTC)")
    if end <= start:
        raise ValueError(f"metrics window {start.isoformat()} .. {end.isoformat()}: the end is not after the start")


def samples_evidence(samples: Sequence[ArraySample]) -> dict[str, Any] | None:
    """What the array's samples of a window say, for a report beside the host's figures; None when
    the array has no sample in the window (no data: not zero IOPS, not zero latency).

    IOPS are the mean over the samples that report them; latency is weighted by each sample's
    operations (a busy interval counts more, as the host's mean does). A figure no sample reports
    is None, and so is the latency of a side that did no operations in the window.
    """
    if not samples:
        return None

    def mean(values: list[float]) -> float | None:
        return sum(values) / len(values) if values else None

    def weighted(pairs: list[tuple[float, float]]) -> float | None:
        ops = sum(rate for _, rate in pairs)
        return sum(latency * rate for latency, rate in pairs) / ops if ops > 0 else None  # no operations: no latency

    ordered = sorted(samples, key=lambda s: s.time)
    evidence: dict[str, Any] = {
        "first_sample": ordered[0].time.isoformat(),
        "last_sample": ordered[-1].time.isoformat(),
        "samples": len(ordered),
        "interval_s": sorted({s.interval_s for s in ordered if s.interval_s is not None}),
    }
    for side in ("read", "write"):
        rates = [r for s in ordered if (r := getattr(s, f"{side}_iops")) is not None]
        pairs = [
            (lat, rate)
            for s in ordered
            if (lat := getattr(s, f"{side}_latency_us")) is not None and (rate := getattr(s, f"{side}_iops")) is not None
        ]
        evidence[f"{side}_iops_mean"] = mean(rates)
        evidence[f"{side}_latency_us_mean"] = weighted(pairs)
    notes = sorted({s.note for s in ordered if s.note})
    if notes:
        evidence["notes"] = notes
    return evidence


class ArrayDriver(Protocol):
    """What the suite needs from an array. Errors raise iogate.errors.ArrayError."""

    Options: ClassVar[type[BaseModel]]
    capabilities: ClassVar[frozenset[Capability]]

    # True when every volume is reachable over every protocol of the lab (local loop devices);
    # False when a volume is exported over one protocol chosen at creation (`export`).
    serves_all_protocols: ClassVar[bool]

    @classmethod
    def lab_problems(cls, lab: Lab, options: Any) -> list[tuple[tuple[str | int, ...], str]]:
        """What the driver refuses in a lab file beyond its Options, as (location, message); [] for none."""

    # -- lifecycle ------------------------------------------------------------------
    def setup(self) -> None:
        """Prepare the array for a run (pools, ports); journalled in the ledger."""

    def facts(self) -> dict[str, str]:
        """Driver, model, firmware... for the report's environment."""

    def settle(self) -> None:
        """Finish deferred work of earlier actions before a measurement (nothing where none is deferred)."""

    def teardown(self) -> None:
        """Remove everything setup and create_volume made."""

    # -- volumes --------------------------------------------------------------------
    def create_volume(self, name: str, size_bytes: int, qos: QoS | None = None, export: str | None = None) -> Volume:
        """Create a volume; `export` names the protocol connector it must be reachable over."""

    def delete_volume(self, volume: Volume) -> None: ...

    def list_volumes(self) -> list[Volume]: ...

    # -- optional operations: each behind its Capability -----------------------------
    def set_qos(self, volume: Volume, qos: QoS | None) -> None:
        """QOS: apply the caps (None lifts them; a driver without QOS accepts None only)."""

    def snapshot_create(self, volume: Volume, name: str) -> Snapshot:
        """SNAPSHOT."""

    def snapshot_delete(self, snapshot: Snapshot) -> None:
        """SNAPSHOT."""

    def snapshot_restore(self, volume: Volume, snapshot: Snapshot) -> None:
        """RESTORE: roll the volume back to the snapshot."""

    def dedupe_run(self, volumes: Sequence[Volume] = ()) -> dict[str, Any]:
        """DEDUPE: run one dedupe pass over `volumes` (none given: every volume of this run) to completion;
        returns evidence, `saved_bytes` among it: the space the pass saved, None where the array cannot
        tell (the judge fails a pass that saved nothing or cannot say: iogate/judging/event_effect.py).
        A pass over the datastore under test keeps its cost the same whatever else the run has on the
        array; a driver whose array dedupes only a larger scope (a FlexVol) runs that and names it in the
        evidence's `scope`."""

    def replicate(self, volume: Volume) -> dict[str, Any]:
        """REPLICATE: make a full replica of the volume (initial sync); returns evidence."""

    def mirror_attach(self, volume: Volume) -> dict[str, Any]:
        """MIRROR: add a synchronous mirror of the volume and wait until it is in sync; returns evidence."""

    def mirror_detach(self, volume: Volume) -> None:
        """MIRROR: remove the mirror mirror_attach added."""

    def volume_metrics(self, volume: Volume, start: datetime, end: datetime) -> list[ArraySample]:
        """METRICS: the array's samples of the volume stamped within [start, end], oldest first
        (timezone-aware; check_window). Each driver picks the finest sampling its API keeps for a
        window that long and says which. [] when the array has none for the window: the caller
        reports no data (samples_evidence gives None), never zeros."""

    def array_clock(self) -> ArrayClock:
        """The array's clock against this controller's, read now (iogate.arrays.clock), stated beside the
        array's samples; a driver that cannot read it says why (offset None). Only asked with METRICS."""

    def refusal(self, capability: Capability) -> str:
        """Why this driver, as the lab set it up, does not offer `capability`: its array's API, the lab's
        options or what the driver leaves out; '' when it offers it."""


class Unsupported(Exception):
    """Raised by a driver method the driver does not have (see capabilities)."""


def lacking(array: ArrayDriver, driver: str, capabilities: Sequence[Capability]) -> str:
    """Why a test that needs `capabilities` cannot run on this array, as its skip reason: the driver, each
    capability it lacks and the driver's reason ("array driver ontap lacks capability dedupe: FlexVol v1 has
    dedupe off ..."); '' when it has them all."""
    missing = [c for c in capabilities if c not in array.capabilities]
    if not missing:
        return ""
    reasons = [f"{c.value}: {why}" if (why := array.refusal(c)) else c.value for c in missing]
    return f"array driver {driver} lacks capability {'; '.join(reasons)}"


def unsupported(driver: str, capability: Capability, why: str = "") -> Unsupported:
    """The error an operation behind a capability the driver lacks raises: the driver, the operation and,
    where the driver knows it, why (the array's API has no such call, the lab did not allow it ...)."""
    return Unsupported(f"array driver {driver} does not support {capability.value}" + (f": {why}" if why else ""))
