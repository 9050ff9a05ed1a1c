"""knee: "I/O before saturation", the load point where latency starts to grow non-linearly.

Input: sweep points in load order (threads 1, 2, 4 ... or VMs 32, 64 ...), each
with IOPS (x) and a latency statistic (y, mean by default). Two deterministic
methods; both return one measured point as the knee (no interpolation):

chord (default; the "maximum distance from the chord" / Kneedle rule)
    1. Scale x and y to [0, 1] by their min and max over the sweep.
    2. Draw the chord from the first point to the last.
    3. The knee is the point farthest *below* the chord (lower latency than
       the chord at that IOPS), measured perpendicular to it. While the array
       is unsaturated, IOPS grow at nearly flat latency (points far below the
       chord); past the knee, IOPS stall while latency climbs.
    If no point lies below the chord (latency grew at least as fast as IOPS
    from the start, or fewer than 3 points), there is no knee in the sweep and
    the last point is reported (saturation not reached within the sweep).

slope
    1. Initial slope s0 = (y1 - y0) / (x1 - x0), floored at 1 % of y0 / x0 so
       a flat start does not make every later rise a knee.
    2. Walk the segments in load order; at the first segment i -> i+1 whose
       slope exceeds slope_factor x s0, or whose IOPS did not rise (x1 <= x0:
       more load, no more I/O), the knee is point i (the last point before).
    3. No such segment: the last point (saturation not reached).

Bound form: "knee IOPS >= N" with min_knee_iops; without it the verdict passes
and only reports the knee (evidence for the report).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

from pydantic import Field, field_validator

from criteria.common import NS_PER_MS, parse_stat
from criteria.params import CriterionParams
from criteria.points import SweepPoint
from iogate.verdict import Verdict

NAME = "knee"


class Params(CriterionParams):
    method: Literal["chord", "slope"] = "chord"
    stat: str = "mean"
    slope_factor: float = Field(3.0, gt=1)
    min_knee_iops: float | None = None

    @field_validator("stat")
    @classmethod
    def _known_stat(cls, stat: str) -> str:
        parse_stat(stat)
        return stat


def knee_by_chord(xs: Sequence[float], ys: Sequence[float]) -> tuple[int | None, list[float]]:
    """Index of the point farthest below the first-to-last chord (None: no knee), and every distance."""
    def scale(values: Sequence[float]) -> list[float]:
        low, high = min(values), max(values)
        return [(v - low) / (high - low) if high > low else 0.0 for v in values]

    if len(xs) < 3:
        return None, [0.0] * len(xs)
    sx, sy = scale(xs), scale(ys)
    dx, dy = sx[-1] - sx[0], sy[-1] - sy[0]
    length = math.hypot(dx, dy)
    if length == 0:
        return None, [0.0] * len(xs)
    # Cross product sign: positive distance = below the chord (when the chord rises to the right).
    distances = [-(dx * (sy[i] - sy[0]) - dy * (sx[i] - sx[0])) / length for i in range(len(xs))]
    best = max(range(1, len(xs) - 1), key=lambda i: distances[i])
    return (best if distances[best] > 1e-12 else None), distances


def knee_by_slope(xs: Sequence[float], ys: Sequence[float], slope_factor: float) -> tuple[int | None, list[float]]:
    """Index of the last point before latency per IOPS turns steep (None: no knee), and segment slopes."""
    if len(xs) < 2:
        return None, []
    if xs[1] <= xs[0]:
        return 0, [math.inf]
    floor = 0.01 * ys[0] / xs[0] if xs[0] > 0 else 0.0
    initial = max((ys[1] - ys[0]) / (xs[1] - xs[0]), floor)
    slopes = []
    for i in range(len(xs) - 1):
        rise_x = xs[i + 1] - xs[i]
        slope = (ys[i + 1] - ys[i]) / rise_x if rise_x > 0 else math.inf
        slopes.append(slope)
        if slope > slope_factor * initial:
            return i, slopes
    return None, slopes


def evaluate(points: Sequence[SweepPoint], *, method: str = "chord", stat: str = "mean", slope_factor: float = 3.0,
             min_knee_iops: float | None = None) -> Verdict:
    window = f"sweep of {len(points)} points"
    bound = min_knee_iops if min_knee_iops is not None else 0.0
    if not points:
        return Verdict(NAME, False, float("nan"), bound, "IOPS", window, detail="empty sweep")
    xs = [p.iops for p in points]
    ys = [p.latency_ns(stat) for p in points]
    if method == "chord":
        index, scores = knee_by_chord(xs, ys)
        score_key = "distance_below_chord"
    elif method == "slope":
        index, scores = knee_by_slope(xs, ys, slope_factor)
        score_key = "slope_ns_per_iops"
    else:
        raise ValueError(f"knee method {method!r}: use chord or slope")
    found = index is not None
    knee_index = index if index is not None else len(points) - 1
    knee = points[knee_index]
    rows = tuple(
        {"point": p.label, "iops": p.iops, "latency_ms": y / NS_PER_MS, score_key: scores[i] if i < len(scores) else None,
         "knee": i == knee_index}
        for i, (p, y) in enumerate(zip(points, ys, strict=True))
    )
    what = (f"knee at point {knee.label}: {knee.iops:.6g} IOPS @ {stat} {ys[knee_index] / NS_PER_MS:.4g} ms ({method})" if found
            else f"no knee within the sweep ({method}); last point {knee.label}: {knee.iops:.6g} IOPS")
    passed = min_knee_iops is None or knee.iops >= min_knee_iops
    return Verdict(NAME, passed, knee.iops, bound, "IOPS", window, evidence=rows, detail=what)
