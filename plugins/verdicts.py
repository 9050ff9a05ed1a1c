"""Verdicts decide tests: every verdict is attached; any failed one fails the test.

A test hands verdicts to the `judge` fixture; after the test body returns, the
verdict table is attached to its Allure result and a failed verdict fails the
test with one line per failure: criterion, measured, bound and window. Such a
failure is a *product defect*; an exception from the harness is infrastructure.
"""

from __future__ import annotations

import html
from collections.abc import Iterable

import allure
import pytest

from iogate.verdict import Verdict
from plugins import results

VERDICTS = pytest.StashKey[list[Verdict]]()
FAILURE_PREFIX = "verdict failed: "


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


def verdict_table_html(verdicts: list[Verdict]) -> str:
    head = "".join(f"<th>{h}</th>" for h in ("criterion", "result", "measured", "bound", "unit", "window", "intervals failing", "detail"))
    rows = []
    for v in verdicts:
        color = "#2e7d32" if v.passed else "#c62828"
        cells = [
            html.escape(v.criterion),
            f'<b style="color:{color}">{"PASS" if v.passed else "FAIL"}</b>',
            f"{v.measured:.6g}",
            f"{v.bound:.6g}",
            html.escape(v.unit),
            html.escape(v.window),
            f"{v.intervals_failing}/{v.intervals_considered}" if v.intervals_considered else "-",
            html.escape(v.detail),
        ]
        rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    return (
        "<html><body><table border='1' cellpadding='4' style='border-collapse:collapse;font-family:sans-serif'>"
        f"<tr>{head}</tr>{''.join(rows)}</table></body></html>"
    )


@pytest.hookimpl(wrapper=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function):  # type: ignore[no-untyped-def]
    result = yield
    verdicts = pyfuncitem.stash.setdefault(VERDICTS, [])
    if "run" in pyfuncitem.fixturenames:
        verdicts.extend(results.after_test(pyfuncitem, pyfuncitem.funcargs["run"].run_id, list(verdicts)))
    if verdicts:
        with allure.step(f"verdicts: {sum(v.passed for v in verdicts)}/{len(verdicts)} passed"):
            allure.attach(verdict_table_html(verdicts), name="verdicts", attachment_type=allure.attachment_type.HTML)
        for verdict in verdicts:
            print(verdict.line())
    failed = [v for v in verdicts if not v.passed]
    if failed:
        raise AssertionError(FAILURE_PREFIX + "; ".join(v.line() for v in failed))
    return result
