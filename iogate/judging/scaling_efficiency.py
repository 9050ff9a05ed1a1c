"""scaling_efficiency: aggregate throughput vs N x one host, or vs the data path's limit.

VAST's scale-out measure: 117.7 GB/s of a 120 GB/s data path (the minimum of
all links) = 98 %. Two references:
  * limit        efficiency = aggregate / limit;
  * single host  efficiency = aggregate(N hosts) / (N x aggregate(1 host)).
`aggregate` is one figure, or {hosts: figure} for client stepping (2, 4, 6 ...
hosts), where every step is judged and the worst one reported. Units are the
caller's (GB/s, IOPS), the same for aggregate and reference. A NaN figure or
a reference that is not positive fails the check, saying which.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from iogate.judging.common import no_data
from iogate.judging.params import Bound, CriterionParams, Evidence, SharePct
from iogate.verdict import Unit, Verdict

NAME = "scaling_efficiency"
EVIDENCE: tuple[Evidence, ...] = ("aggregate",)  # what a test hands evaluate()
BOUND = Bound("min_efficiency_pct", floor=True, unit="% of the reference")


class Params(CriterionParams):
    min_efficiency_pct: SharePct


def evaluate(aggregate: float | Mapping[int, float], params: Params, *, limit: float | None = None, single_host: float | None = None,
             hosts: int | None = None) -> Verdict:
    min_efficiency_pct = params.min_efficiency_pct
    if (limit is None) == (single_host is None):
        raise ValueError("scaling_efficiency needs exactly one reference: limit= or single_host=")
    steps = dict(aggregate) if isinstance(aggregate, Mapping) else {hosts or 1: float(aggregate)}
    against = f"limit {limit:g}" if limit is not None else f"N x single host {single_host:g}"
    reference_value = limit if limit is not None else single_host
    if not steps:
        return no_data(NAME, min_efficiency_pct, Unit.PCT, against, "no aggregate figure")
    if reference_value is None or math.isnan(reference_value) or reference_value <= 0:
        return no_data(NAME, min_efficiency_pct, Unit.PCT, against, f"reference ({against}) is not a positive figure")
    unmeasured = sorted(count for count, value in steps.items() if value is None or math.isnan(value))
    if unmeasured:
        return no_data(NAME, min_efficiency_pct, Unit.PCT, against, f"aggregate not measured at {', '.join(map(str, unmeasured))} hosts")
    rows = []
    for count, value in sorted(steps.items()):
        reference = limit if limit is not None else count * (single_host or 0.0)
        efficiency = 100.0 * value / reference if reference else 0.0
        rows.append({"hosts": count, "aggregate": value, "reference": reference, "efficiency_pct": efficiency,
                     "passed": efficiency >= min_efficiency_pct})
    worst = min(rows, key=lambda r: r["efficiency_pct"])
    detail = "; ".join(f"{r['hosts']} hosts: {r['aggregate']:.6g} of {r['reference']:.6g} = {r['efficiency_pct']:.1f} %" for r in rows)
    return Verdict(NAME, all(r["passed"] for r in rows), worst["efficiency_pct"], min_efficiency_pct, Unit.PCT, against,
                   evidence=tuple(rows), detail=detail)
