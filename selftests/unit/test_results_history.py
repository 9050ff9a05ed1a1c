"""History: a regression is judged only against stored runs that passed, and no baseline is never a pass.

Each case runs through `regression_verdicts` on a real SQLite store, storing each run as plugins/results.py
does (the test's verdicts plus its regression verdicts), so a run that failed its regression is itself
on record as failed. Every expected figure is worked by hand in the test.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from iogate.judging.relative_to_baseline import Params as RelativeParams
from iogate.judging.spec import Check
from iogate.results.compare import regression_verdicts
from iogate.results.store import ResultsStore, RunPoint
from iogate.verdict import Unit, Verdict

TEST_ID = "tests/test_baseline.py::test_baseline[local]::baseline"
PARAMS = {"bs": "4k", "rwmixread": 100}
IOPS_NOT_BELOW_10 = Check("iops_vs_stored_baseline", "regression", "relative_to_baseline",
                          RelativeParams(tolerance_pct=10, mode="not_below", metric="iops"), where="spec.yaml line 7")
# The test's own verdict: a floor every run below clears (500 IOPS), so only the regression tells them apart.
IOPS_MIN = Verdict("iops_min", True, 0.0, 500.0, Unit.IOPS)
DAY_S = 86_400.0
# 1_800_000_000 s after the epoch is 2027-01-15 08:00:00 UTC (1_700_000_000 = 2023-11-14 22:13:20 UTC, plus
# 100_000_000 s = 1157 days 9 h 46 min 40 s: 2026-11-14 + 61 days = 2027-01-14, 22:13:20 + 9:46:40 = 08:00 next day).
T0 = 1_800_000_000.0
GOOD_RUN = "run r1 of 2027-01-15 08:00:00 UTC"


def reads(iops: float) -> dict:
    return {"read": {"iops": iops, "bw_bytes_per_s": iops * 4096, "mean_ns": 500_000.0, "p99_ns": 1_000_000.0}}


def run(store: ResultsStore, run_id: str, started_at: float, metrics: dict, how: str, *,
        invalid: str | None = None) -> list[Verdict]:
    """One nightly run of the test: its regression verdicts against `how`, then stored with them, as the plugin does."""
    regression = regression_verdicts(store, TEST_ID, PARAMS, metrics, how, [IOPS_NOT_BELOW_10], current_run=run_id,
                                     window="baseline")
    store.add(RunPoint.from_verdicts(run_id=run_id, lab="local", array="local", test_id=TEST_ID, params=PARAMS,
                                     metrics=metrics, verdicts=[IOPS_MIN, *regression], started_at=started_at,
                                     measurement_invalid=invalid))
    return regression


@pytest.fixture
def drifted(tmp_path: Path) -> ResultsStore:
    """A good run at 1000 IOPS (a first run, by request), then two degraded runs at 600 and 580 IOPS."""
    store = ResultsStore(tmp_path / "results.sqlite")
    (first,) = run(store, "r1", T0, reads(1000.0), "none")
    assert first.passed and "no baseline by request" in first.detail
    (second,) = run(store, "r2", T0 + DAY_S, reads(600.0), "last")
    assert not second.passed and second.measured == pytest.approx(40.0)  # 600 / 1000 = 60: 40 points below
    (third,) = run(store, "r3", T0 + 2 * DAY_S, reads(580.0), "last")
    assert not third.passed and third.measured == pytest.approx(42.0)  # vs r1 still, not vs r2: 58 = 42 below
    assert GOOD_RUN in third.detail
    return store


@pytest.mark.parametrize("how", ["last", "median:3"])
def test_a_drifting_nightly_fails_against_its_last_good_run(drifted: ResultsStore, how: str) -> None:
    """Before: 560 vs last (r3, 580) = 96.6, 3.4 points, PASS; vs median:3 (1000, 600, 580 -> 600) = 93.3, 6.7, PASS.
    Now r2 and r3 failed, so neither is a baseline: 560 / 1000 = 56, 44 points below (bound 10), FAIL."""
    (verdict,) = regression_verdicts(drifted, TEST_ID, PARAMS, reads(560.0), how, [IOPS_NOT_BELOW_10], current_run="r4")
    assert not verdict.passed
    assert verdict.measured == pytest.approx(44.0) and verdict.bound == 10
    assert "read = 56.0" in verdict.detail and GOOD_RUN in verdict.detail
    assert "passed over 2 newer stored run(s) that did not pass: run r3 of 2027-01-17 08:00:00 UTC " \
           "(failed iops_vs_stored_baseline); run r2 of 2027-01-16 08:00:00 UTC (failed iops_vs_stored_baseline)" \
           in verdict.detail
    if how == "median:3":  # one passing run of the three asked for: its median is itself, and the label says so
        assert f"median of 1 passing runs, 3 asked ({GOOD_RUN})" in verdict.detail


def test_a_run_within_bounds_of_the_good_run_passes_and_names_it(drifted: ResultsStore) -> None:
    (verdict,) = regression_verdicts(drifted, TEST_ID, PARAMS, reads(950.0), "last", [IOPS_NOT_BELOW_10], current_run="r4")
    assert verdict.passed and verdict.measured == pytest.approx(5.0)  # 950 / 1000 = 95: 5 points below, bound 10
    assert f"last passing {GOOD_RUN}" in verdict.detail


def test_a_failed_run_named_as_baseline_is_no_data(drifted: ResultsStore) -> None:
    (verdict,) = regression_verdicts(drifted, TEST_ID, PARAMS, reads(560.0), "r3", [IOPS_NOT_BELOW_10], current_run="r4")
    assert not verdict.passed and math.isnan(verdict.measured)
    assert verdict.detail.startswith("no data: no passing stored run to compare with: looked for run r3's point of test "
                                     + TEST_ID)
    assert "run r3 of 2027-01-17 08:00:00 UTC (failed iops_vs_stored_baseline)" in verdict.detail


def test_an_invalid_measurement_is_never_a_baseline(tmp_path: Path) -> None:
    """r2 passed every verdict at 1500 IOPS on a saturated generator: its figure is the host's. 1000 IOPS now
    is judged against r1 (1000 = 100, 0 points); against r2 it would read 66.7, 33.3 points below: FAIL."""
    store = ResultsStore(tmp_path / "results.sqlite")
    run(store, "r1", T0, reads(1000.0), "none")
    (r2,) = run(store, "r2", T0 + DAY_S, reads(1500.0), "last",
                invalid="generator saturated: host h1 was 99.0 % CPU busy over run point baseline")
    assert r2.passed  # 1500 vs 1000: 150, not below: its verdicts passed, yet it is no pass
    (verdict,) = regression_verdicts(store, TEST_ID, PARAMS, reads(1000.0), "last", [IOPS_NOT_BELOW_10], current_run="r3")
    assert verdict.passed and verdict.measured == pytest.approx(0.0)
    assert f"last passing {GOOD_RUN}" in verdict.detail
    assert "run r2 of 2027-01-16 08:00:00 UTC (measurement invalid: generator saturated: host h1" in verdict.detail


def test_a_verdict_marked_measurement_invalid_keeps_its_run_from_being_a_baseline(tmp_path: Path) -> None:
    """The mark plugins/verdicts.py puts on a verdict row ("measurement_invalid": reason) counts as an invalid point."""
    store = ResultsStore(tmp_path / "results.sqlite")
    row = {**IOPS_MIN.row(), "measurement_invalid": "generator saturated: host h2 was 93.0 % CPU busy"}
    store.add(RunPoint(run_id="r1", lab="local", array="local", test_id=TEST_ID, params=PARAMS, metrics=reads(1000.0),
                       verdicts=(row,), started_at=T0))
    (verdict,) = regression_verdicts(store, TEST_ID, PARAMS, reads(1000.0), "last", [IOPS_NOT_BELOW_10], current_run="r2")
    assert not verdict.passed and "(measurement invalid: iops_min)" in verdict.detail


def test_a_baseline_run_that_did_no_io_is_no_data_not_new(tmp_path: Path) -> None:
    """The stored run passed its verdicts but did no I/O: 'read is new: not judged, PASS' was the hole."""
    store = ResultsStore(tmp_path / "results.sqlite")
    run(store, "r1", T0, {}, "none")
    (verdict,) = regression_verdicts(store, TEST_ID, PARAMS, reads(1000.0), "last", [IOPS_NOT_BELOW_10], current_run="r2")
    assert not verdict.passed and math.isnan(verdict.measured)
    assert f"read: no data in the baseline: 1000 IOPS in this run, no read I/O in last passing {GOOD_RUN}" in verdict.detail


def test_an_empty_baseline_direction_is_no_data(tmp_path: Path) -> None:
    store = ResultsStore(tmp_path / "results.sqlite")
    run(store, "r1", T0, {"read": {}}, "none")
    (verdict,) = regression_verdicts(store, TEST_ID, PARAMS, reads(1000.0), "last", [IOPS_NOT_BELOW_10], current_run="r2")
    assert not verdict.passed and math.isnan(verdict.measured)
    assert f"read: no iops stored for last passing {GOOD_RUN}" in verdict.detail


@pytest.mark.parametrize("how, looked_for", [
    ("last", "the newest earlier run of test "),
    ("median:5", "the 5 newest earlier runs of test "),
])
def test_a_first_run_without_none_fails_naming_what_it_looked_for(tmp_path: Path, how: str, looked_for: str) -> None:
    store = ResultsStore(tmp_path / "results.sqlite")
    (verdict,) = regression_verdicts(store, TEST_ID, PARAMS, reads(1000.0), how, [IOPS_NOT_BELOW_10], current_run="r1")
    assert not verdict.passed and math.isnan(verdict.measured) and verdict.bound == 10
    assert verdict.detail == (
        f"no data: no passing stored run to compare with: looked for {looked_for}{TEST_ID} with parameters "
        f"{{'bs': '4k', 'rwmixread': 100}} in {store.path} that passed every verdict with a valid measurement; "
        "none is stored (a first run says so with --baseline none)")


def test_only_failed_runs_stored_is_no_data_naming_them(tmp_path: Path) -> None:
    store = ResultsStore(tmp_path / "results.sqlite")
    failed = Verdict("iops_min", False, 300.0, 500.0, Unit.IOPS)
    store.add(RunPoint.from_verdicts(run_id="r1", lab="local", array="local", test_id=TEST_ID, params=PARAMS,
                                     metrics=reads(300.0), verdicts=[failed], started_at=T0))
    (verdict,) = regression_verdicts(store, TEST_ID, PARAMS, reads(1000.0), "last", [IOPS_NOT_BELOW_10], current_run="r2")
    assert not verdict.passed
    assert verdict.detail.endswith(f"; stored, not passed: {GOOD_RUN} (failed iops_min) (a first run says so with --baseline none)")


def test_a_first_run_by_request_records_no_baseline_and_passes(tmp_path: Path) -> None:
    store = ResultsStore(tmp_path / "results.sqlite")
    (verdict,) = regression_verdicts(store, TEST_ID, PARAMS, reads(1000.0), "none", [IOPS_NOT_BELOW_10], current_run="r1",
                                     window="baseline")
    assert verdict.passed and math.isnan(verdict.measured)
    assert verdict.criterion == "iops_vs_stored_baseline" and verdict.window == "baseline"
    assert verdict.detail.startswith("no baseline by request (--baseline none)")


def test_a_point_judged_by_nothing_is_not_a_pass() -> None:
    point = RunPoint(run_id="r1", lab="local", array="local", test_id=TEST_ID, params=PARAMS, metrics=reads(1.0))
    assert not point.passed and point.why_not_passed() == "judged by no verdict"
