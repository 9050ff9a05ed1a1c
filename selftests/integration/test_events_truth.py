"""Ground truth for event verdicts: a known degradation must fail them, its absence must pass.

A volume capped at exactly 800 read IOPS (cgroup blkio throttle) is read at
queue depth 4, so its baseline is exact: 800 IOPS at 5 ms. A `degrade` event
lowers the cap to 400 IOPS for the middle third of the run and lifts it back:
IOPS halve and latency doubles inside the event window, so throughput_impact
and latency_delta must fail there, naming the window. The control run replays
the same two array actions with the cap left at 800: both verdicts must pass.
Three repetitions of each catch a flaky pipeline (windows, event clock, series).
"""

from __future__ import annotations

import math
import subprocess
import threading
from collections.abc import Iterator

import pytest

from criteria import latency_delta, no_io_errors, throughput_impact
from fixtures.events import verify_region
from iogate.arrays.local import LocalArray
from iogate.engines.fio.runner import FioEngine
from iogate.engines.workload import JobSpec, RunPlan, WorkloadSpec
from iogate.events import Event, EventRun, EventSchedule
from iogate.hosts.connectors.base import Connection
from iogate.lab import Lab, QoS
from iogate.run import Run
from selftests.conftest import block_target

pytestmark = pytest.mark.integration

BASELINE_CAP = QoS(read_iops=800)
DEGRADED_CAP = QoS(read_iops=400)
# Bounds a healthy array meets with room to spare on an exact QoS cap, and a halving breaks.
MAX_DROP_PCT = 20.0
MAX_RISE_PCT = 30.0
RAMP_S, RUNTIME_S, ON_S, OFF_S = 1.0, 9.0, 3.0, 6.0


@pytest.fixture
def capped(local_lab: Lab, local_run: Run, local_array: LocalArray) -> Iterator[tuple[LocalArray, FioEngine, Connection]]:
    _, connection, engine = block_target(local_lab, local_run, local_array, "truth", 64 << 20, BASELINE_CAP)
    yield local_array, engine, connection


def run_with_degrade(array: LocalArray, engine: FioEngine, connection: Connection, cap: QoS) -> EventRun:
    workload = WorkloadSpec("read-qd4", read_pct=100, random_pct=100, bs="4k", iodepth=4, runtime_s=RUNTIME_S, ramp_s=RAMP_S)
    volume = connection.volume
    schedule = EventSchedule(array, [
        Event("degrade", at_s=ON_S, volume=volume, qos=cap, tag="on"),
        Event("degrade", at_s=OFF_S, volume=volume, qos=BASELINE_CAP, tag="off"),
    ], ramp_s=RAMP_S, driver_name="local")
    result, timeline = schedule.run_beside(lambda: engine.run_plan(RunPlan("truth", (JobSpec("load", workload, connection),))))
    return EventRun(result, timeline)


def judged(run: EventRun) -> tuple:  # type: ignore[type-arg]
    baseline, event, recovery = run.window_stats("degrade truth (on)", "degrade truth (off)")
    throughput = throughput_impact.evaluate(baseline, event, max_drop_pct=MAX_DROP_PCT)
    latency = latency_delta.evaluate(baseline, event, max_rise_pct=MAX_RISE_PCT, stats=("mean", "p99"))
    return baseline, event, recovery, throughput, latency


@pytest.mark.parametrize("repetition", [1, 2, 3])
def test_halving_the_cap_fails_both_verdicts_in_the_event_window(capped, repetition: int) -> None:  # type: ignore[no-untyped-def]
    baseline, event, recovery, throughput, latency = judged(run_with_degrade(*capped, DEGRADED_CAP))
    print(throughput.line(), latency.line(), sep="\n")
    assert baseline.total.iops == pytest.approx(800, rel=0.1)  # the cap lets a short burst through after the ramp
    assert event.total.iops == pytest.approx(400, rel=0.05)
    assert recovery.intervals == 0 or recovery.total.iops == pytest.approx(800, rel=0.1)
    assert not throughput.passed
    assert throughput.window == "event vs baseline"
    assert throughput.measured == pytest.approx(50, abs=5)
    assert not latency.passed
    assert latency.window == "event vs baseline"
    assert latency.measured > 60  # queue depth 4 at half the IOPS: about +100 %


@pytest.mark.parametrize("repetition", [1, 2, 3])
def test_the_same_actions_without_degrading_pass(capped, repetition: int) -> None:  # type: ignore[no-untyped-def]
    baseline, event, _, throughput, latency = judged(run_with_degrade(*capped, BASELINE_CAP))
    print(throughput.line(), latency.line(), sep="\n")
    assert baseline.total.iops == pytest.approx(800, rel=0.1)  # the cap lets a short burst through after the ramp
    assert event.total.iops == pytest.approx(800, rel=0.05)
    assert throughput.passed, throughput.line()
    assert latency.passed, latency.line()
    assert not math.isnan(latency.measured)


def test_writes_after_a_snapshot_pay_copy_on_write(local_lab: Lab, local_run: Run, local_array: LocalArray) -> None:
    """On the XFS reflink pool, every first write to a block shared with a snapshot is copied: writes slow down."""
    volume, connection, engine = block_target(local_lab, local_run, local_array, "cow", 128 << 20)
    fill = WorkloadSpec("fill", read_pct=0, random_pct=0, bs="256k", iodepth=8, time_based=False, runtime_s=0)
    engine.run_plan(RunPlan("fill", (JobSpec("fill", fill, connection),)))
    writes = WorkloadSpec("randwrite", read_pct=0, random_pct=100, bs="4k", iodepth=8, runtime_s=RUNTIME_S, ramp_s=RAMP_S)
    schedule = EventSchedule(local_array, [
        Event("snapshot_create", at_s=ON_S, volume=volume, name="s1"),
        Event("snapshot_delete", at_s=OFF_S, volume=volume, name="s1"),
    ], ramp_s=RAMP_S)
    result, timeline = schedule.run_beside(lambda: engine.run_plan(RunPlan("cow", (JobSpec("load", writes, connection),))))
    baseline, event, _ = EventRun(result, timeline).window_stats("snapshot_create", "snapshot_delete")
    rise = latency_delta.evaluate(baseline, event, max_rise_pct=0, stats=("mean",))
    print(rise.line())
    # Measured on this machine: +100 % to +250 % mean write latency while the snapshot exists.
    assert event.of("write").latency_mean_ns > 1.2 * baseline.of("write").latency_mean_ns, rise.line()


def test_the_verify_region_catches_a_lost_write(local_lab: Lab, local_run: Run, local_array: LocalArray) -> None:
    """"Without loss of I/O" can fail: blocks overwritten behind fio's back fail crc32c and no_io_errors."""
    volume, connection, engine = block_target(local_lab, local_run, local_array, "lossy", 64 << 20)
    verify = verify_region(connection, offset="32m", size="16m", runtime_s=3, ramp_s=0, iops=500)
    # The "array" loses the region's writes: random bytes land over it half-way through.
    corrupt = ["dd", "if=/dev/urandom", f"of={volume.identity.backing_file}", "bs=1M", "seek=32", "count=16", "conv=notrunc",
               "oflag=direct", "status=none"]
    timer = threading.Timer(1.5, subprocess.run, args=(corrupt,), kwargs={"check": True})
    timer.start()
    try:
        result = engine.run_plan(RunPlan("lossy", (verify,)))
    finally:
        timer.join()
    verdict = no_io_errors.evaluate(result)
    assert not verdict.passed
    assert "verify error 84 (EILSEQ" in verdict.detail
