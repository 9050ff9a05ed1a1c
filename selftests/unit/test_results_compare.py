"""Baselines (last, median:K, run id) and the regression verdicts, with data that passes and data that fails.

Every expected figure is worked out by hand in the test (e.g. 9000 vs 10000 IOPS = 90 = 10 points below).
Which stored runs may be a baseline at all (passed ones only) and what a missing baseline gives:
test_results_history.py.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from iogate.errors import LabFileError
from iogate.judging.relative_to_baseline import Params as RelativeParams
from iogate.judging.spec import Check
from iogate.results.compare import Baseline, NoBaseline, choose_baseline, median_metrics, regression_verdict
from iogate.results.store import ResultsStore, RunPoint
from iogate.verdict import Unit, Verdict

TEST_ID = "tests/test_baseline.py::test_baseline[8k-70]"
PARAMS = {"bs": "8k", "rwmixread": 70}


def metrics(read_iops: float, read_p99_ns: float, write_iops: float = 3000.0, write_p99_ns: float = 2_000_000.0) -> dict:
    return {"read": {"iops": read_iops, "p99_ns": read_p99_ns}, "write": {"iops": write_iops, "p99_ns": write_p99_ns}}


PASSED = Verdict("iops_min", True, 1200.0, 1000.0, Unit.IOPS)


@pytest.fixture
def store(tmp_path: Path) -> ResultsStore:
    store = ResultsStore(tmp_path / "results.sqlite")
    for run_id, started_at, iops in (("r1", 100.0, 10_000.0), ("r2", 200.0, 30_000.0), ("r3", 300.0, 11_000.0),
                                     ("r4", 400.0, 9_000.0)):
        store.add(RunPoint.from_verdicts(run_id=run_id, lab="local", array="local", test_id=TEST_ID, params=PARAMS,
                                         metrics=metrics(iops, 1_000_000.0), started_at=started_at, verdicts=[PASSED]))
    return store


def test_last_is_the_newest_earlier_run_not_the_current_one(store: ResultsStore) -> None:
    baseline = choose_baseline(store, TEST_ID, PARAMS, "last", current_run="r4")
    assert isinstance(baseline, Baseline) and baseline.run_ids == ("r3",)
    assert baseline.metrics["read"]["iops"] == 11_000.0
    assert baseline.label == "last passing run r3 of 1970-01-01 00:05:00 UTC"  # started_at 300 s after the epoch


def test_median_ignores_one_outlier_run(store: ResultsStore) -> None:
    baseline = choose_baseline(store, TEST_ID, PARAMS, "median:3", current_run="r4")
    assert isinstance(baseline, Baseline) and set(baseline.run_ids) == {"r1", "r2", "r3"}
    assert baseline.metrics["read"]["iops"] == 11_000.0  # r2's 30k does not drag it up
    assert baseline.label == ("median of 3 passing runs (run r3 of 1970-01-01 00:05:00 UTC, run r2 of 1970-01-01 00:03:20 UTC, "
                              "run r1 of 1970-01-01 00:01:40 UTC)")


def test_named_run_is_used_and_a_missing_one_is_no_baseline(store: ResultsStore) -> None:
    baseline = choose_baseline(store, TEST_ID, PARAMS, "r1")
    assert isinstance(baseline, Baseline) and baseline.metrics["read"]["iops"] == 10_000.0
    assert baseline.label == "run r1 of 1970-01-01 00:01:40 UTC"
    missing = choose_baseline(store, TEST_ID, PARAMS, "r9")
    assert isinstance(missing, NoBaseline) and "run r9's point of test " + TEST_ID in missing.detail()


def test_no_history_means_no_baseline(tmp_path: Path) -> None:
    empty = ResultsStore(tmp_path / "empty.sqlite")
    assert isinstance(choose_baseline(empty, TEST_ID, PARAMS, "last"), NoBaseline)
    assert isinstance(choose_baseline(empty, TEST_ID, PARAMS, "median:5"), NoBaseline)


def test_other_parameters_are_not_a_baseline(store: ResultsStore) -> None:
    assert isinstance(choose_baseline(store, TEST_ID, {**PARAMS, "bs": "4k"}, "last"), NoBaseline)


def test_median_of_metrics_per_direction() -> None:
    merged = median_metrics([metrics(1.0, 10.0), metrics(3.0, 30.0), metrics(2.0, 20.0, write_iops=7.0)])
    assert merged["read"] == {"iops": 2.0, "p99_ns": 20.0}
    assert merged["write"]["iops"] == 3000.0


def test_median_skips_runs_without_latency_and_keeps_none_when_no_run_has_it() -> None:
    runs = [metrics(1.0, 10.0), {"read": {"iops": 3.0, "p99_ns": None}}, metrics(2.0, 30.0)]
    assert median_metrics(runs)["read"] == {"iops": 2.0, "p99_ns": 20.0}
    assert median_metrics([{"read": {"iops": 1.0, "p99_ns": None}}])["read"]["p99_ns"] is None


def check(name: str, metric: str, mode: str, tolerance_pct: float, criterion: str = "relative_to_baseline") -> Check:
    params = RelativeParams(tolerance_pct=tolerance_pct, mode=mode, metric=metric)
    return Check(name, "regression", criterion, params, where="spec.yaml line 9")


IOPS_DROP_5 = check("iops_vs_stored_baseline", "iops", "not_below", 5)
P99_RISE_10 = check("p99_vs_stored_baseline", "p99_latency_ms", "not_above", 10)
BASE = Baseline("last run r3", metrics(10_000.0, 1_000_000.0), ("r3",))


def test_small_changes_pass() -> None:
    now = metrics(9_600.0, 1_080_000.0)
    iops, p99 = regression_verdict(now, BASE, IOPS_DROP_5), regression_verdict(now, BASE, P99_RISE_10)
    assert iops.passed and p99.passed
    assert iops.criterion == "iops_vs_stored_baseline" and iops.unit == "% points"
    assert iops.measured == pytest.approx(4.0)  # read 9600 / 10000 = 96: 4 points below
    assert p99.measured == pytest.approx(8.0)  # read p99 1.08 / 1.0 ms = 108


def test_iops_drop_beyond_bound_fails_and_names_the_direction() -> None:
    verdict = regression_verdict(metrics(9_000.0, 1_000_000.0), BASE, IOPS_DROP_5)
    assert not verdict.passed
    assert verdict.measured == pytest.approx(10.0) and verdict.bound == 5
    assert verdict.detail.startswith("failing: read |") and "read = 90.0" in verdict.detail
    assert [(r["direction"], r["passed"]) for r in verdict.evidence] == [("read", False), ("write", True)]


def test_p99_rise_beyond_bound_fails() -> None:
    verdict = regression_verdict(metrics(10_000.0, 1_000_000.0, write_p99_ns=2_500_000.0), BASE, P99_RISE_10)
    assert not verdict.passed
    assert verdict.measured == pytest.approx(25.0) and verdict.bound == 10  # 2.5 / 2.0 ms = 125
    assert "failing: write" in verdict.detail


def test_improvements_never_fail_with_one_sided_modes() -> None:
    better = metrics(20_000.0, 500_000.0, 6000.0, 1_000_000.0)
    assert regression_verdict(better, BASE, check("i", "iops", "not_below", 0)).passed
    assert regression_verdict(better, BASE, check("p", "p99_latency_ms", "not_above", 0)).passed


def test_mode_is_honoured_within_fails_on_a_rise_not_below_does_not() -> None:
    faster = metrics(12_000.0, 1_000_000.0)  # read = 120
    assert regression_verdict(faster, BASE, check("iops", "iops", "not_below", 10)).passed
    within = regression_verdict(faster, BASE, check("iops", "iops", "within", 10))
    assert not within.passed and within.measured == pytest.approx(20.0)


def test_metric_is_honoured_bandwidth_and_mean_latency_are_read_from_the_store() -> None:
    then = {"read": {"iops": 1000.0, "bw_bytes_per_s": 8_000_000.0, "mean_ns": 200_000.0, "p99_ns": 1e6}}
    now = {"read": {"iops": 1000.0, "bw_bytes_per_s": 4_000_000.0, "mean_ns": 300_000.0, "p99_ns": 1e6}}
    base = Baseline("run r1", then, ("r1",))
    assert regression_verdict(now, base, check("iops", "iops", "not_below", 10)).passed  # same IOPS
    bandwidth = regression_verdict(now, base, check("mbps", "mb_per_s", "not_below", 10))
    assert not bandwidth.passed and bandwidth.measured == pytest.approx(50.0)  # 4 of 8 MB/s
    assert bandwidth.evidence[0]["baseline"] == pytest.approx(8.0) and bandwidth.evidence[0]["current"] == pytest.approx(4.0)
    mean = regression_verdict(now, base, check("mean", "mean_latency_ms", "not_above", 20))
    assert not mean.passed and mean.measured == pytest.approx(50.0)  # 0.3 vs 0.2 ms


def test_a_vanished_direction_is_a_regression() -> None:
    """The workload stopped writing: reads alone unchanged must not pass."""
    reads_only = {"read": {"iops": 10_000.0, "p99_ns": 1_000_000.0}}
    for each in (IOPS_DROP_5, P99_RISE_10):
        verdict = regression_verdict(reads_only, BASE, each)
        assert not verdict.passed
        assert "failing: write" in verdict.detail and "write vanished: 3000 IOPS in last run r3" in verdict.detail


def test_a_direction_the_baseline_lacks_is_no_data_not_new() -> None:
    """This run trims, the baseline did not: nothing to compare the trims with is a FAIL, not "new, not judged"."""
    now = {**metrics(10_000.0, 1_000_000.0), "trim": {"iops": 50.0, "p99_ns": 1.0}}
    verdict = regression_verdict(now, BASE, IOPS_DROP_5)
    assert not verdict.passed
    assert verdict.detail.startswith("failing: trim |")
    assert "trim: no data in the baseline: 50 IOPS in this run, no trim I/O in last run r3" in verdict.detail
    assert verdict.measured == pytest.approx(0.0)  # read and write unchanged: 0 points; trim has no deviation


def test_no_latency_samples_is_a_fail_not_a_zero() -> None:
    no_samples = {"read": {"iops": 10_000.0, "p99_ns": None}, "write": {"iops": 3000.0, "p99_ns": 2_000_000.0}}
    verdict = regression_verdict(no_samples, BASE, P99_RISE_10)
    assert not verdict.passed and "read: no latency samples in this run" in verdict.detail
    stored_without = Baseline("run r0", no_samples, ("r0",))
    against = regression_verdict(metrics(10_000.0, 1_000_000.0), stored_without, P99_RISE_10)
    assert not against.passed and "read: no latency samples in run r0" in against.detail
    assert regression_verdict(no_samples, BASE, IOPS_DROP_5).passed  # IOPS are there and unchanged


def test_zero_bound_fails_on_any_worsening() -> None:
    assert not regression_verdict(metrics(9_999.0, 1_000_000.0), BASE, check("i", "iops", "not_below", 0)).passed


def test_other_criteria_and_unstored_metrics_are_spec_errors() -> None:
    with pytest.raises(LabFileError, match="spec.yaml line 9: .*criterion 'throughput_min' cannot compare"):
        regression_verdict(metrics(1.0, 1.0), BASE, check("x", "iops", "within", 5, criterion="throughput_min"))
    with pytest.raises(ValueError, match="metric"):  # a spec cannot name it (iogate/judging/relative_to_baseline.py Metric) ...
        check("x", "p50_latency_ms", "within", 5)
    unvalidated = RelativeParams.model_construct(tolerance_pct=5, mode="within", metric="p50_latency_ms")
    with pytest.raises(LabFileError, match="metric 'p50_latency_ms' is not stored"):  # ... and a check built around it is refused here
        regression_verdict(metrics(1.0, 1.0), BASE, Check("x", "regression", "relative_to_baseline", unvalidated, where="spec.yaml"))


def test_nothing_in_either_run_is_no_data_not_a_pass() -> None:
    verdict = regression_verdict({}, Baseline("run r0", {}, ("r0",)), IOPS_DROP_5)
    assert not verdict.passed and verdict.measured != verdict.measured  # NaN: nothing measured
    assert verdict.detail.startswith("no data: neither this run nor run r0 did any I/O")


def test_a_regression_verdict_carries_its_checks_description_and_source() -> None:
    sourced = dataclasses.replace(IOPS_DROP_5, description="IOPS vs the stored run.", source="[BUYER] a PoC re-run; no published figure")
    verdict = regression_verdict(metrics(9_600.0, 1_000_000.0), BASE, sourced)
    assert (verdict.description, verdict.bound_source) == ("IOPS vs the stored run.", "[BUYER] a PoC re-run; no published figure")
