"""Types for bounds in spec YAML: latencies carry their unit ("0.5ms", "150us"), statistics are known ones ("p99")."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict

from criteria.common import parse_stat

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


def _known_stat(stat: str) -> str:
    parse_stat(stat)
    return stat


# A latency statistic a bound is on: "mean", "p99", "p99.9" ... (anything else is refused).
LatencyStat = Annotated[str, AfterValidator(_known_stat)]


class CriterionParams(BaseModel):
    """Bounds of one criterion as a spec sets them: the one place a bound and its default are declared.

    A criterion's evaluate(inputs..., params) reads every bound from here; its
    other keywords are what a test measured or knows (targets, a limit, a window),
    never a bound.
    """

    model_config = ConfigDict(extra="forbid", validate_by_name=True, validate_by_alias=True, frozen=True)
