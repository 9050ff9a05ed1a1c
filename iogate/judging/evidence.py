"""The evidence a test builds and hands to the judge (iogate/judging/judge.py), beside the library's own types.

A measured run is iogate.metrics.types.RunResult, per-interval series are
Series, event windows WindowStats, client stepping StepResult; this module adds
SweepPoint (one load level of a sweep: threads, VMs, queue depth, as plain
numbers; the curve criteria iops_at_latency and knee take a list of these in load
order) and RUN_FIGURES, the figures of a run a comparison can name as `metric`.
A point whose figures could not be measured (no latency samples, no bins)
keeps NaN there and says what was missing in `missing`; criteria fail on it.

>>> SweepPoint.from_run(run, label="qd=8")
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from iogate.judging.common import Source, iops_of, latency_ns_of, parse_stat
from iogate.metrics.nodata import NoData
from iogate.metrics.types import RunResult


@dataclass(frozen=True)
class SweepPoint:
    label: str
    iops: float
    latency_mean_ns: float
    latency_pct_ns: Mapping[float, float] = field(default_factory=dict)  # percentile -> ns
    missing: str = ""  # what could not be measured (NoData's message); "" when complete

    def latency_ns(self, stat: str) -> float:
        pct = parse_stat(stat)
        if pct is None:
            return self.latency_mean_ns
        if pct not in self.latency_pct_ns:
            raise ValueError(f"sweep point {self.label}: no p{pct:g} recorded (have {sorted(self.latency_pct_ns)})")
        return self.latency_pct_ns[pct]

    @classmethod
    def from_source(cls, source: Source, label: str, pcts: Iterable[float] = (50.0, 99.0, 99.9), direction: str = "all") -> SweepPoint:
        """From a RunResult (one sweep point run) or a WindowStats; a missing figure is NaN, named in `missing`."""
        gaps: list[str] = []

        def measured(read: Callable[[], float]) -> float:
            try:
                return read()
            except NoData as missing:
                gaps.append(str(missing))
                return float("nan")

        iops = measured(lambda: iops_of(source, direction))
        mean = measured(lambda: latency_ns_of(source, "mean", direction))
        pct = {p: measured(lambda p=p: latency_ns_of(source, f"p{p:g}", direction)) for p in pcts}
        return cls(label, iops, mean, pct, "; ".join(dict.fromkeys(gaps)))

    from_run = from_source


# A run's figures by the name a comparison's `metric` gives them (relative_to_baseline in the protocols family).
RUN_FIGURES: Mapping[str, Callable[[RunResult], float]] = {
    "iops": lambda r: r.total_iops,
    "mean_latency_ms": lambda r: SweepPoint.from_run(r, "").latency_mean_ns / 1e6,
    "p99_latency_ms": lambda r: SweepPoint.from_run(r, "").latency_pct_ns[99.0] / 1e6,
}
