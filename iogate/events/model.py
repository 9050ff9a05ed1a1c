"""The event model: what an array action during a workload is, what happened, and the windows it cuts.

    Event          one planned action (snapshot, dedupe, replicate, mirror, degrade)
    EventRecord    one occurrence as it happened, on the epoch clock (ms)
    Timeline       the records of one run and its baseline / event / recovery windows
    EventError     an action failed or never ran (infrastructure: no verdict)
    WindowTooShort the run did not cover a window with enough intervals to judge

REQUIRES says which capability each action needs; events/actions.py holds what
each action does to the array, events/schedule.py plays them beside a workload.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from iogate.arrays.base import Capability, Volume
from iogate.errors import ArrayError
from iogate.lab import QoS
from iogate.metrics.types import RunResult
from iogate.metrics.windows import Window, event_windows

ActionName = Literal["snapshot_create", "snapshot_delete", "dedupe_run", "replicate", "mirror_attach", "mirror_detach", "degrade"]

# What the array must be able to do for each action (tests skip on a missing one).
REQUIRES: dict[str, Capability] = {
    "snapshot_create": Capability.SNAPSHOT,
    "snapshot_delete": Capability.SNAPSHOT,
    "dedupe_run": Capability.DEDUPE,
    "replicate": Capability.REPLICATE,
    "mirror_attach": Capability.MIRROR,
    "mirror_detach": Capability.MIRROR,
    "degrade": Capability.QOS,
}
_NEEDS_VOLUME = {"snapshot_create", "snapshot_delete", "replicate", "mirror_attach", "mirror_detach", "degrade"}


class EventError(ArrayError):
    """An array action of an event schedule failed or never ran; names the action."""


@dataclass(frozen=True)
class Event:
    """One array action `at_s` seconds after the measurement start.

    `name` names a snapshot (create/delete pair up by volume and name); `qos` is
    the cap a `degrade` applies (None lifts every cap). `repeat` runs the action
    that many times, each `every_s` after the previous start or at once after the
    previous end, whichever is later; `until_s` keeps starting it so until that
    offset. Repeated occurrences are labelled "<label> #1", "#2" ...
    """

    action: ActionName
    at_s: float
    volume: Volume | None = None
    name: str = ""
    qos: QoS | None = None
    repeat: int = 1
    every_s: float = 0.0
    until_s: float | None = None  # repeat back-to-back until this offset (a resync that lasts a while)
    tag: str = ""  # tells apart two events of one action on one volume ("on", "off")
    after: str = ""  # label of an earlier event: at_s then counts from the end of its last occurrence

    def __post_init__(self) -> None:
        if self.action not in REQUIRES:
            raise ValueError(f"event {self.action!r}: unknown action (known: {', '.join(REQUIRES)})")
        if self.action in _NEEDS_VOLUME and self.volume is None:
            raise ValueError(f"event {self.action} at {self.at_s:g} s: needs a volume")
        if self.action.startswith("snapshot_") and not self.name:
            raise ValueError(f"event {self.action} at {self.at_s:g} s: needs a snapshot name")
        if self.at_s < 0 or self.repeat < 1 or self.every_s < 0:
            raise ValueError(f"event {self.action}: at_s and every_s must be >= 0 and repeat >= 1")
        if self.until_s is not None and self.until_s <= self.at_s:
            raise ValueError(f"event {self.action}: until_s {self.until_s:g} must be after at_s {self.at_s:g}")
        if self.after and self.after == self.label:
            raise ValueError(f"event {self.label}: cannot follow itself")

    @property
    def repeats(self) -> bool:
        return self.repeat > 1 or self.until_s is not None

    @property
    def label(self) -> str:
        """How the timeline and charts name it: "snapshot_create vol1@s1", "dedupe_run", "degrade vol1"."""
        target = self.volume.name if self.volume else ""
        if self.name:
            target = f"{target}@{self.name}"
        label = f"{self.action} {target}".strip()
        return f"{label} ({self.tag})" if self.tag else label

    @property
    def when(self) -> str:
        """The planned time as a reader says it: "at 4 s", "5 s after mirror_attach vol1"."""
        return f"{self.at_s:g} s after {self.after}" if self.after else f"at {self.at_s:g} s"


@dataclass(frozen=True)
class EventRecord:
    """What happened: one occurrence of an action, on the epoch clock (ms)."""

    label: str
    action: str
    planned_at_s: float
    start_ms: int
    end_ms: int
    evidence: dict[str, Any] = field(default_factory=dict)
    error: str = ""

    @property
    def duration_ms(self) -> int:
        return self.end_ms - self.start_ms

    def as_dict(self) -> dict[str, Any]:
        return {"label": self.label, "action": self.action, "planned_at_s": self.planned_at_s, "start_ms": self.start_ms,
                "end_ms": self.end_ms, "duration_ms": self.duration_ms, "evidence": self.evidence, "error": self.error}


@dataclass(frozen=True)
class Timeline:
    """The recorded events of one run, in start order, and the windows they cut."""

    records: tuple[EventRecord, ...]
    anchor_ms: int  # planned measurement start: offsets count from here

    def matching(self, key: str) -> list[EventRecord]:
        """Records whose action or label is `key`; a repeated event's "<label> #N" occurrences match its label."""
        return [r for r in self.records if key in (r.action, r.label) or r.label.startswith(f"{key} #")]

    def find(self, key: str) -> EventRecord:
        """The first record matching `key` (see `matching`)."""
        found = self.matching(key)
        if not found:
            known = ", ".join(r.label for r in self.records) or "none"
            raise EventError(f"timeline: no event {key!r} was recorded (recorded: {known})")
        return found[0]

    def span_ms(self, first: str, last: str | None = None) -> tuple[int, int]:
        """From the start of the first `first` record to the end of the last `last` one (default: `first`)."""
        self.find(last or first)
        return self.find(first).start_ms, self.matching(last or first)[-1].end_ms

    def windows(self, result: RunResult, first: str, last: str | None = None, *, between: bool = False,
                guard_ms: int = 0) -> tuple[Window, Window, Window]:
        """Baseline / event / recovery windows of the run around the span first..last.

        A span covers events whose effect outlasts their action (a snapshot
        exists from its create to its delete). `between=True` takes the steady
        state from the end of `first` to the start of `last` instead (a mirror
        once attached, its initial sync excluded); the two actions themselves
        then belong to no window. The windows end at the run's judged end (RunResult.judged_end_ms): the
        recovery window never holds the run's last second, which fio logs as its jobs exit.
        """
        end_of_run_ms = result.judged_end_ms
        if not between:
            start_ms, end_ms = self.span_ms(first, last)
            return event_windows(result.start_ms, end_of_run_ms, start_ms, end_ms, guard_ms=guard_ms)
        if last is None:
            raise ValueError("between=True needs both the first and the last event")
        first_start_ms, first_end_ms = self.span_ms(first)
        last_start_ms, last_end_ms = self.span_ms(last)
        # Validates the order against the measured run as event_windows does.
        event_windows(result.start_ms, end_of_run_ms, first_start_ms, last_end_ms)

        def span(name: str, start: int, end: int) -> Window:
            return Window(name, start, max(start, end))

        return (
            span("baseline", result.start_ms, first_start_ms - guard_ms),
            span("event", first_end_ms + guard_ms, min(last_start_ms, end_of_run_ms) - guard_ms),
            span("recovery", min(last_end_ms + guard_ms, end_of_run_ms), end_of_run_ms),
        )

    def spans(self) -> list[tuple[str, int, int]]:
        """(label, start_ms, end_ms) per record: what iogate.report.charts.timeline_png marks."""
        return [(r.label, r.start_ms, r.end_ms) for r in self.records]

    def to_json(self, result: RunResult | None = None) -> str:
        """The timeline for a report attachment; with the run, offsets in s from its measurement start."""
        rows = [r.as_dict() for r in self.records]
        if result is not None:
            for row in rows:
                row["start_s"] = round((row["start_ms"] - result.start_ms) / 1000, 3)
                row["end_s"] = round((row["end_ms"] - result.start_ms) / 1000, 3)
        measure = {"start_ms": result.start_ms, "end_ms": result.end_ms} if result else None
        return json.dumps({"anchor_ms": self.anchor_ms, "measure": measure, "events": rows}, indent=2, default=str)


# Fewer whole intervals than this in the baseline or event window and no verdict can be drawn.
MIN_WINDOW_INTERVALS = 2


class WindowTooShort(EventError):
    """The run itself did not cover a window: it holds too few *expected* intervals to judge.

    Only the run's timing is at fault here. Intervals are counted on the jobs'
    expected grid, whether or not fio logged a line for them: a load that
    stalled inside the window is 0 IOPS there, a product FAIL of the window's
    checks (throughput_impact names the stalled VMs), never this error.
    """
