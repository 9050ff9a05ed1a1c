"""Verdicts decide tests: every verdict is attached; any failed one fails the test.

A test hands verdicts to the `judge` fixture; after the test body returns, the
verdict table is attached to its Allure result and a failed verdict fails the
test with one line per failure: criterion, measured, bound and window. Such a
failure is a *product defect*; an exception from the harness is infrastructure.
A test that asks for `judge` and returns without a single verdict fails: a spec
with no check for what the test measured judged nothing, and nothing is no pass.
A failed throughput or latency verdict from a run whose initiator's CPU was
saturated (iogate/metrics/generator.py) is neither: the test fails as an invalid
measurement (Allure: broken), naming the host; a failed error count never is.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable
from pathlib import Path

import allure
import pytest

from fixtures.stash import POINTS
from iogate.metrics.generator import GENERATOR_CPU_BUSY_MAX_PCT, saturated_hosts
from iogate.report.table import html_table
from iogate.verdict import Unit, Verdict
from plugins import results

VERDICTS = pytest.StashKey[list[Verdict]]()
FAILURE_PREFIX = "verdict failed: "
INVALID_PREFIX = "measurement invalid: "


class MeasurementInvalid(Exception):
    """Failed performance verdicts measured on a saturated generator: no pass, and no array defect either
    (not an AssertionError, so Allure files the test as broken, not failed)."""


class Judge:
    """Collects a test's verdicts. `judge(verdict)` or `judge(*verdicts)`; returns them."""

    def __init__(self, sink: list[Verdict]) -> None:
        self.verdicts = sink

    def __call__(self, *verdicts: Verdict | Iterable[Verdict]) -> list[Verdict]:
        added: list[Verdict] = []
        for item in verdicts:
            added.extend([item] if isinstance(item, Verdict) else item)
        self.verdicts.extend(added)
        return added


@pytest.fixture
def judge(request: pytest.FixtureRequest) -> Judge:
    return Judge(request.node.stash.setdefault(VERDICTS, []))


VERDICT_COLUMNS = ("criterion", "result", "measured", "bound", "unit", "window", "intervals failing", "detail")


def verdict_cells(v: Verdict) -> list[str]:
    color = "#2e7d32" if v.passed else "#c62828"
    return [
        html.escape(v.criterion),
        f'<b style="color:{color}">{"PASS" if v.passed else "FAIL"}</b>',
        f"{v.measured:.6g}",
        f"{v.bound:.6g}",
        html.escape(v.unit),
        html.escape(v.window),
        f"{v.intervals_failing}/{v.intervals_considered}" if v.intervals_considered else "-",
        html.escape(v.detail),
    ]


def verdict_table_html(verdicts: list[Verdict]) -> str:
    return html_table(VERDICT_COLUMNS, [verdict_cells(v) for v in verdicts])


def _append_rows(path: str, nodeid: str, verdicts: list[Verdict], invalid: str | None = None) -> None:
    """One json line per verdict; a failed one measured on a saturated generator carries the reason the
    test reported it invalid (`measurement_invalid`), so a reader of the rows judges as the test did."""
    with Path(path).open("a", encoding="utf-8") as out:
        for verdict in verdicts:
            row = {"test": nodeid, **verdict.row(), "evidence": list(verdict.evidence),
                   "measurement_invalid": None if verdict.passed else invalid}
            out.write(json.dumps(row, default=str) + "\n")


def _invalid_reason(pyfuncitem: pytest.Function, failed: list[Verdict]) -> str | None:
    """Why the failed verdicts measured the initiator, not the array (a saturated generator); None when
    they stand, and always when an error count failed (an error is never excused)."""
    if not failed or any(v.unit is Unit.ERRORS for v in failed):
        return None
    saturated = saturated_hosts((p.name, p.result) for p in pyfuncitem.stash.get(POINTS, []))
    if not saturated:
        return None
    return (f"generator saturated: {'; '.join(s.line() for s in saturated)} (fit to measure below "
            f"{GENERATOR_CPU_BUSY_MAX_PCT:g} %): the failed verdicts below measured the initiator, not the array")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> pytest.TestReport | None:
    """A failed verdict reads as its statement, not as a traceback through this plugin: the report's
    text is the verdict lines alone (pytest's failure section and Allure's trace show just them)."""
    excinfo = call.excinfo
    if call.when != "call" or excinfo is None or not excinfo.errisinstance((AssertionError, MeasurementInvalid)):
        return None
    message = str(excinfo.value)
    if not message.startswith((FAILURE_PREFIX, INVALID_PREFIX)):
        return None
    report = pytest.TestReport.from_item_and_call(item, call)
    report.longrepr = message
    return report


@pytest.hookimpl(wrapper=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function):  # type: ignore[no-untyped-def]
    result = yield
    verdicts = pyfuncitem.stash.setdefault(VERDICTS, [])
    if "run" in pyfuncitem.fixturenames:
        verdicts.extend(results.after_test(pyfuncitem, pyfuncitem.funcargs["run"].run_id, list(verdicts)))
    failed = [v for v in verdicts if not v.passed]
    invalid = _invalid_reason(pyfuncitem, failed)
    if verdicts:
        with allure.step(f"verdicts: {sum(v.passed for v in verdicts)}/{len(verdicts)} passed"):
            allure.attach(verdict_table_html(verdicts), name="verdicts", attachment_type=allure.attachment_type.HTML)
        for verdict in verdicts:
            print(verdict.line())
        out = pyfuncitem.config.getoption("verdicts_jsonl", None)
        if out:
            _append_rows(out, pyfuncitem.nodeid, verdicts, invalid)
    if not verdicts and "judge" in pyfuncitem.fixturenames:
        spec = pyfuncitem.funcargs.get("spec")
        raise AssertionError(FAILURE_PREFIX + f"nothing judged: spec {getattr(spec, 'path', '?')} has no check "
                             "for what this test measured (add its family's checks, or deselect the test)")
    if failed:
        # One line per failed verdict, each a statement: criterion, measured, bound, window, what missed.
        lines = "\n".join(FAILURE_PREFIX + v.line() for v in failed)
        if invalid:
            raise MeasurementInvalid(f"{INVALID_PREFIX}{invalid}\n{lines}")
        raise AssertionError(lines)
    return result
