"""Data-service events in the guest through the events machinery, aligned to the fio run.

The same path the acceptance tests take: FioEngine (guard-checked, over SSH) runs
the load, the EventSchedule runs LVM thin snapshots and the md RAID1 resync
beside it, anchored on the moment fio really started in the guest.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from iogate import registry
from iogate.arrays.base import Volume
from iogate.arrays.linux_target import LinuxTarget
from iogate.engines.base import StartSignal
from iogate.engines.fio.runner import FioEngine
from iogate.engines.workload import JobSpec, RunPlan, WorkloadSpec
from iogate.events import Event, EventSchedule
from iogate.hosts.connectors.base import Connection
from iogate.hosts.guard import Guard
from iogate.hosts.initiator import Initiator
from iogate.lab import Lab
from iogate.run import Run

pytestmark = pytest.mark.labvm

RUNTIME_S = 24


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
    workload = WorkloadSpec("load", read_pct=50, bs="64k", iodepth=4, runtime_s=RUNTIME_S, size="64m")
    schedule = EventSchedule(array, events, driver_name="linux_target")
    started = StartSignal()
    return schedule.run_beside(lambda: engine.run_plan(RunPlan("events", (JobSpec("load", workload, connection),)), started), started)


def test_snapshot_create_and_delete_inside_the_measured_run(target, array: LinuxTarget) -> None:  # type: ignore[no-untyped-def]
    volume, connection, engine = target
    result, timeline = run_with(array, engine, connection, [
        Event("snapshot_create", at_s=RUNTIME_S / 3, volume=volume, name="s1"),
        Event("snapshot_delete", at_s=2 * RUNTIME_S / 3, volume=volume, name="s1"),
    ])
    assert [r.action for r in timeline.records] == ["snapshot_create", "snapshot_delete"]
    for record in timeline.records:
        assert result.start_ms <= record.start_ms <= record.end_ms <= result.end_ms, (record, result.start_ms, result.end_ms)
    assert result.errors == 0 and result.total("write").ios > 0


def test_mirror_resync_inside_the_measured_run(target, array: LinuxTarget) -> None:  # type: ignore[no-untyped-def]
    volume, connection, engine = target
    result, timeline = run_with(array, engine, connection, [Event("mirror_attach", at_s=RUNTIME_S / 4, volume=volume)])
    (attach,) = timeline.records
    assert result.start_ms <= attach.start_ms <= result.end_ms
    assert attach.evidence["resync_s"] > 0
    assert array.mirror_state(volume)["degraded"] == "0"
    array.mirror_detach(volume)
