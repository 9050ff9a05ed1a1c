"""Baselines and the regression verdicts.

A baseline is chosen among earlier points of the same test id and parameters:
`last` (the newest earlier run), `median:K` (per metric, the median of the K
newest earlier runs: one noisy run does not move it) or an explicit run id.

Each check of the spec's `regression` family is one verdict, judged exactly as
the spec writes it: its criterion (relative_to_baseline: the baseline = 100),
its metric (iops, mb_per_s, mean_latency_ms, p99_latency_ms, read from the
stored point), its mode (within / not_below / not_above) and tolerance_pct,
in every direction either run did I/O in. Fail closed:
- a direction the baseline did I/O in and this run did not (a workload that
  stopped writing) is a FAIL ("write vanished");
- a latency metric with no samples on either side is a FAIL ("no latency
  samples"), never a comparison against 0;
- a direction only this run has is shown, not judged (nothing to regress from).
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from iogate.errors import IOGateError, LabFileError
from iogate.results.store import Metrics, ResultsStore
from iogate.units import BYTES_PER_MB, NS_PER_MS
from iogate.verdict import Unit, Verdict

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
    """Per direction and metric, the median over the runs that have a value for it (None: none has)."""
    merged: Metrics = {}
    for direction in sorted({d for metrics in many for d in metrics}):
        names = sorted({name for metrics in many for name in metrics.get(direction, {})})
        merged[direction] = {}
        for name in names:
            values = [m[direction][name] for m in many if m.get(direction, {}).get(name) is not None]
            merged[direction][name] = statistics.median(values) if values else None
    return merged


class RegressionCheck(Protocol):
    """What a regression check offers (criteria.spec.Check): name, criterion, bounds, evaluate."""

    name: str
    criterion: str
    where: str
    description: str
    source: str  # where its bound comes from, carried by the verdict

    def bound(self, key: str) -> Any: ...

    def evaluate(self, *inputs: Any, **extra: Any) -> Verdict: ...


BASELINE_CRITERION = "relative_to_baseline"
# Spec metric -> (key in the stored metrics, divisor from the stored unit to the metric's unit).
STORED_METRICS: dict[str, tuple[str, float]] = {
    "iops": ("iops", 1.0),
    "mb_per_s": ("bw_bytes_per_s", BYTES_PER_MB),
    "mean_latency_ms": ("mean_ns", NS_PER_MS),
    "p99_latency_ms": ("p99_ns", NS_PER_MS),
}
THIS_RUN = "this run"


def _stored_key(check: RegressionCheck) -> tuple[str, str, float]:
    if check.criterion != BASELINE_CRITERION:
        raise LabFileError(f"{check.where}: regression check {check.name}: criterion {check.criterion!r} cannot compare "
                           f"with a stored baseline (use {BASELINE_CRITERION})")
    metric = str(check.bound("metric"))
    if metric not in STORED_METRICS:
        raise LabFileError(f"{check.where}: regression check {check.name}: metric {metric!r} is not stored per run "
                           f"(stored: {', '.join(STORED_METRICS)})")
    key, divisor = STORED_METRICS[metric]
    return metric, key, divisor


def regression_verdict(current: Metrics, baseline: Baseline, check: RegressionCheck) -> Verdict:
    """One regression check over every direction either run did I/O in (module docstring)."""
    metric, key, divisor = _stored_key(check)
    tolerance = float(check.bound("tolerance_pct"))
    directions = sorted(set(current) | set(baseline.metrics))
    if not directions:
        raise ValueError(f"regression vs {baseline.label}: neither run did any I/O")
    rows: list[dict[str, Any]] = []
    for direction in directions:
        row: dict[str, Any] = {"direction": direction, "metric": metric}
        if direction not in current:
            before = baseline.metrics[direction].get("iops")
            rows.append({**row, "passed": False, "deviation": None,
                         "finding": f"{direction} vanished: {before:.6g} IOPS in {baseline.label}, no {direction} I/O in this run"})
            continue
        if direction not in baseline.metrics:
            rows.append({**row, "passed": True, "deviation": None, "finding": f"{direction} is new: no baseline, not judged"})
            continue
        before, after = baseline.metrics[direction].get(key), current[direction].get(key)
        missing = [who for who, value in ((THIS_RUN, after), (baseline.label, before)) if value is None]
        if missing:
            rows.append({**row, "passed": False, "deviation": None,
                         "finding": f"{direction}: no latency samples in {' and '.join(missing)}" if key.endswith("_ns")
                         else f"{direction}: no {metric} stored for {' and '.join(missing)}"})
            continue
        judged = check.evaluate({baseline.label: before / divisor, THIS_RUN: after / divisor}, baseline.label)
        relative = 100.0 * after / before if before else float("nan")
        rows.append({**row, "baseline": before / divisor, "current": after / divisor, "relative": relative,
                     "deviation": judged.measured, "passed": judged.passed,
                     "finding": f"{direction} = {relative:.1f}" if before else f"{direction}: {judged.detail}"})
    deviations = [r["deviation"] for r in rows if r["deviation"] is not None]
    failed = [r for r in rows if not r["passed"]]
    measured = max(deviations) if deviations else float("nan")
    mode = check.bound("mode")
    detail = "; ".join(r["finding"] for r in rows) + f" ({metric}, {baseline.label} = 100, mode {mode}, tolerance {tolerance:g} %)"
    if failed:
        detail = f"failing: {', '.join(r['direction'] for r in failed)} | {detail}"
    return Verdict(check.name, not failed, measured, tolerance, Unit.PCT_POINTS, evidence=tuple(rows), detail=detail,
                   description=check.description, bound_source=check.source)
