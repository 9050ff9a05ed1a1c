"""The array's own counters of a run point (METRICS), as evidence beside the host's figures.

After a run point, every volume the plan's jobs touched is asked for the array's samples over the
run's measured window (RunResult.start_ms .. end_ms: after the ramp, on the clock of the host that
ran the engine, which for a remote host may differ from the array's by its clock offset). What
comes back is reported as it is: a volume with no sample is "no samples for this window", never
zeros; a window the samples cover only in part names the spans with no sample (coverage); a
failed call is reported by name with its error and never fails the measurement. The array stamps
its samples with its own clock: the driver's reading of it against this controller's clock is
stated beside them, or that it could not be read and why. It is evidence, not a verdict: nothing
here judges.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from iogate.arrays.base import ArrayDriver, ArraySample, Capability, Volume, samples_evidence
from iogate.arrays.clock import ArrayClock, not_read
from iogate.arrays.coverage import Coverage, sample_coverage
from iogate.engines.workload import RunPlan
from iogate.metrics.types import Dir, RunResult
from iogate.report.table import table_csv

NO_SAMPLES = "the array reported no samples for this window"
NOT_ASKED = ArrayClock(None, None, "not asked")


@dataclass(frozen=True)
class VolumeCounters:
    """What the array said of one volume over the window: its samples, or the error of the call."""

    volume: str
    samples: tuple[ArraySample, ...] = ()
    error: str | None = None  # "volume_metrics(<volume>, <start>, <end>): <type>: <message>" when the call failed
    coverage: Coverage | None = None  # how much of the window the samples cover (None when the call failed)

    @property
    def evidence(self) -> dict[str, Any] | None:
        return samples_evidence(self.samples) if self.error is None else None

    @property
    def partial(self) -> bool:
        return bool(self.samples) and self.coverage is not None and bool(self.coverage.missing)

    @property
    def status(self) -> str:
        if self.error is not None:
            return f"error: {self.error}"
        if not self.samples:
            return NO_SAMPLES
        if self.partial:
            assert self.coverage is not None
            due = len(self.samples) + self.coverage.missing_samples
            return f"{len(self.samples)} of about {due} sample(s); missing {'; '.join(self.coverage.describe())}"
        return f"{len(self.samples)} sample(s)"


@dataclass(frozen=True)
class ArrayCounters:
    """The array's counters of one run point, beside what the host measured."""

    point: str
    driver: str
    start: datetime
    end: datetime
    volumes: tuple[VolumeCounters, ...]
    host_iops: dict[str, float]  # "read", "write", "total": the engine's IOPS over the same window
    clock: ArrayClock = NOT_ASKED  # the array's clock against the controller's, as the driver read it

    def array_iops(self) -> dict[str, float | None] | None:
        """Read, write and total IOPS the array saw: the sum over the volumes that reported samples of each
        one's mean over its samples (a side some volume did not report is None, not counted as 0); None when
        no volume reported a sample (no data, not zero)."""
        reported = [e for v in self.volumes if (e := v.evidence) is not None]
        if not reported:
            return None
        figures: dict[str, float | None] = {}
        for side in ("read", "write"):
            means = [e[f"{side}_iops_mean"] for e in reported]
            figures[side] = None if None in means else sum(means)
        read, write = figures["read"], figures["write"]
        figures["total"] = None if read is None or write is None else read + write
        return figures

    def summary_line(self) -> str:
        """One line: the array-seen IOPS over the window against the host-seen, and each volume without figures."""
        host = f"host-seen {self.host_iops['total']:.1f} IOPS (read {self.host_iops['read']:.1f}, write {self.host_iops['write']:.1f})"
        figures = self.array_iops()
        gaps = [f"{v.volume}: {v.status}" for v in self.volumes if v.evidence is None]
        partial = [f"{v.volume}: {v.status}" for v in self.volumes if v.partial]
        clock = [self.clock.describe()]
        interval = max((c.interval_s or 0.0 for v in self.volumes if (c := v.coverage) is not None), default=0.0)
        if self.clock.may_misplace(interval):
            clock.append(f"the clocks differ by a sample interval ({interval:g} s) or more: samples may belong to a neighbouring window")
        if figures is None:
            said = NO_SAMPLES if not any(v.error for v in self.volumes) else "no figures"
            return "; ".join([f"array counters ({self.driver}): {said}; {host}", *gaps, *clock])

        def fmt(value: float | None) -> str:
            return "not reported" if value is None else f"{value:.1f}"

        of = f" from {len(self.volumes) - len(gaps)} of {len(self.volumes)} volumes" if gaps else ""
        total = "" if figures["total"] is None else f" {fmt(figures['total'])}"
        head = (
            f"array counters ({self.driver}): array-seen{total} IOPS (read {fmt(figures['read'])}, "
            f"write {fmt(figures['write'])}){of} vs {host}"
        )
        return "; ".join([head, *gaps, *partial, *clock])

    def to_json(self) -> str:
        return json.dumps(
            {
                "point": self.point,
                "driver": self.driver,
                "window": {"start": self.start.isoformat(), "end": self.end.isoformat()},
                "summary": self.summary_line(),
                "host_iops": self.host_iops,
                "array_iops": self.array_iops(),
                "clock": {"offset_s": self.clock.offset_s, "uncertainty_s": self.clock.uncertainty_s, "said": self.clock.describe()},
                "volumes": [
                    {
                        "volume": v.volume,
                        "status": v.status,
                        "error": v.error,
                        "evidence": v.evidence,
                        "missing": v.coverage.describe() if v.coverage is not None and (v.partial or not v.samples) else [],
                    }
                    for v in self.volumes
                ],
            },
            indent=2,
        )

    def rows(self) -> list[dict[str, Any]]:
        """One row per sample of every volume (empty figures where the array reported none)."""
        return [
            {
                "volume": v.volume,
                "time": s.time.isoformat(),
                "interval_s": s.interval_s,
                "read_iops": s.read_iops,
                "write_iops": s.write_iops,
                "read_latency_us": s.read_latency_us,
                "write_latency_us": s.write_latency_us,
                "note": s.note,
            }
            for v in self.volumes
            for s in v.samples
        ]

    def csv(self) -> str:
        """The samples as CSV; with none at all, one line saying why (no samples, or each call's error)."""
        rows = self.rows()
        if rows:
            return table_csv(rows)
        return "".join(f"# {v.volume}: {v.status}\n" for v in self.volumes)


def plan_volumes(plan: RunPlan) -> list[Volume]:
    """The volumes the plan's jobs reach, each once, in job order (by name: a volume of the array)."""
    seen: dict[str, Volume] = {}
    for job in plan.jobs:
        seen.setdefault(job.target.volume.name, job.target.volume)
    return list(seen.values())


def _utc(epoch_ms: int) -> datetime:
    return datetime.fromtimestamp(epoch_ms / 1000, UTC)


def run_point_counters(array: ArrayDriver, driver: str, plan: RunPlan, result: RunResult) -> ArrayCounters | None:
    """The array's samples of every volume of the plan over the run's measured window; None when the array
    has no METRICS. A call that fails is recorded with its error (it does not raise: evidence, not a verdict)."""
    if Capability.METRICS not in array.capabilities:
        return None
    start, end = _utc(result.start_ms), _utc(result.end_ms)
    volumes = []
    for volume in plan_volumes(plan):
        try:
            samples = array.volume_metrics(volume, start, end)
        except Exception as exc:  # any failure of the call is evidence to show, not a reason to lose the measurement
            call = f"volume_metrics({volume.name}, {start.isoformat()}, {end.isoformat()})"
            volumes.append(VolumeCounters(volume.name, error=f"{call}: {type(exc).__name__}: {exc}"))
            continue
        ordered = tuple(sorted(samples, key=lambda s: s.time))
        volumes.append(VolumeCounters(volume.name, samples=ordered, coverage=sample_coverage(ordered, start, end)))
    reads, writes = result.total(Dir.READ).iops, result.total(Dir.WRITE).iops
    host = {"read": reads, "write": writes, "total": result.total_iops}
    try:
        clock = array.array_clock()
    except Exception as exc:  # evidence: a failed read of the clock is said, and the counters still reported
        clock = not_read(f"array_clock(): {type(exc).__name__}: {exc}")
    return ArrayCounters(point=plan.name, driver=driver, start=start, end=end, volumes=tuple(volumes), host_iops=host, clock=clock)


def no_latency_counters(driver: str) -> str:
    """What the bake-off shows for an array whose driver has no counters (no METRICS): never a blank read as 0."""
    return f"n/a: {driver} has no latency counters"


def stored_latency(driver: str, counters: ArrayCounters | None) -> dict[str, Any]:
    """What the results store keeps of a run point's array counters (schema 5), for the bake-off's array-side
    latency beside the host's: per side ("read", "write") the array's mean latency in us over the plan's
    volumes, each volume's mean weighted by its IOPS (as samples_evidence weights samples), with the volumes it
    comes from. A side is None with `why` when any volume of the plan has no figures (an error, no sample in
    the window: the array-side figure would cover fewer volumes than the host's) or none did I/O on it.
    `counters` None: the driver has no METRICS ({"none": "n/a: <driver> has no latency counters"})."""
    if counters is None:
        return {"driver": driver, "none": no_latency_counters(driver)}
    stored: dict[str, Any] = {"driver": driver, "volumes": len(counters.volumes)}
    gaps = [f"{v.volume}: {v.status}" for v in counters.volumes if v.evidence is None]
    for side in ("read", "write"):
        if gaps:
            stored[side] = {"latency_us": None, "why": "; ".join(gaps)}
            continue
        busy = [(v.volume, e[f"{side}_latency_us_mean"], e[f"{side}_iops_mean"]) for v in counters.volumes
                if (e := v.evidence) is not None and (e[f"{side}_iops_mean"] or 0) > 0]
        unmeasured = [name for name, lat, _ in busy if lat is None]
        if unmeasured:
            stored[side] = {"latency_us": None, "why": f"the array reported {side} I/O but no latency for {', '.join(unmeasured)}"}
            continue
        pairs = [(lat, iops) for _, lat, iops in busy]
        ops = sum(iops for _, iops in pairs)
        if ops <= 0:
            stored[side] = {"latency_us": None, "why": f"the array reported no {side} latency for this window"}
            continue
        stored[side] = {"latency_us": sum(lat * iops for lat, iops in pairs) / ops, "iops": ops}
    return stored
