"""A run point's headline figures (iogate.metrics.summary) and its identity for the results store
(iogate.engines.workload.plan_params); expected values worked out by hand."""

from __future__ import annotations

from iogate.arrays.base import Volume
from iogate.engines.workload import JobSpec, RunPlan, WorkloadSpec, plan_params
from iogate.hosts.connectors.base import Connection
from iogate.lab import DeviceIdentity
from iogate.metrics.latency import LatencyHistogram
from iogate.metrics.summary import summary
from iogate.metrics.types import Dir, Direction, JobResult, LatencyStats, RunResult, Series

# fio bin midpoints (PLAT_BITS 6): 1 ms lies in the 2^19 group, 8192 ns wide bins, bin 58:
# 524288 + 58.5 * 8192 = 1003520 ns; 2 ms in the 2^20 group, 16384 ns wide, bin 58: 1048576 + 58.5 * 16384 = 2007040 ns.
BIN_1MS = 1_003_520
BIN_2MS = 2_007_040


def direction(d: Dir, ios: int, iops: float, mean_ns: float, bin_ns: int) -> Direction:
    return Direction(d, ios=ios, iops=iops, clat=LatencyStats(mean_ns=mean_ns, samples=ios,
                                                                   histogram=LatencyHistogram.from_fio_json_bins({bin_ns: ios})))


def run(*jobs: JobResult) -> RunResult:
    return RunResult("point", jobs, Series(), 0, 0)


def test_summary_merges_jobs_per_direction() -> None:
    a = JobResult("a", "h1", {Dir.READ: direction(Dir.READ, 300, 700.02, 400_000, BIN_1MS),
                              Dir.WRITE: direction(Dir.WRITE, 50, 50.06, 2_000_000, BIN_2MS), Dir.TRIM: Direction(Dir.TRIM)})
    b = JobResult("b", "h2", {Dir.READ: direction(Dir.READ, 100, 300.01, 800_000, BIN_1MS),
                              Dir.WRITE: Direction(Dir.WRITE), Dir.TRIM: Direction(Dir.TRIM)})
    # read: 700.02 + 300.01 = 1000.03 IOPS; mean (300 x 0.4 ms + 100 x 0.8 ms) / 400 = 0.5 ms; every sample in the 1 ms bin.
    # write: job a alone. Total: 1000.03 + 50.06 = 1050.09.
    assert summary(run(a, b)) == {
        "iops": 1050.1,
        "read_iops": 1000.0, "read_mean_ms": 0.5, "read_p99_ms": 1.004,
        "write_iops": 50.1, "write_mean_ms": 2.0, "write_p99_ms": 2.007,
    }


def test_summary_leaves_out_a_direction_without_io() -> None:
    a = JobResult("a", "h1", {Dir.READ: direction(Dir.READ, 10, 12.34, 1_000_000, BIN_1MS),
                              Dir.WRITE: Direction(Dir.WRITE), Dir.TRIM: Direction(Dir.TRIM)})
    assert summary(run(a)) == {"iops": 12.3, "read_iops": 12.3, "read_mean_ms": 1.0, "read_p99_ms": 1.004}


def connection(protocol: str, host: str, name: str) -> Connection:
    volume = Volume(name, 1 << 30, DeviceIdentity(backing_file=f"/pool/{name}.img"), {"device": f"/dev/{name}"})
    return Connection(protocol, host, volume, f"/dev/{name}")


def test_plan_params_name_protocols_hosts_jobs_and_the_first_workload() -> None:
    oltp = WorkloadSpec("oltp", read_pct=70, random_pct=100, bs=8 << 10, iodepth=4, runtime_s=20, ramp_s=5)
    other = WorkloadSpec("other", read_pct=0, bs=1 << 20)
    plan = RunPlan("p", (JobSpec("j1", oltp, connection("nvme", "h2", "v1")),
                         JobSpec("j2", other, connection("iscsi", "h1", "v2")),
                         JobSpec("j3", oltp, connection("nvme", "h1", "v3"))))
    assert plan_params(plan) == {
        "protocols": ["iscsi", "nvme"], "hosts": ["h1", "h2"], "jobs": 3,
        "rw": "rd70", "random_pct": 100, "bs": "8k", "iodepth": 4, "numjobs": 1, "runtime_s": 20, "ramp_s": 5,
    }
