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

ROOT = Path(__file__).resolve().parents[2]

TEST_FILE = '''
from fixtures.stash import POINTS, MeasuredPoint
from iogate.metrics.types import RunResult, Series
from iogate.verdict import Unit, Verdict


def busy(request, pct):
    """A run point of this test whose generator host h1 was `pct` % CPU busy (what measure() records)."""
    result = RunResult("tiles-x1", (), Series(), 0, 0, cpu_busy_pct={"h1": pct})
    request.node.stash.setdefault(POINTS, []).append(MeasuredPoint("tiles-x1", {}, result))


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


def test_a_failed_latency_on_a_saturated_generator_is_an_invalid_measurement_not_an_array_failure(outcome) -> None:  # type: ignore[no-untyped-def]
    console, results = outcome
    invalid = results["test_slow_on_a_saturated_generator"]
    assert invalid["status"] == "broken"
    message = invalid["statusDetails"]["message"]
    assert "measurement invalid: generator saturated: host h1 was 97.0 % CPU busy over run point tiles-x1" in message
    assert "verdict failed: p99_latency_max FAIL: measured 61.2 ms, bound 50 ms" in message  # the evidence stays
    assert "plugins/verdicts.py" not in console.split("test_slow_on_a_saturated_generator ___", 1)[1].split("___", 1)[0]


def test_errors_are_never_excused_by_a_saturated_generator(outcome) -> None:  # type: ignore[no-untyped-def]
    _, results = outcome
    failed = results["test_errors_on_a_saturated_generator"]
    assert failed["status"] == "failed"
    assert failed["statusDetails"]["message"].startswith("AssertionError: verdict failed: p99_latency_max FAIL")
    assert "no_errors FAIL: measured 3 errors" in failed["statusDetails"]["message"]


def test_a_generator_below_the_limit_leaves_the_array_failure(outcome) -> None:  # type: ignore[no-untyped-def]
    _, results = outcome
    failed = results["test_slow_on_a_fit_generator"]
    assert failed["status"] == "failed"
    assert "measurement invalid" not in failed["statusDetails"]["message"]


def test_the_verdict_rows_say_which_failures_were_invalid_measurements(outcome) -> None:  # type: ignore[no-untyped-def]
    """--verdicts-jsonl readers (the spec catches, calibration) judge as the test did: the saturated run's
    failed latency carries the reason, an error count on the same generator and a fit run's failure do not."""
    _, results = outcome
    rows = {(r["test"].split("::")[1], r["criterion"]): r["measurement_invalid"] for r in results["_rows"]}
    assert rows[("test_slow_on_a_saturated_generator", "p99_latency_max")].startswith(
        "generator saturated: host h1 was 97.0 % CPU busy over run point tiles-x1")
    assert rows[("test_errors_on_a_saturated_generator", "p99_latency_max")] is None
    assert rows[("test_errors_on_a_saturated_generator", "no_errors")] is None
    assert rows[("test_slow_on_a_fit_generator", "p99_latency_max")] is None
