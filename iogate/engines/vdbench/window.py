"""Which intervals vdbench's `avg_X-Y` row aggregates, and that aggregate recomputed.

The exact rule (vdbench 5.04.06 source, Vdb/Reporter.java and CollectSlaveStats.java):
the Reporter thread marks the warmup done right after it asks the slaves for the
statistics of interval `warmup_intervals` (= warmup/interval, at least 1), and
labels the average from the *next* interval, X. The statistics of interval X-1
arrive afterwards and are reported asynchronously, by which time the warmup is
flagged done, so they are added to the run totals too. The average therefore
covers intervals X-1..Y, not the X..Y its label says (avg_3-12 of a warmup=2 run
averages 11 intervals, 2-12; avg_2-10 of a run without warmup averages all 10).
It is a race: every interval whose report is processed after the flag flips is
counted, so on a loaded master (seen: two hosts on a busy 2-core machine) the
reports of X-2, X-3... are late too and counted, and a fast report of X-1 would
leave it out. The window is the first of X-1, X, X-2, X-3 ... 1 whose mean rate
and MB/s reproduce vdbench's avg row to its printed precision; none is an
EngineError naming the avg row. (The runner does not judge vdbench's window: it
takes the intervals after the ramp it asked for, see outdir.to_run_result.)
5.04.01 and 5.04.07 average X..Y as labelled (version.py): for them X is tried
first, then X-1, X-2 ...

A run point of one interval with a warmup of one (vdbench's SD_format) prints
`avg_2-1`. In 5.04.07 that is an average over no interval, all zeros: its
Aggregate has no intervals (first = last + 1) and the avg row's zero figures.
5.04.06 prints interval 1's figures there (the race above): the search finds 1-1.

Every interval lasts `interval` seconds (vdbench's rate is I/Os per nominal
interval), so over the window: IOPS and MB/s are plain means, response times
are means weighted by the matching rate (all I/Os, reads, writes), resp_max is
the maximum. CPU is taken from the avg row as printed: vdbench sums CPU ticks over
the window, and the per-interval tick counts are not in the flatfile.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from iogate.engines.vdbench.flatfile import FlatPoint, FlatRow, Stats, stats
from iogate.engines.vdbench.version import Version

# Rates are printed with 4 decimals: a mean of rounded rates is within 0.5e-4 of the
# mean of the true ones, and the avg row is itself rounded to 0.5e-4.
RATE_TOLERANCE = 1.01e-4


@dataclass(frozen=True)
class Aggregate:
    first: int  # 1-based interval numbers, inclusive
    last: int
    stats: Stats

    @property
    def intervals(self) -> int:
        return self.last - self.first + 1


def window(point: FlatPoint, version: Version | None = None) -> Aggregate:
    """The intervals vdbench's avg row covers, recomputed; `version` None is read as 5.04.06 (this machine's)."""
    label_first, last = point.avg_range_or_fail()
    wanted = point.avg.need("rate")
    wanted_mb = point.avg.need("MB/sec")
    if label_first == last + 1 and not wanted and not wanted_mb:
        return Aggregate(label_first, last, stats(point.avg))  # 5.04.07's avg_2-1: over no interval
    tried = []
    before_label = version is None or version.avg_covers_interval_before_label
    order = ([label_first - 1, label_first] if before_label else [label_first, label_first - 1])
    order += range(label_first - 2, 0, -1)
    for first in dict.fromkeys(f for f in order if 1 <= f <= last):
        aggregate = aggregate_rows(point.intervals[first - 1:last], first, last)
        if abs(aggregate.stats.iops - wanted) <= RATE_TOLERANCE and abs(aggregate.stats.mb_per_s - wanted_mb) <= RATE_TOLERANCE:
            own = stats(point.avg)
            return replace(aggregate, stats=replace(aggregate.stats, cpu_user_pct=own.cpu_user_pct,
                                                    cpu_kernel_pct=own.cpu_kernel_pct))
        tried.append(f"{first}-{last}: {aggregate.stats.iops:.4f}")
    raise point.avg.line.fail(f"no interval window reproduces vdbench's average rate {wanted:.4f} (tried {', '.join(tried)})")


def aggregate_rows(rows: tuple[FlatRow, ...], first: int, last: int) -> Aggregate:
    return aggregate_stats([stats(row) for row in rows], first, last)


def aggregate_stats(items: list[Stats], first: int, last: int) -> Aggregate:
    n = len(items)
    iops = sum(s.iops for s in items)
    reads = sum(s.read_iops for s in items)
    writes = sum(s.write_iops for s in items)
    maxima = [s.resp_max_ms for s in items if s.resp_max_ms is not None]
    return Aggregate(first, last, Stats(
        iops=iops / n,
        mb_per_s=sum(s.mb_per_s for s in items) / n,
        read_iops=reads / n,
        write_iops=writes / n,
        resp_ms=_weighted([(s.iops, s.resp_ms) for s in items]),
        read_resp_ms=_weighted([(s.read_iops, s.read_resp_ms) for s in items]),
        write_resp_ms=_weighted([(s.write_iops, s.write_resp_ms) for s in items]),
        resp_max_ms=max(maxima) if len(maxima) == n else None,
        reqrate=items[-1].reqrate,
        cpu_user_pct=_mean([s.cpu_user_pct for s in items]),
        cpu_kernel_pct=_mean([s.cpu_kernel_pct for s in items]),
        mb_read_per_s=_mean([s.mb_read_per_s for s in items]),
        mb_write_per_s=_mean([s.mb_write_per_s for s in items]),
    ))


def _weighted(pairs: list[tuple[float, float]]) -> float:
    weight = sum(w for w, _ in pairs)
    return sum(w * v for w, v in pairs) / weight if weight else 0.0


def _mean(values: list[float | None]) -> float | None:
    return None if any(v is None for v in values) else sum(v for v in values if v is not None) / len(values)
