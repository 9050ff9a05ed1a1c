"""Dedupe during load (Hitachi NAS): the VMs keep their I/O targets while a dedupe pass runs.

The Hitachi procedure runs VM tiles at their configured IOPS, first as a
baseline, then with the dedupe job running, and passes when "VMs reach and
maintain the configured I/O target"; it reports the impact as the latency rise
(+28.5 % on average) and the space reclaimed.

Here a small tile, one VM per Hitachi I/O profile (SQL 64 KiB 66 % read, Web,
Exchange, OLTP 8 KiB), each at a fixed rate on its own region of a datastore
volume, runs a baseline window; then the array's dedupe pass runs to completion
while the load goes on. The datastore is first filled with random-order 64 KiB
writes of which half repeat earlier blocks (fio dedupe_percentage), so the pass
has real duplicates to remove at its block size. Verdicts: every VM held its
target during the pass, mean latency rose by at most the bound, and no I/O was
lost (a crc32c verify region on the same datastore).
"""

from __future__ import annotations

import json
from collections.abc import Callable

import allure
import pytest

from fixtures.events import attach_timeline, phase_s, phased_runtime_s, scaled_iops, skip_without, verify_region
from iogate.arrays.base import Capability
from iogate.engines.workload import JobSpec, RunPlan, WorkloadSpec
from iogate.events import Event
from iogate.metrics.nodata import NoData
from iogate.units import parse_size_bytes

DEDUPE_BLOCK = "64k"  # the fill's dedupe unit: duperemove on the local lab hashes 64 KiB blocks
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
    volume = volume_factory("events-dedupe", parse_size_bytes(f"{VOLUME_MIB}MiB"))
    connection = connect(lab.baseline, volume, None)
    fill = WorkloadSpec("fill", read_pct=0, random_pct=100, bs=DEDUPE_BLOCK, iodepth=8, time_based=False, runtime_s=0,
                        dedupe_pct=50)
    with allure.step(f"fill {volume.name}: random-order {DEDUPE_BLOCK} writes, 50 % duplicate blocks"):
        engine.run_plan(RunPlan("dedupe-fill", (JobSpec("fill", fill, connection),)))
    return connection


def shown(figure: Callable[[], float], digits: int) -> float | None:
    """A figure for the impact table; None where the window had no data (its verdict already failed on it)."""
    try:
        return round(figure(), digits)
    except NoData:
        return None


def tile_jobs(lab, connection, runtime_s: float, ramp_s: float) -> tuple[JobSpec, ...]:  # type: ignore[no-untyped-def]
    jobs = []
    for index, (name, (bs, random_pct, read_pct, full_target)) in enumerate(VMS.items()):
        target = scaled_iops(lab, full_target)
        workload = WorkloadSpec(f"vm-{name}", read_pct=read_pct, random_pct=random_pct, bs=bs, iodepth=4,
                                offset=f"{index * REGION_MIB}m", size=f"{REGION_MIB}m", runtime_s=runtime_s, ramp_s=ramp_s,
                                rate_iops=target, dedupe_pct=50, extra={"rate_process": "linear"}, until_stopped=True)
        jobs.append(JobSpec(name, workload, connection, target_iops=target))
    verify = verify_region(connection, offset=f"{VERIFY_OFFSET_MIB}m", size=f"{REGION_MIB}m", runtime_s=runtime_s, ramp_s=ramp_s,
                           iops=scaled_iops(lab, 100))
    return (*jobs, verify)


@pytest.mark.events
@pytest.mark.hitachi
@allure.epic("Data services during load")
@allure.feature("events")
@allure.story("dedupe during load")
def test_dedupe_during_load(datastore, lab, during_load, judge, profile, spec) -> None:  # type: ignore[no-untyped-def]
    connection = datastore
    # A baseline phase; the dedupe job (passes back to back, at least one, for a phase); a recovery phase.
    phase = phase_s(profile, parts=2, min_s=5.0)
    runtime_s = phased_runtime_s(phase, profile)
    jobs = tile_jobs(lab, connection, runtime_s, profile.ramp_s)
    targets = {job.name: job.target_iops for job in jobs if job.target_iops}
    allure.dynamic.parameter("VMs", ", ".join(f"{name} {t:g} IOPS" for name, t in targets.items()))
    allure.dynamic.parameter("dedupe block", DEDUPE_BLOCK)
    allure.dynamic.parameter("phase_s", phase)

    dedupe_job = Event("dedupe_run", at_s=phase, until_s=2 * phase)
    run = during_load(RunPlan("dedupe-during-load", jobs), [dedupe_job], ramp_s=profile.ramp_s, stop_after_s=phase)
    passes = run.timeline.matching("dedupe_run")
    first_mib = passes[0].evidence.get("reclaimed_bytes", 0) / 2**20
    spans = [(f"pass 1 (-{first_mib:.0f} MiB)", passes[0].start_ms, passes[0].end_ms)]
    if len(passes) > 1:
        spans.append((f"passes 2-{len(passes)}", passes[1].start_ms, passes[-1].end_ms))
    attach_timeline(run, title="dedupe job during a VM tile", jobs=tuple(targets), spans=spans)

    vms = tuple(targets)
    baseline, event, _ = run.window_stats("dedupe_run", jobs=vms)
    checks = spec.for_family("events")
    held, latency, _ = judge(
        checks["dedupe_targets_held"].evaluate(run.series(vms), targets, window=event.window),
        checks["dedupe_latency_rise_max"].evaluate(baseline, event),
        checks["no_errors"].evaluate(run.result),
    )
    impact = {
        "latency_rise_pct": round(latency.measured, 1),
        "baseline_mean_latency_ms": shown(lambda: baseline.total.latency_mean_ns / 1e6, 3),
        "dedupe_mean_latency_ms": shown(lambda: event.total.latency_mean_ns / 1e6, 3),
        "baseline_iops": shown(lambda: baseline.total.iops, 1),
        "dedupe_iops": shown(lambda: event.total.iops, 1),
        "vms_holding_target": held.detail,
        "dedupe_passes": len(passes),
        "dedupe_job_s": round((passes[-1].end_ms - passes[0].start_ms) / 1000, 3),
        "pool_used_before_bytes": passes[0].evidence.get("pool_used_before_bytes"),
        "pool_used_after_bytes": passes[-1].evidence.get("pool_used_after_bytes"),
        "net_reclaimed_bytes": sum(p.evidence.get("reclaimed_bytes", 0) for p in passes),  # less what the VMs wrote meanwhile
        "first_pass_reclaimed_bytes": passes[0].evidence.get("reclaimed_bytes"),
    }
    for key in ("latency_rise_pct", "first_pass_reclaimed_bytes", "dedupe_passes"):
        allure.dynamic.parameter(key, impact[key])
    allure.attach(json.dumps(impact, indent=2), name="dedupe impact", attachment_type=allure.attachment_type.JSON)
    print("dedupe impact:", json.dumps(impact))
