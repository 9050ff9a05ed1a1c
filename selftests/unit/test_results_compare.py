"""Baselines (last, median:K, run id) and the regression verdict, with data that passes and data that fails."""

from __future__ import annotations

from pathlib import Path

import pytest

from iogate.results.compare import Baseline, BaselineNotFound, choose_baseline, median_metrics, regression_verdict
from iogate.results.store import ResultsStore, RunPoint

TEST_ID = "tests/test_baseline.py::test_baseline[8k-70]"
PARAMS = {"bs": "8k", "rwmixread": 70}


def metrics(read_iops: float, read_p99_ns: float, write_iops: float = 3000.0, write_p99_ns: float = 2_000_000.0) -> dict:
    return {"read": {"iops": read_iops, "p99_ns": read_p99_ns}, "write": {"iops": write_iops, "p99_ns": write_p99_ns}}


@pytest.fixture
def store(tmp_path: Path) -> ResultsStore:
    store = ResultsStore(tmp_path / "results.sqlite")
    for run_id, started_at, iops in (("r1", 100.0, 10_000.0), ("r2", 200.0, 30_000.0), ("r3", 300.0, 11_000.0),
                                     ("r4", 400.0, 9_000.0)):
        store.add(RunPoint(run_id=run_id, lab="local", array="local", test_id=TEST_ID, params=PARAMS,
                           metrics=metrics(iops, 1_000_000.0), started_at=started_at))
    return store


def test_last_is_the_newest_earlier_run_not_the_current_one(store: ResultsStore) -> None:
    baseline = choose_baseline(store, TEST_ID, PARAMS, "last", current_run="r4")
    assert baseline is not None and baseline.run_ids == ("r3",)
    assert baseline.metrics["read"]["iops"] == 11_000.0


def test_median_ignores_one_outlier_run(store: ResultsStore) -> None:
    baseline = choose_baseline(store, TEST_ID, PARAMS, "median:3", current_run="r4")
    assert baseline is not None and set(baseline.run_ids) == {"r1", "r2", "r3"}
    assert baseline.metrics["read"]["iops"] == 11_000.0  # r2's 30k does not drag it up
    assert baseline.label == "median of 3 runs"


def test_named_run_is_used_and_a_missing_one_is_an_error(store: ResultsStore) -> None:
    baseline = choose_baseline(store, TEST_ID, PARAMS, "r1")
    assert baseline is not None and baseline.metrics["read"]["iops"] == 10_000.0
    with pytest.raises(BaselineNotFound, match="'r9'"):
        choose_baseline(store, TEST_ID, PARAMS, "r9")


def test_no_history_means_no_baseline(tmp_path: Path) -> None:
    empty = ResultsStore(tmp_path / "empty.sqlite")
    assert choose_baseline(empty, TEST_ID, PARAMS, "last") is None
    assert choose_baseline(empty, TEST_ID, PARAMS, "median:5") is None


def test_other_parameters_are_not_a_baseline(store: ResultsStore) -> None:
    assert choose_baseline(store, TEST_ID, {**PARAMS, "bs": "4k"}, "last") is None


def test_median_of_metrics_per_direction() -> None:
    merged = median_metrics([metrics(1.0, 10.0), metrics(3.0, 30.0), metrics(2.0, 20.0, write_iops=7.0)])
    assert merged["read"] == {"iops": 2.0, "p99_ns": 20.0}
    assert merged["write"]["iops"] == 3000.0


BASE = Baseline("last run r3", metrics(10_000.0, 1_000_000.0), ("r3",))


def test_small_changes_pass() -> None:
    verdict = regression_verdict(metrics(9_600.0, 1_080_000.0), BASE, max_iops_drop_pct=5, max_p99_rise_pct=10)
    assert verdict.passed
    assert verdict.criterion == "regression" and verdict.unit == "%"


def test_iops_drop_beyond_bound_fails_and_is_the_reported_measure() -> None:
    verdict = regression_verdict(metrics(9_000.0, 1_000_000.0), BASE, max_iops_drop_pct=5, max_p99_rise_pct=10)
    assert not verdict.passed
    assert verdict.measured == pytest.approx(10.0) and verdict.bound == 5
    assert "read IOPS drop vs last run r3" in verdict.detail
    failing = [row for row in verdict.evidence if not row["passed"]]
    assert [(r["direction"], r["metric"]) for r in failing] == [("read", "iops")]


def test_p99_rise_beyond_bound_fails() -> None:
    verdict = regression_verdict(metrics(10_000.0, 1_000_000.0, write_p99_ns=2_500_000.0), BASE,
                                 max_iops_drop_pct=5, max_p99_rise_pct=10)
    assert not verdict.passed
    assert verdict.measured == pytest.approx(25.0) and verdict.bound == 10
    assert "write p99 latency rise" in verdict.detail


def test_improvements_never_fail() -> None:
    verdict = regression_verdict(metrics(20_000.0, 500_000.0, 6000.0, 1_000_000.0), BASE, max_iops_drop_pct=0, max_p99_rise_pct=0)
    assert verdict.passed
    assert verdict.measured < 0


def test_zero_bound_fails_on_any_worsening() -> None:
    verdict = regression_verdict(metrics(9_999.0, 1_000_000.0), BASE, max_iops_drop_pct=0, max_p99_rise_pct=0)
    assert not verdict.passed


def test_no_common_direction_is_an_error_not_a_pass() -> None:
    with pytest.raises(ValueError, match="no direction measured in both runs"):
        regression_verdict({"trim": {"iops": 1.0, "p99_ns": 1.0}}, BASE, max_iops_drop_pct=5, max_p99_rise_pct=10)
