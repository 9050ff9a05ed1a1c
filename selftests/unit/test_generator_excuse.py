"""The saturated-generator excuse covers only what was judged on the saturated run point and host.

Every expected value below is worked by hand from the figures in the test
(busy % of each host in each point, the verdicts' outcomes); none is computed
with the code under test. The pytest-level outcome (failed / broken, the
message, the verdict rows) is selftests/unit/test_verdict_output.py.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import pytest

from fixtures.stash import MeasuredPoint
from iogate.hosts.initiator import Initiator
from iogate.judging.spec import load_spec
from iogate.lab import load_lab
from iogate.metrics.generator import SaturatedHost, hosts_sharing_array_cpus, invalid_reason, judged_on, missed_vm_hosts
from iogate.metrics.hostcpu import busy_pct_between, cpu_ticks
from iogate.metrics.types import JobResult, RunResult, Series
from iogate.metrics.windows import DirectionWindow
from iogate.report.categories import (
    INFRASTRUCTURE,
    MEASUREMENT_INVALID,
    NOTHING_JUDGED,
    PRODUCT_DEFECT,
    category_rules,
    classify,
)
from iogate.report.figures import significant
from iogate.results.store import RunPoint
from iogate.verdict import Unit, Verdict
from plugins.verdicts import Judge, Judged, _on_point

ROOT = Path(__file__).resolve().parents[2]

# A KVM host's aggregate cpu line before and after a run point. Between them: user +8190 (of which guest +8182:
# the kernel counts guest time in user too), nice 0, system +6, idle +1700, iowait +100, irq +1, softirq +3,
# steal 0, guest +8182, guest_nice 0.
KVM_BEFORE = "cpu  1214300 3120 230110 9837390 12450 0 5021 0 1100230 0\ncpu0 607150 1560 115055 4918695 6225 0 2510 0 550115 0\n"
KVM_AFTER = "cpu  1222490 3120 230116 9839090 12550 1 5024 0 1108412 0\ncpu0 611245 1560 115058 4919545 6275 0 2512 0 554206 0\n"


def test_a_kvm_host_82_pct_busy_reads_82_not_90_1() -> None:
    """Busy = 8190 + 0 + 6 + 1 + 3 + 0 = 8200 of 8200 + 1700 + 100 = 10000 ticks: 82.0 %. Summing all ten fields
    counted the guests twice: (8200 + 8182) / (10000 + 8182) = 16382 / 18182 = 90.1 %, a saturated host."""
    before, after = cpu_ticks(KVM_BEFORE), cpu_ticks(KVM_AFTER)
    assert (after[0] - before[0], after[1] - before[1]) == (8200, 10000)
    assert busy_pct_between(before, after) == 82.0


def test_the_initiator_reads_its_ticks_by_the_same_rule() -> None:
    """The engines' busy % comes from Initiator.cpu_ticks: busy 1222490 + 3120 + 230116 + 1 + 5024 + 0 = 1460751,
    total 1460751 + 9839090 + 12550 = 11312391 (the guest columns left out)."""
    initiator = object.__new__(Initiator)
    initiator.read_text = lambda path: KVM_AFTER if path == "/proc/stat" else ""  # type: ignore[method-assign]
    assert initiator.cpu_ticks() == (1460751, 11312391)


def test_a_cpu_line_without_guest_fields_and_a_text_that_is_not_proc_stat() -> None:
    """An old kernel's seven fields: busy 10 + 0 + 5 + 0 + 5 = 20 of 20 + 70 + 10 = 100."""
    assert cpu_ticks("cpu  10 0 5 70 10 0 5\n") == (20, 100)
    with pytest.raises(ValueError, match="aggregate cpu line"):
        cpu_ticks("intr 1 2 3\n")


def test_niced_time_is_busy() -> None:
    """A niced neighbour (a test suite run under `nice`) beside a light fio: user 300, nice 9200, system 200,
    idle 200, iowait 100: busy 300 + 9200 + 200 = 9700 of 10000 = 97 %, a saturated generator; counting nice as
    idle would read 5 % and let the point be judged while the neighbour took its CFS share from fio."""
    before, after = cpu_ticks("cpu  0 0 0 0 0 0 0 0\n"), cpu_ticks("cpu  300 9200 200 200 100 0 0 0\n")
    assert busy_pct_between(before, after) == 97.0


def _run(name: str, *hosts: str, busy: dict[str, float] | None = None) -> RunResult:
    return RunResult(name, tuple(JobResult(f"job{i}", host, {}) for i, host in enumerate(hosts)), Series(), 0, 0,
                     cpu_busy_pct=busy or {})


def test_a_verdict_names_the_run_point_and_the_one_host_it_judged() -> None:
    assert judged_on([_run("step-h1", "h1", "h1")]) == {"point": "step-h1", "host": "h1"}
    assert judged_on([_run("all-hosts", "h1", "h2"), 50.0]) == {"point": "all-hosts", "host": ""}
    assert judged_on([_run("a", "h1"), _run("b", "h1")]) == {}  # two points: not known which
    assert judged_on([{"iscsi": 1.0}, "iscsi"]) == {}


def test_check_evaluate_names_the_point_of_its_run() -> None:
    check = load_spec(ROOT / "criteria" / "local.yaml").for_family("baseline")["no_errors"]
    verdict = check.evaluate(_run("block-randread", "localhost"))
    assert (verdict.criterion, verdict.point, verdict.host) == ("no_errors", "block-randread", "localhost")


H2_SATURATED = [SaturatedHost("step-h2", "h2", 93.0)]


def test_a_miss_on_a_fit_host_is_not_excused_by_another_point() -> None:
    """h1 was 20 % busy in step-h1 and missed; h2 was 93 % busy in step-h2: the miss stands."""
    miss = Verdict("iops_min", False, 700.0, 1015.0, Unit.IOPS, point="step-h1", host="h1")
    assert invalid_reason(miss, H2_SATURATED) is None
    # The same miss judged on step-h2's saturated host is excused, naming it.
    reason = invalid_reason(dataclasses.replace(miss, point="step-h2", host="h2"), H2_SATURATED)
    assert reason is not None and reason.startswith("generator saturated: host h2 was 93.0 % CPU busy over run point step-h2")
    # ... and so is an aggregate of every host of step-h2 (host ""), since it holds h2's figures.
    assert invalid_reason(dataclasses.replace(miss, point="step-h2", host=""), H2_SATURATED) is not None
    # ... but not h1's own figure in step-h2.
    assert invalid_reason(dataclasses.replace(miss, point="step-h2", host="h1"), H2_SATURATED) is None


def test_no_data_and_error_counts_are_never_excused() -> None:
    saturated = [SaturatedHost("tiles-x1", "localhost", 99.0)]
    no_data = Verdict("iops_min", False, math.nan, 1015.0, Unit.IOPS, point="tiles-x1", detail="no data: read IOPS is missing")
    delivered_nothing = Verdict("throughput_drop_max", False, 0.0, 30.0, Unit.PCT, point="tiles-x1",
                                detail="no data: window event: no interval")
    wrapped = Verdict("linear_efficiency_min", False, 0.0, 80.0, Unit.PCT, point="tiles-x1",
                      detail="incremental steps | no data: aggregate not measured at 4 hosts")
    errors = Verdict("no_errors", False, 3.0, 0.0, Unit.ERRORS, point="tiles-x1")
    no_errors = Verdict("no_errors", True, 0.0, 0.0, Unit.ERRORS, point="tiles-x1")
    assert [invalid_reason(v, saturated) for v in (no_data, delivered_nothing, wrapped, errors, no_errors)] == [None] * 5


def test_a_pass_on_a_99_pct_busy_host_is_invalid_and_never_stored_as_a_pass() -> None:
    saturated = [SaturatedHost("tiles-x1", "localhost", 99.0)]
    passed = Verdict("iops_min", True, 1430.0, 1015.0, Unit.IOPS, point="tiles-x1", detail="mean over the run")
    reason = invalid_reason(passed, saturated)
    assert reason == ("generator saturated: host localhost was 99.0 % CPU busy over run point tiles-x1, fit to measure "
                      "below 90 %: this pass measured the initiator, not the array")
    stored = Judged(passed, reason).stored()
    assert not stored.passed and stored.detail == f"measurement invalid: {reason}; mean over the run"
    point = RunPoint.from_verdicts(run_id="r", lab="local", array="loop", test_id="t", params={}, metrics={}, verdicts=[stored])
    assert not point.passed  # so never a baseline of a regression that takes passed runs
    assert Judged(passed, None).stored() is passed


def test_a_target_miss_is_excused_only_where_every_vm_that_missed_ran_on_a_saturated_host() -> None:
    """tiles-x1: h1 97 % busy, h2 30 %. vm2 on h2 stalled: stands. Only vm1 on h1 missed: excused."""
    saturated = [SaturatedHost("tiles-x1", "h1", 97.0)]

    def held(misses: set[str]) -> Verdict:
        rows = tuple({"vm": vm, "passed": vm not in misses} for vm in ("h1/vm1", "h2/vm2"))
        return Verdict("targets_held", False, 20.0, 90.0, Unit.PCT_INTERVALS, point="tiles-x1", evidence=rows)

    assert invalid_reason(held({"h2/vm2"}), saturated) is None
    assert invalid_reason(held({"h1/vm1", "h2/vm2"}), saturated) is None
    assert invalid_reason(held({"h1/vm1"}), saturated) is not None


def test_a_stall_named_in_a_window_verdict_is_excused_only_on_its_own_saturated_host() -> None:
    """throughput_drop_max in snap-1: h1 97 % busy, h2 fit. h2/vm4 completed nothing in 3 intervals: stands."""
    saturated = [SaturatedHost("snap-1", "h1", 97.0)]
    drop = Verdict("throughput_drop_max", False, 45.0, 30.0, Unit.PCT, point="snap-1",
                   detail="all iops 1000 -> 550 (drop 45.0 %); stalled: h2/vm4: 0 IOPS in 3 of 10 intervals of the event window")
    assert invalid_reason(drop, saturated) is None
    on_h1 = dataclasses.replace(drop, detail=drop.detail.replace("h2/vm4", "h1/vm1"))
    assert invalid_reason(on_h1, saturated) is not None
    both = dataclasses.replace(drop, detail=drop.detail + "; h1/vm1: 0 IOPS in 1 of 10 intervals of the baseline window")
    assert invalid_reason(both, saturated) is None


def test_the_stall_text_read_is_the_one_windows_write() -> None:
    stalled = DirectionWindow((), vms={"h2.lab-1/vm4": (50.0, 0.0, 0.0, 50.0), "h1/vm1": (50.0, 50.0, 50.0, 50.0)}).stalls("event window")
    assert stalled == ["h2.lab-1/vm4: 0 IOPS in 2 of 4 intervals of the event window"]
    drop = Verdict("throughput_drop_max", False, 45.0, 30.0, Unit.PCT, point="snap-1", detail="stalled: " + "; ".join(stalled))
    assert missed_vm_hosts(drop) == {"h2.lab-1"}


def test_a_verdict_naming_no_point_fails_closed_both_ways() -> None:
    saturated = [SaturatedHost("qd1", "h1", 97.0)]
    assert invalid_reason(Verdict("knee_min", False, 3000.0, 4000.0, Unit.IOPS), saturated) is None
    assert invalid_reason(Verdict("iops_at_latency", True, 5000.0, 4000.0, Unit.IOPS), saturated) is not None
    assert invalid_reason(Verdict("iops_at_latency", True, 5000.0, 4000.0, Unit.IOPS), []) is None


def test_a_regression_verdict_is_judged_on_the_point_its_window_names() -> None:
    """-40 % against the stored baseline in point p-fit (h1 20 % busy) while p-sat saturated h1: the regression stands."""
    points = [MeasuredPoint(name, {}, _run(name, "h1", busy={"h1": busy})) for name, busy in (("p-fit", 20.0), ("p-sat", 95.0))]
    saturated = [SaturatedHost("p-sat", "h1", 95.0)]
    regression = Verdict("iops_regression", False, -40.0, -10.0, Unit.PCT_POINTS, window="p-fit")
    (named,) = _on_point([regression], points)
    assert named.point == "p-fit" and invalid_reason(named, saturated) is None
    (unknown,) = _on_point([dataclasses.replace(regression, window="elsewhere")], points)
    assert unknown.point == ""


def test_judge_names_the_only_point_measured_so_far() -> None:
    points: list[MeasuredPoint] = []
    judge = Judge([], points)
    assert judge(Verdict("a", True, 1.0, 1.0, Unit.IOPS))[0].point == ""  # nothing measured yet
    points.append(MeasuredPoint("tiles-x1", {}, _run("tiles-x1", "h1")))
    first, named = judge(Verdict("a", True, 1.0, 1.0, Unit.IOPS), Verdict("b", True, 1.0, 1.0, Unit.IOPS, point="other"))
    assert (first.point, named.point) == ("tiles-x1", "other")
    points.append(MeasuredPoint("tiles-x2", {}, _run("tiles-x2", "h1")))
    assert judge(Verdict("c", True, 1.0, 1.0, Unit.IOPS))[0].point == ""  # two points: which one is not known
    assert [v.criterion for v in judge.verdicts] == ["a", "a", "b", "c"]


def test_the_reason_says_where_the_array_shares_the_initiators_cpus() -> None:
    assert list(hosts_sharing_array_cpus(load_lab(ROOT / "labs" / "local.yaml"))) == ["localhost"]
    assert list(hosts_sharing_array_cpus(load_lab(ROOT / "labs" / "netns.yaml"))) == ["h1", "h2", "h3", "h4"]
    assert list(hosts_sharing_array_cpus(load_lab(ROOT / "labs" / "labvm.yaml"))) == ["labvm"]
    shared = hosts_sharing_array_cpus(load_lab(ROOT / "labs" / "local.yaml"))
    reason = invalid_reason(Verdict("iops_min", True, 1430.0, 1015.0, Unit.IOPS, point="p"), [SaturatedHost("p", "localhost", 99.0)],
                            shared)
    assert reason is not None and "here the array shares the initiator's CPUs" in reason and "nbdkit, its dedupe pass" in reason


def test_figures_are_shown_to_three_significant_digits() -> None:
    assert [significant(v) for v in (1434.6, 61.24, 50.0, 0.012345, 125432.0, 99.96, 0.0, -2.345)] == [
        "1430", "61.2", "50.0", "0.0123", "125000", "100", "0", "-2.35"]
    assert significant(math.nan) == "nan" and significant(None) == "-"


@pytest.mark.parametrize(("status", "message", "category"), [
    ("failed", "AssertionError: verdict failed: nothing judged: spec criteria/local.yaml has no check", NOTHING_JUDGED),
    ("failed", "AssertionError: verdict failed: iops_min FAIL: measured 700 IOPS\nmeasurement invalid: x", PRODUCT_DEFECT),
    ("broken", "plugins.verdicts.MeasurementInvalid: measurement invalid: generator saturated: host h1", MEASUREMENT_INVALID),
    ("broken", "iogate.errors.HostError: host h3: ssh connection refused", INFRASTRUCTURE),
])
def test_nothing_judged_and_measurement_invalid_have_categories_of_their_own(status: str, message: str, category: str) -> None:
    assert classify(status, message) == category


def test_categories_json_holds_the_same_order() -> None:
    names = [rule["name"] for rule in category_rules()]
    assert names.index(NOTHING_JUDGED) < names.index(PRODUCT_DEFECT)
    assert names.index(MEASUREMENT_INVALID) < names.index(INFRASTRUCTURE)
