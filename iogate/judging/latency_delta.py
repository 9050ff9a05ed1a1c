"""latency_delta: latency during an event rises by at most X % over the baseline window.

Both windows come from the same run (iogate.metrics.windows.event_windows), so
the only thing that changed is the event (dedupe, snapshot, mirror). Each
statistic in `stats` (mean, p99 ...) is judged; the worst rise is reported.
A window without latency samples (an event that stalled the load) fails,
naming the window and statistic that had none.
"""

from __future__ import annotations

from pydantic import field_validator

from iogate.judging.common import NS_PER_MS, DirectionName, Source, latency_ns_of, no_data, parse_stat, pct_change, window_name
from iogate.judging.params import Bound, CriterionParams, Evidence, RisePct
from iogate.metrics.nodata import NoData
from iogate.verdict import Unit, Verdict

NAME = "latency_delta"
EVIDENCE: tuple[Evidence, ...] = ("window_pair",)  # what a test hands evaluate()
BOUND = Bound("max_rise_pct", floor=False, unit="% over the baseline window", change_pct=True)


class Params(CriterionParams):
    max_rise_pct: RisePct
    stats: tuple[str, ...] = ("mean", "p99")
    direction: DirectionName = "all"

    @field_validator("stats")
    @classmethod
    def _known_stats(cls, stats: tuple[str, ...]) -> tuple[str, ...]:
        if not stats:
            raise ValueError("stats [] is refused: allowed one or more latency statistics (mean, p50, p99, p99.9 ...): "
                             "with none the check judges nothing")
        for stat in stats:
            parse_stat(stat)
        return stats


def evaluate(baseline: Source, event: Source, params: Params) -> Verdict:
    max_rise_pct, stats, direction = params.max_rise_pct, params.stats, params.direction
    window = f"{window_name(event)} vs {window_name(baseline)}"
    rows = []
    for stat in stats:
        try:
            before_ns = latency_ns_of(baseline, stat, direction)
            during_ns = latency_ns_of(event, stat, direction)
        except NoData as missing:
            return no_data(NAME, max_rise_pct, Unit.PCT, window, missing)
        if before_ns <= 0 or during_ns <= 0:
            empty = window_name(baseline) if before_ns <= 0 else window_name(event)
            return Verdict(NAME, False, float("nan"), max_rise_pct, Unit.PCT, window, detail=f"no {stat} latency in window {empty}")
        rise = pct_change(during_ns, before_ns)
        rows.append({"stat": stat, "baseline_ms": before_ns / NS_PER_MS, "event_ms": during_ns / NS_PER_MS,
                     "rise_pct": rise, "passed": rise <= max_rise_pct})
    worst = max(rows, key=lambda r: r["rise_pct"])
    detail = "; ".join(f"{r['stat']} {r['baseline_ms']:.4g} -> {r['event_ms']:.4g} ms ({r['rise_pct']:+.1f} %)" for r in rows)
    return Verdict(NAME, all(r["passed"] for r in rows), worst["rise_pct"], max_rise_pct, Unit.PCT, window,
                   evidence=tuple(rows), detail=f"{direction}: {detail}")
