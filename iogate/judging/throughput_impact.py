"""throughput_impact: IOPS (or MB/s) during an event drop by at most X % from the baseline.

"Snapshot: no impact on reads; synchronous mirror: 50 % on frontend write" is
this criterion with max_drop_pct 5 and 50. Baseline and event are windows of
one run or two whole runs (with and without the data service). Windows count
every expected interval (a silent one is 0 IOPS), and a VM that did 0 IOPS in
an interval of either window fails the check: a stall under load is a product
failure whatever the mean says.
"""

from __future__ import annotations

from typing import Literal

from iogate.judging.common import DirectionName, Source, metric_of, no_data, pct_change, stalls_of, window_name
from iogate.judging.params import Bound, CriterionParams, DropPct, Evidence
from iogate.metrics.nodata import NoData
from iogate.verdict import Unit, Verdict

NAME = "throughput_impact"
EVIDENCE: tuple[Evidence, ...] = ("window_pair",)  # what a test hands evaluate()
BOUND = Bound("max_drop_pct", floor=False, unit="% below the baseline window", change_pct=True)


class Params(CriterionParams):
    max_drop_pct: DropPct
    metric: Literal["iops", "mb_per_s"] = "iops"
    direction: DirectionName = "all"


def evaluate(baseline: Source, event: Source, params: Params) -> Verdict:
    max_drop_pct, metric, direction = params.max_drop_pct, params.metric, params.direction
    window = f"{window_name(event)} vs {window_name(baseline)}"
    try:
        before = metric_of(baseline, metric, direction)
        during = metric_of(event, metric, direction)
    except NoData as missing:
        return no_data(NAME, max_drop_pct, Unit.PCT, window, missing)
    if before is None or during is None:
        return no_data(NAME, max_drop_pct, Unit.PCT, window, f"{metric} unknown in the baseline or event window (block size not recorded)")
    if not before:
        return no_data(NAME, max_drop_pct, Unit.PCT, window, f"0 {metric} in window {window_name(baseline)}: nothing to compare with")
    drop = -pct_change(during, before)
    stalls = stalls_of(event) + stalls_of(baseline)
    evidence = ({"window": window_name(baseline), metric: before}, {"window": window_name(event), metric: during})
    detail = f"{direction} {metric} {before:.6g} -> {during:.6g} (drop {drop:.1f} %)"
    if stalls:
        detail += "; stalled: " + "; ".join(stalls)
    return Verdict(NAME, drop <= max_drop_pct and not stalls, drop, max_drop_pct, Unit.PCT, window, evidence=evidence, detail=detail)
