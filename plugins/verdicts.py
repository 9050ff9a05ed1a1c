"""Verdicts decide tests: every verdict is attached; any failed one fails the test.

A test hands its evidence to the `judge` fixture (judge.run, judge.events ...: iogate/judging/judge.py picks the
spec's checks and applies the rules every family gets), which records the verdicts; after the test body returns, the
verdict table is attached to its Allure result and a failed verdict fails the
test with one line per failure: criterion, measured, bound and window. Such a
failure is a *product defect*; an exception from the harness is infrastructure.
A test that asks for `judge` and returns without a single verdict fails: a spec
with no check for what the test measured judged nothing, and nothing is no pass.

A verdict judged on the run point and host whose initiator's CPU was saturated
(iogate/metrics/generator.py `invalid_reason`) is neither pass nor fail but an
invalid measurement: a failure that stands fails the test; otherwise an invalid
verdict fails it as an invalid measurement (Allure: broken), naming point and host.
An invalid verdict reaches the results store as not passed and the verdict rows
(--verdicts-jsonl) with its reason (`measurement_invalid`), so it never becomes a
baseline nor a calibration value. A verdict names the run point it was judged on
(Verdict.point: Check.evaluate sets it from its RunResult); one handed to `judge`
without one, in a test that has measured exactly one point so far, was judged on
that point; a regression verdict on the point its window names.
"""

from __future__ import annotations

import dataclasses
import html
import json
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import allure
import pytest

from fixtures.session import POINTS, MeasuredPoint, lab_of, points_of
from iogate.judging import nothing_judged
from iogate.judging.judge import SpecJudge
from iogate.judging.points import SweepPoint
from iogate.judging.spec import AcceptanceSpec
from iogate.judging.validity import invalid_reasons
from iogate.metrics.types import RunResult, Series
from iogate.metrics.windows import WindowStats
from iogate.procedures.scaling import Step, StepResult
from iogate.report.figures import significant
from iogate.report.table import html_table
from iogate.verdict import Verdict
from plugins import results

VERDICTS = pytest.StashKey[list[Verdict]]()
FAILURE_PREFIX = "verdict failed: "
INVALID_PREFIX = "measurement invalid: "
NOTHING_JUDGED_PREFIX = FAILURE_PREFIX + "nothing judged: "


class MeasurementInvalid(Exception):
    """Verdicts judged on a saturated generator and no failure that stands: no pass, and no array defect either
    (not an AssertionError, so Allure files the test as broken, not failed)."""


class Judge:
    """Collects a test's verdicts and judges its evidence by the session's spec.

    A test hands evidence to one method per kind (iogate/judging/judge.py SpecJudge decides which checks judge it and
    applies the rules every family gets): `judge.run(family, run)`, `judge.curve(...)`, `judge.targets(...)`,
    `judge.speed(...)`/`judge.throughput(...)`, `judge.protocols(...)`, `judge.events(...)`, `judge.scaling(...)`,
    `judge.datapath(...)`; each records its verdicts and returns them. `judge(verdict)` records verdicts judged
    elsewhere (the self-tests).

    A verdict that names no run point is given the test's only point when it has measured exactly one so far
    (it can have been judged on no other); with two or more, which one is not known and it stays unnamed."""

    def __init__(self, sink: list[Verdict], points: list[MeasuredPoint] | None = None,
                 spec: Callable[[], AcceptanceSpec] | None = None) -> None:
        self.verdicts = sink
        self.points = points if points is not None else []
        self._spec = spec  # the session's spec, asked for when evidence is first judged (a self-test may have none)

    @property
    def by_spec(self) -> SpecJudge:
        if self._spec is None:
            raise RuntimeError("this judge has no spec: it only records verdicts judged elsewhere")
        return SpecJudge(self._spec())

    def run(self, family: str, runs: RunResult | Sequence[RunResult]) -> list[Verdict]:
        return self(self.by_spec.run(family, runs))

    def rules(self, family: str, runs: Sequence[RunResult]) -> list[Verdict]:
        return self(self.by_spec.rules(family, runs))

    def judges_curves(self, family: str) -> bool:
        return self.by_spec.judges_curves(family)

    def curve(self, family: str, curves: Mapping[str, Sequence[SweepPoint]], *, planned: Sequence[str], measured: Sequence[str],
              what: str, window: str) -> list[Verdict]:
        return self(self.by_spec.curve(family, curves, planned=planned, measured=measured, what=what, window=window))

    def targets(self, family: str, run: RunResult, series: Series, targets: Mapping[str, float],
                groups: Mapping[str, Collection[str]], *, min_intervals: int) -> list[Verdict]:
        return self(self.by_spec.targets(family, run, series, targets, groups, min_intervals=min_intervals))

    def speed(self, case: str, run: RunResult) -> list[Verdict]:
        return self(self.by_spec.speed(case, run))

    def top_step_runtime_s(self, case: str, runtime_s: float, *, backend: bool) -> float:
        return self.by_spec.top_step_runtime_s(case, runtime_s, backend=backend)

    def throughput(self, case: str, steps: Sequence[tuple[str, RunResult]], *, backend: bool) -> list[Verdict]:
        return self(self.by_spec.throughput(case, steps, backend=backend))

    def protocols(self, results: Mapping[str, RunResult], *, planned: Sequence[str], baseline: str,
                  figures: Mapping[str, Callable[[RunResult], float]], window: str) -> list[Verdict]:
        return self(self.by_spec.protocols(results, planned=planned, baseline=baseline, figures=figures, window=window))

    def events(self, service: str, baseline: WindowStats, event: WindowStats, recovery: WindowStats, run: RunResult, *,
               case: str | None = None, series: Series | None = None, targets: Mapping[str, float] | None = None,
               event_evidence: Mapping[str, Any] | None = None) -> list[Verdict]:
        return self(self.by_spec.events(service, baseline, event, recovery, run, case=case, series=series, targets=targets,
                                        event_evidence=event_evidence))

    def scaling(self, results: Sequence[StepResult], *, planned: Sequence[Step], runs: Sequence[RunResult]) -> list[Verdict]:
        return self(self.by_spec.scaling(results, planned=planned, runs=runs))

    def judges_datapath(self) -> bool:
        return self.by_spec.judges_datapath()

    def datapath(self, aggregate_bytes_per_s: float, hosts: int, limit_bytes_per_s: float) -> list[Verdict]:
        return self(self.by_spec.datapath(aggregate_bytes_per_s, hosts, limit_bytes_per_s))

    def __call__(self, *verdicts: Verdict | Iterable[Verdict]) -> list[Verdict]:
        added: list[Verdict] = []
        for item in verdicts:
            added.extend([item] if isinstance(item, Verdict) else item)
        if len(self.points) == 1:
            added = [v if v.point else dataclasses.replace(v, point=self.points[0].name) for v in added]
        self.verdicts.extend(added)
        return added


@pytest.fixture
def judge(request: pytest.FixtureRequest) -> Judge:
    return Judge(request.node.stash.setdefault(VERDICTS, []), request.node.stash.setdefault(POINTS, []),
                 lambda: request.getfixturevalue("spec"))


@dataclass(frozen=True)
class Judged:
    """A verdict and, when it was judged on a saturated generator, why it is an invalid measurement."""

    verdict: Verdict
    invalid: str | None = None

    @property
    def stands_failed(self) -> bool:
        return not self.verdict.passed and self.invalid is None

    @property
    def result(self) -> str:
        return "INVALID" if self.invalid else "PASS" if self.verdict.passed else "FAIL"

    def stored(self) -> Verdict:
        """As the results store keeps it: an invalid verdict is not passed, its detail says why."""
        if self.invalid is None:
            return self.verdict
        return dataclasses.replace(self.verdict, passed=False, detail=f"{INVALID_PREFIX}{self.invalid}; {self.verdict.detail}")

    def line(self) -> str:
        return self.verdict.line() if self.invalid is None else f"{INVALID_PREFIX}{self.verdict.line()}"


VERDICT_COLUMNS = ("check", "result", "measured", "bound", "unit", "bound from", "run point", "window", "intervals failing",
                   "detail")
_COLORS = {"PASS": "#2e7d32", "FAIL": "#c62828", "INVALID": "#ef6c00"}


def _figure(value: float) -> str:
    """Three significant digits; the exact value on hover."""
    return f'<span title="{value!r}">{significant(value)}</span>'


def verdict_cells(v: Verdict, invalid: str | None = None) -> list[str]:
    judged = Judged(v, invalid)
    description = getattr(v, "description", "")  # from the spec (h-specval's fields; absent before they merge)
    check = html.escape(v.criterion) + (f'<br><small style="color:#555">{html.escape(description)}</small>' if description else "")
    where = f"{v.point}" + (f" on {v.host}" if v.host else "") if v.point else "-"
    detail = html.escape(f"{INVALID_PREFIX}{invalid}; {v.detail}" if invalid else v.detail)
    return [
        check,
        f'<b style="color:{_COLORS[judged.result]}">{judged.result}</b>',
        _figure(v.measured),
        _figure(v.bound),
        html.escape(v.unit),
        html.escape(getattr(v, "bound_source", "") or "-"),
        html.escape(where),
        html.escape(v.window),
        f"{v.intervals_failing}/{v.intervals_considered}" if v.intervals_considered else "-",
        detail,
    ]


def verdict_table_html(verdicts: list[Verdict], invalid: list[str | None] | None = None) -> str:
    reasons = invalid if invalid is not None else [None] * len(verdicts)
    return html_table(VERDICT_COLUMNS, [verdict_cells(v, why) for v, why in zip(verdicts, reasons, strict=True)])


def _append_rows(path: str, nodeid: str, verdicts: list[Verdict], invalid: list[str | None] | None = None) -> None:
    """One json line per verdict. `passed` is the criterion's judgement; a verdict judged on a saturated generator
    carries why it is an invalid measurement (`measurement_invalid`): a reader of the rows counts it as neither
    a pass nor a failure, as the test did. `point`/`host`: what it was judged on ("" = not known / every host)."""
    reasons = invalid if invalid is not None else [None] * len(verdicts)
    with Path(path).open("a", encoding="utf-8") as out:
        for verdict, why in zip(verdicts, reasons, strict=True):
            row = {"test": nodeid, **verdict.row(), "evidence": list(verdict.evidence), "point": verdict.point,
                   "host": verdict.host, "measurement_invalid": why}
            out.write(json.dumps(row, default=str) + "\n")


def judge_validity(item: pytest.Item, verdicts: list[Verdict]) -> list[Judged]:
    """Each verdict with the reason it is an invalid measurement (None where it stands)."""
    session = lab_of(item)
    points = [(p.name, p.result) for p in points_of(item)]
    reasons = invalid_reasons(verdicts, points, session.lab if session is not None else None)
    return [Judged(v, why) for v, why in zip(verdicts, reasons, strict=True)]


def _on_point(verdicts: list[Verdict], points: list[MeasuredPoint]) -> list[Verdict]:
    """Regression verdicts name their run point in `window` (plugins/results.py): say so in `point` too."""
    names = {p.name for p in points}
    return [v if v.point or v.window not in names else dataclasses.replace(v, point=v.window) for v in verdicts]


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
    judged = judge_validity(pyfuncitem, verdicts)
    if "run" in pyfuncitem.fixturenames:
        added = results.after_test(pyfuncitem, pyfuncitem.funcargs["run"].run_id, [j.stored() for j in judged])
        added = _on_point(added, points_of(pyfuncitem))
        verdicts.extend(added)
        judged += judge_validity(pyfuncitem, added)
    if verdicts:
        counts = f"{sum(j.result == 'PASS' for j in judged)}/{len(judged)} passed"
        invalid_count = sum(j.invalid is not None for j in judged)
        with allure.step(f"verdicts: {counts}" + (f", {invalid_count} measurement invalid" if invalid_count else "")):
            allure.attach(verdict_table_html(verdicts, [j.invalid for j in judged]), name="verdicts",
                          attachment_type=allure.attachment_type.HTML)
        for one in judged:
            print(one.line())
        out = pyfuncitem.config.getoption("verdicts_jsonl", None)
        if out:
            _append_rows(out, pyfuncitem.nodeid, verdicts, [j.invalid for j in judged])
    if not verdicts and "judge" in pyfuncitem.fixturenames:
        session = lab_of(pyfuncitem)  # tests hand evidence to `judge`, most never ask for `spec`
        spec = pyfuncitem.funcargs.get("spec") or (session.spec if session is not None else None)
        raise AssertionError(NOTHING_JUDGED_PREFIX + f"spec {getattr(spec, 'path', '?')} has no check "
                             "for what this test measured (add its family's checks, or deselect the test)")
    failed = [j for j in judged if j.stands_failed]
    invalid = [j for j in judged if j.invalid is not None]
    # A spec gap first, in its own words (its own Allure category); then one line per failed verdict, each a
    # statement: criterion, measured, bound, window, what missed.
    gaps = [j for j in failed if j.verdict.criterion == nothing_judged.NAME]
    lines = "\n".join([*(NOTHING_JUDGED_PREFIX + j.verdict.detail for j in gaps),
                       *(FAILURE_PREFIX + j.verdict.line() for j in failed if j not in gaps)])
    # Invalid verdicts under their reason, once per reason (one saturated host usually voids several).
    by_reason: dict[str, list[str]] = {}
    for j in invalid:
        by_reason.setdefault(str(j.invalid), []).append(f"  {j.verdict.line()}")
    invalid_lines = "\n".join(f"{INVALID_PREFIX}{why}\n" + "\n".join(voided) for why, voided in by_reason.items())
    if failed:
        raise AssertionError(lines + (f"\n{invalid_lines}" if invalid else ""))
    if invalid:
        raise MeasurementInvalid(invalid_lines)
    return result
