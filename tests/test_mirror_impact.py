"""Mirror impact during load: a replica's initial sync, and a steady synchronous mirror.

IOgen reports what a synchronous mirror costs as the % drop of total IOPS:
50 % on frontend write, 70 % on backend write. Two tests:

- replica initial sync: after a baseline phase of write load, the array copies
  the whole volume to a replica (repeated back to back for a phase, as a resync
  that lasts), then a recovery phase. The local lab copies the volume's file to
  a second location; arrays with REPLICATE start their own initial sync.
- synchronous mirror: after a baseline phase the mirror is attached (its
  initial sync takes what it takes: seconds on a loop device, hours on a big
  volume), stays attached for a phase of steady mirror, and is detached; a
  recovery phase follows, then the load stops. The steady window (initial sync
  excluded) is judged. Needs Capability.MIRROR; the local lab has none and
  skips, naming it.

A crc32c verify region on the same volume must report no error: mirroring must
not lose an I/O.
"""

from __future__ import annotations

import allure
import pytest

from fixtures.events import attach_rise, attach_timeline, filled_volume
from iogate.arrays.base import Capability
from iogate.engines.workload import Extent, JobSpec, RunPlan, WorkloadSpec
from iogate.events.load import phase_s, phased_runtime_s, scaled_iops, verify_region
from iogate.events.model import Event

VOLUME_SIZE = "256MiB"
LOAD_REGION = "224m"
VERIFY_REGION = (224 << 20, 32 << 20)  # (offset, size) in bytes
# case: (working set, published drop); its events checks are named mirror_<case>_*
MIRROR_CASES = {
    "frontend_write": ("8m", "50 %"),
    "backend_write": (LOAD_REGION, "70 %"),
}


def verify_job(lab, connection, runtime_s: float, ramp_s: float):  # type: ignore[no-untyped-def]
    return verify_region(connection, offset=VERIFY_REGION[0], size=VERIFY_REGION[1], runtime_s=runtime_s, ramp_s=ramp_s,
                         iops=scaled_iops(lab, 200))



def write_load(name: str, working_set: str, runtime_s: float, ramp_s: float) -> WorkloadSpec:
    return WorkloadSpec(name, read_pct=0, random_pct=100, bs=4 << 10, iodepth=8, size=Extent.parse(working_set), runtime_s=runtime_s,
                        ramp_s=ramp_s, until_stopped=True)


@pytest.fixture(scope="module")
def mirrored_volume(lab, volume_factory, connect, engine):  # type: ignore[no-untyped-def]
    """A volume filled once sequentially, so the sync copies written data, not holes."""
    return filled_volume(lab, volume_factory, connect, engine, "events-mirror", VOLUME_SIZE, plan_name="mirror-fill", qos=lab.volumes.qos)


@pytest.mark.events
@pytest.mark.iogen
@allure.epic("Data services during load")
@allure.feature("events")
@allure.story("replica initial sync during load")
def test_replica_initial_sync(request, lab, require, during_load, judge, profile) -> None:  # type: ignore[no-untyped-def]
    require(Capability.REPLICATE)
    connection = request.getfixturevalue("mirrored_volume")
    phase = phase_s(profile)
    runtime_s = phased_runtime_s(phase, profile)
    load = write_load("replica-backend-write", LOAD_REGION, runtime_s, profile.ramp_s)
    for key, value in load.params().items():
        allure.dynamic.parameter(key, value)
    allure.dynamic.parameter("published impact", "50 % frontend / 70 % backend write (synchronous mirror)")

    plan = RunPlan("replica-sync", (JobSpec("load", load, connection), verify_job(lab, connection, runtime_s, profile.ramp_s)))
    sync = Event("replicate", at_s=phase, volume=connection.volume, until_s=2 * phase)
    run = during_load(plan, [sync], ramp_s=profile.ramp_s, stop_after_s=phase)
    passes = run.timeline.matching(sync.label)
    attach_timeline(run, title="replica initial sync during backend write load", jobs=("load",),
                    spans=[(f"replica sync ({len(passes)} copies)", *run.timeline.span_ms(sync.label))])
    copied_bytes = sum(p.evidence.get("bytes", 0) for p in passes)
    # Measured figures, not the test's identity: excluded from Allure's history id.
    allure.dynamic.parameter("replica copies", len(passes), excluded=True)
    allure.dynamic.parameter("copied_bytes", copied_bytes, excluded=True)

    baseline, event, recovery = run.window_stats(sync.label, jobs=("load",))
    judge.events("replica", baseline, event, recovery, run.result)
    attach_rise(baseline, event, "replica sync impact (evidence)")


@pytest.mark.events
@pytest.mark.iogen
@allure.epic("Data services during load")
@allure.feature("events")
@allure.story("synchronous mirror impact")
@pytest.mark.parametrize("case", list(MIRROR_CASES))
def test_synchronous_mirror(case: str, request, lab, require, during_load, judge, profile) -> None:  # type: ignore[no-untyped-def]
    require(Capability.MIRROR)  # before the volume is filled: a lab without mirrors skips here, naming driver and capability
    connection = request.getfixturevalue("mirrored_volume")
    working_set, published = MIRROR_CASES[case]
    phase = phase_s(profile)
    runtime_s = phased_runtime_s(phase, profile)
    load = write_load(f"mirror-{case}", working_set, runtime_s, profile.ramp_s)
    allure.dynamic.parameter("case", case)
    allure.dynamic.parameter("published impact", published)
    for key, value in load.params().items():
        allure.dynamic.parameter(key, value)

    plan = RunPlan(f"mirror-{case}", (JobSpec("load", load, connection), verify_job(lab, connection, runtime_s, profile.ramp_s)))
    attach = Event("mirror_attach", at_s=phase, volume=connection.volume)
    detach = Event("mirror_detach", at_s=phase, volume=connection.volume, after=attach.label)
    run = during_load(plan, [attach, detach], ramp_s=profile.ramp_s, stop_after_s=phase)
    _, steady, _ = run.windows(attach.label, detach.label, between=True)
    attach_timeline(run, title=f"synchronous mirror during {case.replace('_', ' ')} load", jobs=("load",),
                    spans=[*run.timeline.spans(), ("mirror steady", steady.start_ms, steady.end_ms)])

    baseline, event, recovery = run.window_stats(attach.label, detach.label, jobs=("load",), between=True)
    judge.events("mirror", baseline, event, recovery, run.result, case=case)
