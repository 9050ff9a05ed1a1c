"""Merge per-job Direction records into a total: sums and exact histogram sums.

Histograms merge only within one bucket scheme (iogate.metrics.latency): fio
bins with fio bins, vdbench buckets with the same vdbench edges; anything else
raises HistogramSchemeMismatch (a NoData naming both schemes).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from iogate.metrics.latency import LatencyHistogram
from iogate.metrics.types import Dir, Direction, LatencyStats


def merged_histogram(parts: Iterable[LatencyStats]) -> LatencyHistogram | None:
    """The bucket-wise sum of the histograms of every part with samples.

    None when no part has samples, or when one with samples has no histogram:
    a sum missing a part's I/Os would be a percentile of the others only.
    """
    histograms = []
    for part in parts:
        if part.samples:
            if part.histogram is None:
                return None
            histograms.append(part.histogram)
    return LatencyHistogram.merged(histograms)


def merge_latency(parts: Sequence[LatencyStats]) -> LatencyStats:
    """Pooled min/max/mean/stddev (weighted by sample count) and summed histograms (merged_histogram)."""
    parts = [p for p in parts if p.samples]
    if not parts:
        return LatencyStats()
    n = sum(p.samples for p in parts)
    mean = sum(p.mean_ns * p.samples for p in parts) / n
    # Pooled variance: within-part variance plus the spread of part means.
    var = sum(p.samples * (p.stddev_ns**2 + (p.mean_ns - mean) ** 2) for p in parts) / n
    return LatencyStats(
        min_ns=min(p.min_ns for p in parts),
        max_ns=max(p.max_ns for p in parts),
        mean_ns=mean,
        stddev_ns=math.sqrt(var),
        samples=n,
        histogram=merged_histogram(parts),
    )


def merge_directions(direction: Dir, parts: Sequence[Direction]) -> Direction:
    """Jobs run concurrently: IOPS and bandwidth add up, latency pools."""
    return Direction(
        dir=direction,
        ios=sum(p.ios for p in parts),
        io_bytes=sum(p.io_bytes for p in parts),
        runtime_ms=max((p.runtime_ms for p in parts), default=0),
        iops=sum(p.iops for p in parts),
        bw_bytes_per_s=sum(p.bw_bytes_per_s for p in parts),
        clat=merge_latency([p.clat for p in parts]),
        lat=merge_latency([p.lat for p in parts]),
        short_ios=sum(p.short_ios for p in parts),
        drop_ios=sum(p.drop_ios for p in parts),
    )
