"""The rules every family gets from the judge, not from its test: I/O errors and stalls, on every run.

A spec's family may name them (`no_errors: {criterion: no_io_errors}`,
`no_stall: {criterion: no_stall, min_interval: 5s}` or `no_stall: {criterion:
no_stall, off_because: <why>}`) to set their bounds; a family that leaves one out is
judged by it anyway, with the criterion's defaults, and the verdict says it
was the rule (`where`). A test hands every measured run to `run_verdicts`
(its own checks on that run plus the rules), so no family can forget them:
before, scaling refused a no_errors check and every job returning EIO passed
its stepping checks, and the baseline family's whole-run mean hid 10 s at 0 IOPS.

Expected points (a sweep's grid, scaling's steps, the protocols compared) are
iogate/judging/points.py: `expected_points`, `comparands`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence

from iogate.judging import no_io_errors, no_stall
from iogate.judging.families import NO_ERRORS, STALL
from iogate.judging.spec import Check, FamilySpec
from iogate.metrics.types import RunResult
from iogate.metrics.windows import Window
from iogate.verdict import Verdict

RULE_CRITERIA = frozenset({no_io_errors.NAME, no_stall.NAME})
_RULE_WHERE = "iogate/judging/family_rules.py (a rule every family gets; the spec names no such check)"


def rule_checks(family: FamilySpec) -> list[Check]:
    """The family's own no_io_errors / no_stall checks, and the rule's default for each it leaves out."""
    named = [c for c in family if c.criterion in RULE_CRITERIA]
    defaults = [
        Check(name, family.name, criterion, params, description, where=_RULE_WHERE)
        for name, criterion, params, description in (
            (NO_ERRORS, no_io_errors.NAME, no_io_errors.Params(), "No I/O error, no verify failure, no job that did no I/O."),
            (STALL, no_stall.NAME, no_stall.Params(), "No job silent (no completed I/O) for a span that holds several of its I/Os."),
        )
        if not any(c.criterion == criterion for c in named)
    ]
    return [*named, *defaults]


def own_checks(family: FamilySpec) -> list[Check]:
    """The family's checks other than the rules (those run_verdicts applies to every run)."""
    return [c for c in family if c.criterion not in RULE_CRITERIA]


def rule_verdicts(family: FamilySpec, run: RunResult, *, windows: Sequence[Window] = (), verify_failures: int = 0) -> list[Verdict]:
    """The rules on one run; `windows` name where a stall fell (baseline, event, recovery)."""
    verdicts = []
    for check in rule_checks(family):
        if check.criterion == no_stall.NAME:
            verdict = check.evaluate(run, windows=windows)
        else:
            verdict = dataclasses.replace(check.evaluate(run, verify_failures=verify_failures), window=run.name)
        verdicts.append(verdict)
    return verdicts


def run_verdicts(family: FamilySpec, runs: RunResult | Iterable[RunResult], checks: Iterable[Check] | None = None) -> list[Verdict]:
    """Each run judged by `checks` (default: every check of the family that is not a rule) and by the rules."""
    items = [runs] if isinstance(runs, RunResult) else list(runs)
    mine = own_checks(family) if checks is None else [c for c in checks if c.criterion not in RULE_CRITERIA]
    verdicts: list[Verdict] = []
    for run in items:
        verdicts.extend(stop_noted([check.evaluate(run) for check in mine], run))
        verdicts.extend(stop_noted(rule_verdicts(family, run), run))
    return verdicts


def stop_noted(verdicts: list[Verdict], run: RunResult) -> list[Verdict]:
    """Verdicts on a run a live judge ended early (or that never reached steady state) say so, and why."""
    stop = run.stop
    if stop is None or stop.kind == "full":
        return verdicts
    return [dataclasses.replace(v, detail=f"{v.detail}; {stop.sentence()}" if v.detail else stop.sentence()) for v in verdicts]
