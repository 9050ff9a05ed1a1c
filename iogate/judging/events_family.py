"""How the checks of the spec's `events` family judge an event test.

A test picks its checks by name prefix (event_checks); each check judges the
windows its criterion reads (judge_windows): the event window alone (absolute
bounds), the event window against the baseline window before it (relative
impact), or the per-VM targets over the event window. Every measured window is
judged, by rule, not by the test: each check judges the recovery window after
the event exactly as it judges the event window (against the same baseline
window, verdict `<check>[recovery]`), so a freeze right after a snapshot
delete, a mirror detach or a dedupe pass fails. The rules every family gets
(iogate/judging/family_rules.py: no_errors, no_stall) judge the whole run, the
verify region included, and a stall's verdict names the window it fell in
(event_verdicts).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from iogate.judging.families import AGAINST_BASELINE, ON_EVENT, ON_TARGETS
from iogate.judging.family_rules import rule_verdicts
from iogate.judging.spec import Check, FamilySpec
from iogate.metrics.types import RunResult, Series
from iogate.metrics.windows import WindowStats
from iogate.verdict import Verdict

# How an events check is judged goes by its criterion (iogate/judging/families.py; a spec whose events check has
# another criterion, or a name no events test selects, is refused when it loads): on the event window alone
# (ON_EVENT: absolute bounds), the event window against the baseline window before it (AGAINST_BASELINE:
# relative impact), or the VMs' targets over the event window (ON_TARGETS).


def event_checks(family: FamilySpec, prefix: str, *, others: Sequence[str] = ()) -> list[Check]:
    """The checks of the events family an event test applies, by name: every check starting with
    `prefix` ("dedupe_", "snapshot_backend_write_") except those starting with one of `others`
    (the other cases' prefixes). A spec chooses what a lab is judged on by which checks it names."""
    return [c for c in family if c.name.startswith(prefix) and not any(c.name.startswith(o) for o in others)]


def judge_windows(checks: Sequence[Check], baseline: WindowStats, event: WindowStats, *,
                  series: Series | None = None, targets: Mapping[str, float] | None = None) -> list[Verdict]:
    """Each check on the windows its criterion reads (see ON_EVENT / AGAINST_BASELINE / ON_TARGETS)."""
    verdicts = []
    for check in checks:
        if check.criterion in ON_EVENT:
            verdicts.append(check.evaluate(event))
        elif check.criterion in AGAINST_BASELINE:
            verdicts.append(check.evaluate(baseline, event))
        elif check.criterion in ON_TARGETS and series is not None and targets is not None:
            verdicts.append(check.evaluate(series, targets, window=event.window))
        else:
            raise ValueError(f"{check.where}: events check {check.name} ({check.criterion}) cannot judge an event window")
    return verdicts


RECOVERY = "recovery"


def event_verdicts(family: FamilySpec, checks: Sequence[Check], baseline: WindowStats, event: WindowStats, recovery: WindowStats,
                   result: RunResult, *, series: Series | None = None, targets: Mapping[str, float] | None = None) -> list[Verdict]:
    """What an event test is judged on: its checks on the event window and, by the same rule, on the recovery
    window after it (judge_windows; verdicts `<check>[recovery]`); the family's rules (no_errors, no_stall) on
    the whole run, a stall named by the window it fell in. An empty recovery window is no data: a FAIL."""
    on_event = judge_windows(checks, baseline, event, series=series, targets=targets)
    on_recovery = [dataclasses.replace(v, criterion=f"{v.criterion}[{RECOVERY}]")
                   for v in judge_windows(checks, baseline, recovery, series=series, targets=targets)]
    windows = (baseline.window, event.window, recovery.window)
    return [*on_event, *on_recovery, *rule_verdicts(family, result, windows=windows)]
