"""Which checks each test family's tests apply, and the inputs they hand them: checked when a spec loads.

Tests pick the checks of their spec family by name (the events tests by prefix,
`dedupe_` ...; the KPI tests by `speed_` / `throughput_`; client stepping by
exact name; the events tests read `no_errors` by name) and dispatch on the
criterion (a run, sweep points, per-VM series and targets, two windows). The
names and criteria they use are declared here once, as constants the tests and
the family modules (events_family, scaling_family) import, and
iogate/judging/spec.py checks every loaded spec against USES: a check no test would
apply (silently never judged), a check whose criterion cannot judge what its
test hands it, or a missing check a test reads by name is refused at load,
naming file:line, family and check, instead of surfacing in the one test that
trips over it.

Every family that measures runs also accepts the checks named no_stall and
(scaling now too) no_errors: the rules every family gets apply them to every
run whether the spec names them or not (iogate/judging/family_rules.py); a spec names
one only to set its bounds or, for no_stall, to switch it off with a reason.

A family the spec leaves out has no checks and is not checked here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from iogate.judging import no_io_errors, no_stall, registry, relative_to_baseline, scaling_efficiency, steady_state

# Criteria by what a test hands them, as each criterion declares (EVIDENCE; registry.accepting).
ON_RUN = registry.accepting("run")  # a measured run (or runs)
CURVE_CRITERIA = registry.accepting("curve")  # a load curve's sweep points, in load order
ON_EVENT = registry.accepting("window")  # the event window alone (absolute bounds)
AGAINST_BASELINE = registry.accepting("window_pair")  # the event window vs the baseline window before it
ON_TARGETS = registry.accepting("targets")  # per-VM interval series and IOPS targets

# Every family (iogate/judging/family_rules.py): the rules judged on every run, by these names when a spec sets their bounds.
STALL = "no_stall"
# events: check names and name prefixes (tests/test_snapshot_impact.py, test_mirror_impact.py, test_dedupe_during_load.py).
NO_ERRORS = "no_errors"  # a rule of every family (iogate/judging/family_rules.py); events specs must name it
SNAPSHOT = "snapshot_"  # snapshot_<case>_* judge that case only, every other snapshot_* each case
DEDUPE = "dedupe_"
REPLICA = "replica_"
MIRROR_FRONTEND_WRITE = "mirror_frontend_write_"
MIRROR_BACKEND_WRITE = "mirror_backend_write_"
# kpi: name prefixes (tests/test_frontend_backend.py).
SPEED = "speed_"
THROUGHPUT = "throughput_"
# scaling: check names (iogate/judging/scaling_family.py).
SLOW_HOST = "slow_host_max_below_median"
LINEAR = "linear_efficiency_min"
DATAPATH = "datapath_efficiency_min"


@dataclass(frozen=True)
class Use:
    """How a family's tests apply some of its checks: those with one exact name, a name prefix, or
    any name (neither), judged by one of `criteria` on what the test hands them (`how`)."""

    criteria: frozenset[str]
    how: str
    name: str = ""
    prefix: str = ""
    required: bool = False  # with `name`: a test reads the check by name, so the family must have it

    def covers(self, check: str) -> bool:
        return check == self.name if self.name else check.startswith(self.prefix)

    def label(self) -> str:
        return self.name or (f"{self.prefix}*" if self.prefix else "any name")

    def checks_phrase(self, alone: bool) -> str:
        if self.name:
            return f"the check {self.name}"
        if self.prefix:
            return f"checks named {self.prefix}*"
        return "every check" if alone else "every other check"


_EVENT_WINDOWS = ON_EVENT | AGAINST_BASELINE
# The stall rule, first in every family that measures runs: a spec names it only to set its span or switch it off (with a reason).
_STALL = Use(frozenset({no_stall.NAME}), "every measured run (a rule: iogate/judging/family_rules.py)", name=STALL)
_EVENTS_HOW = "the event window, or the event window against the baseline window"

# Per family, the first Use that covers a check's name decides what the check must be; a name no Use covers is never applied.
USES: Mapping[str, tuple[Use, ...]] = {
    "baseline": (_STALL, Use(ON_RUN, "the measured run")),
    "sweep": (_STALL, Use(ON_RUN | CURVE_CRITERIA, "each point's run, or each load curve's points (iops_at_latency, knee)")),
    "tiles": (_STALL, Use(ON_RUN | ON_TARGETS, "the tile's run (latency_bound per workload type), or per-VM series and targets")),
    "kpi": (
        _STALL,
        Use(ON_RUN, "the SPEED run", prefix=SPEED),
        Use(ON_RUN | CURVE_CRITERIA, "the THROUGHPUT steps' points (iops_at_latency, knee) or the best step's run", prefix=THROUGHPUT),
        Use(frozenset({no_io_errors.NAME, steady_state.NAME}), "every run (no_io_errors), the backend top step's rounds (steady_state)"),
    ),
    "protocols": (
        _STALL,
        Use(ON_RUN | {relative_to_baseline.NAME}, "every protocol's run, or their figures against the baseline protocol"),
    ),
    "scaling": (
        _STALL,
        Use(frozenset({no_io_errors.NAME}), "every step's run (a rule: iogate/judging/family_rules.py)", name=NO_ERRORS),
        Use(frozenset({relative_to_baseline.NAME}), "each host alone against the median of the hosts alone", name=SLOW_HOST),
        Use(frozenset({scaling_efficiency.NAME}), "every incremental step against k x one host", name=LINEAR),
        Use(frozenset({scaling_efficiency.NAME}), "all hosts at once against the lab's data-path limit", name=DATAPATH),
    ),
    "events": (
        _STALL,
        Use(frozenset({no_io_errors.NAME}), "the whole run of every event test", name=NO_ERRORS, required=True),
        Use(_EVENT_WINDOWS | ON_TARGETS, f"{_EVENTS_HOW}, or the VMs' targets over the event window", prefix=DEDUPE),
        Use(_EVENT_WINDOWS, _EVENTS_HOW, prefix=SNAPSHOT),
        Use(_EVENT_WINDOWS, _EVENTS_HOW, prefix=REPLICA),
        Use(_EVENT_WINDOWS, _EVENTS_HOW, prefix=MIRROR_FRONTEND_WRITE),
        Use(_EVENT_WINDOWS, _EVENTS_HOW, prefix=MIRROR_BACKEND_WRITE),
    ),
    "regression": (Use(frozenset({relative_to_baseline.NAME}), "this run's stored figures against the stored baseline's"),),
}


@dataclass(frozen=True)
class Problem:
    family: str
    check: str  # the check at fault, or the missing one
    key: str  # the check's key at fault ("criterion"), "" for the check itself
    message: str


def problems(family: str, checks: Mapping[str, str]) -> list[Problem]:
    """What is wrong with a family's checks ({check name: criterion}) for the tests that apply them."""
    uses = USES.get(family, ())
    found: list[Problem] = []
    for use in uses:
        if use.required and use.name not in checks:
            found.append(Problem(family, use.name, "",
                                 f"family {family} has no check {use.name} ({', '.join(sorted(use.criteria))}); "
                                 f"its tests read it by name to judge {use.how}"))
    for name, criterion in checks.items():
        use = next((u for u in uses if u.covers(name)), None)
        if use is None:
            known = "; ".join(f"{u.label()} ({', '.join(sorted(u.criteria))})" for u in uses)
            found.append(Problem(family, name, "", f"no {family} test applies a check named {name} (it would never be judged); "
                                                      f"the {family} tests apply: {known}"))
        elif criterion not in use.criteria:
            named = [u.label() for u in uses if u is not use and (u.name or u.prefix) and criterion in u.criteria]
            rename = f"; or name it {' or '.join(named)}" if named and not (use.name or use.prefix) else ""
            found.append(Problem(family, name, "criterion",
                                 f"criterion {criterion} cannot judge what the {family} tests hand "
                                 f"{use.checks_phrase(len(uses) == 1)}: {use.how} (use {', '.join(sorted(use.criteria))}{rename})"))
    return found
