"""No data is never a pass: every criterion fails on empty, NaN or missing input and says what was missing."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import pytest

from iogate.engines.fio.parse import load_json, parse_jobs
from iogate.judging import (
    iops_at_latency,
    latency_bound,
    latency_delta,
    relative_to_baseline,
    scaling_efficiency,
    steady_state,
    target_iops_held,
    throughput_impact,
    throughput_min,
)
from iogate.judging.points import SweepPoint
from iogate.metrics.types import Dir, JobResult, LatencyStats, RunResult, Sample, Series
from iogate.metrics.windows import event_windows, window_stats
from iogate.verdict import Verdict

DATA = Path(__file__).resolve().parent.parent / "data" / "fio"
T0 = 1_795_600_000_000


def real_run(strip: str = "") -> RunResult:
    """randrw.json (2 jobs, reads and writes); strip="bins" drops the json+ histogram, "clat" every latency figure."""
    data = load_json((DATA / "randrw.json").read_text(), "randrw.json")
    jobs = []
    for job in parse_jobs(data, "localhost"):
        directions = {}
        for d, part in job.directions.items():
            clat = LatencyStats() if strip == "clat" else dataclasses.replace(part.clat, histogram=None) if strip == "bins" else part.clat
            directions[d] = dataclasses.replace(part, clat=clat)
        jobs.append(JobResult(job.name, job.host, directions))
    return RunResult("randrw", tuple(jobs), Series(), 0, 0)


def failed_for(verdict: Verdict, missing: str) -> None:
    assert not verdict.passed, verdict.line()
    assert math.isnan(verdict.measured)
    assert f"no data: {missing}" in verdict.detail, verdict.detail


def unpaired_windows() -> tuple:  # type: ignore[type-arg]
    """Reads every second; latency known in the first 4 s only (no clat line could be paired after that)."""
    samples = tuple(Sample(T0 + 1000 * (k + 1), "vm1", "h1", Dir.READ, 100.0, 1e5 if k < 4 else None, 1) for k in range(8))
    baseline, event, _ = event_windows(T0, T0 + 8000, T0 + 4000, T0 + 8000)
    series = Series(samples)
    return window_stats(series, baseline), window_stats(series, event)


def test_latency_bound_on_a_run_without_bins_fails_instead_of_reading_0_ms() -> None:
    assert latency_bound.evaluate(real_run(), latency_bound.Params(max_latency="1s")).passed  # the same run with its bins passes
    failed_for(latency_bound.evaluate(real_run("bins"), latency_bound.Params(max_latency="1s")),
               "no latency histogram bins in run randrw (read)")
    failed_for(latency_bound.evaluate(real_run("clat"), latency_bound.Params(max_latency="1s", stat="mean", direction="all")),
               "no latency samples in run randrw (all)")


def test_latency_checks_on_a_window_without_latency_samples_fail_naming_the_window() -> None:
    baseline, event = unpaired_windows()
    assert event.total.iops == 100.0  # the I/O is there, only its latency is unknown
    failed_for(latency_bound.evaluate(event, latency_bound.Params(max_latency="1s", stat="mean")),
               "no latency samples in window event (read)")
    failed_for(latency_bound.evaluate(event, latency_bound.Params(max_latency="1s", stat="p99")),
               "no latency samples in window event (read) (no clat_hist log lines)")
    failed_for(latency_delta.evaluate(baseline, event, latency_delta.Params(max_rise_pct=1000, stats=("mean",))),
               "no latency samples in window event (all)")


def test_throughput_checks_fail_on_a_direction_with_no_intervals() -> None:
    baseline, event = unpaired_windows()
    failed_for(throughput_min.evaluate(event, throughput_min.Params(minimum=1, direction="write")), "no intervals in window event (write)")
    failed_for(throughput_impact.evaluate(baseline, event, throughput_impact.Params(max_drop_pct=99.9, direction="write")),
               "no intervals in window baseline (write)")
    assert throughput_min.evaluate(event, throughput_min.Params(minimum=1, direction="read")).passed


def test_a_sweep_point_that_could_not_be_measured_fails_iops_at_latency() -> None:
    _, event = unpaired_windows()
    point = SweepPoint.from_source(event, "qd=8")
    assert point.iops == 100.0 and math.isnan(point.latency_mean_ns)
    assert "no latency samples in window event (all)" in point.missing
    good = SweepPoint("qd=1", 50.0, 1e5, {99.0: 2e5})
    failed_for(iops_at_latency.evaluate([good, point], iops_at_latency.Params(max_latency="1ms", min_iops=10)),
               "point qd=8: no latency samples")
    failed_for(iops_at_latency.evaluate([], iops_at_latency.Params(max_latency="1ms", min_iops=10)), "no sweep points")
    nan_point = SweepPoint("qd=2", math.nan, 1e5)
    failed_for(iops_at_latency.evaluate([good, nan_point], iops_at_latency.Params(max_latency="1ms", min_iops=10)),
               "point qd=2: IOPS or mean latency is NaN")
    assert iops_at_latency.evaluate([good], iops_at_latency.Params(max_latency="1ms", min_iops=10)).passed


def test_nan_figures_fail_the_comparison_criteria() -> None:
    failed_for(relative_to_baseline.evaluate({"fc": 100.0, "nfs": math.nan}, "fc", relative_to_baseline.Params(tolerance_pct=5)),
               "iops not measured for nfs")
    assert relative_to_baseline.evaluate({"fc": 100.0, "nfs": 99.0}, "fc", relative_to_baseline.Params(tolerance_pct=5)).passed
    failed_for(scaling_efficiency.evaluate({1: 10.0, 2: math.nan}, scaling_efficiency.Params(min_efficiency_pct=90), single_host=10.0),
               "aggregate not measured at 2 hosts")
    failed_for(scaling_efficiency.evaluate(100.0, scaling_efficiency.Params(min_efficiency_pct=90), limit=0.0),
               "reference (limit 0) is not a positive figure")
    failed_for(scaling_efficiency.evaluate({}, scaling_efficiency.Params(min_efficiency_pct=90), limit=10.0), "no aggregate figure")
    failed_for(steady_state.evaluate([100.0] * 3 + [math.nan] + [100.0] * 3, steady_state.Params()), "round(s) 4 not measured")
    assert steady_state.evaluate([100.0] * 7, steady_state.Params()).passed


def test_a_nan_iops_target_fails_target_iops_held() -> None:
    series = Series(tuple(Sample(T0 + 1000 * (k + 1), "vm1", "h1", Dir.READ, 100.0, 1e5, 1) for k in range(5)))
    failed_for(target_iops_held.evaluate(series, {"vm1": math.nan}, target_iops_held.Params()),
               "IOPS target missing or not positive for vm1")
    failed_for(target_iops_held.evaluate(series, {}, target_iops_held.Params()), "no IOPS targets given")
    assert target_iops_held.evaluate(series, {"vm1": 100}, target_iops_held.Params()).passed


@pytest.mark.parametrize("strip", ["bins", "clat"])
def test_sweep_points_from_runs_without_latency_say_what_was_missing(strip: str) -> None:
    point = SweepPoint.from_run(real_run(strip), "p1")
    assert point.iops > 0 and point.missing
