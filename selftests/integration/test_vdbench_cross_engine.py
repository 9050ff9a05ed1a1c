"""Cross-engine ground truth: fio and vdbench on one blkio-capped volume measure the same IOPS.

The local array's cgroup v1 blkio throttle caps the volume at exactly CAP_IOPS
reads per second. The same WorkloadSpec (random 4k reads, queue depth 64: 160 ms
of I/O always waits at the throttle, so a load generator that a busy 2-core
machine stalls for a moment - fio lost 120 I/Os to one such stall at depth 16 -
still keeps the cap saturated) runs through FioEngine and through VdbenchEngine;
both must measure the cap within 2 % and each other within 2 %, and the same
verdicts (no_io_errors, latency_bound on p99) must pass for both: vdbench's p99
comes from its own response-time buckets (upper edge of the nearest-rank bucket,
warmup included), not NoData. 64 I/Os queued at 400 IOPS wait 160 ms on average
(Little's law), so either engine's p99 is above half that. A vdbench run whose
ledger still holds processes afterwards, or whose JVMs outlive it, fails the test.
"""

from __future__ import annotations

import pytest

from iogate.arrays.local import LocalArray
from iogate.engines.fio.runner import FioEngine
from iogate.engines.vdbench import health
from iogate.engines.vdbench.runner import VdbenchEngine
from iogate.engines.workload import JobSpec, RunPlan, WorkloadSpec
from iogate.hosts.connectors.block import BlockConnector
from iogate.hosts.guard import Guard
from iogate.hosts.initiator import Initiator
from iogate.judging import latency_bound, no_io_errors
from iogate.judging.common import latency_ns_of
from iogate.lab import Lab, QoS
from iogate.metrics.latency import Buckets
from iogate.run import Run
from iogate.run.resources import marker_pids
from selftests.vdbench_home import require_vdbench

pytestmark = [pytest.mark.integration, pytest.mark.slow]

CAP_IOPS = 400
P99_BOUND = latency_bound.Params(max_latency="2s", stat="p99", direction="read")
WORKLOAD = WorkloadSpec("capped-randread", read_pct=100, random_pct=100, bs=4 << 10, iodepth=64, runtime_s=10, ramp_s=2)


def test_fio_and_vdbench_measure_the_same_cap(local_lab: Lab, local_run: Run, local_array: LocalArray) -> None:
    home = require_vdbench()
    volume = local_array.create_volume("xengine", 256 << 20, QoS(read_iops=CAP_IOPS))
    guard = Guard()
    guard.admit(volume.identity)
    initiator = Initiator.from_config(local_lab.hosts[0])
    connection = BlockConnector(local_lab.protocol("block"), local_run).connect(initiator, volume)
    plan = RunPlan("xengine", (JobSpec("vm1", WORKLOAD, connection),))

    fio = FioEngine(local_run, {initiator.name: initiator}, guard).run_plan(plan)
    # 2 cores shared with other self-tests: vdbench's whole-machine CPU notice says nothing about this run.
    vdbench_engine = VdbenchEngine(local_run, {initiator.name: initiator}, guard, vdbench_home=str(home),
                                   tolerated_warnings=(health.CPU_WARNING,))
    vdbench = vdbench_engine.run_plan(plan)

    fio_iops, vdb_iops = fio.total("read").iops, vdbench.total("read").iops
    print(f"cap {CAP_IOPS} IOPS: fio {fio_iops:.1f}, vdbench {vdb_iops:.1f}")
    assert abs(fio_iops - CAP_IOPS) <= 0.02 * CAP_IOPS, fio_iops
    assert abs(vdb_iops - CAP_IOPS) <= 0.02 * CAP_IOPS, vdb_iops
    assert abs(fio_iops - vdb_iops) <= 0.02 * max(fio_iops, vdb_iops)
    assert [j.name for j in vdbench.jobs] == ["vm1"]
    assert vdbench.total("write").ios == 0
    # The same verdicts: each criterion gives both engines the same outcome, and here that outcome is a pass.
    verdicts = {name: [(v.criterion, v.passed) for v in (no_io_errors.evaluate(r, no_io_errors.Params()),
                                                     latency_bound.evaluate(r, P99_BOUND))]
                for name, r in (("fio", fio), ("vdbench", vdbench))}
    print(f"verdicts: {verdicts}")
    assert verdicts["fio"] == verdicts["vdbench"] == [(no_io_errors.NAME, True), (latency_bound.NAME, True)]
    fio_p99, vdb_p99 = latency_ns_of(fio, "p99", "read"), latency_ns_of(vdbench, "p99", "read")
    print(f"p99: fio {fio_p99 / 1e6:.1f} ms, vdbench {vdb_p99 / 1e6:.1f} ms (bucket upper edge)")
    queue_wait_ns = WORKLOAD.iodepth / CAP_IOPS * 1e9
    assert fio_p99 > queue_wait_ns / 2 and vdb_p99 > queue_wait_ns / 2
    histogram = vdbench.total("read").clat.histogram
    assert histogram is not None and isinstance(histogram.scheme, Buckets) and vdb_p99 in histogram.scheme.edges_ns
    assert "warmup included" in histogram.covers
    parm = next(p for label, p in vdbench.artifacts.items() if label.endswith("vdbench parmfile"))
    assert marker_pids(parm) == []  # no vdbench JVM outlives its run
    assert not local_run.ledger.open_entries("process")
