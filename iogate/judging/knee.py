"""knee: "I/O before saturation", the last load point before latency starts to climb.

Input: sweep points in load order (threads 1, 2, 4 ... or VMs 32, 64 ...), each
with IOPS (x) and a latency statistic (y, mean by default). The rule has two
parts: a *shape* finds the candidate point, a *minimum rise* decides whether
the latency growth after it is saturation at all. Both are deterministic and
report one measured point (no interpolation).

Minimum rise (what counts as saturation). Latency b is a significant rise over
a when it is both min_rise_pct % higher AND min_rise_latency higher:
    b >= a * (1 + min_rise_pct / 100)  and  b - a >= min_rise_latency
Defaults: 50 % and 50 us. Past saturation, every doubling of the load roughly
doubles latency (Little's law: IOPS stay, the queue grows): +100 % per step.
Below it, latency at rising queue depth moves by tens of % from host queueing
and noise (on the loop-device lab run-to-run swings of 20-30 % at a fixed
load), so +50 % sits between the two: 100 -> 110 us (+10 %) is not a knee. The
absolute floor keeps very fast paths honest: 20 -> 40 us is +100 % yet within
the tens of microseconds of scheduling jitter of a shared host and invisible to
any application; 50 us is above that jitter and below what saturation adds on
any array (flash latencies of 0.1-1 ms grow by hundreds of us).

Shape (method), for the candidate knee k:
chord (default; the "maximum distance from the chord" / Kneedle rule)
    Scale x and y to [0, 1] by their min and max, draw the chord from the first
    point to the last; k is the interior point farthest *below* the chord
    (IOPS grew at nearly flat latency up to it, then stalled while latency
    climbed). Scaling makes the shape scale-invariant: hence the minimum rise.
slope
    Initial slope s0 = (y1 - y0) / (x1 - x0), floored at 1 % of y0 / x0; k is
    point i of the first segment i -> i+1 whose slope exceeds slope_factor x s0
    or whose IOPS did not rise (more load, no more I/O).

Outcomes, stated in the verdict's detail with the curve's latency growth
(first -> last point, x factor and + absolute) and per point in the evidence:
- knee at point k >= 1: the shape's candidate when its latency is no
  significant rise over the first point's and a significant rise follows it;
  otherwise the last point before the first point whose latency is a
  significant rise over the first point's. The first point is never the knee:
  nothing lighter shows it unsaturated. Passes when knee IOPS >=
  min_knee_iops (or no bound).
- not saturated within the sweep: no point's latency is a significant rise over
  the first point's. The knee lies beyond the sweep: it passes only the bound
  form, when the sweep's highest IOPS already reach min_knee_iops (the array
  did that much unsaturated); without a bound there is no knee to report: FAIL.
- saturated from the first point: the second point's latency is already a
  significant rise over the first's: the knee lies at or below the lightest
  load. FAIL: start the sweep at a lighter load.
- two points: a significant rise between them cannot tell a knee at the first
  point from saturation already there (no interior point to bend). FAIL; with
  no significant rise the outcome is "not saturated" as above.
- one point (or none) shows neither saturation nor its absence: FAIL.
A spec may accept "not_saturated" (without a bound) and
"saturated_from_first_point" (first point's IOPS >= min_knee_iops) as passes
with `accept: [...]`, saying why in its description; the detail still states
the outcome. Nothing is accepted by default.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Annotated, ClassVar, Literal

from pydantic import AfterValidator

from iogate.judging.common import NS_PER_MS
from iogate.judging.params import FINITE_OR_NOT, Bound, CriterionParams, Evidence, LatencyNs, LatencyStat, PositiveIops, in_range
from iogate.judging.points import SweepPoint
from iogate.verdict import Unit, Verdict

NAME = "knee"
EVIDENCE: tuple[Evidence, ...] = ("curve",)  # what a test hands evaluate()
BOUND = Bound("min_knee_iops", floor=True, unit="IOPS")


class Params(CriterionParams):
    SPEC_REQUIRES: ClassVar[dict[str, str]] = {
        "min_knee_iops": "the IOPS the knee must reach (> 0, IOPS): without it a knee at 50 IOPS passes",
    }
    method: Literal["chord", "slope"] = "chord"
    stat: LatencyStat = "mean"
    slope_factor: Annotated[float, FINITE_OR_NOT, AfterValidator(in_range(
        1, low_open=True, unit="x the initial slope", why="at 1 or below the first rise of latency is already steep"))] = 3.0
    # None only for library use (no bound: the outcome alone); a spec must set it (SPEC_REQUIRES).
    min_knee_iops: PositiveIops | None = None
    min_rise_pct: Annotated[float, FINITE_OR_NOT, AfterValidator(in_range(
        0, low_open=True, unit="% over the lighter point's latency",
        why="a rise of 0 % would call any noise saturation"))] = 50.0  # defaults justified in the module docstring
    min_rise_latency: LatencyNs = 50_000.0  # ns; YAML: 50us
    # Outcomes a spec deliberately accepts as a pass (stated in the detail all the same); none by default.
    accept: tuple[Literal["not_saturated", "saturated_from_first_point"], ...] = ()


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


def significant_rise(before_ns: float, after_ns: float, min_rise_pct: float, min_rise_latency_ns: float) -> bool:
    """after is saturation-sized growth over before: both the relative and the absolute minimum."""
    return after_ns >= before_ns * (1 + min_rise_pct / 100) and after_ns - before_ns >= min_rise_latency_ns


def _growth(ys: Sequence[float]) -> str:
    first, last = ys[0], ys[-1]
    factor = f"x{last / first:.3g}" if first > 0 else "from 0"
    return f"latency {first / NS_PER_MS:.4g} -> {last / NS_PER_MS:.4g} ms over the sweep ({factor}, {(last - first) / 1000:+.4g} us)"


def evaluate(points: Sequence[SweepPoint], params: Params) -> Verdict:
    method, stat, slope_factor, accept = params.method, params.stat, params.slope_factor, params.accept
    min_knee_iops, min_rise_pct, min_rise_latency = params.min_knee_iops, params.min_rise_pct, params.min_rise_latency
    window = f"sweep of {len(points)} points"
    bound = min_knee_iops if min_knee_iops is not None else 0.0
    if method not in ("chord", "slope"):
        raise ValueError(f"knee method {method!r}: use chord or slope")
    if len(points) < 2:
        what = "empty sweep" if not points else f"one point ({points[0].label}) shows neither saturation nor its absence"
        return Verdict(NAME, False, float("nan") if not points else points[0].iops, bound, Unit.IOPS, window, detail=what)
    xs = [p.iops for p in points]
    ys = [p.latency_ns(stat) for p in points]
    bad = [p.label for p, x, y in zip(points, xs, ys, strict=True) if not (math.isfinite(x) and math.isfinite(y)) or y <= 0]
    if bad:
        return Verdict(NAME, False, float("nan"), bound, Unit.IOPS, window,
                       detail=f"no usable {stat} latency / IOPS at point(s) {', '.join(bad)}")

    def rises(before: float, after: float) -> bool:
        return significant_rise(before, after, min_rise_pct, min_rise_latency)

    if method == "chord":
        candidate, scores = knee_by_chord(xs, ys)
        score_key = "distance_below_chord"
    else:
        candidate, scores = knee_by_slope(xs, ys, slope_factor)
        score_key = "slope_ns_per_iops"
    first_saturated = next((i for i in range(1, len(ys)) if rises(ys[0], ys[i])), None)
    rule = f"({method}; saturation = latency +{min_rise_pct:g} % and +{min_rise_latency / 1000:g} us)"
    if first_saturated is None:
        outcome, at = "not saturated within the sweep", max(range(len(xs)), key=lambda i: xs[i])
        reached = min_knee_iops is None or xs[at] >= min_knee_iops
        passed = reached and (min_knee_iops is not None or "not_saturated" in accept)
        what = (f"not saturated within the sweep: no latency rise up to point {points[at].label} ({xs[at]:.6g} IOPS)"
                + ("; the knee lies beyond it" if passed else
                   "; no knee measured" + (f" and the sweep never reached {min_knee_iops:.6g} IOPS" if not reached else "")))
        if passed and min_knee_iops is None:
            what += " (outcome accepted by the spec)"
    else:
        # The shape's candidate counts only while still unsaturated and followed by saturation;
        # else the knee is the last point before the first saturated one.
        shape_ok = candidate is not None and 1 <= candidate < first_saturated and rises(ys[candidate], max(ys[candidate + 1:]))
        at = candidate if shape_ok and candidate is not None else first_saturated - 1
        if at >= 1:
            outcome = "knee"
            passed = min_knee_iops is None or xs[at] >= min_knee_iops
            how = method if shape_ok else "last point before the first latency rise"
            what = f"knee at point {points[at].label}: {xs[at]:.6g} IOPS @ {stat} {ys[at] / NS_PER_MS:.4g} ms ({how})"
        elif len(points) == 2:
            outcome, passed = "two points", False
            what = ("two points: latency rose significantly between them, which cannot tell a knee at the first point "
                    "from saturation already there; sweep at least 3 load points")
        else:
            outcome = "saturated from the first point"
            passed = "saturated_from_first_point" in accept and (min_knee_iops is None or xs[0] >= min_knee_iops)
            what = (f"saturated from the first point: latency already rose significantly at {points[1].label}, so "
                    f"the knee lies at or below {points[0].label} ({xs[0]:.6g} IOPS)"
                    + (" (outcome accepted by the spec)" if "saturated_from_first_point" in accept
                       else ": start the sweep at a lighter load"))
    rows = tuple(
        {"point": p.label, "iops": x, "latency_ms": y / NS_PER_MS, "latency_growth": y / ys[0], "rise_us": (y - ys[0]) / 1000,
         score_key: scores[i] if i < len(scores) else None, "knee": outcome == "knee" and i == at}
        for i, (p, x, y) in enumerate(zip(points, xs, ys, strict=True))
    )
    return Verdict(NAME, passed, xs[at], bound, Unit.IOPS, window, evidence=rows, detail=f"{what}; {_growth(ys)} {rule}")
