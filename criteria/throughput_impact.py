"""throughput_impact: IOPS (or MB/s) during an event drop by at most X % from the baseline.

"Snapshot: no impact on reads; synchronous mirror: 50 % on frontend write" is
this criterion with max_drop_pct 5 and 50. Baseline and event are windows of
one run or two whole runs (with and without the data service).
"""

from __future__ import annotations

from typing import Literal

from criteria.common import DirectionName, Source, metric_of, pct_change, window_name
from criteria.params import CriterionParams
from iogate.verdict import Verdict

NAME = "throughput_impact"


class Params(CriterionParams):
    max_drop_pct: float
    metric: Literal["iops", "mb_per_s"] = "iops"
    direction: DirectionName = "all"


def evaluate(baseline: Source, event: Source, *, max_drop_pct: float, metric: str = "iops", direction: str = "all") -> Verdict:
    window = f"{window_name(event)} vs {window_name(baseline)}"
    before = metric_of(baseline, metric, direction)
    during = metric_of(event, metric, direction)
    if not before or during is None:
        return Verdict(NAME, False, float("nan"), max_drop_pct, "%", window, detail=f"no {metric} measured in the baseline or event window")
    drop = -pct_change(during, before)
    evidence = ({"window": window_name(baseline), metric: before}, {"window": window_name(event), metric: during})
    return Verdict(NAME, drop <= max_drop_pct, drop, max_drop_pct, "%", window, evidence=evidence,
                   detail=f"{direction} {metric} {before:.6g} -> {during:.6g} (drop {drop:.1f} %)")
