"""target_iops_held: every VM (fio job) reaches and keeps its configured IOPS target.

Hitachi's tile criterion, "VMs reach and maintain the configured I/O target":
per job and host, per interval, actual IOPS (all directions) is compared with
the requested rate. A VM holds its target when actual >= (1 - tolerance) x
target in at least `min_fraction` of the intervals in the window. The verdict
passes when every VM holds; its detail names the VMs that missed.

Targets are keyed by job name (every host's job of that name has that target)
or by "host/job" (one VM). Intervals are each VM's expected grid
(iogate.metrics.grid): an interval in which fio logged nothing is 0 IOPS, so
a VM that stalled misses there; the detail names the missed intervals
(numbered from 1 in the window). A targeted VM with no interval at all missed
everything: a silent VM is not a passing VM. Nor is a VM judged on fewer
intervals than were expected: the procedure's `min_intervals` (a tile judged on
3 of the 4 it needs has not shown that it maintains its target), and within a
window every whole interval the window spans but two (the grid's phase may cost
one at an edge, and a run's exit second is not judged: resample.judged_series):
a window the run's intervals do not reach fails, saying what was missing.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Annotated

from pydantic import AfterValidator

from iogate.judging.common import no_data
from iogate.judging.params import FINITE_OR_NOT, Bound, CriterionParams, Evidence, in_range
from iogate.metrics import grid
from iogate.metrics.types import Series
from iogate.metrics.windows import Window
from iogate.verdict import Unit, Verdict

NAME = "target_iops_held"
EVIDENCE: tuple[Evidence, ...] = ("targets",)  # what a test hands evaluate()
BOUND = Bound("min_fraction", floor=True, unit="share of intervals (the verdict in %)", proposed=False, shown_scale=100.0)


class Params(CriterionParams):
    tolerance: Annotated[float, FINITE_OR_NOT, AfterValidator(in_range(
        0, 1, high_open=True, unit="a fraction of the target: 0.1 = a VM may run 10 % below it",
        why="at 1 a VM doing 0 IOPS would hold its target"))] = 0.1
    min_fraction: Annotated[float, FINITE_OR_NOT, AfterValidator(in_range(
        0, 1, low_open=True, unit="a fraction of the intervals: 1.0 = every interval",
        why="above 1 could never pass, 0 never fail"))] = 0.9


def _target_for(targets: Mapping[str, float], host: str, job: str) -> float | None:
    return targets.get(f"{host}/{job}", targets.get(job))


def _ranges(numbers: list[int]) -> str:
    """[3, 4, 5, 9] -> "3-5, 9"."""
    parts: list[list[int]] = []
    for n in numbers:
        if parts and n == parts[-1][-1] + 1:
            parts[-1].append(n)
        else:
            parts.append([n])
    return ", ".join(f"{p[0]}-{p[-1]}" if len(p) > 1 else f"{p[0]}" for p in parts)


def expected_intervals(window: Window | None, interval_ms: int, min_intervals: int) -> int:
    """How many intervals each VM must be judged on: min_intervals, and within a window every whole interval
    it spans but two."""
    spanned = window.duration_ms // interval_ms - 2 if window is not None and interval_ms > 0 else 0
    return max(min_intervals, spanned, 1)


def evaluate(series: Series, targets: Mapping[str, float], params: Params, *, window: Window | None = None,
             min_intervals: int = 1) -> Verdict:
    tolerance, min_fraction = params.tolerance, params.min_fraction
    window_label = window.name if window else "measure"
    bound_pct = 100.0 * min_fraction
    bad = sorted(k for k, v in targets.items() if v is None or math.isnan(v) or v <= 0)
    if bad:
        return no_data(NAME, bound_pct, Unit.PCT_INTERVALS, window_label, f"IOPS target missing or not positive for {', '.join(bad)}")
    per_vm = {
        vm: [row for row in rows if window is None or window.holds(row[0], series.interval_ms)]
        for vm, rows in grid.per_vm(series).items()
        if _target_for(targets, *vm) is not None
    }
    vms = sorted(vm for vm, rows in per_vm.items() if rows)
    seen_keys = {f"{h}/{j}" for h, j in vms} | {j for _, j in vms}
    rows = []
    for host, job in vms:
        target = _target_for(targets, host, job) or 0.0
        floor = (1 - tolerance) * target
        per_interval = [iops for _, iops, _ in per_vm[(host, job)]]
        missed_at = [n for n, iops in enumerate(per_interval, 1) if iops < floor]
        rows.append({"vm": f"{host}/{job}", "target_iops": target, "floor_iops": floor, "intervals": len(per_interval),
                     "held": len(per_interval) - len(missed_at), "missed_intervals": _ranges(missed_at),
                     "min_iops": min(per_interval), "mean_iops": sum(per_interval) / len(per_interval)})
    for key in sorted(set(targets) - seen_keys):
        rows.append({"vm": key, "target_iops": targets[key], "floor_iops": (1 - tolerance) * targets[key], "intervals": 0, "held": 0,
                     "missed_intervals": "all (no intervals)", "min_iops": 0.0, "mean_iops": 0.0})
    expected = expected_intervals(window, series.interval_ms, min_intervals)
    for row in rows:
        row["held_pct"] = 100.0 * row["held"] / row["intervals"] if row["intervals"] else 0.0
        row["passed"] = row["intervals"] >= expected and row["held"] >= min_fraction * row["intervals"]
        if 0 < row["intervals"] < expected:
            row["missed_intervals"] = f"judged {row['intervals']} of the {expected} intervals expected" + (
                f"; missed {row['missed_intervals']}" if row["missed_intervals"] else "")
    missed = [r for r in rows if not r["passed"]]
    if not rows:
        return no_data(NAME, bound_pct, Unit.PCT_INTERVALS, window_label, "no IOPS targets given")
    worst = min(rows, key=lambda r: r["held_pct"])
    detail = f"{len(rows) - len(missed)}/{len(rows)} VMs held target -{tolerance:.0%} in >= {min_fraction:.0%} of intervals"
    if missed:
        shown = ", ".join(f"{r['vm']} ({r['held']}/{r['intervals']} intervals, min {r['min_iops']:.1f} of {r['target_iops']:g} IOPS "
                          f"(floor {r['floor_iops']:.4g}), "
                          f"missed intervals {r['missed_intervals']})" for r in missed[:10])
        more = f" and {len(missed) - 10} more" if len(missed) > 10 else ""
        detail += f"; missed: {shown}{more}"
    return Verdict(
        NAME, not missed, worst["held_pct"], bound_pct, Unit.PCT_INTERVALS, window_label,
        intervals_considered=sum(r["intervals"] for r in rows),
        intervals_failing=sum(r["intervals"] - r["held"] for r in rows),
        evidence=tuple(rows), detail=detail,
    )
