"""Result records shared by every engine (fio, vdbench) and every criterion.

One `Direction` record per data direction (read, write, trim), never copied
accessors per direction. Units are in the field names: *_ns, *_bytes,
*_bytes_per_s, iops.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum


class Dir(StrEnum):
    READ = "read"
    WRITE = "write"
    TRIM = "trim"


@dataclass(frozen=True)
class LatencyStats:
    """Completion (or total) latency of one direction, in nanoseconds."""

    min_ns: float = 0.0
    max_ns: float = 0.0
    mean_ns: float = 0.0
    stddev_ns: float = 0.0
    samples: int = 0
    # fio's json+ histogram: bin value in ns -> count (see iogate.metrics.histogram).
    bins: Mapping[int, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Direction:
    """Everything measured for one direction of one job (or of a merged set of jobs)."""

    dir: Dir
    ios: int = 0
    io_bytes: int = 0
    runtime_ms: int = 0
    iops: float = 0.0
    bw_bytes_per_s: float = 0.0
    clat: LatencyStats = LatencyStats()
    lat: LatencyStats = LatencyStats()
    short_ios: int = 0
    drop_ios: int = 0

    @property
    def active(self) -> bool:
        return self.ios > 0


@dataclass(frozen=True)
class JobResult:
    """One fio job (one VM of a tile, one thread of a sweep point) on one host."""

    name: str
    host: str
    directions: Mapping[Dir, Direction]
    error: int = 0
    usr_cpu_pct: float = 0.0
    sys_cpu_pct: float = 0.0

    def __getitem__(self, direction: Dir | str) -> Direction:
        return self.directions[Dir(direction)]


@dataclass(frozen=True)
class Sample:
    """One per-second log sample of one job and direction.

    `t_ms` is the interval's end on the Unix epoch clock (fio log_unix_epoch=1),
    the same clock events are recorded on, so windows line up exactly.
    """

    t_ms: int
    job: str
    host: str
    dir: Dir
    iops: float
    clat_mean_ns: float


@dataclass(frozen=True)
class HistSample:
    """One interval's completion-latency histogram (fio log_hist_msec), as bin counts."""

    t_ms: int
    job: str
    host: str
    dir: Dir
    counts: Mapping[int, int]  # fio bin index (0..1855) -> count; zeros omitted


@dataclass(frozen=True)
class Series:
    """Per-interval samples of a run; filtering returns a new Series."""

    samples: tuple[Sample, ...] = ()
    hist: tuple[HistSample, ...] = ()
    interval_ms: int = 1000

    def where(self, *, job: str | None = None, host: str | None = None, dir: Dir | None = None,
              start_ms: int | None = None, end_ms: int | None = None) -> Series:
        """Samples matching all given filters; a time filter keeps intervals ending in (start, end]."""

        def keep(s: Sample | HistSample) -> bool:
            return (
                (job is None or s.job == job)
                and (host is None or s.host == host)
                and (dir is None or s.dir == dir)
                and (start_ms is None or s.t_ms > start_ms)
                and (end_ms is None or s.t_ms <= end_ms)
            )

        return Series(tuple(filter(keep, self.samples)), tuple(filter(keep, self.hist)), self.interval_ms)

    def jobs(self) -> list[str]:
        return sorted({s.job for s in self.samples})

    def totals(self) -> list[tuple[int, float, float]]:
        """(t_ms, total IOPS, IOPS-weighted mean latency ns) per interval over all jobs.

        fio's per-job interval ends differ by a few ms; samples are grouped by the
        interval they fall in, counted from the first sample.
        """
        if not self.samples:
            return []
        origin = min(s.t_ms for s in self.samples)
        groups: dict[int, list[Sample]] = {}
        for sample in self.samples:
            index = round((sample.t_ms - origin) / self.interval_ms)
            groups.setdefault(index, []).append(sample)
        rows = []
        for index in sorted(groups):
            group = groups[index]
            iops = sum(s.iops for s in group)
            latency = sum(s.iops * s.clat_mean_ns for s in group) / iops if iops else 0.0
            rows.append((origin + index * self.interval_ms, iops, latency))
        return rows


@dataclass(frozen=True)
class RunResult:
    """A whole run point: every job on every host, the merged totals and the series."""

    name: str
    jobs: tuple[JobResult, ...]
    series: Series
    start_ms: int  # measurement start (after ramp), epoch ms
    end_ms: int
    artifacts: Mapping[str, str] = field(default_factory=dict)  # label -> path
    cpu_busy_pct: Mapping[str, float] = field(default_factory=dict)  # host -> CPU % during run

    def total(self, direction: Dir | str, jobs: Iterable[str] | None = None) -> Direction:
        """All jobs' (or the named jobs') direction merged: sums, weighted means, summed bins."""
        from iogate.metrics.merge import merge_directions

        wanted = set(jobs) if jobs is not None else None
        picked = [j[direction] for j in self.jobs if wanted is None or j.name in wanted]
        return merge_directions(Dir(direction), picked)

    @property
    def total_iops(self) -> float:
        return sum(self.total(d).iops for d in Dir)

    @property
    def errors(self) -> int:
        return sum(j.error for j in self.jobs)
