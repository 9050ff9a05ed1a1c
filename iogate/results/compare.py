"""Baselines and the regression verdict.

A baseline is chosen among earlier points of the same test id and parameters:
`last` (the newest earlier run), `median:K` (per metric, the median of the K
newest earlier runs: one noisy run does not move it) or an explicit run id.
The regression criterion fails when IOPS dropped by more than X % or p99
latency rose by more than Y % in any direction; the verdict reports the metric
closest to (or furthest past) its bound, with every comparison as evidence.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from iogate.errors import IOGateError
from iogate.results.store import Metrics, ResultsStore
from iogate.verdict import Verdict

_MEDIAN = re.compile(r"^median:(\d+)$")


class BaselineNotFound(IOGateError):
    """An explicitly named baseline run holds no point for this test and parameters."""


@dataclass(frozen=True)
class Baseline:
    label: str  # what the report says it compared against
    metrics: Metrics
    run_ids: tuple[str, ...]


def choose_baseline(store: ResultsStore, test_id: str, params: Mapping[str, Any], how: str, *,
                    current_run: str | None = None) -> Baseline | None:
    """The baseline `how` selects, or None when there is no earlier run to compare with.

    `how` is "last", "median:K" or a run id. Points of `current_run` never count.
    An explicit run id that has no matching point raises BaselineNotFound: a
    requested comparison must not silently be skipped.
    """
    if how == "last":
        earlier = store.history(test_id, params, exclude_run=current_run, limit=1)
        if not earlier:
            return None
        return Baseline(f"last run {earlier[0].run_id}", earlier[0].metrics, (earlier[0].run_id,))
    median = _MEDIAN.match(how)
    if median:
        count = int(median.group(1))
        if count < 1:
            raise ValueError(f"baseline {how!r}: K must be at least 1")
        earlier = store.history(test_id, params, exclude_run=current_run, limit=count)
        if not earlier:
            return None
        return Baseline(f"median of {len(earlier)} runs", median_metrics([p.metrics for p in earlier]),
                        tuple(p.run_id for p in earlier))
    named = [p for p in store.history(test_id, params) if p.run_id == how]
    if not named:
        raise BaselineNotFound(f"baseline run {how!r} has no point for test {test_id} with parameters {dict(params)} "
                               f"in {store.path} (use last, median:K or a stored run id)")
    return Baseline(f"run {how}", named[0].metrics, (how,))


def median_metrics(many: list[Metrics]) -> Metrics:
    """Per direction and metric, the median over the runs that have it."""
    merged: Metrics = {}
    for direction in sorted({d for metrics in many for d in metrics}):
        names = sorted({name for metrics in many for name in metrics.get(direction, {})})
        merged[direction] = {
            name: statistics.median(m[direction][name] for m in many if name in m.get(direction, {})) for name in names
        }
    return merged


def regression_verdict(current: Metrics, baseline: Baseline, *, max_iops_drop_pct: float, max_p99_rise_pct: float) -> Verdict:
    """Fail when any direction's IOPS dropped more than max_iops_drop_pct or its p99 rose more than max_p99_rise_pct."""
    rows: list[dict[str, Any]] = []
    for direction in sorted(set(current) & set(baseline.metrics)):
        now, then = current[direction], baseline.metrics[direction]
        for metric, bound_pct, worse_sign in (("iops", max_iops_drop_pct, -1.0), ("p99_ns", max_p99_rise_pct, 1.0)):
            before, after = then.get(metric, 0.0), now.get(metric, 0.0)
            if before <= 0:
                continue  # nothing measured then: no ratio to judge
            # Positive = worse: an IOPS drop, a latency rise.
            worse_pct = worse_sign * (after - before) / before * 100.0
            rows.append({"direction": direction, "metric": metric, "baseline": before, "current": after,
                         "worse_pct": round(worse_pct, 3), "bound_pct": bound_pct, "passed": worse_pct <= bound_pct})
    if not rows:
        raise ValueError(f"regression vs {baseline.label}: no direction measured in both runs "
                         f"(now {sorted(current)}, baseline {sorted(baseline.metrics)})")

    def severity(row: dict[str, Any]) -> float:
        bound = row["bound_pct"]
        return row["worse_pct"] / bound if bound > 0 else (float("inf") if row["worse_pct"] > 0 else row["worse_pct"])

    worst = max(rows, key=severity)
    label = "IOPS drop" if worst["metric"] == "iops" else "p99 latency rise"
    return Verdict(
        criterion="regression",
        passed=all(r["passed"] for r in rows),
        measured=worst["worse_pct"],
        bound=worst["bound_pct"],
        unit="%",
        evidence=tuple(rows),
        detail=f"worst: {worst['direction']} {label} vs {baseline.label}",
    )
