"""require_complete: a helper job (prefill) that failed, did no I/O or left no result stops the test."""

from __future__ import annotations

import pytest

from iogate.arrays.base import Volume
from iogate.engines.helper import require_complete
from iogate.engines.workload import JobSpec, RunPlan, WorkloadSpec
from iogate.errors import EngineError
from iogate.hosts.connectors.base import Connection
from iogate.lab import DeviceIdentity
from iogate.metrics.types import Dir, Direction, JobResult, RunResult, Series

FILL = WorkloadSpec("prefill", read_pct=0, random_pct=0, time_based=False, runtime_s=0)


def _plan(*names: str) -> RunPlan:
    jobs = []
    for name in names:
        volume = Volume(name, 1 << 30, DeviceIdentity(serial=f"S-{name}"))
        jobs.append(JobSpec(f"prefill-{name}", FILL, Connection("block", "h1", volume, f"/dev/{name}", f"/dev/{name}")))
    return RunPlan("prefill", tuple(jobs))


def _job(name: str, written_bytes: int, error: int = 0) -> JobResult:
    ios = written_bytes // 262144
    return JobResult(f"prefill-{name}", "h1", {Dir.WRITE: Direction(Dir.WRITE, ios=ios, io_bytes=written_bytes)}, error=error)


def _result(*jobs: JobResult) -> RunResult:
    return RunResult("prefill", jobs, Series(), 0, 0)


def test_complete_prefill_passes() -> None:
    require_complete(_plan("a"), _result(_job("a", 1 << 30)))


def test_enospc_names_volume_host_errno_and_bytes() -> None:
    with pytest.raises(EngineError, match=r"volume a on host h1: errno 28 \(ENOSPC: No space left on device\) after 1048576 bytes "
                                          r"of 1073741824 \(the array's pool is full or failing\)"):
        require_complete(_plan("a", "b"), _result(_job("a", 1 << 20, error=28), _job("b", 1 << 30)))


def test_idle_and_missing_jobs_fail() -> None:
    with pytest.raises(EngineError) as caught:
        require_complete(_plan("a", "b"), _result(_job("a", 0)))
    assert "volume a on host h1: no I/O done" in str(caught.value) and "volume b on host h1: no result" in str(caught.value)
