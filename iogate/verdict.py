"""A Verdict: one criterion's pass/fail with the evidence a reviewer signs off on."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Verdict:
    """The outcome of one criterion on one window of one run point.

    `measured` and `bound` are in `unit`; `evidence` rows are plain dicts (one per
    interval, VM, sweep point...) shown as a table in the report.
    """

    criterion: str
    passed: bool
    measured: float
    bound: float
    unit: str
    window: str = "measure"
    intervals_considered: int = 0
    intervals_failing: int = 0
    evidence: tuple[dict[str, Any], ...] = field(default_factory=tuple)
    detail: str = ""

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
            "unit": self.unit,
            "window": self.window,
            "intervals_considered": self.intervals_considered,
            "intervals_failing": self.intervals_failing,
            "detail": self.detail,
        }
