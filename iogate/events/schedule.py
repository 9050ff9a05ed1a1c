"""The event scheduler: timed array actions beside a workload (snapshot, dedupe, replicate, mirror, degrade).

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

The event model (Event, EventRecord, Timeline, EventError, WindowTooShort) is in
events/model.py; what each action does to the array, in events/actions.py.
"""

from __future__ import annotations

import heapq
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from iogate.arrays.base import ArrayDriver, Capability, Snapshot
from iogate.engines.base import LoadControl
from iogate.events.actions import ActionContext, perform
from iogate.events.model import MIN_WINDOW_INTERVALS, REQUIRES, Event, EventError, EventRecord, Timeline, WindowTooShort
from iogate.metrics.types import RunResult, Series
from iogate.metrics.windows import Window, WindowStats, window_stats

T = TypeVar("T")


def now_ms() -> int:
    """The epoch clock in ms: the same clock as fio's log_unix_epoch interval stamps."""
    return int(time.time() * 1000)


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
        return perform(ActionContext(self.array, self.driver_name, self._snapshots), event)

    def _delete_leftover_snapshots(self) -> list[str]:
        problems = []
        for (volume, name), snapshot in list(self._snapshots.items()):
            try:
                self.array.snapshot_delete(snapshot)
            except Exception as exc:
                problems.append(f"cleanup of snapshot {volume}@{name}: {exc}")
            self._snapshots.pop((volume, name))
        return problems


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
