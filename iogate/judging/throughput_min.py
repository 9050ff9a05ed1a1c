"""throughput_min: the run (or a window) delivers at least N IOPS or MB/s.

"The array sustains >= 500 IOPS of 4 KiB random 70/30": measured over the
whole measured run from fio's totals, or over a window from per-second logs
(every expected interval counted, a silent one as 0). In a window, a VM that
did 0 IOPS in an interval fails the check (a stall under load).
"""

from __future__ import annotations

from typing import Literal

from iogate.judging.common import DirectionName, Source, metric_of, no_data, stalls_of, window_name
from iogate.judging.params import Bound, CriterionParams, Evidence, PositiveFigure
from iogate.metrics.nodata import NoData
from iogate.verdict import Unit, Verdict

NAME = "throughput_min"
EVIDENCE: tuple[Evidence, ...] = ("run", "window")  # what a test hands evaluate()
BOUND = Bound("minimum", floor=True, unit="IOPS or MB/s, as the metric says")
UNITS = {"iops": Unit.IOPS, "mb_per_s": Unit.MB_PER_S}


class Params(CriterionParams):
    minimum: PositiveFigure
    metric: Literal["iops", "mb_per_s"] = "iops"
    direction: DirectionName = "all"


def evaluate(source: Source, params: Params) -> Verdict:
    minimum, metric, direction = params.minimum, params.metric, params.direction
    try:
        value = metric_of(source, metric, direction)
    except NoData as missing:
        return no_data(NAME, minimum, UNITS[metric], window_name(source), missing)
    if value is None:
        return Verdict(NAME, False, float("nan"), minimum, UNITS[metric], window_name(source),
                       detail=f"{metric} unknown in this window (block size not recorded)")
    stalls = stalls_of(source)
    detail = f"{direction} {UNITS[metric]} must be >= {minimum:g}" + ("; stalled: " + "; ".join(stalls) if stalls else "")
    return Verdict(NAME, value >= minimum and not stalls, value, minimum, UNITS[metric], window_name(source), detail=detail)
