"""One workload model for every engine: the shape of the I/O, not where it goes.

A RunPlan binds workloads to targets: each JobSpec is one fio job (one VM of a
tile, one thread group of a sweep point) on one Connection.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

from iogate.hosts.connectors.base import Connection
from iogate.units import format_size, parse_size_bytes


def rate_split(total_iops: float, read_pct: int, *, verify_reads: bool = False) -> str:
    """fio's rate_iops=READS,WRITES for a job's total target: the one split every workload uses.

    fio caps reads and writes separately. A single value caps *each* direction
    at it (double the target for a mix), and 0 means "no cap": that direction
    runs free. So a mix always spells out both caps and each direction the mix
    has gets at least 1: 70 % of 1 IOPS is "1,1" (the job may do 2 IOPS; it can
    never run uncapped), 95 % of 8 is "7,1". The read share is rounded half to
    even, exactly (no float error at .5). A pure read or write job caps only its
    direction ("10," / ",10"), except a write job whose verify reads back what
    it wrote (verify_reads): fio 3.33 dies of SIGFPE (seen with libaio, poisson) when verify reads run under
    a write-only rate, so both directions get the cap ("10,10").
    """
    if not 0 <= read_pct <= 100:
        raise ValueError(f"rate split: read_pct={read_pct} is not a percentage")
    total = max(1, round(total_iops))
    if read_pct == 100:
        return f"{total},"
    if read_pct == 0:
        return f"{total},{total}" if verify_reads else f",{total}"
    reads = min(max(1, round(Fraction(total * read_pct, 100))), max(1, total - 1))
    writes = max(1, total - reads)
    return f"{reads},{writes}"


@dataclass(frozen=True)
class WorkloadSpec:
    """What the I/O looks like.

    >>> WorkloadSpec("oltp", read_pct=70, random_pct=100, bs="8k", iodepth=4)
    """

    name: str
    read_pct: int = 70
    random_pct: int = 100
    bs: str = "4k"
    bssplit: str | None = None  # fio syntax, e.g. "4k/50:64k/50"; overrides bs
    iodepth: int = 1
    numjobs: int = 1
    size: str | None = None  # bytes ("256m") or share of the target ("20%")
    offset: str | None = None
    runtime_s: float = 10
    ramp_s: float = 0
    rate_iops: int | None = None  # total target of one job, split by read_pct (rate_split)
    dedupe_pct: int = 0
    compress_pct: int = 0
    verify: str | None = None  # e.g. "crc32c": checked data, errors fail no_io_errors
    ioengine: str = "libaio"
    time_based: bool = True
    # runtime_s is only a cap: the run ends when what runs beside it (an event schedule) says so.
    until_stopped: bool = False
    extra: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in ("read_pct", "random_pct", "dedupe_pct", "compress_pct"):
            value = getattr(self, name)
            if not 0 <= value <= 100:
                raise ValueError(f"workload {self.name}: {name}={value} is not a percentage")
        if self.iodepth < 1 or self.numjobs < 1:
            raise ValueError(f"workload {self.name}: iodepth and numjobs must be >= 1")
        parse_size_bytes(self.bs)

    @property
    def bs_bytes(self) -> int:
        return parse_size_bytes(self.bs)

    @property
    def writes(self) -> bool:
        return self.read_pct < 100

    def with_(self, **changes: Any) -> WorkloadSpec:
        return replace(self, **changes)

    def params(self) -> dict[str, Any]:
        """Parameters as the report and results store show them."""
        return {
            "rw": f"rd{self.read_pct}",
            "random_pct": self.random_pct,
            "bs": self.bssplit or format_size(self.bs_bytes),
            "iodepth": self.iodepth,
            "numjobs": self.numjobs,
            **({"runtime_cap_s": self.runtime_s} if self.until_stopped else {"runtime_s": self.runtime_s}),
            "ramp_s": self.ramp_s,
            **({"rate_iops": self.rate_iops} if self.rate_iops else {}),
        }


@dataclass(frozen=True)
class JobSpec:
    """One job: a workload on one connection (optionally a region of it)."""

    name: str
    workload: WorkloadSpec
    target: Connection
    # Target IOPS of this job when it stands for a VM (tiles); None = as fast as it goes.
    target_iops: float | None = None


@dataclass(frozen=True)
class RunPlan:
    """Everything that runs at once as one measured run point."""

    name: str
    jobs: tuple[JobSpec, ...]

    def __post_init__(self) -> None:
        names = [job.name for job in self.jobs]
        if len(set(names)) != len(names):
            raise ValueError(f"run point {self.name}: job names must be unique: {names}")
        if not self.jobs:
            raise ValueError(f"run point {self.name}: no jobs")

    @property
    def hosts(self) -> list[str]:
        return sorted({job.target.host for job in self.jobs})

    @property
    def duration_s(self) -> float:
        return max(job.workload.runtime_s + job.workload.ramp_s for job in self.jobs)


def plan_params(plan: RunPlan) -> dict[str, object]:
    """What identifies a run point across runs (the results store's parameters): protocols,
    hosts, job count and the first job's workload shape."""
    first = plan.jobs[0]
    return {
        "protocols": sorted({job.target.protocol for job in plan.jobs}),
        "hosts": plan.hosts,
        "jobs": len(plan.jobs),
        **first.workload.params(),
    }
