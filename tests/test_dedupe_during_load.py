"""Dedupe during load (Hitachi NAS): the VMs keep their I/O targets while a dedupe pass runs.

The Hitachi procedure runs VM tiles at their configured IOPS, first as a
baseline, then with the dedupe job running, and passes when "VMs reach and
maintain the configured I/O target"; it reports the impact as the latency rise
(+28.5 % on average) and the space reclaimed.

Here a small tile, one VM per Hitachi I/O profile (SQL 64 KiB 66 % read, Web,
Exchange, OLTP 8 KiB), each at a fixed rate on its own region of a datastore
volume, runs a baseline window; then the array's dedupe pass runs to completion
while the load goes on (a pass over the datastore: its cost must not depend on
what else the run keeps on the array). The datastore is first filled with random-order 64 KiB
writes of which half repeat earlier blocks (fio dedupe_percentage), so the pass
has real duplicates to remove at its block size. The dedupe job is one pass;
the judged window is the job, at least one phase long, and the recovery window
after the pass is judged the same way. Verdicts: the spec's
events checks named dedupe_* (targets held; on a real array the latency rise
Hitachi reports; on the local lab absolute p99 / max latency bounds) and no
I/O lost (a crc32c verify region on the same datastore). The relative latency
rise is attached as evidence either way.
"""

from __future__ import annotations

import json

import allure
import pytest

from fixtures.events import attach_rise, attach_timeline, filled_volume, skip_without
from iogate.arrays.base import Capability
from iogate.engines.workload import Extent, JobSpec, RateProcess, RunPlan, WorkloadSpec, parse_block_size
from iogate.events.load import phase_s, phased_runtime_s, scaled_iops, verify_region
from iogate.events.model import Event
from iogate.metrics.windows import WindowStats, event_windows, window_stats

DEDUPE_BLOCK = "64k"  # the fill's dedupe unit: the local lab's dedupe pass hashes 64 KiB blocks
REGION_MIB = 32
# name: (bs, random %, read %, target IOPS); the Hitachi I/O profiles at rates a 1 s interval resolves.
VMS = {
    "sql": ("64k", 100, 66, 150),
    "web": ("8k", 75, 95, 300),
    "exchange": ("8k", 80, 55, 200),
    "oltp": ("8k", 100, 70, 300),
}
VERIFY_OFFSET_MIB = REGION_MIB * len(VMS)
VOLUME_MIB = VERIFY_OFFSET_MIB + REGION_MIB


@pytest.fixture(scope="module")
def datastore(lab, array, volume_factory, connect, engine):  # type: ignore[no-untyped-def]
    """The VMs' datastore, filled in random order with 50 % duplicate 64 KiB blocks."""
    skip_without(array, lab, Capability.DEDUPE)
    fill = WorkloadSpec("fill", read_pct=0, random_pct=100, bs=parse_block_size(DEDUPE_BLOCK), iodepth=8, time_based=False, runtime_s=0,
                        dedupe_pct=50)
    return filled_volume(lab, volume_factory, connect, engine, "events-dedupe", f"{VOLUME_MIB}MiB", plan_name="dedupe-fill",
                         fill=fill, how=f"random-order {DEDUPE_BLOCK} writes, 50 % duplicate blocks")


def tile_jobs(lab, connection, runtime_s: float, ramp_s: float) -> tuple[JobSpec, ...]:  # type: ignore[no-untyped-def]
    jobs = []
    for index, (name, (bs, random_pct, read_pct, full_target)) in enumerate(VMS.items()):
        target = scaled_iops(lab, full_target)
        workload = WorkloadSpec(f"vm-{name}", read_pct=read_pct, random_pct=random_pct, bs=parse_block_size(bs), iodepth=4,
                                offset=Extent.of_bytes(index * REGION_MIB << 20), size=Extent.of_bytes(REGION_MIB << 20),
                                runtime_s=runtime_s, ramp_s=ramp_s, rate_iops=target, rate_process=RateProcess.LINEAR, dedupe_pct=50,
                                until_stopped=True)
        jobs.append(JobSpec(name, workload, connection, target_iops=target))
    verify = verify_region(connection, offset=VERIFY_OFFSET_MIB << 20, size=REGION_MIB << 20, runtime_s=runtime_s, ramp_s=ramp_s,
                           iops=scaled_iops(lab, 100))
    return (*jobs, verify)


def job_window(run, phase_s: float) -> tuple[WindowStats, WindowStats, WindowStats]:  # type: ignore[no-untyped-def]
    """Baseline, event and recovery windows of the dedupe job: the event window runs from the job's start for
    the job's length, at least one phase, so a short job still gives whole intervals to judge. The job
    is one pass: what is judged does not depend on how many passes fit in a phase. The recovery window
    runs from the pass's end to the run's judged end (a phase; RunResult.judged_end_ms)."""
    (job,) = run.timeline.matching("dedupe_run")
    end_ms = max(job.end_ms, job.start_ms + int(phase_s * 1000))
    baseline, event, _ = event_windows(run.result.start_ms, run.result.judged_end_ms, job.start_ms, end_ms)
    # Recovery: from the pass's real end (the run stops a phase after it), whatever the judged event window's length.
    _, _, recovery = event_windows(run.result.start_ms, run.result.judged_end_ms, job.start_ms, job.end_ms)
    series = run.series(tuple(VMS))
    return window_stats(series, baseline), window_stats(series, event), window_stats(series, recovery)


@pytest.mark.events
@pytest.mark.hitachi
@allure.epic("Data services during load")
@allure.feature("events")
@allure.story("dedupe during load")
def test_dedupe_during_load(datastore, lab, during_load, judge, profile) -> None:  # type: ignore[no-untyped-def]
    connection = datastore
    # A baseline phase; the dedupe job (one pass, as long as it takes); a phase of recovery after it.
    phase = phase_s(profile, parts=2, min_s=5.0)
    runtime_s = phased_runtime_s(phase, profile)
    jobs = tile_jobs(lab, connection, runtime_s, profile.ramp_s)
    targets = {job.name: job.target_iops for job in jobs if job.target_iops}
    allure.dynamic.parameter("VMs", ", ".join(f"{name} {t:g} IOPS" for name, t in targets.items()))
    allure.dynamic.parameter("dedupe block", DEDUPE_BLOCK)
    allure.dynamic.parameter("phase_s", phase)

    dedupe = Event("dedupe_run", at_s=phase, volume=connection.volume)
    run = during_load(RunPlan("dedupe-during-load", jobs), [dedupe], ramp_s=profile.ramp_s, stop_after_s=phase)
    baseline, event, recovery = job_window(run, phase)
    (job,) = run.timeline.matching("dedupe_run")
    reclaimed_mib = job.evidence.get("saved_bytes", 0) / 2**20
    attach_timeline(run, title="dedupe job during a VM tile", jobs=tuple(targets),
                    spans=[(f"dedupe job (-{reclaimed_mib:.0f} MiB)", job.start_ms, job.end_ms),
                           ("judged window", event.window.start_ms, event.window.end_ms)])

    verdicts = judge.events("dedupe", baseline, event, recovery, run.result, series=run.series(tuple(targets)), targets=targets,
                            event_evidence=job.evidence)
    impact = attach_rise(
        baseline, event, "dedupe impact (evidence)",
        verdicts=[v.line() for v in verdicts],
        dedupe_job_s=round(job.duration_ms / 1000, 3),
        pool_used_before_bytes=job.evidence.get("pool_used_before_bytes"),
        pool_used_after_bytes=job.evidence.get("pool_used_after_bytes"),
        saved_bytes=job.evidence.get("saved_bytes"),
    )
    allure.dynamic.parameter("saved_bytes", impact["saved_bytes"], excluded=True)  # measured: not the test's identity
    print("dedupe impact:", json.dumps(impact))
