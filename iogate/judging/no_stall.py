"""no_stall: no job went silent while the load ran (no span without a completed I/O).

Whole-run means hide a stall: 10 s at 0 IOPS inside a 60 s run at 125k IOPS
moves the mean by a sixth and the p99 not at all. This criterion reads each
job's own per-interval series (iogate.metrics.grid: every interval the job
should have logged, a missing one at 0 IOPS, clones and directions merged) and
fails on every span of consecutive intervals in which the job completed no
I/O at all, when that span is long enough to have held several of the job's
I/Os at its own rate:

    judged span = max(min_interval, min_ios / the job's mean IOPS over the run)

A job at 1428 IOPS is judged over 2 s (10 I/Os take 7 ms: min_interval
decides), a fixed-rate VM at 2 IOPS over 5 s. min_interval is 2 s by default,
not fio's 1 s log interval: a generator descheduled for a moment misses one
log line of a busy job, and that single empty second is the host's, not the
array's; 10 I/Os make an empty span of a steady job unlikely by chance
(e^-10 for Poisson completions). The detail names host, job and the silent
span in seconds from the measurement's start, and the windows it falls in
(baseline, event, recovery) when the test names them.

Fail closed: a run whose engine logged no per-interval series cannot show
that it never stalled, and fails. A spec may set the span (`min_interval`,
`min_ios`) or switch the check off with a stated reason (`off_because: <why>`); an
off check still gives a verdict whose detail quotes the reason, never silence.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import Field

from iogate.judging.params import Bound, CriterionParams, Evidence, LatencyNs
from iogate.metrics.grid import per_vm
from iogate.metrics.types import Interval, RunResult
from iogate.metrics.windows import Window
from iogate.units import ns_to_ms
from iogate.verdict import Unit, Verdict

NAME = "no_stall"
EVIDENCE: tuple[Evidence, ...] = ("intervals",)  # what a test hands evaluate()
BOUND = Bound(None, floor=False, unit="ms silent (the span is the job's own)", proposed=False)


class Params(CriterionParams):
    min_interval: LatencyNs = Field(2_000_000_000, gt=0)  # the shortest silent span judged ("2s" in a spec)
    min_ios: float = Field(10, gt=0)  # the span must hold this many of the job's I/Os at its mean rate
    off_because: str = ""  # a reason to switch the check off; empty = judged (not `off`: YAML reads that key as false)


@dataclass(frozen=True)
class Stall:
    """One silent span of one job: no I/O completed in intervals (start_ms, end_ms]."""

    host: str
    job: str
    start_ms: int
    end_ms: int
    judged_ms: float  # the shortest span that counts as a stall for this job
    rate_iops: float
    windows: tuple[str, ...] = ()
    between: bool = False  # windows were named and the stall fell in none of them

    @property
    def silent_ms(self) -> int:
        return self.end_ms - self.start_ms

    def sentence(self, run_start_ms: int) -> str:
        where = f" (in the {', '.join(self.windows)} window{'s' if len(self.windows) > 1 else ''})" if self.windows else ""
        if self.between:
            where = " (between the judged windows: during an event's action)"
        return (f"{self.host}/{self.job}: no I/O completed {(self.start_ms - run_start_ms) / 1000:g}-"
                f"{(self.end_ms - run_start_ms) / 1000:g} s after the measurement began ({self.silent_ms / 1000:g} s){where}; "
                f"a stall is >= {self.judged_ms / 1000:.3g} s silent for this job ({self.judged_ms * self.rate_iops / 1000:.0f} I/Os "
                f"at its mean {self.rate_iops:.4g} IOPS)")


def judged_span_ms(rate_iops: float, params: Params) -> float:
    """The shortest silent span that fails for a job at `rate_iops` (a job that did nothing: min_interval)."""
    floor_ms = ns_to_ms(params.min_interval)
    return max(floor_ms, params.min_ios / rate_iops * 1000.0) if rate_iops > 0 else floor_ms


def silent_spans(intervals: Sequence[Interval], interval_ms: int, *, from_ms: int | None = None) -> list[tuple[int, int]]:
    """Maximal runs of consecutive intervals with no completed I/O, as (start_ms, end_ms); with `from_ms` (the
    measured window's start) no span begins before it, and one that ends by then is no span at all.

    A job's grid begins at its phase point nearest the span's start (iogate.metrics.grid), up to half an
    interval after it: a silent run from the grid's first interval is silent from `from_ms` on, since the
    job's first line is its first completion. A job of one fio process may start measuring later than the
    process' first job (each job resets its clock when it sees its own ramp end: a throttled job sees it late),
    while every job's span starts with the first: the seconds before such a job measured read as 0 IOPS. Only
    the measured window is judged, so silence before it never counts (`-0.587-1.413 s` was a job that started
    1.4 s late, not a stall)."""
    spans: list[tuple[int, int]] = []
    start: int | None = None
    previous_end: int | None = None
    for index, (t_ms, iops, _) in enumerate(intervals):
        if iops > 0:
            if start is not None and previous_end is not None:
                spans.append((start, previous_end))
            start = None
        elif start is None:
            start = t_ms - interval_ms
            if index == 0 and from_ms is not None:
                start = min(start, from_ms)
        previous_end = t_ms
    if start is not None and previous_end is not None:
        spans.append((start, previous_end))
    if from_ms is None:
        return spans
    return [(max(start, from_ms), end) for start, end in spans if end > from_ms]


def stalls(run: RunResult, params: Params, windows: Sequence[Window] = ()) -> tuple[list[Stall], int, float]:
    """Every stall of every job, the intervals judged, and the worst silent span as a share of its judged span."""
    interval_ms = run.series.interval_ms
    found: list[Stall] = []
    judged = 0
    worst = 0.0
    for (host, job), intervals in sorted(per_vm(run.series).items()):
        if not intervals:
            continue
        judged += len(intervals)
        rate = sum(iops for _, iops, _ in intervals) / len(intervals)
        span_ms = judged_span_ms(rate, params)
        # A span of whole intervals: an interval is the finest the series sees, so round the judged span up to it.
        needed_ms = math.ceil(span_ms / interval_ms - 1e-9) * interval_ms
        for start, end in silent_spans(intervals, interval_ms, from_ms=run.start_ms):
            worst = max(worst, (end - start) / needed_ms)
            if end - start >= needed_ms:
                names = tuple(w.name for w in windows if start < w.end_ms and end > w.start_ms)
                found.append(Stall(host, job, start, end, span_ms, rate, names, bool(windows) and not names))
    return found, judged, worst


def evaluate(run: RunResult, params: Params, *, windows: Sequence[Window] = ()) -> Verdict:
    """Stalls of every job of `run`; `windows` (baseline, event, recovery ...) name where each fell."""
    if params.off_because:
        return Verdict(NAME, True, float("nan"), float("nan"), Unit.MS, run.name,
                       detail=f"not judged, switched off by the spec: {params.off_because}")
    found, judged, worst = stalls(run, params, windows)
    bound_ms = ns_to_ms(params.min_interval)
    if not judged:
        return Verdict(NAME, False, float("nan"), bound_ms, Unit.MS, run.name,
                       detail=f"no data: run {run.name} logged no per-interval series, so a stall cannot be ruled out")
    rows = tuple({"host": s.host, "job": s.job, "from_s": (s.start_ms - run.start_ms) / 1000, "to_s": (s.end_ms - run.start_ms) / 1000,
                  "silent_s": s.silent_ms / 1000, "judged_over_s": round(s.judged_ms / 1000, 3), "rate_iops": round(s.rate_iops, 1),
                  "windows": ", ".join(s.windows)} for s in found)
    longest = max(found, key=lambda s: s.silent_ms / s.judged_ms, default=None)
    if longest is None:
        detail = (f"{len(per_vm(run.series))} jobs, {judged} intervals: no job silent for its judged span "
                  f"(>= {bound_ms / 1000:g} s, and >= {params.min_ios:g} I/Os at the job's own rate); "
                  f"longest silence {worst:.2f} of it")
        return Verdict(NAME, True, 0.0, bound_ms, Unit.MS, run.name, judged, 0, detail=detail)
    failing = sum(s.silent_ms for s in found) // run.series.interval_ms
    detail = "stalled: " + "; ".join(s.sentence(run.start_ms) for s in found[:10])
    if len(found) > 10:
        detail += f"; and {len(found) - 10} more"
    return Verdict(NAME, False, float(longest.silent_ms), round(longest.judged_ms, 3), Unit.MS, run.name, judged, failing,
                   evidence=rows, detail=detail)
