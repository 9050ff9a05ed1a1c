"""Data-service events in the guest through the events machinery, aligned to the fio run.

The same path the acceptance tests take: FioEngine (guard-checked, over SSH) runs
the load, the EventSchedule runs LVM thin snapshots and the md RAID1 resync
beside it in phases, anchored on fio's measurement start in the guest (from its
status reports), and ends the load one phase after the last action (SIGINT,
results kept) long before the runtime cap.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from iogate.arrays.base import Volume
from iogate.arrays.linux_target import LinuxTarget
from iogate.engines.base import LoadControl
from iogate.engines.fio.runner import FioEngine
from iogate.engines.workload import Extent, JobSpec, RunPlan, WorkloadSpec
from iogate.events.model import Event
from iogate.events.schedule import EventSchedule
from iogate.hosts.connectors.base import Connection
from iogate.hosts.guard import Guard
from iogate.hosts.initiator import Initiator
from iogate.lab import Lab, registry
from iogate.run import Run

pytestmark = pytest.mark.labvm

PHASE_S = 5.0
CAP_S = 300.0  # the runtime cap; the schedule ends the load long before


@pytest.fixture
def target(labvm_lab: Lab, labvm_run: Run, array: LinuxTarget, guest: Initiator) -> Iterator[tuple[Volume, Connection, FioEngine]]:
    protocol = labvm_lab.protocol("iscsi")
    connector = registry.connector_class(protocol.connector)(protocol, labvm_run)
    volume = array.create_volume("evt", 128 << 20, export="iscsi")
    connection = connector.connect(guest, volume)
    guard = Guard()
    guard.admit(volume.identity)
    yield volume, connection, FioEngine(labvm_run, {guest.name: guest}, guard)
    connector.disconnect(guest, connection)
    array.delete_volume(volume)


def run_with(array: LinuxTarget, engine: FioEngine, connection: Connection, events: list[Event]):  # type: ignore[no-untyped-def]
    workload = WorkloadSpec("load", read_pct=50, bs=64 << 10, iodepth=4, runtime_s=CAP_S, ramp_s=1,
                            size=Extent.of_bytes(64 << 20), until_stopped=True)
    schedule = EventSchedule(array, events, driver_name="linux_target", stop_after_s=PHASE_S)
    control = LoadControl()
    result, timeline = schedule.run_beside(
        lambda: engine.run_plan(RunPlan("events", (JobSpec("load", workload, connection),)), control), control)
    last_end_ms = max(r.end_ms for r in timeline.records)
    assert intervals_between(result, last_end_ms, result.end_ms) >= PHASE_S - 1, "no recovery phase after the last action"
    assert (result.end_ms - result.start_ms) / 1000 < CAP_S / 2, "the load ran into its cap: the schedule did not end it"
    return result, timeline


def intervals_between(result, start_ms: int, end_ms: int) -> int:  # type: ignore[no-untyped-def]
    """Whole one-second intervals fio itself logged (its own timestamps) that end inside (start_ms, end_ms].

    Phases are judged by what fio measured between two actions, with one interval
    of slack for where the edges fall: a slow guest or a host/guest clock offset of
    milliseconds only shifts the edges, it cannot empty a phase that was kept.
    """
    return len({s.t_ms for s in result.series.samples if start_ms < s.t_ms <= end_ms})


def test_snapshot_create_and_delete_inside_the_measured_run(target, array: LinuxTarget) -> None:  # type: ignore[no-untyped-def]
    volume, connection, engine = target
    create = Event("snapshot_create", at_s=PHASE_S, volume=volume, name="s1")
    result, timeline = run_with(array, engine, connection, [
        create, Event("snapshot_delete", at_s=PHASE_S, volume=volume, name="s1", after=create.label),
    ])
    assert [r.action for r in timeline.records] == ["snapshot_create", "snapshot_delete"]
    for record in timeline.records:
        assert result.start_ms <= record.start_ms <= record.end_ms <= result.end_ms, (record, result.start_ms, result.end_ms)
    created, deleted = timeline.records
    assert result.start_ms < created.start_ms <= created.end_ms < deleted.start_ms <= deleted.end_ms < result.end_ms
    # "Anchored on the measurement start": a baseline phase of fio intervals precedes the create,
    # a phase of them lies between create and delete (fio's clock, not a wall-clock margin).
    assert intervals_between(result, result.start_ms, created.start_ms) >= PHASE_S - 1, "events anchor on the measurement start"
    assert intervals_between(result, created.end_ms, deleted.start_ms) >= PHASE_S - 1, "the delete follows the create by a phase"
    assert result.errors == 0 and result.total("write").ios > 0


def test_mirror_resync_inside_the_measured_run(target, array: LinuxTarget) -> None:  # type: ignore[no-untyped-def]
    volume, connection, engine = target
    result, timeline = run_with(array, engine, connection, [Event("mirror_attach", at_s=PHASE_S, volume=volume)])
    (attach,) = timeline.records
    assert result.start_ms <= attach.start_ms <= result.end_ms
    assert attach.evidence["resync_s"] > 0
    assert array.mirror_state(volume)["degraded"] == "0"
    array.mirror_detach(volume)
