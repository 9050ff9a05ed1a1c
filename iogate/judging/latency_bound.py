"""latency_bound: mean or pXX completion latency stays <= L (in a window or the run).

Percentiles come from fio's histogram bins merged over every job and host
(never from averaging per-job percentiles). direction "each" judges every
direction that did I/O on its own and reports the worst. No latency data
(no samples or bins for a direction that did I/O) is a FAIL naming what was missing.
"""

from __future__ import annotations

from pydantic import Field

from iogate.judging.common import NS_PER_MS, DirectionOrEach, Source, expand_directions, latency_ns_of, no_data, window_name
from iogate.judging.params import Bound, CriterionParams, Evidence, LatencyStat, PositiveLatencyNs
from iogate.metrics.nodata import NoData
from iogate.verdict import Unit, Verdict

NAME = "latency_bound"
EVIDENCE: tuple[Evidence, ...] = ("run", "window")  # what a test hands evaluate()
BOUND = Bound("max_latency_ns", floor=False, unit="ns (the verdict in ms)")


class Params(CriterionParams):
    max_latency_ns: PositiveLatencyNs = Field(alias="max_latency")
    stat: LatencyStat = "p99"
    direction: DirectionOrEach = "each"


def evaluate(source: Source, params: Params) -> Verdict:
    max_latency_ns, stat, direction = params.max_latency_ns, params.stat, params.direction
    bound_ms = max_latency_ns / NS_PER_MS
    rows = []
    try:
        for name in expand_directions(source, direction):
            value_ns = latency_ns_of(source, stat, name)
            rows.append({"direction": name, "stat": stat, "latency_ms": value_ns / NS_PER_MS, "passed": value_ns <= max_latency_ns})
    except NoData as missing:
        return no_data(NAME, bound_ms, Unit.MS, window_name(source), missing)
    if not rows:
        return Verdict(NAME, False, float("nan"), bound_ms, Unit.MS, window_name(source), detail="no I/O measured")
    worst = max(rows, key=lambda r: r["latency_ms"])
    failing = [r["direction"] for r in rows if not r["passed"]]
    detail = f"{stat} {worst['direction']} (worst of {', '.join(r['direction'] for r in rows)})"
    if failing:
        detail += f"; over the bound: {', '.join(failing)}"
    return Verdict(NAME, not failing, worst["latency_ms"], bound_ms, Unit.MS, window_name(source), evidence=tuple(rows), detail=detail)
