"""iops_at_latency: "780k IOPS @ 0.5 ms": the highest IOPS whose latency stays <= L.

Over the sweep's measured points (no interpolation: a figure quoted must have
been measured), take every point whose latency statistic is <= L and report
the highest IOPS among them. Pass when it is >= min_iops. A sweep where no
point meets L fails with 0 IOPS. A sweep with no points, or with a point whose
IOPS or latency is missing (NaN), fails naming the point: a gap in the curve
could hide the point that breaks the bound.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from pydantic import Field

from iogate.judging.common import NS_PER_MS, no_data
from iogate.judging.params import Bound, CriterionParams, Evidence, LatencyStat, PositiveIops, PositiveLatencyNs
from iogate.judging.points import SweepPoint
from iogate.verdict import Unit, Verdict

NAME = "iops_at_latency"
EVIDENCE: tuple[Evidence, ...] = ("curve",)  # what a test hands evaluate()
BOUND = Bound("min_iops", floor=True, unit="IOPS")


class Params(CriterionParams):
    max_latency_ns: PositiveLatencyNs = Field(alias="max_latency")
    min_iops: PositiveIops
    stat: LatencyStat = "mean"


def evaluate(points: Sequence[SweepPoint], params: Params) -> Verdict:
    max_latency_ns, min_iops, stat = params.max_latency_ns, params.min_iops, params.stat
    if not points:
        return no_data(NAME, min_iops, Unit.IOPS, "sweep of 0 points", "no sweep points")
    for point in points:
        if point.missing or math.isnan(point.iops) or math.isnan(point.latency_ns(stat)):
            return no_data(NAME, min_iops, Unit.IOPS, f"sweep of {len(points)} points",
                           f"point {point.label}: {point.missing or f'IOPS or {stat} latency is NaN'}")
    rows = [{"point": p.label, "iops": p.iops, "latency_ms": p.latency_ns(stat) / NS_PER_MS,
             "within_latency": p.latency_ns(stat) <= max_latency_ns} for p in points]
    eligible = [r for r in rows if r["within_latency"]]
    best = max(eligible, key=lambda r: r["iops"], default=None)
    bound_ms = max_latency_ns / NS_PER_MS
    window = f"sweep of {len(rows)} points"
    if best is None:
        return Verdict(NAME, False, 0.0, min_iops, Unit.IOPS, window, evidence=tuple(rows),
                       detail=f"no point has {stat} latency <= {bound_ms:g} ms")
    return Verdict(NAME, best["iops"] >= min_iops, best["iops"], min_iops, Unit.IOPS, window, evidence=tuple(rows),
                   detail=f"{best['iops']:.6g} IOPS @ {stat} {best['latency_ms']:.4g} ms (point {best['point']}; limit {bound_ms:g} ms)")
