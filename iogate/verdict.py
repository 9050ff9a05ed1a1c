"""A Verdict: one criterion's pass/fail with the evidence a reviewer signs off on."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class Unit(StrEnum):
    """The unit of a verdict's measured value and bound, as reports print it.

    A StrEnum: str(), f-strings, JSON and CSV give the text itself ("ms"), so
    every report and store reads exactly what a plain string wrote.
    """

    IOPS = "IOPS"
    MB_PER_S = "MB/s"
    MS = "ms"
    PCT = "%"  # a relative change or a share: drop, rise, efficiency
    PCT_POINTS = "% points"  # a deviation from a baseline = 100
    PCT_INTERVALS = "% intervals"  # the share of intervals that held
    ERRORS = "errors"
    ROUNDS = "rounds"
    BYTES = "bytes"
    CHECKS = "checks"  # how many of the spec's checks judged the evidence (iogate/judging/nothing_judged.py)


@dataclass(frozen=True)
class Verdict:
    """The outcome of one criterion on one window of one run point.

    `measured` and `bound` are in `unit` (a Unit; its text is accepted and
    checked: an unknown unit is an error here, not a surprise in a report);
    `evidence` rows are plain dicts (one per interval, VM, sweep point...)
    shown as a table in the report. `description` (what the check judges) and
    `bound_source` (where its bound comes from: "[published] ...", "[BUYER]
    ...", "calibrated N=20 ...") are the spec check's, filled in when a check
    evaluates (iogate/judging/spec.py Check.evaluate), so a reviewer reads them beside
    the figures.

    `point` and `host` say what it was judged on: the run point's name (the
    RunResult's, as `measure` recorded it) and the one host whose figures it
    judged ("" = every host of the point); point "" = not known (several
    points, or figures that came without their run). The invalid-measurement
    rule (iogate/metrics/generator.py) reads them; row() leaves them out.
    """

    criterion: str
    passed: bool
    measured: float
    bound: float
    unit: Unit
    window: str = "measure"
    intervals_considered: int = 0
    intervals_failing: int = 0
    evidence: tuple[dict[str, Any], ...] = field(default_factory=tuple)
    detail: str = ""
    point: str = ""
    host: str = ""
    description: str = ""
    bound_source: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.unit, Unit):
            try:
                object.__setattr__(self, "unit", Unit(self.unit))
            except ValueError:
                raise ValueError(f"verdict {self.criterion}: unknown unit {self.unit!r} "
                                 f"(units: {', '.join(u.value for u in Unit)})") from None

    def line(self) -> str:
        """One line for a failing test's message and the console."""
        status = "PASS" if self.passed else "FAIL"
        intervals = f", {self.intervals_failing}/{self.intervals_considered} intervals failing" if self.intervals_considered else ""
        detail = f": {self.detail}" if self.detail else ""
        return (
            f"{self.criterion} {status}: measured {self.measured:.6g} {self.unit}, bound {self.bound:.6g} {self.unit}, "
            f"window {self.window}{intervals}{detail}"
        )

    def row(self) -> dict[str, Any]:
        """The verdict as a table row (report, results store, CSV)."""
        return {
            "criterion": self.criterion,
            "passed": self.passed,
            "measured": self.measured,
            "bound": self.bound,
            "unit": self.unit.value,  # plain text: stores and exports hold strings
            "window": self.window,
            "intervals_considered": self.intervals_considered,
            "intervals_failing": self.intervals_failing,
            "detail": self.detail,
            "description": self.description,
            "bound_source": self.bound_source,
        }
