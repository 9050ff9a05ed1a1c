"""relative_to_baseline: each value within ±X % of a named baseline (baseline = 100).

The protocol-comparison language: "FC 4 Gb = 100; NFS within 5 % of the
baseline". `values` maps a name (protocol, transport, build) to a measured
figure, one of them being the baseline. Modes:
  within      |relative - 100| <= X   (either direction is a deviation)
  not_below   relative >= 100 - X     (higher is better: IOPS, MB/s)
  not_above   relative <= 100 + X     (lower is better: latency, CPU per IO)
measured = the worst deviation from 100 in percentage points (a shortfall for
not_below, an excess for not_above). A value that is NaN (not measured)
fails the check naming it; it never compares its way to a pass.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Annotated, Literal

from pydantic import AfterValidator, ValidationInfo

from iogate.judging.common import no_data
from iogate.judging.params import FINITE_OR_NOT, Bound, CriterionParams, Evidence, in_range
from iogate.verdict import Unit, Verdict

NAME = "relative_to_baseline"
EVIDENCE: tuple[Evidence, ...] = ("figures",)  # what a test hands evaluate()
BOUND = Bound("tolerance_pct", floor=False, unit="% from the reference (baseline = 100)", change_pct=True)


_FALLS_FAIL = ("within", "not_below")  # modes in which a value that fell to 0 (relative 0) must be able to fail


def _tolerance_can_fail(tolerance_pct: float, info: ValidationInfo) -> float:
    """In modes that judge a fall, 100 points or more would pass a value that fell to 0 (relative 0: deviation 100)."""
    mode = info.data.get("mode", "within")
    if mode in _FALLS_FAIL and tolerance_pct >= 100:
        raise ValueError(f"tolerance_pct {tolerance_pct:g} is refused in mode {mode}: allowed 0 <= tolerance_pct < 100 "
                         f"(percentage points from the baseline = 100): at 100 or more a value that fell to 0 would pass")
    return tolerance_pct


# The figures the tests compare (protocols: tests/test_protocol_compare.py FIGURES; regression:
# iogate/results/compare.py STORED_METRICS; scaling: iops, mb_per_s), by which direction is worse.
HIGHER_IS_BETTER = ("iops", "mb_per_s")
LOWER_IS_BETTER = ("mean_latency_ms", "p99_latency_ms")
Metric = Literal["iops", "mb_per_s", "mean_latency_ms", "p99_latency_ms"]


def _mode_judges_the_worse_direction(metric: str, info: ValidationInfo) -> str:
    """A one-sided mode must bound the direction in which the figure gets worse, or the check fails on an
    improvement and never on a loss (p99 latency judged not_below)."""
    mode = info.data.get("mode", "within")
    higher = metric in HIGHER_IS_BETTER
    wrong = "not_above" if higher else "not_below"
    if mode == wrong:
        right = "not_below" if higher else "not_above"
        raise ValueError(f"mode {mode} is refused for metric {metric}: allowed mode within or {right} "
                         f"({'higher' if higher else 'lower'} is better): {mode} would fail an improvement and never a "
                         f"{'fall' if higher else 'rise'}")
    return metric


class Params(CriterionParams):
    mode: Literal["within", "not_below", "not_above"] = "within"
    metric: Annotated[Metric, AfterValidator(_mode_judges_the_worse_direction)] = "iops"
    # Declared after mode: its check reads the mode (a rise may be judged beyond 100 points, a fall may not).
    tolerance_pct: Annotated[float, FINITE_OR_NOT, AfterValidator(in_range(
        0, unit="percentage points from the baseline = 100", why="a deviation is >= 0 and an infinite one never fails")),
        AfterValidator(_tolerance_can_fail)]


_RULE = {  # the accepted range, as a reader says it
    "within": lambda x: f"each within {100 - x:g}..{100 + x:g}",
    "not_below": lambda x: f"each >= {100 - x:g}",
    "not_above": lambda x: f"each <= {100 + x:g}",
}


def _deviation(relative: float, mode: str) -> float:
    if mode == "within":
        return abs(relative - 100.0)
    if mode == "not_below":
        return 100.0 - relative
    if mode == "not_above":
        return relative - 100.0
    raise ValueError(f"relative_to_baseline mode {mode!r}: use within, not_below or not_above")


def evaluate(values: Mapping[str, float], baseline: str, params: Params) -> Verdict:
    tolerance_pct, mode, metric = params.tolerance_pct, params.mode, params.metric
    window = f"vs {baseline}"
    if baseline not in values:
        raise ValueError(f"baseline {baseline!r} not among the measured values {sorted(values)}")
    unmeasured = sorted(name for name, value in values.items() if value is None or math.isnan(value))
    if unmeasured:
        return no_data(NAME, tolerance_pct, Unit.PCT_POINTS, window, f"{metric} not measured for {', '.join(unmeasured)}")
    base = values[baseline]
    if base <= 0:
        return Verdict(NAME, False, float("nan"), tolerance_pct, Unit.PCT_POINTS, window,
                       detail=f"baseline {baseline} {metric} is {base:g}")
    rows = []
    for name, value in values.items():
        relative = 100.0 * value / base
        deviation = _deviation(relative, mode)
        rows.append({"name": name, metric: value, "relative": relative, "deviation": deviation, "passed": deviation <= tolerance_pct})
    others = [r for r in rows if r["name"] != baseline] or rows
    worst = max(others, key=lambda r: r["deviation"])
    failing = [r["name"] for r in rows if not r["passed"]]
    detail = ", ".join(f"{r['name']} = {r['relative']:.1f}" for r in rows) + f" ({metric}, {baseline} = 100, {_RULE[mode](tolerance_pct)})"
    if failing:
        detail += f"; out of bounds: {', '.join(failing)}"
    return Verdict(NAME, not failing, worst["deviation"], tolerance_pct, Unit.PCT_POINTS, window, evidence=tuple(rows), detail=detail)
