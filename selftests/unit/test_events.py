"""EventSchedule and Timeline: actions at offsets, recorded on the epoch clock, windows cut from them.

The array here is a small in-memory driver that records calls (and can be told
to fail one action): the schedule's logic is under test, not an array. The
real local array runs in selftests/integration/test_events_truth.py.
"""

from __future__ import annotations

import itertools
import json
import time
from typing import Any, ClassVar

import pytest

from iogate.arrays.base import Capability, Snapshot, Volume
from iogate.engines.base import LoadControl
from iogate.errors import ArrayError
from iogate.events.model import Event, EventError, EventRecord, Timeline, WindowTooShort
from iogate.events.schedule import EventRun, EventSchedule, now_ms
from iogate.judging import target_iops_held
from iogate.lab import DeviceIdentity, QoS
from iogate.metrics.types import Dir, RunResult, Sample, Series

VOLUME = Volume("v1", 1 << 20, DeviceIdentity(backing_file="/nonexistent/v1.img"))


class RecordingArray:
    """Records every call; `fail` names an action that raises ArrayError."""

    capabilities: ClassVar[frozenset[Capability]] = frozenset({Capability.SNAPSHOT, Capability.DEDUPE, Capability.QOS})

    def __init__(self, fail: str = "") -> None:
        self.calls: list[tuple[str, str]] = []
        self.fail = fail
        self.snapshots: set[str] = set()

    def _call(self, action: str, target: str = "") -> None:
        self.calls.append((action, target))
        if action == self.fail:
            raise ArrayError(f"array: {action} {target} refused")

    def snapshot_create(self, volume: Volume, name: str) -> Snapshot:
        self._call("snapshot_create", f"{volume.name}@{name}")
        self.snapshots.add(f"{volume.name}@{name}")
        image = f"/pool/{volume.name}@{name}.img"
        return Snapshot(name, volume.name, location=image, evidence={"file": image})

    def snapshot_delete(self, snapshot: Snapshot) -> None:
        self._call("snapshot_delete", f"{snapshot.volume}@{snapshot.name}")
        self.snapshots.discard(f"{snapshot.volume}@{snapshot.name}")

    def dedupe_run(self) -> dict[str, Any]:
        self._call("dedupe_run")
        return {"reclaimed_bytes": 4096}

    def set_qos(self, volume: Volume, qos: QoS | None) -> None:
        self._call("set_qos", f"{volume.name} {qos}")


def workload(seconds: float):  # type: ignore[no-untyped-def]
    def run() -> str:
        time.sleep(seconds)
        return "result"

    return run


def test_event_needs_what_its_action_acts_on() -> None:
    with pytest.raises(ValueError, match="needs a volume"):
        Event("snapshot_create", at_s=1, name="s1")
    with pytest.raises(ValueError, match="needs a snapshot name"):
        Event("snapshot_delete", at_s=1, volume=VOLUME)
    with pytest.raises(ValueError, match="unknown action"):
        Event("reboot", at_s=1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="until_s"):
        Event("dedupe_run", at_s=3, until_s=2)


def test_labels_name_action_volume_snapshot_and_tag() -> None:
    assert Event("snapshot_create", at_s=1, volume=VOLUME, name="s1").label == "snapshot_create v1@s1"
    assert Event("degrade", at_s=1, volume=VOLUME, qos=QoS(read_iops=400), tag="on").label == "degrade v1 (on)"
    assert Event("dedupe_run", at_s=1).label == "dedupe_run"


def test_required_capabilities_come_from_the_actions() -> None:
    schedule = EventSchedule(RecordingArray(), [Event("dedupe_run", at_s=0), Event("replicate", at_s=1, volume=VOLUME)])
    assert schedule.required == [Capability.DEDUPE, Capability.REPLICATE]
    with pytest.raises(EventError, match="array driver RecordingArray lacks capability replicate"):
        schedule.run_beside(workload(0))


def test_actions_run_in_order_after_their_offsets_and_are_recorded_on_the_epoch_clock() -> None:
    array = RecordingArray()
    schedule = EventSchedule(array, [
        Event("snapshot_delete", at_s=0.2, volume=VOLUME, name="s1"),
        Event("snapshot_create", at_s=0.05, volume=VOLUME, name="s1"),
    ])
    before_ms = now_ms()
    outcome, timeline = schedule.run_beside(workload(0.5))
    after_ms = now_ms()
    assert outcome == "result"
    assert array.calls == [("snapshot_create", "v1@s1"), ("snapshot_delete", "v1@s1")]
    create, delete = timeline.records
    assert (create.label, delete.label) == ("snapshot_create v1@s1", "snapshot_delete v1@s1")
    assert before_ms <= timeline.anchor_ms
    assert create.start_ms >= timeline.anchor_ms + 50
    assert delete.start_ms >= timeline.anchor_ms + 200
    assert create.start_ms <= create.end_ms <= delete.start_ms <= delete.end_ms <= after_ms
    assert create.evidence["file"] == "/pool/v1@s1.img"
    assert timeline.span_ms("snapshot_create v1@s1", "snapshot_delete v1@s1") == (create.start_ms, delete.end_ms)


def test_ramp_moves_the_anchor_to_the_measurement_start() -> None:
    before_ms = now_ms()
    _, timeline = EventSchedule(RecordingArray(), [Event("dedupe_run", at_s=0)], ramp_s=0.1).run_beside(workload(0.3))
    assert timeline.anchor_ms >= before_ms + 100
    assert timeline.find("dedupe_run").start_ms >= timeline.anchor_ms


def test_a_failed_action_is_raised_after_the_run_naming_it() -> None:
    array = RecordingArray(fail="dedupe_run")
    schedule = EventSchedule(array, [Event("dedupe_run", at_s=0), Event("degrade", at_s=0.05, volume=VOLUME, qos=None)],
                             driver_name="local")
    with pytest.raises(EventError, match=r"driver local: dedupe_run \(planned at 0 s\): ArrayError: array: dedupe_run  refused"):
        schedule.run_beside(workload(0.3))
    # The load and the later actions were not cut short by the failure.
    assert [call[0] for call in array.calls] == ["dedupe_run", "set_qos"]


def test_an_event_due_after_the_workload_ended_is_an_error_not_a_silent_pass() -> None:
    schedule = EventSchedule(RecordingArray(), [Event("dedupe_run", at_s=30)])
    with pytest.raises(EventError, match="dedupe_run .planned at 30 s.: not started: the workload ended before it was due"):
        schedule.run_beside(workload(0))


def test_repeat_runs_the_action_n_times_with_numbered_labels() -> None:
    array = RecordingArray()
    _, timeline = EventSchedule(array, [Event("dedupe_run", at_s=0, repeat=3, every_s=0.05)]).run_beside(workload(0.6))
    assert [r.label for r in timeline.records] == ["dedupe_run #1", "dedupe_run #2", "dedupe_run #3"]
    assert len(timeline.matching("dedupe_run")) == 3
    assert all(r.start_ms >= timeline.anchor_ms + 50 * k for k, r in enumerate(timeline.records))
    assert all(a.end_ms <= b.start_ms for a, b in itertools.pairwise(timeline.records))  # one action at a time
    assert timeline.span_ms("dedupe_run") == (timeline.records[0].start_ms, timeline.records[-1].end_ms)


def test_until_keeps_repeating_and_starts_nothing_after_it() -> None:
    _, timeline = EventSchedule(RecordingArray(), [Event("dedupe_run", at_s=0, until_s=0.2, every_s=0.02)]).run_beside(workload(0.6))
    assert timeline.records
    assert [r.label for r in timeline.records] == [f"dedupe_run #{i + 1}" for i in range(len(timeline.records))]
    assert all(r.start_ms <= timeline.anchor_ms + 200 + 25 for r in timeline.records)  # a start is decided before until_s


def test_a_snapshot_left_by_the_schedule_is_deleted_after_the_run() -> None:
    array = RecordingArray()
    EventSchedule(array, [Event("snapshot_create", at_s=0, volume=VOLUME, name="s1")]).run_beside(workload(0.2))
    assert array.snapshots == set()
    assert array.calls[-1] == ("snapshot_delete", "v1@s1")


def test_deleting_a_snapshot_the_schedule_did_not_create_is_an_error() -> None:
    schedule = EventSchedule(RecordingArray(), [Event("snapshot_delete", at_s=0, volume=VOLUME, name="nope")])
    with pytest.raises(EventError, match="snapshot v1@nope was not created by this schedule"):
        schedule.run_beside(workload(0.2))


def test_an_unrecorded_event_is_named_in_the_error() -> None:
    timeline = Timeline((EventRecord("dedupe_run", "dedupe_run", 0, 10, 20),), 0)
    with pytest.raises(EventError, match=r"no event 'snapshot_create' was recorded \(recorded: dedupe_run\)"):
        timeline.find("snapshot_create")


# -- windows ---------------------------------------------------------------------
def run_result(start_ms: int, seconds: int, iops: float = 100.0) -> RunResult:
    samples = tuple(Sample(start_ms + 1000 * (i + 1), "load", "h", Dir.READ, iops, 1e6) for i in range(seconds))
    return RunResult("r", (), Series(samples), start_ms, start_ms + 1000 * seconds)


def test_windows_around_a_span_split_the_run_at_the_recorded_times() -> None:
    result = run_result(0, 12)
    timeline = Timeline((EventRecord("snapshot_create v1@s", "snapshot_create", 4, 4000, 4010),
                         EventRecord("snapshot_delete v1@s", "snapshot_delete", 8, 8000, 8020)), 0)
    baseline, event, recovery = timeline.windows(result, "snapshot_create v1@s", "snapshot_delete v1@s")
    assert (baseline.start_ms, baseline.end_ms) == (0, 4000)
    assert (event.start_ms, event.end_ms) == (4000, 8020)
    assert (recovery.start_ms, recovery.end_ms) == (8020, 11000)  # the run's last second is not judged


def test_between_takes_the_steady_state_after_the_first_action_ends() -> None:
    result = run_result(0, 12)
    timeline = Timeline((EventRecord("mirror_attach v1", "mirror_attach", 3, 3000, 5000),
                         EventRecord("mirror_detach v1", "mirror_detach", 9, 9000, 9500)), 0)
    baseline, event, recovery = timeline.windows(result, "mirror_attach v1", "mirror_detach v1", between=True)
    assert (baseline.start_ms, baseline.end_ms) == (0, 3000)
    assert (event.start_ms, event.end_ms) == (5000, 9000)
    assert (recovery.start_ms, recovery.end_ms) == (9500, 11000)
    with pytest.raises(ValueError, match="needs both"):
        timeline.windows(result, "mirror_attach v1", between=True)


@pytest.mark.parametrize(("dip_at_s", "held"), [(12, True), (11, False)])
def test_the_recovery_window_leaves_out_the_second_fio_logs_at_exit(dip_at_s: int, held: bool) -> None:
    # A VM at its 75 IOPS target for 12 s; in one second it reads 55 (below the floor of 60). In the run's
    # last second that is fio's exit (an emulated dedupe run logged 55 of 75 there): not judged. A second
    # earlier it is the array's: the recovery window must still fail on it.
    samples = tuple(Sample(1000 * s, "oltp", "h", Dir.READ, 55.0 if s == dip_at_s else 75.0, 1e6) for s in range(1, 13))
    result = RunResult("r", (), Series(samples), 0, 12_000)
    timeline = Timeline((EventRecord("dedupe_run", "dedupe_run", 4, 4000, 6000),), 0)
    _, _, recovery = timeline.windows(result, "dedupe_run")
    verdict = target_iops_held.evaluate(result.series, {"oltp": 75.0}, target_iops_held.Params(tolerance=0.2), window=recovery)
    assert verdict.passed is held
    assert verdict.evidence[0]["intervals"] == 5  # 7..11 s
    assert verdict.evidence[0]["min_iops"] == (75.0 if held else 55.0)


def test_window_stats_count_only_whole_intervals_and_refuse_a_too_short_window() -> None:
    result = run_result(0, 12)
    long_event = EventRun(result, Timeline((EventRecord("dedupe_run", "dedupe_run", 4, 4000, 8000),), 0))
    baseline, event, recovery = long_event.window_stats("dedupe_run", jobs=("load",))
    assert (baseline.intervals, event.intervals, recovery.intervals) == (4, 4, 3)  # 9-11 s: not the last second
    assert event.total.iops == pytest.approx(100)
    short_event = EventRun(result, Timeline((EventRecord("dedupe_run", "dedupe_run", 4, 4500, 5400),), 0))
    with pytest.raises(WindowTooShort, match=r"window event \[4500, 5400\] ms holds 0 whole interval"):
        short_event.window_stats("dedupe_run")


def test_window_stats_keep_only_the_named_jobs() -> None:
    result = run_result(0, 6)
    noisy = Sample(3000, "verify", "h", Dir.WRITE, 5000.0, 9e6)
    result = RunResult("r", (), Series((*result.series.samples, noisy)), 0, 6000)
    run = EventRun(result, Timeline((EventRecord("dedupe_run", "dedupe_run", 2, 2000, 4000),), 0))
    _, event, _ = run.window_stats("dedupe_run", jobs=("load",))
    assert event.total.iops == pytest.approx(100)
    assert Dir.WRITE not in event.directions


def test_timeline_json_gives_offsets_from_the_measurement_start() -> None:
    result = run_result(1_000_000, 6)
    timeline = Timeline((EventRecord("dedupe_run", "dedupe_run", 2, 1_002_000, 1_003_500, {"reclaimed_bytes": 1}),), 1_000_000)
    data = json.loads(timeline.to_json(result))
    assert data["events"][0]["start_s"] == 2.0
    assert data["events"][0]["end_s"] == 3.5
    assert data["events"][0]["evidence"] == {"reclaimed_bytes": 1}
    assert data["measure"] == {"start_ms": 1_000_000, "end_ms": 1_006_000}


def test_offsets_count_from_when_the_engine_says_the_load_measures() -> None:
    """A slow host starts fio late: events must wait for its measured phase, not fire into the ramp."""
    array = RecordingArray()
    schedule = EventSchedule(array, [Event("dedupe_run", at_s=0.05)], ramp_s=0.1)
    control = LoadControl()

    def late_load() -> str:
        time.sleep(0.4)
        control.measuring(now_ms() + 100)  # what the engine reads from fio's status: after the ramp
        time.sleep(0.5)
        return "done"

    _, timeline = schedule.run_beside(late_load, control)
    assert control.measuring_since_ms is not None
    assert timeline.anchor_ms == control.measuring_since_ms
    assert timeline.records[0].start_ms >= control.measuring_since_ms + 50


def load_until_stopped(control: LoadControl, cap_s: float = 30.0):  # type: ignore[no-untyped-def]
    """A load that measures at once and runs until asked to stop (or cap_s).

    Returns (stop requested?, epoch ms at which the load ended): on the epoch clock the
    schedule records its actions with, so tests judge order, never a wall-clock margin.
    """

    def run() -> tuple[bool, int]:
        control.measuring()
        stopped = control.wait_stop(cap_s)
        return stopped, now_ms()

    return run


def test_follower_starts_its_offset_after_the_action_it_follows_ends_and_the_load_stops_after_the_tail() -> None:
    """An action of unknown length (a resync) is phased: the detach follows the attach's end, not a clock."""

    class SlowSnapshotArray(RecordingArray):
        def snapshot_create(self, volume: Volume, name: str) -> Snapshot:
            time.sleep(0.4)  # longer than any fixed offset below
            return super().snapshot_create(volume, name)

    control = LoadControl()
    create = Event("snapshot_create", at_s=0.1, volume=VOLUME, name="s1")
    delete = Event("snapshot_delete", at_s=0.2, volume=VOLUME, name="s1", after=create.label)
    schedule = EventSchedule(SlowSnapshotArray(), [create, delete], stop_after_s=0.3)
    (stopped, ended_ms), timeline = schedule.run_beside(load_until_stopped(control), control)

    created, deleted = timeline.find(create.label), timeline.find(delete.label)
    assert created.duration_ms >= 400
    assert deleted.start_ms - created.end_ms >= 200
    assert deleted.planned_at_s == pytest.approx((created.end_ms - timeline.anchor_ms) / 1000 + 0.2, abs=0.01)
    assert stopped, "the load must be ended by the schedule one tail after the last action, not by its cap"
    assert ended_ms - deleted.end_ms >= 300 - 5  # the tail, give or take the epoch clock's ms rounding; load only adds
    assert delete.when == "0.2 s after snapshot_create v1@s1"


def test_failed_action_stops_the_load_at_once_and_its_follower_never_starts() -> None:
    control = LoadControl()
    create = Event("snapshot_create", at_s=0, volume=VOLUME, name="s1")
    delete = Event("snapshot_delete", at_s=0.1, volume=VOLUME, name="s1", after=create.label)
    schedule = EventSchedule(RecordingArray(fail="snapshot_create"), [create, delete], stop_after_s=10)
    with pytest.raises(EventError, match=r"snapshot_delete v1@s1 .*not started: snapshot_create v1@s1 did not complete"):
        schedule.run_beside(load_until_stopped(control), control)
    assert control.stop_requested, "a failed action must end the load at once, not at its 30 s cap"


def test_follower_must_follow_an_earlier_event_of_the_schedule() -> None:
    delete = Event("snapshot_delete", at_s=1, volume=VOLUME, name="s1", after="snapshot_create v1@s1")
    with pytest.raises(ValueError, match="not an earlier event"):
        EventSchedule(RecordingArray(), [delete])
    dedupe = Event("dedupe_run", at_s=1)
    with pytest.raises(ValueError, match="labels must be unique"):
        EventSchedule(RecordingArray(), [dedupe, dedupe])
