"""Evidence that no check of the spec judges is a FAIL, not a pass on the rules alone.

The rules every family gets (no_errors, no_stall: family_rules.py) and the
judge's own checks (every expected point, a comparison's comparands, an event's
effect) say the run was sound, not that the array met anything. A spec that
leaves a family out, or names no check for an event service or a KPI case, would
otherwise pass that test on the rules: a 50 % drop during a snapshot passed a
spec with no snapshot_* check, and a spec without a baseline family passed the
baseline test at any IOPS. The judge adds this verdict there; the test fails
"nothing judged" (its own Allure category: a spec gap, not an array miss).
"""

from __future__ import annotations

from pathlib import Path

from iogate.verdict import Unit, Verdict

NAME = "nothing_judged"


def nothing_judged(spec: Path | str, what: str, window: str) -> Verdict:
    """A FAIL saying which of the spec's checks are missing: `what` names them ("no check of family baseline")."""
    return Verdict(NAME, False, 0.0, 1.0, Unit.CHECKS, window,
                   detail=f"spec {spec} has {what}: the rules (no_errors, no_stall) alone judge no array "
                          "(add the checks, or deselect the test)")
