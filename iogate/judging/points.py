"""Points known before a test runs (a sweep's grid, scaling's steps, the protocols compared).

The points a test will produce are known before it runs: `expected_points`
fails naming each planned point that is missing, `comparands` a comparison
that lacks what it compares (only the baseline protocol measured).
SweepPoint (one load level as plain numbers) is evidence: iogate/judging/evidence.py.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from iogate.judging.evidence import SweepPoint
from iogate.verdict import Unit, Verdict

__all__ = ["COMPARANDS", "EXPECTED_POINTS", "SweepPoint", "comparands", "expected_points"]


# -- expected points: known before the test runs, a missing one is a failed verdict ---------------------------
EXPECTED_POINTS = "expected_points"
COMPARANDS = "comparands"


def expected_points(expected: Sequence[str], measured: Iterable[str], *, what: str, window: str = "measure") -> Verdict:
    """Every run point the test planned (`expected`: a sweep's grid, scaling's steps) was measured; each missing one
    is named. A knee or an efficiency judged on the points that happened to finish would pass on a curve whose
    hardest point hung. Measured: the share of the planned points present (%), bound 100."""
    present = set(measured)
    missing = [label for label in expected if label not in present]
    if not expected:
        return Verdict(EXPECTED_POINTS, False, float("nan"), 100.0, Unit.PCT, window,
                       detail=f"no data: no {what} was planned, so none can be judged")
    share = 100.0 * (len(expected) - len(missing)) / len(expected)
    detail = (f"{what}: missing {', '.join(missing)} ({len(missing)} of {len(expected)} planned; "
              "each failed or never ran, so nothing judged on the others stands for the whole)") if missing else (
        f"all {len(expected)} planned {what}s measured")
    rows = tuple({"point": label, "measured": label in present} for label in expected)
    return Verdict(EXPECTED_POINTS, not missing, share, 100.0, Unit.PCT, window, evidence=rows, detail=detail)


def comparands(planned: Sequence[str], measured: Iterable[str], baseline: str, *, what: str, window: str = "measure") -> Verdict:
    """A comparison against `baseline` needs its comparands: the baseline and every other planned one (`planned`:
    the lab's protocols) measured, and at least one other planned. Only the baseline present is not "deviation 0",
    it is nothing compared (FAIL). Measured: the share of the planned comparands other than the baseline present (%)."""
    present = set(measured)
    others = [name for name in planned if name != baseline]
    missing = [name for name in others if name not in present]
    share = 100.0 * (len(others) - len(missing)) / len(others) if others else 0.0
    if baseline not in present:
        detail = f"no data: the baseline {what} {baseline} was not measured"
    elif not others:
        detail = f"nothing to compare: only the baseline {what} {baseline} is planned (a comparison needs a second {what})"
    elif missing:
        detail = f"missing {what}(s) {', '.join(missing)}: planned {', '.join(planned)}, each compared with {baseline}"
    else:
        detail = f"{len(others)} {what}(s) compared with {baseline}: {', '.join(others)}"
    passed = baseline in present and bool(others) and not missing
    rows = tuple({what: name, "measured": name in present, "baseline": name == baseline} for name in planned)
    return Verdict(COMPARANDS, passed, share, 100.0, Unit.PCT, window, evidence=rows, detail=detail)
