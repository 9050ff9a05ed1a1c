"""The expected interval grid of each job: a missing interval is 0 IOPS.

fio writes an IOPS (and clat) log line only for an interval in which some I/O
completed (stat.c: "No entries for interval"), so counting the lines found
would let a stalled VM look busy. Every figure drawn from per-interval logs
therefore goes through a grid of the intervals a job *should* have logged:

* Each job (host, job name, clone, direction) has its own grid: fio stamps
  intervals relative to its own process' start, so two hosts tick up to an
  interval apart. The grid's phase is the median phase of the job's own lines
  (robust to the phase shift fio makes after a stall). Its extent is the job's
  span (`JobSpan`: from the fio json, report time minus job_runtime; or, for a
  Series built by hand, from the job's first line to the series' last): the
  grid starts at the latest time on the job's phase not after the span's start
  nor after its first line's interval began (the report time is late by the
  time fio took to write it; job_runtime is exact), and holds
  floor(job_runtime / interval) intervals. fio's partial last interval is not
  expected, nor its last whole one unless logged (fio writes it only when its
  timer beats the job's end). A time filter (Series.where) then keeps the
  intervals ending in (start, end], their stamps allowed a tenth of an interval
  of lateness (Series.ends_within).
* A line counts for the grid interval it overlaps most (its stamp rounded to
  the nearest grid end). An interval with no line is 0 IOPS with an unknown
  (None) latency, unless the next line's rate covers it (Sample.since_ms: fio's
  helper ticked late, and its hist log shows the I/O went on). A second line in the same interval (after a stall) adds the
  I/Os of the time since the first, so nothing is counted twice.
* Jobs are then merged *by time*, not by a shared index: each job interval
  gives every interval of the reference grid (the earliest job's) its share of
  I/Os in proportion to their overlap (phases within a tenth of an interval
  are timer jitter and merge interval for interval). Two hosts 500 ms apart
  doing 1000 IOPS each total 2000 every second, not 1000 and 3000 in turn.
  Where a job begins or ends, a reference interval holds the part of it the
  job ran: over a whole run, those two hosts read 1500 in the first second
  (b had not begun). A series cut by a time filter (Series.where, a judged
  window, and its resampling) is different: the filter left out part of
  the I/O of a job whose grid begins or ends inside a reference interval,
  so such an interval at the merge's head or tail (a ragged end) is left
  out, not read as a drop.

>>> grids = job_grids(series)            # one JobGrid per (host, job, clone, direction)
>>> merged_totals(series)                # [(t_ms, IOPS, latency ns | None), ...]
"""

from __future__ import annotations

import math
from array import array
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from statistics import median_low
from typing import overload

from iogate.metrics.types import JITTER_FRACTION, Dir, Interval, JobSpan, Sample, Series


class GridIntervals(Sequence[Interval]):
    """A job's intervals on its grid (consecutive ends first_ms, first_ms + interval_ms, ...), held as two
    arrays of doubles (IOPS; latency, NaN for unknown): 16 bytes an interval instead of a tuple's ~150,
    for an hour of 1 s intervals of 100 hosts. Reads as a sequence of Interval tuples, the same floats."""

    __slots__ = ("_first_ms", "_interval_ms", "_iops", "_latency")

    def __init__(self, first_ms: int, interval_ms: int, iops: Iterable[float], latency: Iterable[float | None]) -> None:
        self._first_ms, self._interval_ms = first_ms, interval_ms
        self._iops = array("d", iops)
        self._latency = array("d", (math.nan if value is None else value for value in latency))
        if len(self._iops) != len(self._latency):
            raise ValueError(f"{len(self._iops)} IOPS for {len(self._latency)} latencies")

    def __len__(self) -> int:
        return len(self._iops)

    def _at(self, i: int) -> Interval:
        latency = self._latency[i]
        return (self._first_ms + i * self._interval_ms, self._iops[i], None if latency != latency else latency)

    @overload
    def __getitem__(self, index: int) -> Interval: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[Interval, ...]: ...
    def __getitem__(self, index: int | slice) -> Interval | tuple[Interval, ...]:
        if isinstance(index, slice):
            return tuple(self._at(i) for i in range(*index.indices(len(self))))
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError("grid interval out of range")
        return self._at(index)

    def __iter__(self) -> Iterator[Interval]:
        first, step = self._first_ms, self._interval_ms
        for i, (iops, latency) in enumerate(zip(self._iops, self._latency, strict=True)):
            yield first + i * step, iops, None if latency != latency else latency

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"GridIntervals({list(self)!r})"


@dataclass(frozen=True)
class JobGrid:
    """Every expected interval of one job, clone and direction, in time order (missing ones at 0 IOPS)."""

    host: str
    job: str
    clone: int
    dir: Dir
    origin_ms: int  # the grid's phase: interval ends are origin_ms + n x interval
    intervals: Sequence[Interval]  # GridIntervals from job_grids
    logged: bool = True  # False: the job logged no line at all (zeros; its direction is unknown, READ stands in)
    head_cut: bool = False  # a time filter left out intervals the job ran before its first one here
    tail_cut: bool = False  # ... or after its last one

    @property
    def vm(self) -> str:
        return f"{self.host}/{self.job}"


def _phase_ms(lines: Sequence[Sample], interval_ms: int) -> int:
    """A time the job's lines tick on: the median of their stamps' residues, taken around the first
    line's residue so a cluster of stamps is never split at the fold."""
    reference = lines[0].t_ms
    half = interval_ms // 2
    return reference + median_low(((line.t_ms - reference + half) % interval_ms) - half for line in lines)


def _start_ms(lines: Sequence[Sample], span: JobSpan, interval_ms: int) -> int:
    """Where the job's grid begins: the latest time on its phase at most half an interval after the span's
    start, nor after its first line's interval began (the json start is late by the time fio took to write
    its report). So the first expected interval is the one mostly inside the span: fio stamps a job's first
    line a whole interval after its start, but the lines after it tick on the helper thread's phase (up to
    ~0.2 s later under load: first line at +1.000 s, the next at +2.155, then +3.183 ...); a grid reaching
    back to the phase point before the start expected an interval the job ran only a fifth of, read as
    0 IOPS (every tile VM 12-20 % short in its first 5 s interval). A stall in the first interval
    still leaves that interval without a line: the grid still expects it."""
    if not lines:
        return span.start_ms
    phase = _phase_ms(lines, interval_ms)
    bound = min(span.start_ms, lines[0].t_ms - interval_ms) + interval_ms // 2
    return bound - (bound - phase) % interval_ms


def _grid(key: tuple[str, str, int, Dir], lines: Sequence[Sample], span: JobSpan, series: Series) -> JobGrid:
    host, job, clone, direction = key
    interval_ms = series.interval_ms
    origin = _start_ms(lines, span, interval_ms)
    # The span's length is exact (fio's job_runtime); fio's partial last interval is not expected.
    last = math.floor((span.end_ms - span.start_ms) / interval_ms + JITTER_FRACTION)
    if not lines or math.floor((lines[-1].t_ms - origin) / interval_ms + 0.5) < last:
        # fio logs the last whole interval only if its timer ticks before the job ends (a race a few
        # ms either way): an unlogged last interval proves nothing and is not expected.
        last -= 1
    weight: dict[int, float] = defaultdict(float)  # interval number -> IOPS
    lat_sum: dict[int, float] = defaultdict(float)
    lat_weight: dict[int, float] = defaultdict(float)

    def credit(number: int, iops: float, clat_mean_ns: float | None) -> None:
        weight[number] += iops
        if clat_mean_ns is not None and iops > 0:
            lat_sum[number] += iops * clat_mean_ns
            lat_weight[number] += iops

    previous: tuple[int, int] | None = None  # (number, t_ms) of the line before
    for line in lines:
        number = math.floor((line.t_ms - origin) / interval_ms + 0.5)
        if line.since_ms is not None and previous is not None:
            # fio's helper ticked late: this line's rate covers the intervals since the line before
            # (parse.line_spans proved I/O there), which are not a stall.
            for gap in range(previous[0] + 1, number):
                if 1 <= gap <= last and origin + gap * interval_ms - interval_ms // 2 >= line.since_ms:
                    credit(gap, line.iops, line.clat_mean_ns)
        # A second line in one interval (fio's partial interval at exit) counts for the time since the first.
        shared = previous is not None and previous[0] == number
        covered = min(interval_ms, max(line.t_ms - previous[1], 0)) if shared and previous else interval_ms
        previous = (number, line.t_ms)
        if not 1 <= number <= last:
            continue  # outside the job's measured span (ramp, or past its end)
        credit(number, line.iops * covered / interval_ms, line.clat_mean_ns)
    low, high = series.bounds_ms if series.bounds_ms else (None, None)
    # The filter keeps a run of consecutive intervals (ends within (low, high]).
    numbers = [n for n in range(1, last + 1) if series.ends_within(origin + n * interval_ms, low, high)]
    intervals = GridIntervals(origin + (numbers[0] if numbers else 1) * interval_ms, interval_ms,
                              [weight.get(n, 0.0) for n in numbers],
                              [lat_sum[n] / lat_weight[n] if lat_weight.get(n) else None for n in numbers])
    return JobGrid(host, job, clone, direction, origin, intervals, bool(lines),
                   head_cut=span.head_cut or (bool(numbers) and numbers[0] > 1),
                   tail_cut=span.tail_cut or (bool(numbers) and numbers[-1] < last))


def job_grids(series: Series) -> list[JobGrid]:
    """One grid per (host, job, clone, direction) that logged a line, and one of zeros (logged=False)
    per job with a span that logged nothing at all: a VM silent for the whole run is not absent."""
    interval_ms = series.interval_ms
    spans: dict[tuple[str, str], JobSpan] = {}
    for span in series.effective_spans():
        known = spans.get((span.host, span.job))
        spans[(span.host, span.job)] = span if known is None else JobSpan(
            span.host, span.job, min(known.start_ms, span.start_ms), max(known.end_ms, span.end_ms),
            known.head_cut or span.head_cut, known.tail_cut or span.tail_cut)
    groups: dict[tuple[str, str, int, Dir], list[Sample]] = defaultdict(list)
    for sample in series.samples:
        groups[(sample.host, sample.job, sample.clone, sample.dir)].append(sample)
    grids = []
    for key, lines in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2], kv[0][3].value)):
        lines.sort(key=lambda s: s.t_ms)
        span = spans.get((key[0], key[1])) or JobSpan(key[0], key[1], lines[0].t_ms - interval_ms, lines[-1].t_ms)
        grids.append(_grid(key, lines, span, series))
    for (host, job), span in sorted(spans.items()):
        if not any(g.host == host and g.job == job for g in grids):
            grids.append(_grid((host, job, 0, Dir.READ), [], span, series))
    return grids


def merge_by_time(grids: Iterable[JobGrid], interval_ms: int, *, cut: bool = False) -> list[Interval]:
    """Concurrent grids summed onto the earliest grid's phase, each interval by overlap (module docstring).

    A phase within a tenth of an interval of the reference is fio's timer
    jitter (stamps a few ms late), not another clock: such a grid is merged
    interval for interval. `cut`: the grids come from a series cut by a time
    filter, whose ragged ends are left out.
    """
    grids = [g for g in grids if g.intervals]
    if not grids:
        return []
    reference = min(grids, key=lambda g: g.intervals[0][0])
    half, slack = interval_ms // 2, interval_ms * JITTER_FRACTION

    def shift(grid: JobGrid) -> int:
        delta = ((grid.origin_ms - reference.origin_ms + half) % interval_ms) - half
        return -delta if abs(delta) <= slack else 0

    shifts = {id(g): shift(g) for g in grids}
    begin = min(g.intervals[0][0] + shifts[id(g)] for g in grids) - interval_ms
    end = max(g.intervals[-1][0] + shifts[id(g)] for g in grids)
    first = math.ceil((begin + interval_ms - reference.origin_ms) / interval_ms)
    last = math.floor((end - reference.origin_ms) / interval_ms)
    if cut:
        edges = [edge for g in grids for edge in (g.intervals[0][0] + shifts[id(g)] - interval_ms, g.intervals[-1][0] + shifts[id(g)])]

        def ragged(number: int) -> bool:
            ref_end = reference.origin_ms + number * interval_ms
            return any(ref_end - interval_ms < edge < ref_end for edge in edges)

        while first <= last and ragged(first):
            first += 1
        while last >= first and ragged(last):
            last -= 1
        # A grid the filter cut holds nothing of the reference intervals beyond its cut end, although the job
        # ran there: those intervals are ragged too, even where its cut end meets a reference end (a grid merged
        # interval for interval, its phase within the jitter slack, can lose to the bound the interval that the
        # reference grid keeps: 20 and 110 ms late, a bound at +106 ms read the last second half full).
        for grid in grids:
            if grid.tail_cut:
                last = min(last, math.floor((grid.intervals[-1][0] + shifts[id(grid)] - reference.origin_ms) / interval_ms))
            if grid.head_cut:
                began = grid.intervals[0][0] + shifts[id(grid)] - interval_ms
                first = max(first, math.ceil((began - reference.origin_ms) / interval_ms) + 1)
    iops: dict[int, float] = defaultdict(float)
    lat_sum: dict[int, float] = defaultdict(float)
    lat_weight: dict[int, float] = defaultdict(float)
    for grid in grids:
        for stamp_ms, value, latency in grid.intervals:
            t_ms = stamp_ms + shifts[id(grid)]
            high = math.ceil((t_ms - reference.origin_ms) / interval_ms)
            for number in (high - 1, high):
                ref_end = reference.origin_ms + number * interval_ms
                overlap = min(t_ms, ref_end) - max(t_ms - interval_ms, ref_end - interval_ms)
                if overlap <= 0:
                    continue
                share = value * overlap / interval_ms
                iops[number] += share
                if latency is not None and share > 0:
                    lat_sum[number] += share * latency
                    lat_weight[number] += share
    return [
        (reference.origin_ms + n * interval_ms, iops.get(n, 0.0), lat_sum[n] / lat_weight[n] if lat_weight.get(n) else None)
        for n in range(first, last + 1)
    ]


def merged_totals(series: Series) -> list[Interval]:
    """Every job's grid merged by time: the run's per-interval totals."""
    return merge_by_time(job_grids(series), series.interval_ms, cut=series.bounds_ms is not None)


def per_vm(series: Series) -> dict[tuple[str, str], list[Interval]]:
    """(host, job) -> its clones and directions merged by time on its own grid; a job with a span
    but no line at all is 0 IOPS in every interval of its span."""
    by_vm: dict[tuple[str, str], list[JobGrid]] = defaultdict(list)
    for grid in job_grids(series):
        by_vm[(grid.host, grid.job)].append(grid)
    return {vm: merge_by_time(grids, series.interval_ms, cut=series.bounds_ms is not None) for vm, grids in by_vm.items()}
