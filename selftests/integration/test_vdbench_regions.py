"""vdbench on the real thing: fills as seekpct=eof, and regions of one volume with data validation.

- A fill (the event tests' SEQUENTIAL_FILL) writes the whole volume once and the
  runner accepts it: 32 MiB in 256 KiB writes is 128 blocks, of which vdbench
  writes 127 (it never touches the first max-xfersize bytes of a /dev device).
- A fill that vdbench ends at its elapsed cap before the end of the volume is an
  error naming the single pass, never a helper job that "completed".
- A read-only load and a verify job on two regions of one volume: an sd each on
  the same loop device with range=, data validation on (offset= would be refused
  by vdbench with -v); the verifier reads back its writes, the load writes nothing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from iogate.arrays.local import LocalArray
from iogate.engines.helper import require_complete
from iogate.engines.vdbench import health
from iogate.engines.vdbench.runner import VdbenchEngine
from iogate.engines.workload import Extent, JobSpec, RunPlan, Verify, WorkloadSpec
from iogate.errors import EngineError
from iogate.events.load import SEQUENTIAL_FILL, VERIFY_JOB, fill_plan, require_verifier_ran
from iogate.hosts.connectors.base import Connection
from iogate.hosts.connectors.block import BlockConnector
from iogate.hosts.guard import Guard
from iogate.hosts.initiator import Initiator
from iogate.judging import no_io_errors
from iogate.lab import Lab, QoS
from iogate.metrics.types import Dir
from iogate.run import Run
from selftests.vdbench_home import require_vdbench

pytestmark = [pytest.mark.integration]

MIB = 1 << 20


def _engine_and_target(
    lab: Lab, run: Run, array: LocalArray, name: str, size: int, qos: QoS | None = None
) -> tuple[VdbenchEngine, Connection]:
    volume = array.create_volume(name, size, qos)
    guard = Guard()
    guard.admit(volume.identity)
    initiator = Initiator.from_config(lab.hosts[0])
    connection = BlockConnector(lab.protocol("block"), run).connect(initiator, volume)
    # Shared 2-core machine: vdbench's whole-machine CPU notice says nothing about these runs.
    engine = VdbenchEngine(run, {initiator.name: initiator}, guard, str(require_vdbench()), tolerated_warnings=(health.CPU_WARNING,))
    return engine, connection


def test_a_fill_writes_the_volume_once(local_lab: Lab, local_run: Run, local_array: LocalArray) -> None:
    engine, target = _engine_and_target(local_lab, local_run, local_array, "vdbfill", 32 * MIB)
    plan = fill_plan("fill", target, SEQUENTIAL_FILL)
    result = engine.run_plan(plan)
    require_complete(plan, result, "fill")
    (job,) = result.jobs
    assert job[Dir.WRITE].ios == 127 and job[Dir.WRITE].io_bytes == 127 * 256 * 1024
    assert Dir.READ not in job.directions or job[Dir.READ].ios == 0


def test_a_fill_cut_short_by_its_cap_is_an_error(local_lab: Lab, local_run: Run, local_array: LocalArray) -> None:
    # 20 writes/s of 256 KiB = 5 MiB/s: 32 MiB needs over 6 s; the 2 s cap ends vdbench first.
    engine, target = _engine_and_target(local_lab, local_run, local_array, "vdbshort", 32 * MIB, QoS(write_iops=20))
    plan = fill_plan("short-fill", target, SEQUENTIAL_FILL.with_(runtime_s=2))
    with pytest.raises(EngineError, match=r"ended the single pass \(seekpct=eof\) of \['fill'\] before every region's end"):
        engine.run_plan(plan)


def test_reads_and_a_verifier_on_two_regions_of_one_volume(local_lab: Lab, local_run: Run, local_array: LocalArray) -> None:
    engine, target = _engine_and_target(local_lab, local_run, local_array, "vdbregions", 64 * MIB, QoS(read_iops=300, write_iops=300))
    fill = fill_plan("fill", target)
    require_complete(fill, engine.run_plan(fill), "fill")
    load = WorkloadSpec("load", read_pct=100, random_pct=100, bs=4096, iodepth=2, size=Extent.of_bytes(32 * MIB), runtime_s=6)
    verify = WorkloadSpec(
        "verify",
        read_pct=0,
        random_pct=100,
        bs=4096,
        iodepth=1,
        offset=Extent.of_bytes(32 * MIB),
        size=Extent.of_bytes(32 * MIB),
        runtime_s=6,
        verify=Verify(backlog=64),
    )
    result = engine.run_plan(RunPlan("regions", (JobSpec("load", load, target), JobSpec(VERIFY_JOB, verify, target))))
    parm = Path(next(p for label, p in result.artifacts.items() if label.endswith("vdbench parmfile"))).read_text()
    assert f"sd=sd1,lun={target.filename},openflags=o_direct,threads=2,range=(0,33554432)\n" in parm
    assert f"sd=sd2,lun={target.filename},openflags=o_direct,threads=1,range=(33554432,67108864)\n" in parm
    assert "validate=read_after_write\n" in parm and "offset=" not in parm
    assert no_io_errors.evaluate(result, no_io_errors.Params()).passed
    require_verifier_ran(result)
    jobs = {job.name: job for job in result.jobs}
    assert jobs["load"][Dir.READ].ios > 0 and jobs["load"][Dir.WRITE].ios == 0
    assert jobs[VERIFY_JOB][Dir.WRITE].ios > 0
