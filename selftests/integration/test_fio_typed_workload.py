"""The typed workload fields as the real fio runs them, through FioEngine, on a plain file (no root, no loop device).

Worked by hand: a size mix 4k/50:64k/50 averages (4096 + 65536) / 2 = 34816 bytes an I/O, so one
sequential pass over 32 MiB is 33554432 / 34816 = about 964 I/Os (one I/O's size has a standard
deviation of 30720 bytes: the mean of ~964 is within 10 % by 3.5 standard errors; a *random* single
pass is not: fio's random map fills the last gaps with small blocks, measured 20906 bytes an I/O); a verifying writer (crc32c, backlog 64)
at 100 evenly spaced IOPS (rate_process=linear) for 3 s writes about 300 blocks and reads back at
least half of them, without an error.

Not asked of fio: a rate on a size mix. fio caps it at rate_iops x the smallest size in bytes a
second; measured here, rate_iops=200,200 on 4k/50:64k/50 ran 27 IOPS a direction (829 850 bytes/s
= 200 x 4096), so the fio renderer refuses it (test_jobfile).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from iogate.arrays.base import Volume
from iogate.engines.fio.runner import FioEngine
from iogate.engines.workload import Extent, JobSpec, RunPlan, WorkloadSpec, parse_block_size
from iogate.events.load import require_verifier_ran, verify_region
from iogate.hosts.connectors.base import Connection
from iogate.hosts.guard import Guard
from iogate.hosts.initiator import Initiator
from iogate.judging import no_io_errors
from iogate.lab import DeviceIdentity, HostConfig
from iogate.metrics.types import Dir
from iogate.run import Run
from iogate.run.resources import release_all

pytestmark = [pytest.mark.integration, pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")]


class _FileGuard(Guard):
    """The file is this test's own: a plain file has no device identity for the guard to read."""

    def check(self, initiator: Initiator, connection: Connection) -> None:
        return None


def test_a_mixed_size_linear_rate_job_and_a_verifier_run_as_typed(tmp_path: Path) -> None:
    image = tmp_path / "target.img"
    with image.open("wb") as handle:
        handle.truncate(64 << 20)
    run = Run.start(tmp_path / "work", "typed")
    try:
        initiator = Initiator.from_config(HostConfig(name="me"))
        target = Connection("file", "me", Volume("f", 64 << 20, DeviceIdentity(backing_file=str(image))), str(image))
        mix = WorkloadSpec("mix", read_pct=50, random_pct=0, bs=parse_block_size("4k/50:64k/50"), iodepth=2,
                           size=Extent.of_bytes(32 << 20), time_based=False, runtime_s=0)
        plan = RunPlan("typed", (JobSpec("mix", mix, target),
                                 verify_region(target, offset=32 << 20, size=16 << 20, runtime_s=3, ramp_s=0, iops=100)))
        result = FioEngine(run, {"me": initiator}, _FileGuard()).run_plan(plan)

        job = next(j for j in result.jobs if j.name == "mix")
        ios = sum(job[d].ios for d in (Dir.READ, Dir.WRITE))
        io_bytes = sum(job[d].io_bytes for d in (Dir.READ, Dir.WRITE))
        assert io_bytes == pytest.approx(32 << 20, abs=64 << 10)  # one pass over the region (fio ends on a whole block)
        assert io_bytes / ios == pytest.approx(34816, rel=0.10), ios
        assert no_io_errors.evaluate(result, no_io_errors.Params()).passed
        require_verifier_ran(result)
        text = next((tmp_path / "work").rglob("job.fio")).read_text()
        assert "bssplit=4k/50:64k/50" in text and "rate_process=linear" in text and "verify_backlog=64" in text
        verify = next(j for j in result.jobs if j.name == "verify")
        assert 250 <= verify[Dir.WRITE].ios <= 330, verify[Dir.WRITE].ios  # 100 a second for 3 s
    finally:
        release_all(run.ledger)
