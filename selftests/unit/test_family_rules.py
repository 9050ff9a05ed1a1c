"""The rules every family gets (iogate/judging/family_rules.py, no_stall, expected points, comparands); expected
values worked by hand from the runs built here."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from iogate.errors import LabFileError
from iogate.judging import no_stall
from iogate.judging.events_family import event_checks, event_verdicts
from iogate.judging.family_rules import rule_checks, rule_verdicts, run_verdicts
from iogate.judging.points import comparands, expected_points
from iogate.judging.scaling_family import stepping_verdicts
from iogate.judging.spec import FamilySpec, load_spec
from iogate.metrics.histogram import Histogram
from iogate.metrics.latency import LatencyHistogram
from iogate.metrics.types import Dir, Direction, JobResult, JobSpan, LatencyStats, RunResult, Sample, Series
from iogate.metrics.windows import Window, window_stats
from iogate.procedures import scaling
from iogate.procedures.scaling import StepResult

S = 1000  # ms


def series(job: str, iops_by_second: dict[int, float], *, seconds: int, host: str = "h1") -> Series:
    """A job logging one line per second (ends at 1 ... `seconds` s), IOPS per second as given (a missing
    second logs no line, as fio), over a span of exactly `seconds` s from 0."""
    samples = tuple(Sample(t * S, job, host, Dir.READ, iops, 1_000_000.0) for t, iops in sorted(iops_by_second.items()) if iops > 0)
    return Series(samples, (), S, (JobSpan(host, job, 0, seconds * S),))


def run(iops_by_second: dict[int, float], *, seconds: int = 30, error: int = 0, name: str = "r1") -> RunResult:
    ios = int(sum(iops_by_second.values()))
    histogram = LatencyHistogram.from_fio(Histogram.from_latencies_ns([1_000_000] * ios))
    read = Direction(Dir.READ, ios=ios, io_bytes=ios * 4096, runtime_ms=seconds * S, iops=ios / seconds,
                     bw_bytes_per_s=ios * 4096 / seconds, clat=LatencyStats(mean_ns=1e6, samples=ios, histogram=histogram))
    job = JobResult("load", "h1", {Dir.READ: read, Dir.WRITE: Direction(Dir.WRITE), Dir.TRIM: Direction(Dir.TRIM)}, error=error)
    return RunResult(name, (job,), series("load", iops_by_second, seconds=seconds), 0, seconds * S)


def steady(iops: float, *, seconds: int = 30, silent: range = range(0)) -> dict[int, float]:
    return {t: (0.0 if t in silent else iops) for t in range(1, seconds + 1)}


def spec(tmp_path: Path, text: str) -> FamilySpec:
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    family = text.split("families:\n  ", 1)[1].split(":", 1)[0]
    return load_spec(path).for_family(family)


# -- no_stall ---------------------------------------------------------------------------------------
def test_eight_silent_seconds_fail_naming_host_job_and_span() -> None:
    # Seconds 11-18 log nothing: no I/O completed from 10 s to 18 s. Rate 22 x 100 / 30 = 73.3 IOPS: 10 I/Os
    # take 0.14 s, so the 2 s floor decides; 8 s >= 2 s.
    verdict = no_stall.evaluate(run(steady(100, silent=range(11, 19))), no_stall.Params())
    assert not verdict.passed
    assert verdict.measured == 8000 and verdict.bound == 2000
    assert (verdict.intervals_considered, verdict.intervals_failing) == (30, 8)
    assert "h1/load: no I/O completed 10-18 s after the measurement began (8 s)" in verdict.detail
    assert verdict.evidence[0]["from_s"] == 10 and verdict.evidence[0]["to_s"] == 18


def test_one_silent_second_of_a_busy_job_is_not_a_stall() -> None:
    verdict = no_stall.evaluate(run(steady(100, silent=range(11, 12))), no_stall.Params())
    assert verdict.passed and verdict.measured == 0
    assert "longest silence 0.50 of it" in verdict.detail  # 1 s of a 2 s span


def test_two_silent_seconds_are_the_default_span() -> None:
    verdict = no_stall.evaluate(run(steady(100, silent=range(11, 13))), no_stall.Params())
    assert not verdict.passed and verdict.measured == 2000


def test_a_slow_job_is_judged_over_a_span_that_holds_ten_of_its_ios() -> None:
    # 2 IOPS with 8 silent seconds: rate 22 x 2 / 30 = 1.467 IOPS; 10 I/Os take 6.82 s -> 7 whole seconds; 8 >= 7.
    verdict = no_stall.evaluate(run(steady(2, silent=range(11, 19))), no_stall.Params())
    assert not verdict.passed and verdict.bound == pytest.approx(6818.182, abs=0.01)
    # 5 silent seconds: rate 25 x 2 / 30 = 1.667 IOPS; 10 I/Os take 6 s; 5 < 6 passes.
    assert no_stall.evaluate(run(steady(2, silent=range(11, 16))), no_stall.Params()).passed


def test_a_job_that_never_completed_an_io_stalled_for_the_whole_run() -> None:
    verdict = no_stall.evaluate(run(steady(0.0)), no_stall.Params())
    # 29 s, not 30: fio's last whole interval is expected only when logged (iogate.metrics.grid), and nothing was.
    assert not verdict.passed and verdict.measured == 29_000 and "0-29 s" in verdict.detail


def test_a_stall_is_named_by_the_window_it_fell_in() -> None:
    windows = (Window("baseline", 0, 10 * S), Window("event", 10 * S, 20 * S), Window("recovery", 20 * S, 30 * S))
    verdict = no_stall.evaluate(run(steady(100, silent=range(22, 30))), no_stall.Params(), windows=windows)
    assert not verdict.passed and "21-29 s" in verdict.detail and "(in the recovery window)" in verdict.detail
    assert verdict.evidence[0]["windows"] == "recovery"


def test_a_run_without_a_per_interval_series_fails_closed() -> None:
    bare = RunResult("r1", run(steady(100)).jobs, Series(), 0, 30 * S)
    verdict = no_stall.evaluate(bare, no_stall.Params())
    assert not verdict.passed and math.isnan(verdict.measured) and "no data" in verdict.detail


def test_a_spec_sets_the_span_or_switches_the_check_off_with_a_reason(tmp_path: Path) -> None:
    longer = spec(tmp_path, "version: 1\nfamilies:\n  baseline:\n    checks:\n      no_stall: {criterion: no_stall, min_interval: 10s}\n")
    assert rule_verdicts(longer, run(steady(100, silent=range(11, 19))))[1].passed  # 8 s < 10 s
    off = spec(tmp_path, "version: 1\nfamilies:\n  baseline:\n    checks:\n"
                         "      no_stall: {criterion: no_stall, off_because: the array pauses I/O by design during failover}\n")
    verdict = next(v for v in rule_verdicts(off, run(steady(0.0))) if v.criterion == "no_stall")
    assert verdict.passed and "switched off by the spec: the array pauses I/O by design during failover" in verdict.detail
    with pytest.raises(LabFileError, match=r"stall_typo.criterion: criterion no_stall cannot judge .* or name it no_stall"):
        spec(tmp_path, "version: 1\nfamilies:\n  baseline:\n    checks:\n      stall_typo: {criterion: no_stall}\n")


# -- the rules in every family ----------------------------------------------------------------------
MEAN_FLOOR_ONLY = ("version: 1\nfamilies:\n  baseline:\n    checks:\n"
                   "      iops_min: {criterion: throughput_min, metric: iops, minimum: 80}\n")


def test_a_mean_iops_floor_passes_ten_silent_seconds_the_stall_rule_does_not(tmp_path: Path) -> None:
    # 60 s at 100 IOPS with 10 s at 0: fio's mean 50 x 100 / 60 = 83.3 IOPS >= 80 passes the floor.
    family = spec(tmp_path, MEAN_FLOOR_ONLY)
    verdicts = run_verdicts(family, run(steady(100, seconds=60, silent=range(21, 31)), seconds=60))
    assert [(v.criterion, v.passed) for v in verdicts] == [("iops_min", True), ("no_errors", True), ("no_stall", False)]
    assert verdicts[0].measured == pytest.approx(83.333, abs=0.001)
    assert verdicts[2].measured == 10_000 and "20-30 s" in verdicts[2].detail


def test_every_family_gets_the_rules_by_default_and_keeps_its_own_bounds(tmp_path: Path) -> None:
    family = spec(tmp_path, "version: 1\nfamilies:\n  baseline:\n    checks:\n      no_errors: {criterion: no_io_errors, max_errors: 2}\n")
    checks = rule_checks(family)
    assert [(c.name, c.criterion) for c in checks] == [("no_errors", "no_io_errors"), ("no_stall", "no_stall")]
    assert checks[0].bound("max_errors") == 2 and "rule every family gets" in checks[1].where
    empty = FamilySpec("sweep", {})
    assert [c.name for c in rule_checks(empty)] == ["no_errors", "no_stall"]


def test_scaling_judges_io_errors_by_rule_and_fails_a_missing_step(tmp_path: Path) -> None:
    family = spec(tmp_path, "version: 1\nfamilies:\n  scaling:\n    checks:\n"
                            "      slow_host_max_below_median: {criterion: relative_to_baseline, metric: iops, mode: not_below,"
                            " tolerance_pct: 10}\n")
    planned = scaling.plan_steps(["h1", "h2"])  # alone-h1, alone-h2, hosts-2
    eio = [run(steady(100), error=5, name=f"r{i}") for i in range(2)]  # every job returned EIO (errno 5)
    results = [StepResult.from_run(step, r) for step, r in zip(planned[:1], eio, strict=False)]
    results.append(StepResult.from_run(planned[1], RunResult("r2", (JobResult("load", "h2", eio[0].jobs[0].directions, error=5),),
                                                              eio[0].series, 0, 30 * S)))
    verdicts = stepping_verdicts(family, results, planned=planned, runs=eio)
    by_name = {(v.criterion, v.window): v for v in verdicts}
    present = by_name[("expected_points", "client stepping")]
    assert not present.passed and present.measured == pytest.approx(200 / 3) and "missing hosts-2" in present.detail
    assert by_name[("slow_host_max_below_median", "constant steps")].passed  # the hosts are alike: this check alone passes
    errors = [v for v in verdicts if v.criterion == "no_errors"]
    assert len(errors) == 2 and not any(v.passed for v in errors) and "error 5 (EIO" in errors[0].detail


# -- expected points and comparands -----------------------------------------------------------------
def test_a_sweep_point_that_never_finished_fails_naming_it() -> None:
    verdict = expected_points(["t1", "t2", "t4", "t8"], ["t1", "t2", "t8"], what="block sweep point")
    assert not verdict.passed and verdict.measured == 75.0 and "missing t4 (1 of 4 planned" in verdict.detail
    assert expected_points(["t1", "t2"], ["t2", "t1"], what="point").passed
    assert not expected_points([], [], what="point").passed  # nothing planned is no data


def test_a_comparison_needs_its_comparands() -> None:
    alone = comparands(["block", "nbd"], ["block"], "block", what="protocol")
    assert not alone.passed and alone.measured == 0.0 and "missing protocol(s) nbd" in alone.detail
    single = comparands(["block"], ["block"], "block", what="protocol")
    assert not single.passed and "nothing to compare: only the baseline protocol block" in single.detail
    no_base = comparands(["block", "nbd"], ["nbd"], "block", what="protocol")
    assert not no_base.passed and "baseline protocol block was not measured" in no_base.detail
    assert comparands(["block", "nbd"], ["block", "nbd"], "block", what="protocol").passed


# -- events: the recovery window is judged --------------------------------------------------------
EVENTS = ("version: 1\nfamilies:\n  events:\n    checks:\n"
          "      snapshot_read_drop_max: {criterion: throughput_impact, metric: iops, direction: read, max_drop_pct: 15}\n"
          "      no_errors: {criterion: no_io_errors}\n")


def test_a_freeze_after_the_snapshot_delete_fails_the_recovery_window(tmp_path: Path) -> None:
    # Baseline 0-10 s, snapshot 10-20 s, recovery 20-30 s; 9 s frozen right after the delete (seconds 21-29).
    family = spec(tmp_path, EVENTS)
    result = run(steady(100, silent=range(21, 30)))
    windows = (Window("baseline", 0, 10 * S), Window("event", 10 * S, 20 * S), Window("recovery", 20 * S, 30 * S))
    baseline, event, recovery = (window_stats(result.series, w) for w in windows)
    verdicts = {v.criterion: v for v in event_verdicts(family, event_checks(family, "snapshot_"), baseline, event, recovery, result)
                if v.criterion != "no_errors" or v.window == "r1"}
    assert verdicts["snapshot_read_drop_max"].passed  # the snapshot itself cost nothing
    after = verdicts["snapshot_read_drop_max[recovery]"]
    assert not after.passed and after.measured == pytest.approx(90.0)  # (100 - 1 x 100 / 10) / 100: 90 % drop
    assert after.window == "recovery vs baseline"
    stall = verdicts["no_stall"]
    assert not stall.passed and stall.measured == 9000 and "(in the recovery window)" in stall.detail


def test_a_scaling_spec_may_name_no_errors_now(tmp_path: Path) -> None:
    # Refused before ("no scaling test applies a check named no_errors"); now its bound is the rule's.
    family = spec(tmp_path, "version: 1\nfamilies:\n  scaling:\n    checks:\n      no_errors: {criterion: no_io_errors, max_errors: 1}\n")
    assert [(c.name, c.bound("max_errors") if c.name == "no_errors" else None) for c in rule_checks(family)] == [
        ("no_errors", 1), ("no_stall", None)]
    one_eio = run(steady(100), error=5)  # one job, one error: within max_errors 1
    assert rule_verdicts(family, one_eio)[0].passed


def test_a_stall_during_an_events_action_is_named_between_the_windows() -> None:
    # A mirror's attach and detach actions belong to no window (between=True): a stall there still fails.
    windows = (Window("baseline", 0, 10 * S), Window("event", 12 * S, 20 * S), Window("recovery", 22 * S, 30 * S))
    verdict = no_stall.evaluate(run(steady(100, silent=range(11, 13))), no_stall.Params(), windows=windows)
    assert not verdict.passed and "10-12 s" in verdict.detail and "between the judged windows" in verdict.detail
