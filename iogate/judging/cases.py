"""Check names that name a case must name a real one: checked when a spec loads.

Some tests judge a check on one case only when its name says so: the KPI tests
(tests/test_frontend_backend.py) judge `speed_frontend_read_latency_max` on the
frontend_read case alone, the snapshot test (tests/test_snapshot_impact.py)
`snapshot_backend_write_drop_max` on backend_write alone, the mirror test
`mirror_frontend_write_*` on frontend_write. A check whose name misspells the
case (`speed_frontend_raed_latency_max`) names no case, so it would judge every
case with a bound meant for one. A name that uses a word of a case (frontend,
read ...) or comes close to a case where a case goes (right after the prefix)
must name a real case there; the error names the real cases and the nearest.

The case names: the KPI cases are workloads/iogen.yaml's; the snapshot and
mirror cases are their tests' (a self-test keeps these lists equal to them).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from iogate.judging.families import MIRROR_BACKEND_WRITE, MIRROR_FRONTEND_WRITE, SNAPSHOT, SPEED, THROUGHPUT

# tests/test_snapshot_impact.py CASES and tests/test_mirror_impact.py MIRROR_CASES.
SNAPSHOT_CASES = ("read", "frontend_write", "backend_write")
MIRROR = "mirror_"
MIRROR_CASES = tuple(prefix.removeprefix(MIRROR).rstrip("_") for prefix in (MIRROR_FRONTEND_WRITE, MIRROR_BACKEND_WRITE))
# A misspelt case is this close to the real one (difflib ratio): "frontend_raed" vs "frontend_read" is 0.92,
# "frnotend_read" 0.85; the shipped non-case names ("latency_max", "at_latency", "p99_latency") stay below 0.5.
NEAR = 0.75


@cache
def kpi_cases() -> tuple[str, ...]:
    from iogate.procedures.iogen import load_iogen  # the catalog is read once, when a spec first names a KPI check

    return tuple(load_iogen().iogen.cases)


@dataclass(frozen=True)
class CaseNames:
    """In one family, checks named `<prefix><case>_...` judge that case only (prefix "" = the name's start)."""

    prefixes: tuple[str, ...]
    cases: Callable[[], tuple[str, ...]]
    source: str  # where the cases are defined, for the message


NAMING: dict[str, tuple[CaseNames, ...]] = {
    "kpi": (CaseNames((SPEED, THROUGHPUT, ""), kpi_cases, "workloads/iogen.yaml"),),
    "events": (CaseNames((SNAPSHOT,), lambda: SNAPSHOT_CASES, "tests/test_snapshot_impact.py"),
               CaseNames((MIRROR,), lambda: MIRROR_CASES, "tests/test_mirror_impact.py")),
}


def _after_prefix(name: str, prefixes: tuple[str, ...]) -> tuple[str, str] | None:
    for prefix in prefixes:
        if name.startswith(prefix):
            return prefix, name[len(prefix):]
    return None


def problem(family: str, name: str) -> str | None:
    """Why the check `name` of `family` names no real case although it names one, or None."""
    for naming in NAMING.get(family, ()):
        split = _after_prefix(name, naming.prefixes)
        if split is None:
            continue
        prefix, rest = split
        cases = naming.cases()
        if any(rest == case or rest.startswith(f"{case}_") for case in cases):
            return None
        words = rest.split("_")
        case_words = {word for case in cases for word in case.split("_")}
        leads = {"_".join(words[:len(case.split("_"))]) for case in cases}
        scores = [(difflib.SequenceMatcher(None, lead, case).ratio(), lead, case) for lead in leads for case in cases]
        score, lead, _ = max(scores)
        if not case_words & set(words) and score < NEAR:
            return None  # names no case: judges every case (speed_latency_max)
        # The nearest case: most words in common with the name's lead, then the closest spelling.
        _, _, nearest = max((len(set(lead_.split("_")) & set(case.split("_"))), ratio, case) for ratio, lead_, case in scores)
        return (f"names no {family} case: {lead!r} after {prefix or 'the start'!r} is not a case "
                f"(cases, {naming.source}: {', '.join(cases)}; nearest: {prefix}{nearest}_...); a check named "
                f"{prefix}<case>_... judges that case only, any other name every case")
    return None
