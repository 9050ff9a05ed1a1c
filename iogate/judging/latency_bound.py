"""latency_bound: mean or pXX completion latency stays <= L (in a window or the run).

Percentiles come from fio's histogram bins merged over every job and host
(never from averaging per-job percentiles). direction "each" judges every
direction that did I/O on its own and reports the worst. A percentile's
verdict says how many I/Os it was taken from, and when its tail is thin (fewer
than TAIL_IOS I/Os above it) which slowest one it is: a p99 of 352 writes is
the 4th slowest write, a near-maximum that one slow second decides, and the
report must say so. No latency data
(no samples or bins for a direction that did I/O) is a FAIL naming what was missing.
"""

from __future__ import annotations

from pydantic import Field

from iogate.judging.common import (
    NS_PER_MS,
    DirectionOrEach,
    Source,
    expand_directions,
    latency_ns_of,
    no_data,
    parse_stat,
    percentile_ios,
    slowest_rank,
    window_name,
)
from iogate.judging.params import Bound, CriterionParams, Evidence, LatencyStat, PositiveLatencyNs
from iogate.metrics.nodata import NoData
from iogate.verdict import Unit, Verdict

NAME = "latency_bound"
EVIDENCE: tuple[Evidence, ...] = ("run", "window")  # what a test hands evaluate()
BOUND = Bound("max_latency_ns", floor=False, unit="ns (the verdict in ms)")
TAIL_IOS = 10  # fewer I/Os above a percentile than this, and it is a near-maximum: the verdict names its rank


class Params(CriterionParams):
    max_latency_ns: PositiveLatencyNs = Field(alias="max_latency")
    stat: LatencyStat = "p99"
    direction: DirectionOrEach = "each"


def evaluate(source: Source, params: Params) -> Verdict:
    max_latency_ns, stat, direction = params.max_latency_ns, params.stat, params.direction
    pct = parse_stat(stat)
    bound_ms = max_latency_ns / NS_PER_MS
    rows = []
    try:
        for name in expand_directions(source, direction):
            value_ns = latency_ns_of(source, stat, name)
            row = {"direction": name, "stat": stat, "latency_ms": value_ns / NS_PER_MS, "passed": value_ns <= max_latency_ns}
            if pct is not None:
                row["ios"] = percentile_ios(source, name)
            rows.append(row)
    except NoData as missing:
        return no_data(NAME, bound_ms, Unit.MS, window_name(source), missing)
    if not rows:
        return Verdict(NAME, False, float("nan"), bound_ms, Unit.MS, window_name(source), detail="no I/O measured")
    worst = max(rows, key=lambda r: r["latency_ms"])
    failing = [r["direction"] for r in rows if not r["passed"]]
    detail = f"{stat} {worst['direction']}{_of_ios(worst, pct)} (worst of {', '.join(r['direction'] for r in rows)})"
    if failing:
        detail += f"; over the bound: {', '.join(failing)}"
    return Verdict(NAME, not failing, worst["latency_ms"], bound_ms, Unit.MS, window_name(source), evidence=tuple(rows), detail=detail)


def _of_ios(row: dict[str, object], pct: float | None) -> str:
    """" of 352 I/Os, the 4th slowest" for a thin tail, " of 5,500 I/Os" otherwise, "" for a mean."""
    ios = row.get("ios")
    if pct is None or not isinstance(ios, int):
        return ""
    rank = slowest_rank(ios, pct)
    return f" of {ios:,} I/Os" + (f", the {_ordinal(rank)}slowest" if rank - 1 < TAIL_IOS else "")


def _ordinal(n: int) -> str:
    """"" for 1 (the slowest), "4th " for 4."""
    return "" if n == 1 else f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')} "
