"""How much of a window the array's samples cover, so a partial window is reported as partial.

An array samples at a fixed interval; a window of the host's run should hold one sample per
interval. Samples that are not there (not taken, aged out, lost on the way, not produced yet) are
named as spans of the window with how many samples were due there, never filled in as zeros. The
counts are "about": where the array's grid of stamps falls in the window is the array's, so a
span counts as missing only when it is longer than one and a half intervals.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from iogate.arrays.base import ArraySample

SLACK = 1.5  # a gap longer than this many intervals has lost at least one sample


@dataclass(frozen=True)
class Coverage:
    samples: int
    interval_s: float | None  # the one interval the samples report; None when they report none or several
    missing: tuple[tuple[datetime, datetime, int], ...] = ()  # (from, to, about how many samples were due there)
    note: str = ""  # why coverage could not be judged, "" when it was

    @property
    def missing_samples(self) -> int:
        return sum(n for _, _, n in self.missing)

    def describe(self) -> list[str]:
        """The missing spans as text ("12:00:30 .. 12:01:30: about 2 samples missing"), or why not judged."""
        if self.note:
            return [self.note]
        return [f"{a.isoformat()} .. {b.isoformat()}: about {n} sample(s) missing" for a, b, n in self.missing]


def sample_coverage(samples: Sequence[ArraySample], start: datetime, end: datetime) -> Coverage:
    """The spans of [start, end] that the samples leave uncovered at their interval."""
    if not samples:
        return Coverage(0, None, note="the array reported no samples for this window: all of it is missing")
    intervals = {s.interval_s for s in samples if s.interval_s}
    if len(intervals) != 1:
        why = "report no interval" if not intervals else f"report several intervals ({', '.join(f'{i:g} s' for i in sorted(intervals))})"
        return Coverage(len(samples), None, note=f"coverage not judged: the samples {why}")
    (step,) = intervals
    times = sorted(s.time for s in samples)
    missing = []
    for a, b in zip([start, *times], [*times, end], strict=True):
        gap = (b - a).total_seconds() / step
        if gap > SLACK:
            missing.append((a, b, max(1, round(gap) - 1)))
    return Coverage(len(samples), step, tuple(missing))
