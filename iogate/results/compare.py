"""Baselines and the regression verdicts.

A baseline is chosen among earlier points of the same test id and parameters
that *passed* (RunPoint.passed: every verdict passed, none measurement-invalid;
a failed, invalid or schema-1 point never is one, so a nightly that degrades
run after run is compared with its last good run, not with the last bad one):
`last` (the newest passing earlier run), `median:K` (per metric, the median of
the K newest passing earlier runs: one noisy run does not move it) or an
explicit run id (which must have passed). `none` asks for no comparison: a
first run says so, and each regression check records "no baseline by request".
Every verdict names the baseline's run id(s) and date(s), and the newer stored
runs it passed over and why.

Each check of the spec's `regression` family is one verdict, judged exactly as
the spec writes it: its criterion (relative_to_baseline: the baseline = 100),
its metric (iops, mb_per_s, mean_latency_ms, p99_latency_ms, read from the
stored point), its mode (within / not_below / not_above) and tolerance_pct,
in every direction either run did I/O in. Fail closed, no data is a FAIL:
- no passing stored run to compare with (without `none`): the verdict names
  what was looked for and the stored runs passed over;
- a direction the baseline did I/O in and this run did not (a workload that
  stopped writing): "write vanished";
- a direction this run did I/O in and the baseline did not (a baseline run
  that did no I/O at all included): nothing to compare with, not "new";
- a metric with no value on either side (no latency samples): never a
  comparison against 0.
"""

from __future__ import annotations

import re
import statistics
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from iogate.errors import LabFileError
from iogate.judging import relative_to_baseline
from iogate.results.store import Metrics, ResultsStore, RunPoint
from iogate.units import BYTES_PER_MB, NS_PER_MS
from iogate.verdict import Unit, Verdict

_MEDIAN = re.compile(r"^median:(\d+)$")
NO_BASELINE = "none"  # --baseline none: a first run, compared with nothing, by request
LAST = "last"
PASSED_OVER_SHOWN = 5  # a verdict lists at most this many passed-over runs, then counts the rest


def check_baseline_option(how: str) -> str:
    """`how` if it is none, last, median:K (K >= 1) or a run id; a malformed median is an error, not a run id."""
    if how.startswith("median:"):
        match = _MEDIAN.match(how)
        if not match or int(match.group(1)) < 1:
            raise ValueError(f"baseline {how!r}: median:K needs a whole number K >= 1 (e.g. median:5)")
    elif not how.strip():
        raise ValueError("baseline '': use none, last, median:K or a stored run id")
    return how


def stored_date(epoch_s: float) -> str:
    """A stored point's start as a reviewer reads it: UTC, to the second."""
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(epoch_s))


def run_label(point: RunPoint) -> str:
    return f"run {point.run_id} of {stored_date(point.started_at)}"


def _passed_over_text(passed_over: Sequence[RunPoint]) -> str:
    shown = [f"{run_label(p)} ({p.why_not_passed()})" for p in passed_over[:PASSED_OVER_SHOWN]]
    more = len(passed_over) - len(shown)
    return "; ".join(shown) + (f"; and {more} more" if more > 0 else "")


@dataclass(frozen=True)
class Baseline:
    label: str  # what the report says it compared against: run id(s) and date(s)
    metrics: Metrics
    run_ids: tuple[str, ...]
    passed_over: tuple[RunPoint, ...] = ()  # newer stored runs that did not pass, newest first

    def note(self) -> str:
        """What a reviewer should know beside the figures: the newer runs this baseline skipped."""
        if not self.passed_over:
            return ""
        return f"passed over {len(self.passed_over)} newer stored run(s) that did not pass: {_passed_over_text(self.passed_over)}"


@dataclass(frozen=True)
class NoBaseline:
    """No passing stored run to compare with: what was looked for, and the stored runs that did not qualify."""

    looked_for: str
    passed_over: tuple[RunPoint, ...] = ()

    def detail(self) -> str:
        found = (f"; stored, not passed: {_passed_over_text(self.passed_over)}" if self.passed_over
                 else "; none is stored")
        return (f"no data: no passing stored run to compare with: looked for {self.looked_for}{found} "
                f"(a first run says so with --baseline {NO_BASELINE})")


def _what(store: ResultsStore, test_id: str, params: Mapping[str, Any]) -> str:
    return f"test {test_id} with parameters {dict(params)} in {store.path}"


def choose_baseline(store: ResultsStore, test_id: str, params: Mapping[str, Any], how: str, *,
                    current_run: str | None = None) -> Baseline | NoBaseline:
    """The baseline `how` selects among passing earlier points, or NoBaseline saying what was looked for.

    `how` is "last", "median:K" or a run id ("none" is the caller's: nothing is chosen). Points of
    `current_run` never count.
    """
    if how == NO_BASELINE:
        raise ValueError(f"baseline {NO_BASELINE!r} chooses nothing: record 'no baseline by request' instead")
    earlier = store.history(test_id, params, exclude_run=current_run)  # every stored point, newest first
    median = _MEDIAN.match(check_baseline_option(how))
    if how == LAST or median:
        count = int(median.group(1)) if median else 1
        chosen = store.history(test_id, params, exclude_run=current_run, limit=count, passed_only=True)
        passed_over = tuple(p for p in earlier if not p.passed and (not chosen or p.started_at >= chosen[-1].started_at))
        if not chosen:
            wanted = "the newest earlier run" if how == LAST else f"the {count} newest earlier runs"
            return NoBaseline(f"{wanted} of {_what(store, test_id, params)} that passed every verdict "
                              "with a valid measurement", passed_over)
        if how == LAST:
            return Baseline(f"last passing {run_label(chosen[0])}", chosen[0].metrics, (chosen[0].run_id,), passed_over)
        short = f", {count} asked" if len(chosen) < count else ""
        label = f"median of {len(chosen)} passing runs{short} ({', '.join(run_label(p) for p in chosen)})"
        return Baseline(label, median_metrics([p.metrics for p in chosen]), tuple(p.run_id for p in chosen), passed_over)
    named = [p for p in earlier if p.run_id == how]
    looked_for = f"run {how}'s point of {_what(store, test_id, params)}"
    if not named:
        return NoBaseline(looked_for)
    if not named[0].passed:
        return NoBaseline(looked_for, (named[0],))
    return Baseline(run_label(named[0]), named[0].metrics, (how,))


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
    """What a regression check offers (iogate.judging.spec.Check): name, criterion, bounds, evaluate."""

    name: str
    criterion: str
    where: str
    description: str
    source: str  # where its bound comes from, carried by the verdict

    def bound(self, key: str) -> Any: ...

    def evaluate(self, *inputs: Any, **extra: Any) -> Verdict: ...


BASELINE_CRITERION = relative_to_baseline.NAME  # the one criterion that compares figures with a reference
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


def _iops_text(metrics: Mapping[str, float | None]) -> str:
    iops = metrics.get("iops")
    return "no IOPS stored" if iops is None else f"{iops:.6g} IOPS"


def regression_verdict(current: Metrics, baseline: Baseline, check: RegressionCheck) -> Verdict:
    """One regression check over every direction either run did I/O in (module docstring)."""
    metric, key, divisor = _stored_key(check)
    tolerance = float(check.bound("tolerance_pct"))
    mode = check.bound("mode")
    rule = f"({metric}, {baseline.label} = 100, mode {mode}, tolerance {tolerance:g} %)"
    note = f"; {baseline.note()}" if baseline.note() else ""
    directions = sorted(set(current) | set(baseline.metrics))
    if not directions:
        return Verdict(check.name, False, float("nan"), tolerance, Unit.PCT_POINTS,
                       detail=f"no data: neither this run nor {baseline.label} did any I/O {rule}{note}")
    rows: list[dict[str, Any]] = []
    for direction in directions:
        row: dict[str, Any] = {"direction": direction, "metric": metric}
        if direction not in current:
            rows.append({**row, "passed": False, "deviation": None,
                         "finding": f"{direction} vanished: {_iops_text(baseline.metrics[direction])} in {baseline.label}, "
                                    f"no {direction} I/O in this run"})
            continue
        if direction not in baseline.metrics:
            rows.append({**row, "passed": False, "deviation": None,
                         "finding": f"{direction}: no data in the baseline: {_iops_text(current[direction])} in this run, "
                                    f"no {direction} I/O in {baseline.label}"})
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
    detail = "; ".join(r["finding"] for r in rows) + f" {rule}{note}"
    if failed:
        detail = f"failing: {', '.join(r['direction'] for r in failed)} | {detail}"
    return Verdict(check.name, not failed, measured, tolerance, Unit.PCT_POINTS, evidence=tuple(rows), detail=detail,
                   description=check.description, bound_source=check.source)


def no_baseline_verdict(missing: NoBaseline, check: RegressionCheck) -> Verdict:
    """No passing stored run and no `--baseline none`: no data, a FAIL naming what was looked for."""
    _stored_key(check)  # a spec error is one on a first run too
    return Verdict(check.name, False, float("nan"), float(check.bound("tolerance_pct")), Unit.PCT_POINTS,
                   detail=missing.detail(), description=check.description, bound_source=check.source)


def by_request_verdict(check: RegressionCheck) -> Verdict:
    """--baseline none: this run says it is compared with nothing (a first run); nothing judged, said so."""
    _stored_key(check)
    return Verdict(check.name, True, float("nan"), float(check.bound("tolerance_pct")), Unit.PCT_POINTS,
                   detail=f"no baseline by request (--baseline {NO_BASELINE}): not compared with any stored run; "
                          "stored, a later run's baseline if it passes",
                   description=check.description, bound_source=check.source)


def regression_verdicts(store: ResultsStore, test_id: str, params: Mapping[str, Any], current: Metrics, how: str,
                        checks: Iterable[RegressionCheck], *, current_run: str | None = None,
                        window: str = "measure") -> list[Verdict]:
    """Every regression check of one run point against the baseline `how` chooses (or none, by request)."""
    if how == NO_BASELINE:
        verdicts = [by_request_verdict(check) for check in checks]
    else:
        chosen = choose_baseline(store, test_id, params, how, current_run=current_run)
        if isinstance(chosen, NoBaseline):
            verdicts = [no_baseline_verdict(chosen, check) for check in checks]
        else:
            verdicts = [regression_verdict(current, chosen, check) for check in checks]
    return [replace(v, window=window) for v in verdicts]
