"""Timed array actions during a workload: snapshot, dedupe, replicate, mirror, degrade.

An EventSchedule lists actions at offsets from the measurement start (after
the ramp). `run_beside(workload)` starts them in a thread next to the blocking
workload (FioEngine.run_plan) and records every action's real start and end on
the epoch clock in ms, the clock fio's log_unix_epoch samples use, so the
baseline / event / recovery windows cut the per-second series exactly.

    schedule = EventSchedule(array, [
        Event("snapshot_create", at_s=3, volume=vol, name="s1"),
        Event("snapshot_delete", at_s=7, volume=vol, name="s1"),
    ], ramp_s=1)
    result, timeline = schedule.run_beside(lambda: engine.run_plan(plan))
    baseline, event, recovery = timeline.windows(result, "snapshot_create", "snapshot_delete")

Actions of unknown length (a mirror resync takes seconds on a loop device and
hours on a real array) are phased instead of timed: an event with `after`
counts its offset from the end of an earlier event, and with `stop_after_s`
and a LoadControl the schedule ends the load that long after its last action,
so the workload's own runtime is only an upper bound:

    Event("mirror_attach", at_s=20, volume=vol),
    Event("mirror_detach", at_s=20, volume=vol, after="mirror_attach vol"),  # 20 s of steady mirror
    EventSchedule(array, events, stop_after_s=20)                          # 20 s of recovery

An action that fails does not stop the workload; the run completes and then
EventError names the action (an infrastructure error: no verdict about the
array can be drawn from windows whose event did not happen).
"""

from __future__ import annotations

import heapq
import json
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from iogate.arrays.base import ArrayDriver, Capability, Snapshot, Volume
from iogate.engines.base import LoadControl
from iogate.errors import ArrayError
from iogate.lab import QoS
from iogate.metrics.types import RunResult, Series
from iogate.metrics.windows import Window, WindowStats, event_windows, window_stats

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

T = TypeVar("T")


def now_ms() -> int:
    """The epoch clock in ms: the same clock as fio's log_unix_epoch interval stamps."""
    return int(time.time() * 1000)


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
        then belong to no window.
        """
        if not between:
            start_ms, end_ms = self.span_ms(first, last)
            return event_windows(result.start_ms, result.end_ms, start_ms, end_ms, guard_ms=guard_ms)
        if last is None:
            raise ValueError("between=True needs both the first and the last event")
        first_start_ms, first_end_ms = self.span_ms(first)
        last_start_ms, last_end_ms = self.span_ms(last)
        # Validates the order against the measured run as event_windows does.
        event_windows(result.start_ms, result.end_ms, first_start_ms, last_end_ms)

        def span(name: str, start: int, end: int) -> Window:
            return Window(name, start, max(start, end))

        return (
            span("baseline", result.start_ms, first_start_ms - guard_ms),
            span("event", first_end_ms + guard_ms, min(last_start_ms, result.end_ms) - guard_ms),
            span("recovery", min(last_end_ms + guard_ms, result.end_ms), result.end_ms),
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


class EventSchedule:
    """Array actions at offsets from the measurement start, run beside a workload (module docstring)."""

    def __init__(self, array: ArrayDriver, events: Iterable[Event], *, ramp_s: float = 0.0, driver_name: str = "",
                 stop_after_s: float | None = None) -> None:
        self.array = array
        self.events = list(events)
        self.ramp_s = ramp_s
        self.stop_after_s = stop_after_s
        self.driver_name = driver_name or type(array).__name__
        labels = [e.label for e in self.events]
        if len(set(labels)) != len(labels):
            raise ValueError(f"event schedule: labels must be unique (tag apart repeats of one action): {', '.join(labels)}")
        for index, event in enumerate(self.events):
            if event.after and event.after not in labels[:index]:
                raise ValueError(f"event {event.label}: follows {event.after!r}, which is not an earlier event of this schedule")
        self._snapshots: dict[tuple[str, str], Snapshot] = {}
        self._records: list[EventRecord] = []
        self._anchor_ms = 0
        self._stop = threading.Event()

    @property
    def required(self) -> list[Capability]:
        """Capabilities the array needs for this schedule, for `require(*schedule.required)`."""
        return sorted({REQUIRES[e.action] for e in self.events}, key=lambda c: c.value)

    def check_capabilities(self) -> None:
        missing = [c.value for c in self.required if c not in self.array.capabilities]
        if missing:
            raise EventError(f"array driver {self.driver_name} lacks capability {', '.join(missing)} for this event schedule")

    def run_beside(self, workload: Callable[[], T], control: LoadControl | None = None) -> tuple[T, Timeline]:
        """Run the workload (blocking) with the events in a thread beside it.

        With `control` (told by the engine when the measured phase began),
        offsets count from that moment; without it, from this call plus the
        ramp. With `control` and `stop_after_s`, the load is ended that long
        after the last action (at once after a failed one).

        Events still due when the workload returns are not started and count
        as errors; an action still running is waited for. Snapshots created
        and not deleted by the schedule are deleted afterwards.
        """
        self.check_capabilities()
        self._records.clear()
        self._stop.clear()
        self._anchor_ms = now_ms() + int(self.ramp_s * 1000)
        worker = threading.Thread(target=self._play, args=(control,), name="iogate-events", daemon=True)
        worker.start()
        try:
            outcome = workload()
        finally:
            self._stop.set()
            worker.join()
            leftovers = self._delete_leftover_snapshots()
        timeline = Timeline(tuple(sorted(self._records, key=lambda r: r.start_ms)), self._anchor_ms)
        failed = [r for r in timeline.records if r.error]
        if failed or leftovers:
            problems = [f"{r.label} (planned at {r.planned_at_s:g} s): {r.error}" for r in failed] + leftovers
            raise EventError(f"event schedule on array driver {self.driver_name}: " + "; ".join(problems))
        return outcome, timeline

    # -- the event thread --------------------------------------------------------
    def _play(self, control: LoadControl | None = None) -> None:
        if control is not None:
            while (since_ms := control.wait_measuring(0.1)) is None:
                if self._stop.is_set():
                    return
            self._anchor_ms = since_ms
        failed = self._play_events()
        if control is not None and self.stop_after_s is not None:
            if failed or not self._stop.wait(self.stop_after_s):
                control.request_stop()

    def _play_events(self) -> bool:
        """Run occurrences in planned order, one action at a time (an array does one job per request);
        True if one failed or could not start."""
        anchor_ms = self._anchor_ms
        pending = [(e.at_s, order, e, 0) for order, e in enumerate(self.events) if not e.after]
        heapq.heapify(pending)
        followers: dict[str, list[tuple[int, Event]]] = {}
        for order, event in enumerate(self.events):
            if event.after:
                followers.setdefault(event.after, []).append((order, event))
        next_free_ms = 0
        failed = False
        while pending:
            planned_s, order, event, index = heapq.heappop(pending)
            due_ms = max(anchor_ms + int(planned_s * 1000), next_free_ms)
            label = f"{event.label} #{index + 1}" if event.repeats else event.label
            # Wait for the due time unless the workload ended first.
            if self._stop.wait(max(0.0, (due_ms - now_ms()) / 1000)):
                if index == 0 or not event.until_s:  # an open-ended repeat simply stops with the load
                    self._records.append(EventRecord(label, event.action, planned_s, now_ms(), now_ms(),
                                                     error="not started: the workload ended before it was due"))
                    failed = True
                continue
            start_ms = now_ms()
            try:
                evidence = self._perform(event)
                error = ""
            except Exception as exc:  # recorded and raised after the run, naming the action
                evidence, error = {}, f"{type(exc).__name__}: {exc}"
            end_ms = next_free_ms = now_ms()
            self._records.append(EventRecord(label, event.action, planned_s, start_ms, end_ms, evidence, error))
            if error:
                failed = True
                continue
            end_s = (end_ms - anchor_ms) / 1000
            next_s = max(planned_s + event.every_s, end_s)
            if index + 1 < event.repeat or (event.until_s is not None and next_s < event.until_s):
                heapq.heappush(pending, (next_s, order, event, index + 1))
                continue
            for follower_order, follower in followers.pop(event.label, []):
                heapq.heappush(pending, (end_s + follower.at_s, follower_order, follower, 0))
        for waiting in followers.values():  # what they follow failed or never started
            for _, follower in waiting:
                self._records.append(EventRecord(follower.label, follower.action, follower.at_s, now_ms(), now_ms(),
                                                 error=f"not started: {follower.after} did not complete"))
                failed = True
        return failed

    def _perform(self, event: Event) -> dict[str, Any]:
        array, volume = self.array, event.volume
        if event.action == "snapshot_create":
            assert volume is not None
            snapshot = array.snapshot_create(volume, event.name)
            self._snapshots[(volume.name, event.name)] = snapshot
            return {"snapshot": f"{volume.name}@{event.name}", **snapshot.export}
        if event.action == "snapshot_delete":
            assert volume is not None
            snapshot = self._snapshots.pop((volume.name, event.name), None)
            if snapshot is None:
                raise EventError(f"snapshot {volume.name}@{event.name} was not created by this schedule")
            array.snapshot_delete(snapshot)
            return {"snapshot": f"{volume.name}@{event.name}"}
        if event.action == "dedupe_run":
            return dict(array.dedupe_run())
        if event.action == "replicate":
            assert volume is not None
            return dict(array.replicate(volume))
        if event.action == "degrade":
            assert volume is not None
            array.set_qos(volume, event.qos)
            return {"volume": volume.name, "qos": event.qos.model_dump(exclude_none=True) if event.qos else "none"}
        assert volume is not None
        if REQUIRES[event.action] not in array.capabilities:
            raise EventError(f"array driver {self.driver_name} has no {event.action} (capability {REQUIRES[event.action].value})")
        if event.action == "mirror_attach":
            return dict(array.mirror_attach(volume) or {})
        array.mirror_detach(volume)
        return {}

    def _delete_leftover_snapshots(self) -> list[str]:
        problems = []
        for (volume, name), snapshot in list(self._snapshots.items()):
            try:
                self.array.snapshot_delete(snapshot)
            except Exception as exc:
                problems.append(f"cleanup of snapshot {volume}@{name}: {exc}")
            self._snapshots.pop((volume, name))
        return problems


# Fewer whole intervals than this in the baseline or event window and no verdict can be drawn.
MIN_WINDOW_INTERVALS = 2


class WindowTooShort(EventError):
    """The run itself did not cover a window: it holds too few *expected* intervals to judge.

    Only the run's timing is at fault here. Intervals are counted on the jobs'
    expected grid, whether or not fio logged a line for them: a load that
    stalled inside the window is 0 IOPS there, a product FAIL of the window's
    checks (throughput_impact names the stalled VMs), never this error.
    """


@dataclass(frozen=True)
class EventRun:
    """A run point with its recorded events."""

    result: RunResult
    timeline: Timeline

    def series(self, jobs: Sequence[str] | None = None) -> Series:
        """The per-second series of the measured jobs (None = every job)."""
        series = self.result.series
        if jobs is None:
            return series
        samples = tuple(s for s in series.samples if s.job in jobs)
        hist = tuple(h for h in series.hist if h.job in jobs)
        # The spans go along: a job silent to the end of the run is 0 IOPS there, not absent.
        spans = tuple(span for span in series.effective_spans() if span.job in jobs)
        return Series(samples, hist, series.interval_ms, spans, series.bounds_ms)

    def windows(self, first: str, last: str | None = None, *, between: bool = False, guard_ms: int = 0) -> tuple[Window, Window, Window]:
        return self.timeline.windows(self.result, first, last, between=between, guard_ms=guard_ms)

    def window_stats(self, first: str, last: str | None = None, *, jobs: Sequence[str] | None = None, between: bool = False,
                     block_size_bytes: int | None = None) -> tuple[WindowStats, WindowStats, WindowStats]:
        """Baseline, event and recovery stats of the measured jobs around the span first..last.

        Raises WindowTooShort when the run did not cover the baseline or event
        window with enough whole expected intervals for a verdict. A load that
        stalled there is not short of intervals: its silent intervals are 0 IOPS
        and `WindowStats.stalls()` names the VMs (the checks fail on them).
        """
        series = self.series(jobs)
        windows = self.windows(first, last, between=between)
        stats = tuple(window_stats(series, w, block_size_bytes=block_size_bytes) for w in windows)
        for part in stats[:2]:
            if part.intervals < MIN_WINDOW_INTERVALS:
                raise WindowTooShort(
                    f"run {self.result.name}: window {part.name} [{part.window.start_ms}, {part.window.end_ms}] ms holds "
                    f"{part.intervals} whole interval(s), fewer than {MIN_WINDOW_INTERVALS}: lengthen the run or move the event"
                )
        baseline, event, recovery = stats
        return baseline, event, recovery
