"""Named time windows of a run and the totals inside each one.

A window is a span of the epoch clock (ms) that events and fio logs share
(log_unix_epoch=1). An interval of the expected grid (iogate.metrics.grid:
every job's intervals, a missing one at 0 IOPS, merged by time) belongs to a
window when the whole interval, [t_ms - interval, t_ms], lies inside it, give
or take a tenth of an interval: fio stamps each job's interval end a few ms
late, and an interval that straddles an event's start must not dilute either
side. Statistics over an empty window raise NoData (no data is never a pass).

>>> baseline, event, recovery = event_windows(run.start_ms, run.end_ms, snap.start_ms, snap.end_ms)
>>> window_stats(run.series, event).latency_mean_ns
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from iogate.metrics.bincounts import BinCounts
from iogate.metrics.grid import JobGrid, job_grids, merge_by_time
from iogate.metrics.histogram import PLAT_NR, Histogram
from iogate.metrics.nodata import NoData
from iogate.metrics.types import Dir, HistSample, Interval, Series

# Fraction of an interval a sample's stamp may stray past a window edge (fio timer jitter).
EDGE_SLACK = 0.1


@dataclass(frozen=True)
class Window:
    """A named span of the run: intervals ending in (start_ms, end_ms] count, if they fit."""

    name: str
    start_ms: int
    end_ms: int

    def __post_init__(self) -> None:
        if self.end_ms < self.start_ms:
            raise ValueError(f"window {self.name}: end {self.end_ms} ms is before start {self.start_ms} ms")

    @property
    def duration_ms(self) -> int:
        return self.end_ms - self.start_ms

    def holds(self, t_ms: int, interval_ms: int) -> bool:
        """Does the interval ending at t_ms lie inside this window (within EDGE_SLACK)?"""
        slack = interval_ms * EDGE_SLACK
        return t_ms - interval_ms >= self.start_ms - slack and t_ms <= self.end_ms + slack


def measure_window(start_ms: int, end_ms: int) -> Window:
    """The whole measured part of a run (after ramp): RunResult.start_ms .. end_ms."""
    return Window("measure", start_ms, end_ms)


def event_windows(measure_start_ms: int, measure_end_ms: int, event_start_ms: int, event_end_ms: int,
                  *, guard_ms: int = 0) -> tuple[Window, Window, Window]:
    """Baseline (before the event), event, recovery (after it) from recorded timestamps.

    The measure span already excludes the ramp. `guard_ms` leaves a gap on both
    sides of the event's edges so the transition (an array action taking hold)
    is counted in no window. A window that would be empty (the event started at
    once, or lasted until the end) comes back with zero length and no intervals.
    """
    if not measure_start_ms <= event_start_ms <= event_end_ms:
        raise ValueError(
            f"event [{event_start_ms}, {event_end_ms}] ms does not start inside the measured run "
            f"[{measure_start_ms}, {measure_end_ms}] ms"
        )
    event_end_ms = min(event_end_ms, measure_end_ms)

    def span(name: str, start: int, end: int) -> Window:
        return Window(name, start, max(start, end))

    return (
        span("baseline", measure_start_ms, event_start_ms - guard_ms),
        span("event", event_start_ms + guard_ms, event_end_ms - guard_ms),
        span("recovery", event_end_ms + guard_ms, measure_end_ms),
    )


def _merged_histogram(records: Iterable[HistSample]) -> Histogram:
    """The interval histograms summed bin by bin (exact integers), one dense accumulator for them all."""
    dense = [0] * PLAT_NR
    for record in records:
        BinCounts.from_mapping(record.counts, PLAT_NR).sum_into(dense)  # a BinCounts is only range-checked
    return Histogram({index: count for index, count in enumerate(dense) if count})


def _in_window(records: Iterable[HistSample], window: Window, interval_ms: int) -> list[HistSample]:
    return [r for r in records if window.holds(r.t_ms, interval_ms)]


@dataclass(frozen=True)
class DirectionWindow:
    """One direction (or all directions together) inside a window, on the expected interval grid.

    `intervals` are every job's grid merged by time (iogate.metrics.grid), an
    interval without a log line counted as 0 IOPS; `vms` holds each VM's (host/job)
    IOPS per interval of its own grid, for naming stalls. Statistics over nothing
    raise NoData naming `label` ("window event (write)"): never a 0 that passes.
    """

    intervals: tuple[Interval, ...]  # (t_ms, IOPS, IOPS-weighted mean latency ns or None when unknown)
    histogram: Histogram = field(default_factory=Histogram)
    label: str = "window"
    vms: Mapping[str, Sequence[float]] = field(default_factory=dict)

    @property
    def iops_per_interval(self) -> list[float]:
        return [iops for _, iops, _ in self.intervals]

    @property
    def iops(self) -> float:
        """Mean IOPS over the window's expected intervals (silent ones count as 0)."""
        if not self.intervals:
            raise NoData(f"no intervals in {self.label}")
        return sum(self.iops_per_interval) / len(self.intervals)

    @property
    def latency_mean_ns(self) -> float:
        """IOPS-weighted mean completion latency over the intervals whose latency is known (each IO once)."""
        paired = [(iops, lat) for _, iops, lat in self.intervals if lat is not None and iops > 0]
        ios = sum(iops for iops, _ in paired)
        if not ios:
            raise NoData(f"no latency samples in {self.label}")
        return sum(iops * lat for iops, lat in paired) / ios

    def percentile_ns(self, pct: float) -> float:
        """pXX from the interval histograms (fio clat_hist logs) merged over the window."""
        if not self.histogram.total:
            raise NoData(f"no latency samples in {self.label} (no clat_hist log lines)")
        return self.histogram.percentile_ns(pct)

    def stalls(self, where: str = "window") -> list[str]:
        """"host/job: 0 IOPS in 6 of 10 intervals of the event window" for every VM that stalled here."""
        return [f"{vm}: 0 IOPS in {sum(1 for v in values if v <= 0)} of {len(values)} intervals of the {where}"
                for vm, values in sorted(self.vms.items()) if any(v <= 0 for v in values)]


@dataclass(frozen=True)
class WindowStats:
    """Totals of a window over all jobs and hosts: per direction and all directions together."""

    window: Window
    total: DirectionWindow
    directions: dict[Dir, DirectionWindow]
    block_size_bytes: int | None = None  # known only when every job uses one block size

    @property
    def name(self) -> str:
        return self.window.name

    @property
    def intervals(self) -> int:
        """Expected intervals in the window (whether or not fio logged a line for them)."""
        return len(self.total.intervals)

    def of(self, direction: Dir | str | None) -> DirectionWindow:
        """One direction's stats; None or "all" = every direction together."""
        if direction in (None, "all"):
            return self.total
        return self.directions.get(Dir(direction), DirectionWindow((), label=f"window {self.name} ({Dir(direction).value})"))

    @property
    def bytes_per_s(self) -> float | None:
        return self.total.iops * self.block_size_bytes if self.block_size_bytes else None

    def stalls(self) -> list[str]:
        """VMs with 0 IOPS in some interval of this window (all directions together)."""
        return self.total.stalls(f"{self.name} window")


def window_stats(series: Series, window: Window, *, block_size_bytes: int | None = None) -> WindowStats:
    """Per-interval IOPS, IOPS-weighted mean latency and merged histograms inside a window."""
    interval_ms = series.interval_ms
    grids = job_grids(series)
    hists = _in_window(series.hist, window, interval_ms)

    def inside(rows: Iterable[Interval]) -> tuple[Interval, ...]:
        return tuple(row for row in rows if window.holds(row[0], interval_ms))

    def summarise(picked: list[JobGrid], picked_hist: list[HistSample], direction: str) -> DirectionWindow:
        by_vm: dict[str, list[JobGrid]] = {}
        for grid in picked:
            by_vm.setdefault(grid.vm, []).append(grid)
        cut = series.bounds_ms is not None
        # array('d'): 8 bytes a value, not a float object's 32 (100 hosts x an hour, kept per window)
        vms = {vm: array("d", [iops for _, iops, _ in inside(merge_by_time(parts, interval_ms, cut=cut))])
               for vm, parts in by_vm.items()}
        return DirectionWindow(inside(merge_by_time(picked, interval_ms, cut=cut)),
                               _merged_histogram(picked_hist),
                               f"window {window.name} ({direction})", {vm: v for vm, v in vms.items() if v})

    directions = {
        d: summarise([g for g in grids if g.dir == d], [h for h in hists if h.dir == d], d.value)
        for d in Dir
        if any(g.dir == d and g.logged for g in grids)
    }
    return WindowStats(window, summarise(grids, hists, "all"), directions, block_size_bytes)
