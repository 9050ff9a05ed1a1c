"""Named time windows of a run and the totals inside each one.

A window is a span of the epoch clock (ms) that events and fio logs share
(log_unix_epoch=1). A per-second sample belongs to a window when the whole
interval it covers, [t_ms - interval, t_ms], lies inside the window, give or
take a tenth of an interval: fio stamps each job's interval end a few ms late,
and an interval that straddles an event's start must not dilute either side.

>>> baseline, event, recovery = event_windows(run.start_ms, run.end_ms, snap.start_ms, snap.end_ms)
>>> window_stats(run.series, event).latency_mean_ns
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TypeVar

from iogate.metrics.histogram import Histogram
from iogate.metrics.types import Dir, HistSample, Sample, Series

# Fraction of an interval a sample's stamp may stray past a window edge (fio timer jitter).
EDGE_SLACK = 0.1

Record = TypeVar("Record", Sample, HistSample)


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


def _in_window(records: Iterable[Record], window: Window, interval_ms: int) -> list[Record]:
    return [r for r in records if window.holds(r.t_ms, interval_ms)]


@dataclass(frozen=True)
class DirectionWindow:
    """One direction (or all directions together) inside a window."""

    intervals: tuple[tuple[int, float, float], ...]  # (t_ms, IOPS, IOPS-weighted mean latency ns)
    histogram: Histogram = field(default_factory=Histogram)

    @property
    def iops_per_interval(self) -> list[float]:
        return [iops for _, iops, _ in self.intervals]

    @property
    def iops(self) -> float:
        """Mean IOPS over the window's intervals."""
        return sum(self.iops_per_interval) / len(self.intervals) if self.intervals else 0.0

    @property
    def latency_mean_ns(self) -> float:
        """IOPS-weighted mean completion latency (each IO counts once)."""
        ios = sum(iops for _, iops, _ in self.intervals)
        return sum(iops * lat for _, iops, lat in self.intervals) / ios if ios else 0.0

    def percentile_ns(self, pct: float) -> float:
        """pXX from the interval histograms merged over the window (0 when no hist log)."""
        return self.histogram.percentile_ns(pct)


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
        return len(self.total.intervals)

    def of(self, direction: Dir | str | None) -> DirectionWindow:
        """One direction's stats; None or "all" = every direction together."""
        if direction in (None, "all"):
            return self.total
        return self.directions.get(Dir(direction), DirectionWindow(()))

    @property
    def bytes_per_s(self) -> float | None:
        return self.total.iops * self.block_size_bytes if self.block_size_bytes else None


def window_stats(series: Series, window: Window, *, block_size_bytes: int | None = None) -> WindowStats:
    """Per-interval IOPS, IOPS-weighted mean latency and merged histograms inside a window."""
    samples = _in_window(series.samples, window, series.interval_ms)
    hists = _in_window(series.hist, window, series.interval_ms)

    def summarise(picked: list[Sample], picked_hist: list[HistSample]) -> DirectionWindow:
        rows = Series(tuple(picked), (), series.interval_ms).totals()
        return DirectionWindow(tuple(rows), Histogram.merged(Histogram.from_counts(h.counts) for h in picked_hist))

    directions = {
        d: summarise([s for s in samples if s.dir == d], [h for h in hists if h.dir == d])
        for d in Dir
        if any(s.dir == d for s in samples)
    }
    return WindowStats(window, summarise(samples, hists), directions, block_size_bytes)
