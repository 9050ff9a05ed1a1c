"""What criteria measure, read the same way from a whole run or from one window.

A *source* is either a RunResult (fio's own totals over the measured run:
exact IOPS, bandwidth and merged json+ histograms) or a WindowStats (per-second
logs cut to a window of the epoch clock). Directions: "read", "write", "trim",
"all" (every direction together) or, where a criterion allows it, "each"
(every direction that did I/O, judged separately).

No data is never a pass: a statistic over nothing (no latency samples, no
histogram bins, no intervals) raises NoData naming the missing input, and
every criterion turns NoData into a FAIL verdict quoting it (`no_data`).
"""

from __future__ import annotations

import math
import re
from typing import Literal

from iogate.metrics.histogram import fio_percentile_value, fio_rank_threshold
from iogate.metrics.merge import merged_histogram
from iogate.metrics.nodata import NoData
from iogate.metrics.types import Dir, RunResult
from iogate.metrics.windows import WindowStats
from iogate.verdict import Unit, Verdict

Source = RunResult | WindowStats
DirectionName = Literal["read", "write", "trim", "all"]
DirectionOrEach = Literal["read", "write", "trim", "all", "each"]

_STAT = re.compile(r"^(mean|p(\d+(?:\.\d+)?))$")
NS_PER_MS = 1_000_000


def parse_stat(stat: str) -> float | None:
    """"mean" -> None, "p99" -> 99.0, "p99.9" -> 99.9; anything else is an error."""
    match = _STAT.match(stat)
    if not match:
        raise ValueError(f"latency statistic {stat!r}: use mean, p50, p99, p99.9 ...")
    if match.group(2) is None:
        return None
    pct = float(match.group(2))
    if not 0 < pct <= 100:
        raise ValueError(f"latency statistic {stat!r}: percentile must be in (0, 100]")
    return pct


def window_name(source: Source) -> str:
    return source.name if isinstance(source, WindowStats) else "measure"


def _where(source: Source, direction: str) -> str:
    return f"window {source.name} ({direction})" if isinstance(source, WindowStats) else f"run {source.name} ({direction})"


def no_data(name: str, bound: float, unit: Unit, window: str, missing: NoData | str) -> Verdict:
    """The FAIL verdict of a criterion that had nothing to judge; the detail says what was missing."""
    return Verdict(name, False, float("nan"), bound, unit, window, detail=f"no data: {missing}")


def known(value: float | None, what: str) -> float:
    """value, or NoData naming `what` when it is missing or NaN (a NaN compares False and would pass a bound)."""
    if value is None or math.isnan(value):
        raise NoData(f"{what} is missing")
    return value


def stalls_of(source: Source) -> list[str]:
    """VMs that did 0 IOPS in some interval of a window ([] for a whole run: fio's totals judge that)."""
    return source.stalls() if isinstance(source, WindowStats) else []


def active_directions(source: Source) -> list[str]:
    if isinstance(source, WindowStats):
        return [d.value for d, stats in source.directions.items() if stats.intervals and any(stats.iops_per_interval)]
    return [d.value for d in Dir if any(j.directions.get(d) and j.directions[d].active for j in source.jobs)]


def expand_directions(source: Source, direction: str) -> list[str]:
    return active_directions(source) if direction == "each" else [direction]


def _run_dirs(run: RunResult, direction: str) -> list[Dir]:
    present = {d for j in run.jobs for d in j.directions}
    wanted = list(Dir) if direction == "all" else [Dir(direction)]
    return [d for d in wanted if d in present]


def iops_of(source: Source, direction: str = "all") -> float:
    """Mean IOPS of a window (silent intervals count 0) or fio's total IOPS of a run; NoData when absent."""
    if isinstance(source, WindowStats):
        return source.of(direction).iops
    dirs = _run_dirs(source, direction)
    if not dirs:
        raise NoData(f"no {direction} direction in {_where(source, direction)}")
    return sum(source.total(d).iops for d in dirs)


def bytes_per_s_of(source: Source, direction: str = "all") -> float | None:
    """Bandwidth; None for a window whose block size is unknown."""
    if isinstance(source, WindowStats):
        size = source.block_size_bytes
        return source.of(direction).iops * size if size else None
    dirs = _run_dirs(source, direction)
    if not dirs:
        raise NoData(f"no {direction} direction in {_where(source, direction)}")
    return sum(source.total(d).bw_bytes_per_s for d in dirs)


def latency_ns_of(source: Source, stat: str, direction: str = "all") -> float:
    """Mean or pXX completion latency in ns; percentiles from the merged histogram by its scheme's
    exact rule (fio bins: fio's; vdbench buckets: the upper edge, math.inf in the open top bucket).

    Raises NoData ("no latency samples in window event (write)") when there is
    nothing to take it from: never a 0 ns that passes a bound.
    """
    pct = parse_stat(stat)
    if isinstance(source, WindowStats):
        part = source.of(direction)
        value = part.latency_mean_ns if pct is None else part.percentile_ns(pct)
        return known(value, f"{stat} latency in {_where(source, direction)}")
    totals = [source.total(d) for d in _run_dirs(source, direction)]
    ios = sum(t.clat.samples for t in totals)
    if not ios:
        raise NoData(f"no latency samples in {_where(source, direction)}")
    if pct is None:
        return sum(t.clat.mean_ns * t.clat.samples for t in totals) / ios
    merged = merged_histogram(t.clat for t in totals)  # one bucket scheme only (iogate.metrics.latency)
    if merged is None or not merged.total:
        raise NoData(f"no latency histogram bins in {_where(source, direction)} ({ios} I/Os without a histogram)")
    return known(merged.percentile_ns(pct), f"{stat} latency in {_where(source, direction)}")


def percentile_ios(source: Source, direction: str = "all") -> int:
    """How many I/Os a percentile of this source and direction is taken from (its histogram's samples; 0 when none)."""
    if isinstance(source, WindowStats):
        return source.of(direction).histogram.total
    merged = merged_histogram(source.total(d).clat for d in _run_dirs(source, direction))
    return merged.total if merged is not None else 0


def slowest_rank(ios: int, pct: float) -> int:
    """The pXX of `ios` I/Os is the k-th slowest of them (fio's rank: the ceil(pct/100 x ios)-th fastest):
    the p99 of 352 I/Os is the 4th slowest, of 100,000 the 1,000th."""
    return ios - math.ceil(fio_rank_threshold(fio_percentile_value(pct), ios)) + 1


def metric_of(source: Source, metric: str, direction: str = "all") -> float | None:
    """"iops" or "mb_per_s" (decimal MB/s, as reports quote bandwidth)."""
    if metric == "iops":
        return known(iops_of(source, direction), f"IOPS in {_where(source, direction)}")
    if metric == "mb_per_s":
        value = bytes_per_s_of(source, direction)
        return None if value is None else value / 1e6
    raise ValueError(f"throughput metric {metric!r}: use iops or mb_per_s")


def pct_change(new: float, old: float) -> float:
    return (new - old) / old * 100.0
