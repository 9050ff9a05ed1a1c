"""Types for bounds in spec YAML: latencies carry their unit ("0.5ms", "150us"), statistics are known ones ("p99"),
and every bound lies in the range where its check can both pass and fail.

A bound outside that range is refused when the spec loads, naming the allowed
values and their unit: a drop of `max_drop_pct: 500` (or .inf) can never fail,
a `min_efficiency_pct: 920` never pass, `minimum: -.inf` judges nothing.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, ClassVar, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, ValidationInfo

from iogate.judging.common import parse_stat

_LATENCY = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ns|us|µs|ms|s)\s*$")
_NS_PER = {"ns": 1, "us": 1_000, "µs": 1_000, "ms": 1_000_000, "s": 1_000_000_000}


def parse_latency_ns(value: object) -> float:
    """"0.5ms" -> 500000.0. A bare number is refused in YAML: 0.5 of what?"""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        raise ValueError(f"latency {value!r} has no unit: write e.g. {value}ms or {value}us")
    match = _LATENCY.match(str(value))
    if not match:
        raise ValueError(f"not a latency: {value!r} (use e.g. 0.5ms, 150us, 2s)")
    return float(match.group(1)) * _NS_PER[match.group(2)]


LatencyNs = Annotated[float, BeforeValidator(parse_latency_ns)]


def _positive_latency(value: float, info: ValidationInfo) -> float:
    if not value > 0:
        raise ValueError(f"{info.field_name} {value / 1e6:g}ms is refused: allowed a latency above 0 (e.g. 0.5ms, 150us): "
                         "no I/O completes in 0 time, so the check could never pass")
    return value


# A latency a measured one must stay within: above 0 (0 could never pass); the unit makes it finite.
PositiveLatencyNs = Annotated[float, BeforeValidator(parse_latency_ns), AfterValidator(_positive_latency)]


def _known_stat(stat: str) -> str:
    parse_stat(stat)
    return stat


# A latency statistic a bound is on: "mean", "p99", "p99.9" ... (anything else is refused).
LatencyStat = Annotated[str, AfterValidator(_known_stat)]


def _number(value: float) -> str:
    return "nan" if math.isnan(value) else f"{value:g}"


def in_range(low: float | None = None, high: float | None = None, *, low_open: bool = False, high_open: bool = False,
             unit: str, why: str) -> Callable[[float, ValidationInfo], float]:
    """A validator: the float bound lies in [low, high] (open ends: low_open / high_open), finite and not NaN.

    Use it as `Annotated[float, FINITE_OR_NOT, AfterValidator(in_range(...))]`
    (FINITE_OR_NOT lets an infinity reach the check, to be refused with the
    allowed range rather than a bare "finite number").

    The error names the field, the allowed range, its unit and why the range
    ends where it does (`why`: what a value beyond it would mean), e.g.
    "max_drop_pct 500 is refused: allowed 0 <= max_drop_pct < 100 (% of the
    baseline window's figure): a drop of 100 % or more could never fail".
    """

    def check(value: float, info: ValidationInfo) -> float:
        name = info.field_name or "bound"
        parts = [f"{low:g} {'<' if low_open else '<='} " if low is not None else "",
                 name, f" {'<' if high_open else '<='} {high:g}" if high is not None else ""]
        allowed = "".join(parts) if low is not None or high is not None else f"a finite {name}"
        inside = math.isfinite(value) and (
            low is None or (value > low if low_open else value >= low)) and (
            high is None or (value < high if high_open else value <= high))
        if not inside:
            raise ValueError(f"{name} {_number(value)} is refused: allowed {allowed} ({unit}, finite): {why}")
        return value

    return check


# Lets an infinity or NaN reach in_range (the model's config refuses them in every other float).
FINITE_OR_NOT = Field(allow_inf_nan=True)


# A lower bound on IOPS or MB/s: a floor of 0 or below can never fail.
PositiveFigure = Annotated[float, FINITE_OR_NOT, AfterValidator(in_range(
    0, low_open=True, unit="IOPS or MB/s, as the metric says", why="a floor of 0 or below passes every run, even one that did no I/O"))]
# A lower bound on IOPS: a floor of 0 or below can never fail.
PositiveIops = Annotated[float, FINITE_OR_NOT, AfterValidator(in_range(
    0, low_open=True, unit="IOPS", why="a floor of 0 or below passes every run, even one that did no I/O"))]
# A drop from a baseline window, in % of the baseline's figure: a drop cannot exceed 100 % (nothing left).
DropPct = Annotated[float, FINITE_OR_NOT, AfterValidator(in_range(
    0, 100, high_open=True, unit="% of the baseline window's figure",
    why="a drop is at most 100 % (nothing left), so a bound of 100 or more could never fail"))]
# A rise over a baseline window, in % of the baseline's figure (latency may more than double: no upper end).
RisePct = Annotated[float, FINITE_OR_NOT, AfterValidator(in_range(
    0, unit="% over the baseline window's figure", why="a rise bound is a finite share >= 0 (an infinite one never fails)"))]
# A share of a reference that must be reached, in %: above 100 could never pass.
SharePct = Annotated[float, FINITE_OR_NOT, AfterValidator(in_range(
    0, 100, low_open=True, unit="% of the reference", why="above 100 could never pass (no aggregate exceeds its reference), 0 never fail"))]


class CriterionParams(BaseModel):
    """Bounds of one criterion as a spec sets them: the one place a bound and its default are declared.

    A criterion's evaluate(inputs..., params) reads every bound from here; its
    other keywords are what a test measured or knows (targets, a limit, a window),
    never a bound. SPEC_REQUIRES names the bounds a spec must write out even
    where the criterion has a default for library use (a knee's min_knee_iops),
    with why; the loader refuses a check without them (iogate/judging/spec.py).
    """

    model_config = ConfigDict(extra="forbid", validate_by_name=True, validate_by_alias=True, frozen=True, allow_inf_nan=False)
    SPEC_REQUIRES: ClassVar[dict[str, str]] = {}


# -- what a criterion declares once, beside its Params: the evidence it accepts and its bound ------------------------
# Evidence kinds a test can hand the judge (iogate/judging/judge.py): a measured run (fio's totals), one window of
# the per-second logs, the event window against the baseline window before it, a load curve's points, per-VM series
# and targets, figures by name against a reference one, an aggregate against a reference, a run's rounds, and a run's
# per-interval completions (where a job fell silent).
Evidence = Literal["run", "window", "window_pair", "curve", "targets", "figures", "aggregate", "rounds", "intervals"]


@dataclass(frozen=True)
class Bound:
    """A criterion's bound: the Params field holding it, whether measured must stay at or above it (a floor) or at or
    below it (a ceiling), and its unit. `change_pct`: measured is a relative change in % (a drop, a rise, a deviation),
    so a calibration margin is in percentage points. `proposed`: measured is a distance from this bound, so
    calibration can propose one from it (a share of intervals, a round count, a silent span are recorded only);
    `shown_scale` turns the Params value into the verdict's unit where it is not proposed."""

    key: str | None
    floor: bool
    unit: str
    change_pct: bool = False
    proposed: bool = True
    shown_scale: float = 1.0
