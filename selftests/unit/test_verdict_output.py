"""A failed verdict reads as its statement in pytest and Allure; set-up reads as named steps.

A throwaway test file judged by IOGate's own plugins in a pytest subprocess
(the plugins loaded with -p, as conftest.py registers them): the console and
the Allure result carry "verdict failed: <criterion> FAIL: measured ..., bound
..., window ..." and no traceback through plugins/verdicts.py; fixtures appear
under their step titles and pytest's `<lambda>` finalizers do not appear.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from iogate.report.categories import MEASUREMENT_INVALID, NOTHING_JUDGED, PRODUCT_DEFECT, classify

ROOT = Path(__file__).resolve().parents[2]

TEST_FILE = '''
import math

from fixtures.stash import POINTS, MeasuredPoint
from iogate.metrics.types import RunResult, Series
from iogate.verdict import Unit, Verdict


def busy(request, pct, point="tiles-x1", host="h1", **more):
    """A run point of this test whose generator host was `pct` % CPU busy (what measure() records)."""
    result = RunResult(point, (), Series(), 0, 0, cpu_busy_pct={host: pct, **more})
    request.node.stash.setdefault(POINTS, []).append(MeasuredPoint(point, {}, result))


def vm(name, passed):
    return {"vm": name, "target_iops": 100.0, "held": 10 if passed else 2, "intervals": 10, "passed": passed}


def test_judged(lab, spec, judge):
    judge(Verdict("p99_latency_max", False, 61.2, 50, Unit.MS, window="event", detail="p99 read; over the bound: read"),
          Verdict("iops_min", True, 1430, 1350, Unit.IOPS))


def test_two_failures(judge):
    judge(Verdict("a_max", False, 2, 1, Unit.MS), Verdict("b_min", False, 1, 2, Unit.IOPS))


def test_broken(judge):
    raise RuntimeError("lab broke")


def test_nothing_judged(spec, judge):
    pass


def test_slow_on_a_saturated_generator(request, judge):
    busy(request, 97.0)
    judge(Verdict("p99_latency_max", False, 61.2, 50, Unit.MS))


def test_errors_on_a_saturated_generator(request, judge):
    busy(request, 97.0)
    judge(Verdict("p99_latency_max", False, 61.2, 50, Unit.MS), Verdict("no_errors", False, 3, 0, Unit.ERRORS))


def test_slow_on_a_fit_generator(request, judge):
    busy(request, 89.0)
    judge(Verdict("p99_latency_max", False, 61.2, 50, Unit.MS))


def test_h1_misses_while_h2_was_saturated_in_another_point(request, judge):
    busy(request, 20.0, point="step-h1", host="h1")
    busy(request, 93.0, point="step-h2", host="h2")
    judge(Verdict("iops_min", False, 700, 1015, Unit.IOPS, point="step-h1", host="h1"),
          Verdict("iops_min", True, 1430, 1015, Unit.IOPS, point="step-h2", host="h2"))


def test_no_data_on_a_saturated_host(request, judge):
    busy(request, 99.0, host="localhost")
    judge(Verdict("iops_min", False, math.nan, 1015, Unit.IOPS, detail="no data: read IOPS is missing"))


def test_pass_on_a_99_pct_busy_host(request, judge):
    busy(request, 99.0, host="localhost")
    passed = Verdict("iops_min", True, 1434.6, 1015, Unit.IOPS, point="tiles-x1")  # named: replace() would drop the two below
    object.__setattr__(passed, "description", "mean IOPS over the run, all directions")  # the spec's, once Verdict has it
    object.__setattr__(passed, "bound_source", "calibrated N=20")
    judge(passed, Verdict("no_errors", True, 0, 0, Unit.ERRORS))


def test_vm_stalled_on_a_fit_host(request, judge):
    busy(request, 97.0, host="h1", h2=30.0)
    judge(Verdict("targets_held", False, 20, 90, Unit.PCT_INTERVALS, evidence=(vm("h1/vm1", True), vm("h2/vm2", False))))


def test_vm_stalled_on_its_saturated_host(request, judge):
    busy(request, 97.0, host="h1", h2=30.0)
    judge(Verdict("targets_held", False, 20, 90, Unit.PCT_INTERVALS, evidence=(vm("h1/vm1", False), vm("h2/vm2", True))))


def test_two_passes_on_one_saturated_host(request, judge):
    busy(request, 95.0)
    judge(Verdict("iops_min", True, 1430, 1015, Unit.IOPS), Verdict("p99_latency_max", True, 40, 50, Unit.MS))


def test_judged_by_the_rules_alone(request, judge):
    from iogate.judging.nothing_judged import nothing_judged

    busy(request, 97.0)  # a spec gap is no measurement of the generator: never excused
    judge(nothing_judged("criteria/x.yaml", "no check of family baseline", "baseline"),
          Verdict("no_errors", True, 0, 0, Unit.ERRORS), Verdict("no_stall", False, 2, 1, Unit.ROUNDS))


def test_unnamed_verdicts_of_two_points(request, judge):
    busy(request, 97.0, point="qd1")
    busy(request, 20.0, point="qd8")
    judge(Verdict("knee_min", False, 3000, 4000, Unit.IOPS), Verdict("iops_at_latency", True, 5000, 4000, Unit.IOPS))
'''


@pytest.fixture(scope="module")
def outcome(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, dict]]:
    where = tmp_path_factory.mktemp("verdicts")
    (where / "test_judged.py").write_text(TEST_FILE)
    allure_dir = where / "allure"
    plugins = [arg for name in ("options", "report", "verdicts", "steps") for arg in ("-p", f"plugins.{name}")]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", str(where / "test_judged.py"), "--rootdir", str(where), "-c", "/dev/null",
         *plugins, "--alluredir", str(allure_dir), "--verdicts-jsonl", str(where / "verdicts.jsonl"), "-q", "-p", "no:cacheprovider"],
        cwd=ROOT, capture_output=True, text=True, timeout=120, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    results = {}
    for path in allure_dir.glob("*-result.json"):
        data = json.loads(path.read_text())
        results[data["name"]] = data
    containers = [json.loads(p.read_text()) for p in allure_dir.glob("*-container.json")]
    results["_containers"] = {"befores": [b["name"] for c in containers for b in c.get("befores", [])],
                              "afters": [a["name"] for c in containers for a in c.get("afters", [])]}
    results["_rows"] = [json.loads(line) for line in (where / "verdicts.jsonl").read_text().splitlines()]
    results["_tables"] = {data["name"]: (allure_dir / attachment["source"]).read_text()
                          for data in results.values() if isinstance(data, dict) and "steps" in data
                          for step in data["steps"] for attachment in step.get("attachments", []) if attachment["name"] == "verdicts"}
    return done.stdout + done.stderr, results


def test_a_failed_verdict_is_its_statement_without_a_traceback(outcome) -> None:  # type: ignore[no-untyped-def]
    console, _ = outcome
    assert "verdict failed: p99_latency_max FAIL: measured 61.2 ms, bound 50 ms, window event: p99 read; over the bound: read" in console
    section = console.split("test_judged ___", 1)[1].split("___", 1)[0]
    assert "plugins/verdicts.py" not in section and "raise AssertionError" not in section and "Traceback" not in section


def test_each_failed_verdict_is_one_line(outcome) -> None:  # type: ignore[no-untyped-def]
    _, results = outcome
    message = results["test_two_failures"]["statusDetails"]["message"]
    assert message.splitlines() == ["AssertionError: verdict failed: a_max FAIL: measured 2 ms, bound 1 ms, window measure",
                                    "verdict failed: b_min FAIL: measured 1 IOPS, bound 2 IOPS, window measure"]


def test_allure_shows_the_statement_as_message_and_trace(outcome) -> None:  # type: ignore[no-untyped-def]
    _, results = outcome
    judged = results["test_judged"]
    assert judged["status"] == "failed"
    assert judged["statusDetails"]["message"].startswith("AssertionError: verdict failed: p99_latency_max FAIL")
    assert "plugins/verdicts.py" not in judged["statusDetails"].get("trace", "")


def test_a_harness_error_keeps_its_traceback(outcome) -> None:  # type: ignore[no-untyped-def]
    console, results = outcome
    assert "RuntimeError: lab broke" in console
    assert results["test_broken"]["status"] == "broken"
    assert "test_judged.py" in results["test_broken"]["statusDetails"]["trace"]


def test_fixtures_read_as_named_steps_without_lambdas(outcome) -> None:  # type: ignore[no-untyped-def]
    _, results = outcome
    befores, afters = results["_containers"]["befores"], results["_containers"]["afters"]
    assert any(name.startswith("lab local (") for name in befores), befores
    assert any(name.startswith("acceptance spec ") and "chosen by" in name for name in befores), befores
    assert "verdict collector" in befores
    assert not [name for name in befores + afters if "<lambda>" in name or "::" in name], afters


def test_a_test_judged_by_no_check_fails_naming_the_spec(outcome) -> None:  # type: ignore[no-untyped-def]
    _, results = outcome
    nothing = results["test_nothing_judged"]
    assert nothing["status"] == "failed"
    assert nothing["statusDetails"]["message"].startswith(
        "AssertionError: verdict failed: nothing judged: spec "), nothing["statusDetails"]["message"]
    assert "criteria/local.yaml has no check" in nothing["statusDetails"]["message"]


def test_a_test_judged_by_the_rules_alone_fails_nothing_judged_first_and_unexcused(outcome) -> None:  # type: ignore[no-untyped-def]
    _, results = outcome
    gap = results["test_judged_by_the_rules_alone"]
    message = gap["statusDetails"]["message"].splitlines()
    assert message[0] == ("AssertionError: verdict failed: nothing judged: spec criteria/x.yaml has no check of family baseline: "
                          "the rules (no_errors, no_stall) alone judge no array (add the checks, or deselect the test)")
    # The stall on the 97 % busy host is excused (invalid); the spec gap is not.
    assert message[1].startswith("measurement invalid: ") and "no_stall FAIL" in message[2]
    assert gap["status"] == "failed"
    assert classify(gap["status"], gap["statusDetails"]["message"]) == NOTHING_JUDGED


def _rows(results: dict) -> dict[tuple[str, str, bool], dict]:  # type: ignore[type-arg]
    return {(r["test"].split("::")[1], r["criterion"], r["passed"]): r for r in results["_rows"]}


def test_a_failed_latency_on_a_saturated_generator_is_an_invalid_measurement_not_an_array_failure(outcome) -> None:  # type: ignore[no-untyped-def]
    console, results = outcome
    invalid = results["test_slow_on_a_saturated_generator"]
    assert invalid["status"] == "broken"
    message = invalid["statusDetails"]["message"]
    assert message.startswith("plugins.verdicts.MeasurementInvalid: measurement invalid: generator saturated: "
                              "host h1 was 97.0 % CPU busy over run point tiles-x1"), message
    assert "p99_latency_max FAIL: measured 61.2 ms, bound 50 ms" in message  # the evidence stays
    assert "verdict failed" not in message
    assert "plugins/verdicts.py" not in console.split("test_slow_on_a_saturated_generator ___", 1)[1].split("___", 1)[0]
    assert classify(invalid["status"], message) == MEASUREMENT_INVALID


def test_errors_are_never_excused_by_a_saturated_generator(outcome) -> None:  # type: ignore[no-untyped-def]
    """The error count stands and fails the test; the latency beside it, judged on the saturated host, is still invalid."""
    _, results = outcome
    failed = results["test_errors_on_a_saturated_generator"]
    assert failed["status"] == "failed"
    message = failed["statusDetails"]["message"]
    assert message.startswith("AssertionError: verdict failed: no_errors FAIL: measured 3 errors"), message
    assert "verdict failed: p99_latency_max" not in message
    assert "measurement invalid: generator saturated: host h1 was 97.0 % CPU busy over run point tiles-x1" in message
    assert classify(failed["status"], message) == PRODUCT_DEFECT


def test_a_generator_below_the_limit_leaves_the_array_failure(outcome) -> None:  # type: ignore[no-untyped-def]
    _, results = outcome
    failed = results["test_slow_on_a_fit_generator"]
    assert failed["status"] == "failed"
    assert "measurement invalid" not in failed["statusDetails"]["message"]


def test_a_miss_on_a_fit_host_stands_though_another_point_saturated_another_host(outcome) -> None:  # type: ignore[no-untyped-def]
    """h1 at 20 % missed its IOPS in step-h1; h2 at 93 % in step-h2 excuses nothing of step-h1 (it did, test-wide,
    before): a FAIL. h2's own pass in step-h2 is no pass either."""
    _, results = outcome
    failed = results["test_h1_misses_while_h2_was_saturated_in_another_point"]
    assert failed["status"] == "failed"
    message = failed["statusDetails"]["message"]
    assert message.startswith("AssertionError: verdict failed: iops_min FAIL: measured 700 IOPS, bound 1015 IOPS"), message
    assert "measurement invalid: generator saturated: host h2 was 93.0 % CPU busy over run point step-h2" in message
    rows = _rows(results)
    miss = rows[("test_h1_misses_while_h2_was_saturated_in_another_point", "iops_min", False)]
    assert (miss["measurement_invalid"], miss["point"], miss["host"]) == (None, "step-h1", "h1")
    assert rows[("test_h1_misses_while_h2_was_saturated_in_another_point", "iops_min", True)]["measurement_invalid"]


def test_a_no_data_failure_on_a_saturated_host_stays_a_failure(outcome) -> None:  # type: ignore[no-untyped-def]
    _, results = outcome
    failed = results["test_no_data_on_a_saturated_host"]
    assert failed["status"] == "failed"
    assert failed["statusDetails"]["message"].startswith("AssertionError: verdict failed: iops_min FAIL: measured nan IOPS")
    assert _rows(results)[("test_no_data_on_a_saturated_host", "iops_min", False)]["measurement_invalid"] is None


def test_a_pass_on_a_99_pct_busy_host_is_an_invalid_measurement_not_a_pass(outcome) -> None:  # type: ignore[no-untyped-def]
    """The local lab's array runs on the initiator's CPUs: the reason says so. The error count beside it stands."""
    _, results = outcome
    invalid = results["test_pass_on_a_99_pct_busy_host"]
    assert invalid["status"] == "broken"
    message = invalid["statusDetails"]["message"]
    assert "measurement invalid: generator saturated: host localhost was 99.0 % CPU busy over run point tiles-x1" in message
    assert "lab local's array (driver local: loop devices and their kernel workers, nbdkit, its dedupe pass) runs on this " \
           "machine's CPUs" in message
    assert "iops_min PASS: measured 1434.6 IOPS" in message and "no_errors" not in message
    assert classify(invalid["status"], message) == MEASUREMENT_INVALID
    rows = _rows(results)
    assert rows[("test_pass_on_a_99_pct_busy_host", "iops_min", True)]["measurement_invalid"].startswith(
        "generator saturated: host localhost was 99.0 % CPU busy over run point tiles-x1")
    assert rows[("test_pass_on_a_99_pct_busy_host", "no_errors", True)]["measurement_invalid"] is None


def test_a_stalled_vm_on_a_fit_host_fails_though_another_host_of_its_point_saturated(outcome) -> None:  # type: ignore[no-untyped-def]
    _, results = outcome
    assert results["test_vm_stalled_on_a_fit_host"]["status"] == "failed"
    assert _rows(results)[("test_vm_stalled_on_a_fit_host", "targets_held", False)]["measurement_invalid"] is None
    excused = results["test_vm_stalled_on_its_saturated_host"]
    assert excused["status"] == "broken"
    assert "host h1 was 97.0 % CPU busy over run point tiles-x1" in excused["statusDetails"]["message"]
    assert "h2" not in excused["statusDetails"]["message"].split("\n", 1)[0]


def test_verdicts_that_name_no_point_of_several_fail_closed(outcome) -> None:  # type: ignore[no-untyped-def]
    """Two points, qd1 saturated: an unnamed failure stands (nothing shows it was judged on qd1), an unnamed pass
    is invalid (it may have been)."""
    _, results = outcome
    failed = results["test_unnamed_verdicts_of_two_points"]
    assert failed["status"] == "failed"
    message = failed["statusDetails"]["message"]
    assert message.startswith("AssertionError: verdict failed: knee_min FAIL"), message
    assert "measurement invalid: generator saturated: host h1 was 97.0 % CPU busy over run point qd1" in message
    rows = _rows(results)
    assert rows[("test_unnamed_verdicts_of_two_points", "knee_min", False)]["measurement_invalid"] is None
    assert rows[("test_unnamed_verdicts_of_two_points", "iops_at_latency", True)]["measurement_invalid"]
    assert rows[("test_unnamed_verdicts_of_two_points", "knee_min", False)]["point"] == ""


def test_a_verdict_of_the_only_point_is_named_for_it(outcome) -> None:  # type: ignore[no-untyped-def]
    _, results = outcome
    row = _rows(results)[("test_slow_on_a_fit_generator", "p99_latency_max", False)]
    assert (row["point"], row["host"]) == ("tiles-x1", "")


def test_the_verdict_rows_say_which_verdicts_were_invalid_measurements(outcome) -> None:  # type: ignore[no-untyped-def]
    """--verdicts-jsonl readers (the spec catches, calibration) judge as the test did: the saturated run's
    failed latency carries the reason, an error count on the same generator and a fit run's failure do not."""
    _, results = outcome
    rows = {(r["test"].split("::")[1], r["criterion"]): r["measurement_invalid"] for r in results["_rows"]}
    assert rows[("test_slow_on_a_saturated_generator", "p99_latency_max")].startswith(
        "generator saturated: host h1 was 97.0 % CPU busy over run point tiles-x1")
    assert rows[("test_errors_on_a_saturated_generator", "p99_latency_max")].startswith("generator saturated: host h1")
    assert rows[("test_errors_on_a_saturated_generator", "no_errors")] is None
    assert rows[("test_slow_on_a_fit_generator", "p99_latency_max")] is None


def test_the_verdict_table_shows_the_check_its_bound_source_and_three_digits(outcome) -> None:  # type: ignore[no-untyped-def]
    _, results = outcome
    table = results["_tables"]["test_pass_on_a_99_pct_busy_host"]
    assert "mean IOPS over the run, all directions" in table and "<td>calibrated N=20</td>" in table
    assert '<span title="1434.6">1430</span>' in table and '<span title="1015">1020</span>' in table
    assert ">INVALID</b>" in table and ">PASS</b>" in table  # the error count beside it passed
    assert "<td>tiles-x1</td>" in table
    plain = results["_tables"]["test_judged"]
    assert "<td>-</td>" in plain and '<span title="61.2">61.2</span>' in plain


def test_nothing_judged_has_its_own_category(outcome) -> None:  # type: ignore[no-untyped-def]
    _, results = outcome
    nothing = results["test_nothing_judged"]
    assert classify(nothing["status"], nothing["statusDetails"]["message"]) == NOTHING_JUDGED
    judged = results["test_judged"]
    assert classify(judged["status"], judged["statusDetails"]["message"]) == PRODUCT_DEFECT


def test_one_reason_heads_every_verdict_it_voids(outcome) -> None:  # type: ignore[no-untyped-def]
    _, results = outcome
    message = results["test_two_passes_on_one_saturated_host"]["statusDetails"]["message"]
    assert message.count("generator saturated: host h1 was 95.0 % CPU busy over run point tiles-x1") == 1, message
    assert message.splitlines()[1:] == ["  iops_min PASS: measured 1430 IOPS, bound 1015 IOPS, window measure",
                                        "  p99_latency_max PASS: measured 40 ms, bound 50 ms, window measure"]
