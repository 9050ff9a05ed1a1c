"""Result records shared by every engine (fio, vdbench) and every criterion.

One `Direction` record per data direction (read, write, trim), never copied
accessors per direction. Units are in the field names: *_ns, *_bytes,
*_bytes_per_s, iops.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from iogate.metrics.latency import LatencyHistogram

# fio stamps an interval's log line when its timer thread gets to it: a few ms after the interval
# ended, and each clone of a process on its own (0-4 ms apart on an idle machine, more under load).
# Up to this fraction of an interval late, a stamp still belongs to the interval it closes.
JITTER_FRACTION = 0.1
# A live interval feed that sees only the run's total (vdbench's flatfile while it runs) names its job so:
# whole-run figures (steady state) read it; per-job checks (a stall, a VM's target) never do.
ALL_JOBS = "*"


class Dir(StrEnum):
    READ = "read"
    WRITE = "write"
    TRIM = "trim"


@dataclass(frozen=True)
class LatencyStats:
    """Completion (or total) latency of one direction, in nanoseconds.

    `histogram` carries its own bucket scheme (iogate.metrics.latency): fio's
    json+ bins (FIO_BINS) or vdbench's buckets; None when the engine gave none.
    Its counts need not equal `samples`: vdbench's histogram counts the warmup
    too (its `covers` says so).
    """

    min_ns: float = 0.0
    max_ns: float = 0.0
    mean_ns: float = 0.0
    stddev_ns: float = 0.0
    samples: int = 0
    histogram: LatencyHistogram | None = None

    @property
    def bins(self) -> Mapping[int, int]:
        """fio's json+ view (bin midpoint ns -> count) for fio-only callers; {} without a histogram.

        A histogram of another scheme raises HistogramSchemeMismatch (a NoData): it has no fio bins."""
        return {} if self.histogram is None else self.histogram.to_fio_json_bins()


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
class JobTarget:
    """Where a job's I/O went on its host: the path the engine opened (a block device, or a file in
    an NFS mount) and the array's volume behind it (None when the lab's target is not a volume)."""

    path: str
    volume: str | None = None

    def describe(self) -> str:
        """`/dev/loop3 (volume v1)`, as messages name a target."""
        return f"{self.path} (volume {self.volume})" if self.volume else self.path


@dataclass(frozen=True)
class JobResult:
    """One fio job (one VM of a tile, one thread of a sweep point) on one host.

    `target` is set by the engine from the plan's job (engines/base.py `with_targets`); None only
    for a record built without a plan (a parser's raw output, a test's hand-made job)."""

    name: str
    host: str
    directions: Mapping[Dir, Direction]
    error: int = 0
    usr_cpu_pct: float = 0.0
    sys_cpu_pct: float = 0.0
    target: JobTarget | None = None

    def __getitem__(self, direction: Dir | str) -> Direction:
        return self.directions[Dir(direction)]


@dataclass(frozen=True, slots=True)  # slots: a run holds one per second, job and direction
class Sample:
    """One per-second log line of one job, clone and direction.

    `t_ms` is the interval's end on the Unix epoch clock (fio log_unix_epoch=1),
    the same clock events are recorded on, so windows line up exactly.
    `clat_mean_ns` is None when no clat log line could be paired with this
    interval: an unknown latency is never a 0 ns one. `clone` is fio's log file
    number (numjobs clones of a job each tick on their own). `since_ms`: where
    the line's rate begins when that is more than an interval before `t_ms`
    (fio's helper thread ticked late, proven by the hist log:
    iogate.engines.fio.parse.line_spans); None: one interval.
    """

    t_ms: int
    job: str
    host: str
    dir: Dir
    iops: float
    clat_mean_ns: float | None
    clone: int = 0
    since_ms: int | None = None


@dataclass(frozen=True, slots=True)  # slots: a run holds one per second, job and direction
class JobSpan:
    """The measured phase of one job (every clone) on the epoch clock: the span its grid covers.

    From the fio json and logs (iogate.engines.fio.parse.measured_start_ms): start =
    report timestamp minus job_runtime, an upper bound of the true start (fio writes
    its report after the jobs end: 1 s later in a TCG guest), or earlier where the
    process' first log line shows it; end - start = job_runtime, exact. The grid
    finds the true start on the phase of the job's own log lines (see iogate.metrics.grid).
    """

    host: str
    job: str
    start_ms: int
    end_ms: int
    # A time filter left out intervals the job ran before (head) / after (tail) this span: kept known through
    # resampling, so a merge never reads the other jobs' intervals there as the whole run's (grid.merge_by_time).
    head_cut: bool = False
    tail_cut: bool = False


@dataclass(frozen=True, slots=True)  # slots: a run holds one per second, job and direction
class HistSample:
    """One interval's completion-latency histogram (fio log_hist_msec), as bin counts."""

    t_ms: int
    job: str
    host: str
    dir: Dir
    counts: Mapping[int, int]  # fio bin index (0..1855) -> count; zeros omitted (BinCounts from the parser)


# One interval of a grid: (end on the epoch clock in ms, IOPS, IOPS-weighted mean clat ns or None if unknown).
Interval = tuple[int, float, float | None]


@dataclass(frozen=True)
class Series:
    """Per-interval log lines of a run and the span each job ran; filtering returns a new Series.

    Every figure drawn from it goes through the expected interval grid of each
    job (iogate.metrics.grid): an interval without a log line is 0 IOPS (fio
    writes no line for an interval in which nothing completed). Without
    `spans`, every job is taken to span the whole series.
    """

    samples: tuple[Sample, ...] = ()
    hist: tuple[HistSample, ...] = ()
    interval_ms: int = 1000
    spans: tuple[JobSpan, ...] = ()
    bounds_ms: tuple[int, int] | None = None  # a time filter: grid intervals ending in (low, high] count

    def ends_within(self, stamp_ms: int, low_ms: int | None, high_ms: int | None) -> bool:
        """Whether the interval stamped `stamp_ms` ended in (low, high]. Stamps are late by up to
        JITTER_FRACTION of an interval, so a bound counts that much later: otherwise a bound placed on
        one clone's stamp (a window from the measured start) splits the clones of one second."""
        late_ms = round(self.interval_ms * JITTER_FRACTION)
        return (low_ms is None or stamp_ms > low_ms + late_ms) and (high_ms is None or stamp_ms <= high_ms + late_ms)

    def effective_spans(self) -> tuple[JobSpan, ...]:
        """The given spans, else one per (host, job): from its first line's interval to the series' last line."""
        if self.spans or not self.samples:
            return self.spans
        end = max(s.t_ms for s in self.samples)
        first: dict[tuple[str, str], int] = {}
        for s in self.samples:
            first[(s.host, s.job)] = min(first.get((s.host, s.job), s.t_ms), s.t_ms)
        return tuple(JobSpan(h, j, t - self.interval_ms, end) for (h, j), t in sorted(first.items()))

    def where(self, *, job: str | None = None, host: str | None = None, dir: Dir | None = None,
              start_ms: int | None = None, end_ms: int | None = None) -> Series:
        """Lines matching all given filters; a time filter keeps intervals ending in (start, end]
        (ends_within) of every job's expected grid (Series.bounds_ms) and the histograms stamped in it.
        IOPS lines are kept half an interval either side: a line counts for the grid interval whose end
        is nearest its stamp, and fio's lines tick up to ~0.2 s off their job's grid (a job's last line
        at 20.188 s belongs to the interval ending at 20.183 s); cutting lines by their own stamps
        left an interval inside the window without its line, read as 0 IOPS."""
        half = self.interval_ms // 2
        line_low = None if start_ms is None else start_ms - half
        line_high = None if end_ms is None else end_ms + half

        def matches(s: Sample | HistSample) -> bool:
            return (job is None or s.job == job) and (host is None or s.host == host) and (dir is None or s.dir == dir)

        def keep_line(s: Sample) -> bool:
            return matches(s) and self.ends_within(s.t_ms, line_low, line_high)

        def keep_hist(s: HistSample) -> bool:
            return matches(s) and self.ends_within(s.t_ms, start_ms, end_ms)

        spans = tuple(span for span in self.effective_spans()
                      if (job is None or span.job == job) and (host is None or span.host == host))
        low, high = self.bounds_ms or (None, None)
        if start_ms is not None:
            low = start_ms if low is None else max(low, start_ms)
        if end_ms is not None:
            high = end_ms if high is None else min(high, end_ms)
        bounds = None if low is None and high is None else (
            low if low is not None else -(2**62), high if high is not None else 2**62)
        return Series(tuple(filter(keep_line, self.samples)), tuple(filter(keep_hist, self.hist)), self.interval_ms, spans, bounds)

    def jobs(self) -> list[str]:
        return sorted({s.job for s in self.samples} | {s.job for s in self.spans})

    def totals(self) -> list[Interval]:
        """(t_ms, total IOPS, IOPS-weighted mean latency ns or None) per interval over all jobs.

        Each job's lines are placed on its own expected grid (missing = 0 IOPS),
        then merged by time onto the grid of the earliest job: a job ticking half
        an interval later gives half its I/Os of an interval to each of two.
        """
        from iogate.metrics.grid import merged_totals

        return merged_totals(self)


@dataclass(frozen=True)
class RunStop:
    """Why and when a run point ended before its planned duration (iogate/judging/live.py), or that it ran it.

    kind: "full" (ran its planned time), "fail_fast" (a check could no longer pass), "steady" (the
    steady-state rule held after min_s), "never_steady" (ran to max_s without reaching steady state).
    at_s/planned_s: measured seconds judged (whole intervals) and planned.
    """

    kind: str
    at_s: float
    planned_s: float
    detail: str = ""

    @property
    def early(self) -> bool:
        return self.kind in ("fail_fast", "steady")

    def sentence(self) -> str:
        if self.kind == "fail_fast":
            return f"stopped at {self.at_s:g} s of {self.planned_s:g} s: the verdict could no longer pass ({self.detail})"
        if self.kind == "steady":
            return f"stopped at {self.at_s:g} s of {self.planned_s:g} s: {self.detail}"
        if self.kind == "never_steady":
            return f"ran {self.at_s:g} s of {self.planned_s:g} s and never reached steady state ({self.detail})"
        return f"ran its planned {self.planned_s:g} s"


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
    stop: RunStop | None = None  # set when a live judge watched the point (iogate/judging/live.py)

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
    def judged_end_ms(self) -> int:
        """Where what is judged per interval ends: the run's last interval is left out. fio logs it when a job
        exits, over whatever part of the interval the job still ran, so a rate-limited job looks short of its
        target there although nothing was wrong (every VM of an emulated dedupe run at 75-80 % of its target
        in that one second, its recovery window failed on it)."""
        return self.end_ms - self.series.interval_ms

    @property
    def errors(self) -> int:
        return sum(j.error for j in self.jobs)
