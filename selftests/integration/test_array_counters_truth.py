"""Ground truth for the local array's METRICS: a volume capped by the blkio throttle at 400 write IOPS
completes exactly 400 writes a second at its loop device, so the array's own samples (the kernel's
block counters of that device, sampled by the array) must show 400 IOPS per interval, and nothing
before the volume saw I/O.

Tolerances: the throttle releases I/O at jiffy granularity (a few I/Os either side of an interval's
edge) and each rate divides by the measured time between two readings, so a whole 1 s interval is
400 within a few I/Os: 5 % per interval leaves room for a reading the loaded 2-core machine
delays by tens of ms, and the mean over the whole intervals holds to 3 % (the cap's own test
holds fio's figure to 3 %). An interval that straddles the run's start or end is partly idle: only
intervals wholly inside fio's measured window are held to the cap.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from datetime import UTC, datetime, timedelta

import pytest

from iogate.arrays.counters import run_point_counters
from iogate.arrays.local import LocalArray
from iogate.engines.workload import JobSpec, RunPlan, WorkloadSpec
from iogate.lab import Lab, QoS
from iogate.metrics.types import Dir
from iogate.run import Run
from iogate.units import ns_to_us
from selftests.conftest import block_target

pytestmark = pytest.mark.integration

CAP_IOPS = 400


@pytest.mark.skipif(shutil.which("fio") is None, reason="needs fio")
def test_the_arrays_samples_show_the_capped_iops(local_lab: Lab, local_run: Run, local_array: LocalArray) -> None:
    before_volume = datetime.now(UTC)
    volume, connection, engine = block_target(local_lab, local_run, local_array, "v1", 64 << 20, QoS(write_iops=CAP_IOPS))
    # A window before the volume existed: the array has no sample of it (no data, not zeros).
    assert local_array.volume_metrics(volume, before_volume - timedelta(seconds=30), before_volume) == []

    # A window after it was made and before any workload: samples of a device that completed no write.
    subprocess.run(["udevadm", "settle"], check=False, timeout=30)
    idle_start = datetime.now(UTC)
    time.sleep(2.5)
    idle = local_array.volume_metrics(volume, idle_start, datetime.now(UTC))
    assert idle, "the array took no sample in 2.5 s at a 1 s interval"
    assert all(s.write_iops == 0.0 and s.write_latency_us is None for s in idle), idle
    assert all(s.read_iops == 0.0 and s.read_latency_us is None for s in idle), idle

    workload = WorkloadSpec("capped", read_pct=0, iodepth=16, runtime_s=5)  # 4 KiB: the default block size
    plan = RunPlan("counters", (JobSpec("w", workload, connection),))
    result = engine.run_plan(plan)
    host = result.total(Dir.WRITE)
    assert host.iops == pytest.approx(CAP_IOPS, rel=0.03)  # the cap holds on the host's side too

    start, end = datetime.fromtimestamp(result.start_ms / 1000, UTC), datetime.fromtimestamp(result.end_ms / 1000, UTC)
    samples = local_array.volume_metrics(volume, start, end)
    whole = [s for s in samples if s.interval_s is not None and s.time - timedelta(seconds=s.interval_s) >= start]
    report = [(s.time.isoformat(), s.interval_s, s.write_iops, s.write_latency_us, s.note) for s in samples]
    print(f"host {host.iops:.1f} IOPS, mean {ns_to_us(host.clat.mean_ns):.0f} us; array samples:", *report, sep="\n  ")
    assert len(whole) >= 3, report  # a 5 s run at 1 s sampling
    assert all(s.write_iops == pytest.approx(CAP_IOPS, rel=0.05) for s in whole), report
    assert sum(s.write_iops or 0.0 for s in whole) / len(whole) == pytest.approx(CAP_IOPS, rel=0.03), report
    # No reads while fio writes (the guard's blkid probe just before fio may fall in the first, straddling interval).
    assert all(s.read_iops == 0.0 and s.read_latency_us is None for s in whole), report
    # The device's latency, not fio's: the throttle holds 16 queued writes at 400 IOPS (~40 ms each) before
    # they reach the device, so the host's mean is that wait and the array's is the device's service time
    # (0.5-1.5 ms here; one interval of a pool stall on a busy machine reached 7.7 ms, so the mean is held, not each).
    host_mean_us = ns_to_us(host.clat.mean_ns)
    latencies = [s.write_latency_us for s in whole if s.write_latency_us is not None]
    assert len(latencies) == len(whole) and all(latency > 0 for latency in latencies), report
    assert sum(latencies) / len(latencies) < host_mean_us / 2, (host_mean_us, report)

    # The caller the measure fixture uses: the same figures beside the host's.
    counters = run_point_counters(local_array, "local", plan, result)
    assert counters is not None
    figures = counters.array_iops()
    assert figures is not None and figures["write"] is not None, counters.summary_line()
    # Over every sample stamped in the window, a straddling edge interval included: within one interval's worth.
    assert figures["write"] == pytest.approx(host.iops, abs=CAP_IOPS / len(samples) + 0.03 * CAP_IOPS), counters.summary_line()
    assert counters.summary_line().startswith("array counters (local): array-seen ")
