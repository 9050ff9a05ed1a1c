"""The array's clock against this controller's: what `ArrayDriver.array_clock()` reports.

An array stamps its performance samples with its own clock; the run's window is on the host's.
A driver that can read the array's current time says how far apart the clocks are (and how sure
that is: half the round trip of the read plus the resolution of the array's answer); one that
cannot says why, so the evidence never implies the clocks agree when nobody looked.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime


@dataclass(frozen=True)
class ArrayClock:
    """`offset_s` = array clock - controller clock (None: not read, `source` says why); `uncertainty_s` bounds it."""

    offset_s: float | None
    uncertainty_s: float | None
    source: str  # how it was read ("GET /cluster/nodes date"), or why it was not

    def describe(self) -> str:
        if self.offset_s is None:
            return f"array clock not read: {self.source}"
        return f"array clock - controller clock = {self.offset_s:+.1f} s (+/- {self.uncertainty_s or 0:.1f} s; {self.source})"

    def may_misplace(self, interval_s: float | None) -> bool:
        """Whether the offset (with its uncertainty) reaches a sample interval: samples stamped by the array
        could then belong to a neighbouring interval of the host's window. Unknown offsets are not judged."""
        if self.offset_s is None or not interval_s:
            return False
        return abs(self.offset_s) + (self.uncertainty_s or 0.0) >= interval_s


def not_read(why: str) -> ArrayClock:
    return ArrayClock(None, None, why)


def measure(
    read: Callable[[], Sequence[datetime]], source: str, resolution_s: float, now: Callable[[], datetime] | None = None
) -> ArrayClock:
    """Read the array's time(s) (one per node; timezone-aware) between two readings of ours.

    The offset is taken against the midpoint of our two readings; the uncertainty is half the time
    between them plus the array's resolution (ONTAP's dates are whole seconds). With several nodes the
    offset is their mean and the spread between them is added to the uncertainty.
    """
    clock = now or (lambda: datetime.now(UTC))
    before = clock()
    stamps = list(read())
    after = clock()
    if not stamps:
        return not_read(f"{source}: the array gave no time")
    mid = before + (after - before) / 2
    offsets = [(stamp - mid).total_seconds() for stamp in stamps]
    spread = max(offsets) - min(offsets)
    uncertainty = (after - before).total_seconds() / 2 + resolution_s + spread / 2
    return ArrayClock(sum(offsets) / len(offsets), uncertainty, source)
