"""The load beside events (iogate.events.load) and how the events family judges its windows
(iogate.judging.events_family); expected values worked out by hand."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from iogate.arrays.base import Volume
from iogate.engines.fio.jobfile import job_options
from iogate.engines.workload import Extent, ExtentUnit, RateProcess, Verify, VerifyAlgorithm
from iogate.events.load import (
    SEQUENTIAL_FILL,
    VERIFY_JOB,
    fill_plan,
    phase_s,
    phased_runtime_s,
    relative_rise,
    scaled_iops,
    verify_region,
)
from iogate.hosts.connectors.base import Connection
from iogate.judging.events_family import event_verdicts, judge_windows
from iogate.lab import DeviceIdentity
from iogate.lab.profiles import Profile
from iogate.metrics.windows import DirectionWindow, Window, WindowStats
from iogate.verdict import Unit, Verdict


def connection(name: str = "ev1") -> Connection:
    volume = Volume(name, 1 << 30, DeviceIdentity(backing_file=f"/pool/{name}.img"), {"device": f"/dev/{name}"})
    return Connection("block", "h1", volume, f"/dev/{name}")


def stats(name: str, start_ms: int, end_ms: int, *intervals: tuple[int, float, float | None]) -> WindowStats:
    total = DirectionWindow(tuple(intervals), label=f"window {name}")
    return WindowStats(Window(name, start_ms, end_ms), total, {})


def test_fill_plan_is_one_fill_job_on_the_connection() -> None:
    target = connection()
    plan = fill_plan("fill-ev1", target)
    assert (plan.name, [(j.name, j.workload, j.target) for j in plan.jobs]) == ("fill-ev1", [("fill", SEQUENTIAL_FILL, target)])
    assert (SEQUENTIAL_FILL.read_pct, SEQUENTIAL_FILL.random_pct, SEQUENTIAL_FILL.bs, SEQUENTIAL_FILL.time_based) == (0, 0, 262144, False)


def test_verify_region_checks_4k_writes_at_the_rate_in_both_directions() -> None:
    job = verify_region(connection(), offset=512 << 20, size=64 << 20, runtime_s=30, ramp_s=2, iops=50)
    w = job.workload
    assert job.name == VERIFY_JOB == "verify"
    assert (w.read_pct, w.random_pct, w.bs, w.iodepth) == (0, 100, 4096, 1)
    assert (w.offset, w.size) == (Extent(536870912, ExtentUnit.BYTES), Extent(67108864, ExtentUnit.BYTES))
    assert w.verify == Verify(VerifyAlgorithm.CRC32C, backlog=64)
    assert (w.runtime_s, w.ramp_s, w.rate_iops, w.rate_process) == (30, 2, 50, RateProcess.LINEAR)
    # What fio got from the old raw options (verify_backlog=64, rate_iops=50, fio's default linear process):
    options = job_options(job, "/logs/verify")
    assert (options["verify"], options["verify_backlog"], options["rate_iops"], options["rate_process"]) == (
        "crc32c", "64", "50,50", "linear")
    assert (options["offset"], options["size"]) == ("512m", "64m")


def test_phases_are_a_third_of_the_tile_time_at_least_4_s() -> None:
    long = Profile("p", runtime_s=4, ramp_s=1, tile_runtime_s=120, prefill=True, grid="corners", event_budget_s=600)
    short = Profile("p", runtime_s=4, ramp_s=1, tile_runtime_s=8, prefill=True, grid="corners", event_budget_s=600)
    assert phase_s(long) == 40.0
    assert phase_s(short) == 4.0  # 8 / 3 = 2.67 s is below the 4 s floor
    assert phased_runtime_s(40.0, long) == 3 * 40 + 600
    assert phased_runtime_s(10.0, long, phases=2) == 620


@pytest.mark.parametrize(("scale", "iops", "expected"), [(1.0, 250, 250), (0.1, 250, 25), (0.001, 250, 1), (0.5, 3, 2)])
def test_scaled_iops_rounds_and_never_drops_below_one(scale: float, iops: float, expected: int) -> None:
    lab: Any = SimpleNamespace(load_scale=scale)
    assert scaled_iops(lab, iops) == expected  # 0.5 x 3 = 1.5 rounds half to even: 2


def test_relative_rise_compares_the_event_window_with_the_baseline() -> None:
    # baseline: IOPS (100 + 300) / 2 = 200; latency IOPS-weighted (100 x 1 ms + 300 x 2 ms) / 400 = 1.75 ms.
    # event: IOPS (150 + 50) / 2 = 100; latency only where known: 3.5 ms; rise (3.5 - 1.75) / 1.75 = 100 %.
    baseline = stats("baseline", 1000, 5000, (2000, 100, 1_000_000), (3000, 300, 2_000_000))
    event = stats("event", 5000, 9000, (6000, 150, 3_500_000), (7000, 50, None))
    assert relative_rise(baseline, event) == {
        "baseline_window_ms": [1000, 5000], "event_window_ms": [5000, 9000],
        "baseline_mean_latency_ms": 1.75, "event_mean_latency_ms": 3.5, "mean_latency_rise_pct": 100.0,
        "baseline_iops": 200.0, "event_iops": 100.0,
    }


def test_relative_rise_reads_none_for_a_window_without_data() -> None:
    baseline = stats("baseline", 1000, 5000, (2000, 100, 1_000_000))
    event = stats("event", 5000, 9000)
    rise = relative_rise(baseline, event)
    assert (rise["event_mean_latency_ms"], rise["event_iops"], rise["mean_latency_rise_pct"]) == (None, None, None)
    assert (rise["baseline_mean_latency_ms"], rise["baseline_iops"]) == (1.0, 100.0)


class FakeCheck:
    """Stands in for iogate.judging.spec.Check: records what it was asked to evaluate."""

    def __init__(self, name: str, criterion: str) -> None:
        self.name, self.criterion, self.where = name, criterion, f"spec.yaml:1 {name}"

    def evaluate(self, *args: object, **kwargs: object) -> Any:
        return (self.name, args, kwargs)


def test_each_criterion_judges_the_windows_it_reads() -> None:
    baseline, event = stats("baseline", 0, 4000, (1000, 1, 1)), stats("event", 4000, 8000, (5000, 1, 1))
    series, targets = object(), {"vm1": 25.0}
    checks: Any = [FakeCheck("a", "latency_bound"), FakeCheck("b", "throughput_impact"), FakeCheck("c", "target_iops_held")]
    assert judge_windows(checks, baseline, event, series=series, targets=targets) == [  # type: ignore[arg-type]
        ("a", (event,), {}), ("b", (baseline, event), {}), ("c", (series, targets), {"window": event.window}),
    ]


def test_a_check_that_cannot_judge_a_window_is_an_error_naming_it() -> None:
    baseline, event = stats("baseline", 0, 4000), stats("event", 4000, 8000)
    with pytest.raises(ValueError, match=r"spec.yaml:1 d: events check d \(knee\) cannot judge an event window"):
        judge_windows([FakeCheck("d", "knee")], baseline, event)  # type: ignore[list-item]
    with pytest.raises(ValueError, match=r"events check e \(target_iops_held\) cannot judge"):  # no targets given
        judge_windows([FakeCheck("e", "target_iops_held")], baseline, event)  # type: ignore[list-item]


class VerdictCheck(FakeCheck):
    """A check whose verdict names the windows it was handed (the last one is the judged window)."""

    def evaluate(self, *args: object, **kwargs: object) -> Any:
        return Verdict(self.name, True, float(len(args)), 0.0, Unit.PCT, window=getattr(args[-1], "name", "?"))


def test_event_verdicts_judge_the_recovery_window_as_the_event_window_and_add_the_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    baseline, event, recovery = stats("baseline", 0, 4000), stats("event", 4000, 8000), stats("recovery", 8000, 12000)
    result = object()
    seen: list[tuple[object, tuple[str, ...]]] = []

    def rules(family: object, run: object, *, windows: Any = ()) -> list[Verdict]:
        seen.append((run, tuple(w.name for w in windows)))
        return [Verdict("no_errors", True, 0, 0, Unit.ERRORS, "run")]

    monkeypatch.setattr("iogate.judging.events_family.rule_verdicts", rules)
    checks: Any = [VerdictCheck("a", "throughput_min"), VerdictCheck("b", "throughput_impact")]
    verdicts = event_verdicts(object(), checks, baseline, event, recovery, result)  # type: ignore[arg-type]
    assert [(v.criterion, v.window, v.measured) for v in verdicts] == [
        ("a", "event", 1.0), ("b", "event", 2.0),  # absolute on the event window; impact: baseline and event
        ("a[recovery]", "recovery", 1.0), ("b[recovery]", "recovery", 2.0),
        ("no_errors", "run", 0.0),
    ]
    assert seen == [(result, ("baseline", "event", "recovery"))]
