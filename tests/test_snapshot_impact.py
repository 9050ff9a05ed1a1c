"""Snapshot impact during load (IOgen KPI cases): read, frontend write, backend write.

The IOgen procedure measures what a snapshot costs as the % drop of total IOPS
while the snapshot exists. Published (OceanStor): no impact on reads, none on
frontend write (small working set), 50 % on backend write (copy-on-write of
every first write to a shared block). Each case runs at full load on a
prefilled volume in three phases: baseline, then a snapshot is created and
kept for a phase, deleted, and a recovery phase ends the run (each action takes
as long as the array needs). Verdicts: the spec's events checks named
snapshot_<case>_* and the shared snapshot_* ones, on the event window (snapshot
exists) and on the recovery window after the delete, each alone or against the
baseline window before it, on the load job only (iogate/judging/events_family.py); the
mean latency rise is attached as evidence. A verify region on
the same volume (fio crc32c) is written and checked throughout: the snapshot
must not lose or corrupt an I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

import allure
import pytest

from fixtures.events import attach_rise, attach_timeline, filled_volume, skip_without
from iogate.arrays.base import Capability
from iogate.engines.workload import Extent, JobSpec, RunPlan, WorkloadSpec
from iogate.events.load import phase_s, phased_runtime_s, scaled_iops, verify_region
from iogate.events.model import Event

VOLUME_SIZE = "256MiB"
LOAD_REGION = "224m"  # the load's part of the volume; the rest is the verify region
VERIFY_REGION = (224 << 20, 32 << 20)  # (offset, size) in bytes


@dataclass(frozen=True)
class Case:
    name: str
    story: str
    read_pct: int
    size: str  # working set of the load
    published: str


CASES = (
    Case("read", "reads of a snapshotted volume", 100, LOAD_REGION, "0 % drop"),
    Case("frontend_write", "writes to a small working set (no destaging)", 0, "8m", "0 % drop"),
    Case("backend_write", "writes over the whole volume (copy-on-write)", 0, LOAD_REGION, "50 % drop"),
)


@pytest.fixture(scope="module")
def snapshot_volume(lab, array, volume_factory, connect, engine):  # type: ignore[no-untyped-def]
    """A volume filled once with sequential 256 KiB writes: every read and write hits written, shareable blocks."""
    skip_without(array, lab, Capability.SNAPSHOT)
    # The lab's QoS caps (its committed IOPS, if it has any): a drop is judged against that commitment.
    return filled_volume(lab, volume_factory, connect, engine, "events-snap", VOLUME_SIZE, plan_name="snapshot-fill", qos=lab.volumes.qos)


@pytest.mark.events
@pytest.mark.iogen
@allure.epic("Data services during load")
@allure.feature("events")
@allure.story("snapshot impact")
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_snapshot_impact(case: Case, snapshot_volume, lab, during_load, judge, profile) -> None:  # type: ignore[no-untyped-def]
    connection = snapshot_volume
    volume = connection.volume
    # Three phases of at least 4 s: one-second IOPS of an unthrottled load swing, a window must average them.
    phase = phase_s(profile)
    runtime_s = phased_runtime_s(phase, profile)
    load = WorkloadSpec(f"snap-{case.name}", read_pct=case.read_pct, random_pct=100, bs=4 << 10, iodepth=8, size=Extent.parse(case.size),
                        runtime_s=runtime_s, ramp_s=profile.ramp_s, until_stopped=True)
    allure.dynamic.title(f"snapshot impact: {case.name.replace('_', ' ')}")
    allure.dynamic.parameter("case", case.name)
    allure.dynamic.parameter("published impact", case.published)
    for key, value in load.params().items():
        allure.dynamic.parameter(key, value)
    allure.dynamic.parameter("working set", case.size)

    verify = verify_region(connection, offset=VERIFY_REGION[0], size=VERIFY_REGION[1], runtime_s=runtime_s, ramp_s=profile.ramp_s,
                           iops=scaled_iops(lab, 200))
    plan = RunPlan(f"snapshot-{case.name}", (JobSpec("load", load, connection), verify))
    create = Event("snapshot_create", at_s=phase, volume=volume, name=case.name)
    events = [create, Event("snapshot_delete", at_s=phase, volume=volume, name=case.name, after=create.label)]
    run = during_load(plan, events, ramp_s=profile.ramp_s, stop_after_s=phase)
    create, delete = (e.label for e in events)
    attach_timeline(run, title=f"snapshot during {case.name.replace('_', ' ')} load", jobs=("load",),
                    spans=[("snapshot exists", *run.timeline.span_ms(create, delete))])

    baseline, event, recovery = run.window_stats(create, delete, jobs=("load",))
    # Events checks named snapshot_<case>_* judge this case only, other snapshot_* every case (the judge picks them).
    judge.events("snapshot", baseline, event, recovery, run.result, case=case.name)
    attach_rise(baseline, event, "snapshot impact (evidence)")
