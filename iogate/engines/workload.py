"""One workload model for every engine: the shape of the I/O, not where it goes.

A RunPlan binds workloads to targets: each JobSpec is one engine job (one VM of a
tile, one thread group of a sweep point) on one Connection.

The fields are typed and engine-neutral: block sizes in bytes or a SizeMix, sizes
and offsets as an Extent (bytes or a share of the target), the rate's arrival
process as a RateProcess, checked data as a Verify. Procedures and catalogs give
sizes as strings ("4k", "4k/50:64k/50", "20%") through parse_block_size and
Extent.parse. How the I/O is issued (fio's ioengine) is the engine's own setting
(engines/fio/jobfile.py FioSettings), not the workload's.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum
from fractions import Fraction
from typing import Any

from iogate.errors import EngineError
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


class Unsupported(EngineError):
    """An engine cannot express a workload's field; the message names the engine, the workload and the field."""


class RateProcess(StrEnum):
    """How a capped rate spaces its I/Os in time (each engine maps it to its own setting).

    POISSON  random arrivals (exponential gaps): fio rate_process=poisson, vdbench's default (exponential)
    LINEAR   evenly spaced arrivals: fio rate_process=linear (fio's default), vdbench distribution=deterministic
    UNIFORM  gaps drawn uniformly around the mean: vdbench distribution=uniform; fio 3.33 has no such process
    """

    POISSON = "poisson"
    LINEAR = "linear"
    UNIFORM = "uniform"


class VerifyAlgorithm(StrEnum):
    """The checksum fio stores in each written block (vdbench's data validation has its own sector stamps)."""

    CRC32C = "crc32c"
    MD5 = "md5"
    SHA256 = "sha256"


@dataclass(frozen=True)
class Verify:
    """Checked data: every written block is read back and compared; a mismatch is an I/O error (no_io_errors).

    backlog: read back every `backlog` writes while the job writes (fio verify_backlog); None checks what
    the job reads (and, in fio, what it wrote once its writes end).
    """

    algorithm: VerifyAlgorithm = VerifyAlgorithm.CRC32C
    backlog: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.algorithm, VerifyAlgorithm):
            raise TypeError(f"verify algorithm {self.algorithm!r}: give a VerifyAlgorithm ({', '.join(VerifyAlgorithm)})")
        if self.backlog is not None and self.backlog < 1:
            raise ValueError(f"verify backlog {self.backlog}: must be >= 1 block (or None)")


class ExtentUnit(StrEnum):
    BYTES = "bytes"
    PERCENT = "percent"  # of the target's size


@dataclass(frozen=True)
class Extent:
    """A size or an offset on a job's target: a byte count, or a whole percentage of the target.

    >>> Extent.parse("224m"), Extent.parse("20%")
    (Extent(value=234881024, unit=<ExtentUnit.BYTES: 'bytes'>), Extent(value=20, unit=<ExtentUnit.PERCENT: 'percent'>))
    """

    value: int
    unit: ExtentUnit = ExtentUnit.BYTES

    def __post_init__(self) -> None:
        if not isinstance(self.value, int) or isinstance(self.value, bool):
            raise TypeError(f"extent value {self.value!r}: give an int (bytes or a percentage); parse strings with Extent.parse")
        if self.value < 0 or (self.unit is ExtentUnit.PERCENT and self.value > 100):
            raise ValueError(f"extent {self}: out of range")

    @classmethod
    def of_bytes(cls, num_bytes: int) -> Extent:
        return cls(num_bytes, ExtentUnit.BYTES)

    @classmethod
    def percent(cls, pct: int) -> Extent:
        return cls(pct, ExtentUnit.PERCENT)

    @classmethod
    def parse(cls, text: str) -> Extent:
        """"20%" -> 20 percent of the target; "224m", "16MiB" or "4096" -> bytes."""
        stripped = text.strip()
        if stripped.endswith("%"):
            number = stripped[:-1].strip()
            if not number.isdigit():
                raise ValueError(f"not a whole percentage: {text!r} (use e.g. 20%)")
            return cls.percent(int(number))
        return cls.of_bytes(parse_size_bytes(stripped))

    @property
    def is_percent(self) -> bool:
        return self.unit is ExtentUnit.PERCENT

    def __str__(self) -> str:
        return f"{self.value}%" if self.is_percent else format_size(self.value)


@dataclass(frozen=True)
class SizeMix:
    """Block sizes each taking a share of the I/Os: ((4096, 50), (65536, 50)) is half 4 KiB, half 64 KiB.

    Sizes are bytes (> 0, each once), shares whole percentages (> 0) adding up to exactly 100.
    """

    parts: tuple[tuple[int, int], ...]

    def __post_init__(self) -> None:
        if not self.parts:
            raise ValueError("block size mix: no sizes")
        sizes = [size for size, _ in self.parts]
        for size, pct in self.parts:
            if not isinstance(size, int) or not isinstance(pct, int) or isinstance(size, bool) or isinstance(pct, bool):
                raise TypeError(f"block size mix {self.parts!r}: sizes and shares are ints (bytes, %)")
            if size <= 0:
                raise ValueError(f"block size mix {self}: size {size} is not a positive number of bytes")
            if pct <= 0:
                raise ValueError(f"block size mix {self}: size {format_size(size)} has share {pct} %, must be > 0")
        if len(set(sizes)) != len(sizes):
            raise ValueError(f"block size mix {self}: a size appears twice")
        total = sum(pct for _, pct in self.parts)
        if total != 100:
            raise ValueError(f"block size mix {self}: shares add up to {total} %, not 100")

    def __str__(self) -> str:
        """The catalogs' spelling, which the report shows: "4k/50:64k/50"."""
        return ":".join(f"{format_size(size)}/{pct}" for size, pct in self.parts)


BlockSize = int | SizeMix  # bytes, or a mix of sizes


def parse_block_size(text: str) -> BlockSize:
    """"4k" -> 4096; "4k/50:64k/50" -> SizeMix(((4096, 50), (65536, 50))), validated.

    The mix is one for reads and writes alike: fio's per-direction form ("4k/50,64k/100") is refused.
    """
    if "/" not in text and ":" not in text:
        return parse_size_bytes(text)
    if "," in text:
        raise ValueError(f"block size mix {text!r}: one mix serves reads and writes (no per-direction ',' form)")
    parts = []
    for item in text.split(":"):
        size, slash, pct = item.partition("/")
        if not slash or not pct.strip().isdigit():
            raise ValueError(f"block size mix {text!r}: entry {item!r} is not SIZE/PERCENT (e.g. 4k/50)")
        parts.append((parse_size_bytes(size), int(pct)))
    return SizeMix(tuple(parts))


def format_block_size(bs: BlockSize) -> str:
    """4096 -> "4k"; a mix -> "4k/50:64k/50" (what the report and results store show)."""
    return str(bs) if isinstance(bs, SizeMix) else format_size(bs)


@dataclass(frozen=True)
class WorkloadSpec:
    """What the I/O looks like, in engine-neutral, typed fields (each engine renders them its own way
    and refuses, with Unsupported, what it cannot express).

    >>> WorkloadSpec("oltp", read_pct=70, random_pct=100, bs=8 << 10, iodepth=4)
    >>> WorkloadSpec("mix", bs=parse_block_size("4k/50:64k/50"), size=Extent.parse("20%"))
    """

    name: str
    read_pct: int = 70
    random_pct: int = 100
    bs: BlockSize = 4096  # bytes, or a SizeMix
    iodepth: int = 1
    numjobs: int = 1
    size: Extent | None = None  # how much of the target the job covers (bytes or a share)
    offset: Extent | None = None  # where on the target it starts
    runtime_s: float = 10
    ramp_s: float = 0
    rate_iops: int | None = None  # total target of one job, split by read_pct (rate_split)
    rate_process: RateProcess = RateProcess.POISSON  # how a rate's I/Os are spaced (only with rate_iops)
    dedupe_pct: int = 0
    compress_pct: int = 0
    verify: Verify | None = None  # checked data: errors fail no_io_errors
    time_based: bool = True
    # runtime_s is only a cap: the run ends when what runs beside it (an event schedule) says so.
    until_stopped: bool = False

    def __post_init__(self) -> None:
        for name in ("read_pct", "random_pct", "dedupe_pct", "compress_pct"):
            value = getattr(self, name)
            if not 0 <= value <= 100:
                raise ValueError(f"workload {self.name}: {name}={value} is not a percentage")
        if self.iodepth < 1 or self.numjobs < 1:
            raise ValueError(f"workload {self.name}: iodepth and numjobs must be >= 1")
        self._check_types()
        if isinstance(self.bs, int) and self.bs <= 0:
            raise ValueError(f"workload {self.name}: bs={self.bs} is not a positive number of bytes")
        if self.size is not None and self.size.value == 0:
            raise ValueError(f"workload {self.name}: size={self.size} covers nothing")
        if self.offset is not None and self.offset.is_percent and self.offset.value >= 100:
            raise ValueError(f"workload {self.name}: offset={self.offset} leaves nothing of the target")
        if self.rate_iops is not None and self.rate_iops < 1:
            raise ValueError(f"workload {self.name}: rate_iops={self.rate_iops} must be >= 1 (or None: uncapped)")

    def _check_types(self) -> None:
        """Strings were this model's old spelling ("4k", "20%", "crc32c"): say how to give them now."""
        hints = {
            "bs": (self.bs, (int, SizeMix), "bytes or parse_block_size('4k/50:64k/50')"),
            "size": (self.size, (Extent, type(None)), "Extent.parse('20%') or Extent.of_bytes(n)"),
            "offset": (self.offset, (Extent, type(None)), "Extent.parse('1m') or Extent.of_bytes(n)"),
            "rate_process": (self.rate_process, (RateProcess,), f"a RateProcess ({', '.join(RateProcess)})"),
            "verify": (self.verify, (Verify, type(None)), "Verify(VerifyAlgorithm.CRC32C, backlog=...)"),
        }
        for name, (value, types, hint) in hints.items():
            if not isinstance(value, types) or isinstance(value, bool):
                raise TypeError(f"workload {self.name}: {name}={value!r}: give {hint}")

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
            "bs": format_block_size(self.bs),
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
