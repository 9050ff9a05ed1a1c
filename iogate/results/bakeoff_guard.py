"""The fair-comparison guard of a bake-off: the runs compared must have met the same test.

Runs are comparable only when the same spec (path and content), profile,
engine and engine version judged and drove them (the store's run context) and
every run point they share ran the same workload (its stored parameters, less
where it ran). A difference there refuses the comparison with one line naming
it; so does a run whose context the store does not hold (fail closed: an
unrecorded spec is not a shown-equal spec).

What differs without changing the workload (host kernel, generator version,
protocol set, hosts, job/volume count, suite version, tests run by only some
runs) is listed, one line each, at the top of the report.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from iogate.errors import IOGateError
from iogate.results.store import RunContext, RunPoint

# Run context fields that decide what was run and how it was judged: any difference refuses.
WORKLOAD_CONTEXT = ("spec", "spec_sha256", "profile", "engine", "engine_version")
# Point parameters (engines/workload.py plan_params) that say where the load ran, not what it was.
PLACEMENT_PARAMS = {"protocols": "protocol set", "hosts": "hosts", "jobs": "job count (volumes x jobs)"}


class UnfairComparison(IOGateError):
    """The runs named for a bake-off did not meet the same test: comparing them would mislead."""


@dataclass(frozen=True)
class Contender:
    """One array's points in one run (one lab of it): a column of the bake-off."""

    run_id: str
    lab: str
    label: str  # the column's name: the array, or array (lab) / array (run) where that is ambiguous
    points: tuple[RunPoint, ...]
    context: RunContext | None


def context_key(run_id: str, lab: str) -> str:
    """Where the store keeps one lab's run context in a run (the labs of one session share its run id)."""
    return f"{run_id} lab {lab}"


def comparable_test_id(test_id: str, lab: str) -> str:
    """A test id without its lab: plugins/parametrize.py ids read test_sweep[LAB-block], and two labs' runs of
    one test must meet in one row (test_sweep[block]; test_baseline[LAB] -> test_baseline)."""
    return re.sub(rf"\[{re.escape(lab)}(?:-|(?=\]))", "[", test_id).replace("[]", "")


def comparable_id(point: RunPoint) -> str:
    """The point's test id without its lab (comparable_test_id)."""
    return comparable_test_id(point.test_id, point.lab)


def workload_params(params: Mapping[str, object]) -> dict[str, object]:
    """A point's parameters less where it ran: what must be equal for two arrays' figures to compare."""
    return {k: v for k, v in params.items() if k not in PLACEMENT_PARAMS}


def _shown(value: object) -> str:
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    return "not recorded" if value is None else str(value)


def _refuse_context(contenders: Sequence[Contender]) -> None:
    for c in contenders:
        if c.context is None:
            raise UnfairComparison(f"refused: run {c.run_id} ({c.label}) has no recorded run context (spec, profile, "
                                   "engine, engine version): its fairness cannot be shown")
    for name in WORKLOAD_CONTEXT:
        values = {c.label: getattr(c.context, name) for c in contenders}
        unrecorded = [label for label, value in values.items() if value is None]
        if unrecorded:
            raise UnfairComparison(f"refused: {name} not recorded for {', '.join(unrecorded)}: its fairness cannot be shown")
        if len(set(values.values())) > 1:
            raise UnfairComparison(f"refused: different {name}: " + "; ".join(f"{label} {value}" for label, value in values.items()))


def _refuse_workload(contenders: Sequence[Contender]) -> None:
    seen: dict[str, tuple[str, dict[str, object]]] = {}
    for c in contenders:
        for point in c.points:
            mine = workload_params(point.params)
            first = seen.setdefault(comparable_id(point), (c.label, mine))
            if first[1] == mine:
                continue
            names = sorted(k for k in set(first[1]) | set(mine) if first[1].get(k) != mine.get(k))
            what = "; ".join(f"{k} {_shown(first[1].get(k))} in {first[0]}, {_shown(mine.get(k))} in {c.label}" for k in names)
            raise UnfairComparison(f"refused: a different workload at {comparable_id(point)}: {what}")


def _placement_lines(contenders: Sequence[Contender]) -> list[str]:
    lines = []
    for param, name in PLACEMENT_PARAMS.items():
        per_point: dict[str, dict[str, str]] = {}
        for c in contenders:
            for point in c.points:
                per_point.setdefault(comparable_id(point), {})[c.label] = _shown(point.params.get(param))
        differing = {test: values for test, values in per_point.items() if len(set(values.values())) > 1}
        if differing:
            test, values = next(iter(differing.items()))
            lines.append(f"{name} differs at {len(differing)} run point(s), e.g. {test}: "
                         + "; ".join(f"{label} {value}" for label, value in values.items()))
    return lines


def _protocol_set_line(contenders: Sequence[Contender]) -> list[str]:
    """The protocols each run used over all its points (tests parametrized per protocol differ in id, not params)."""
    sets = {c.label: ",".join(sorted({str(p) for point in c.points for p in point.params.get("protocols", [])}))
            for c in contenders}
    if len(set(sets.values())) < 2:
        return []
    return ["protocols run: " + "; ".join(f"{label} {value or 'none recorded'}" for label, value in sets.items())]


def _environment_lines(contenders: Sequence[Contender]) -> list[str]:
    lines = []
    names = sorted({name for c in contenders if c.context for name in c.context.environment})
    for name in names:
        values = {c.label: (c.context.environment.get(name) if c.context else None) for c in contenders}
        if len(set(values.values())) > 1:
            lines.append(f"{name}: " + "; ".join(f"{label} {_shown(value)}" for label, value in values.items()))
    return lines


def _coverage_lines(contenders: Sequence[Contender]) -> list[str]:
    lines = []
    suites = {c.label: ",".join(sorted({p.suite_version for p in c.points})) for c in contenders}
    if len(set(suites.values())) > 1:
        lines.append("suite version: " + "; ".join(f"{label} {value}" for label, value in suites.items()))
    everywhere = set.intersection(*({comparable_id(p) for p in c.points} for c in contenders))
    for c in contenders:
        only = {comparable_id(p) for p in c.points} - everywhere
        if only:
            lines.append(f"{len(only)} run point(s) not run by every array, e.g. {sorted(only)[0]} (run by {c.label}): "
                         "shown as missing for the others")
    return lines


def check_fair(contenders: Sequence[Contender]) -> list[str]:
    """Refuse (UnfairComparison, one line) a comparison of runs that did not meet the same test;
    else the differences that do not change the workload, one line each (empty: none)."""
    if len(contenders) < 2:
        raise UnfairComparison("refused: a bake-off compares at least two arrays (runs, or labs of one run)")
    _refuse_context(contenders)
    _refuse_workload(contenders)
    return [*_environment_lines(contenders), *_protocol_set_line(contenders), *_placement_lines(contenders),
            *_coverage_lines(contenders)]
