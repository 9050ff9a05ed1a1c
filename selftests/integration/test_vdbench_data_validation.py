"""Data validation with the real vdbench: corrupted blocks fail no_io_errors as a verdict.

A verify workload (vdbench -v) runs on a loop volume; once it measures, the
volume's backing file is overwritten with random data (bypassing vdbench). vdbench
finds the miscompares, logs them in errorlog.html and exits 157: the engine must
return a result whose no_io_errors verdict fails (EILSEQ), not pass and not hide
the array's corruption behind a tool error. A clean verify run must pass, and no
data-validation map file may be left behind (they go to the run's own tmp dir).
"""

from __future__ import annotations

import glob
import subprocess
import threading
from pathlib import Path

import pytest

from iogate.arrays.local import LocalArray
from iogate.engines.base import LoadControl
from iogate.engines.vdbench import health
from iogate.engines.vdbench.runner import VdbenchEngine
from iogate.engines.workload import JobSpec, RateProcess, RunPlan, Verify, WorkloadSpec
from iogate.hosts.connectors.block import BlockConnector
from iogate.hosts.guard import Guard
from iogate.hosts.initiator import Initiator
from iogate.judging import no_io_errors
from iogate.lab import Lab
from iogate.run import Run
from selftests.vdbench_home import require_vdbench

pytestmark = [pytest.mark.integration]

SIZE = 32 << 20  # vdbench -v needs ~4264 x the largest xfersize (17 MiB for 4k)
VERIFY = WorkloadSpec("dv", read_pct=50, random_pct=100, bs=4 << 10, iodepth=2, rate_iops=1000, runtime_s=10,
                      verify=Verify(), rate_process=RateProcess.LINEAR)


def _setup(lab: Lab, run: Run, array: LocalArray, name: str) -> tuple[VdbenchEngine, RunPlan, str]:
    volume = array.create_volume(name, SIZE)
    guard = Guard()
    guard.admit(volume.identity)
    initiator = Initiator.from_config(lab.hosts[0])
    connection = BlockConnector(lab.protocol("block"), run).connect(initiator, volume)
    # Shared 2-core machine: vdbench's whole-machine CPU notice says nothing about these runs.
    engine = VdbenchEngine(run, {initiator.name: initiator}, guard, str(require_vdbench()),
                           tolerated_warnings=(health.CPU_WARNING,))
    assert volume.identity.backing_file
    return engine, RunPlan(name, (JobSpec("vm1", VERIFY, connection),)), volume.identity.backing_file


def test_clean_verify_run_passes(local_lab: Lab, local_run: Run, local_array: LocalArray) -> None:
    maps_before = set(glob.glob("/tmp/vdbench.pid*.mmap.*"))
    engine, plan, _ = _setup(local_lab, local_run, local_array, "dvclean")
    result = engine.run_plan(plan)
    assert no_io_errors.evaluate(result, no_io_errors.Params()).passed
    assert result.total_iops > 0
    assert set(glob.glob("/tmp/vdbench.pid*.mmap.*")) == maps_before


def test_corrupted_blocks_fail_no_io_errors(local_lab: Lab, local_run: Run, local_array: LocalArray) -> None:
    engine, plan, backing = _setup(local_lab, local_run, local_array, "dvbad")
    control = LoadControl()

    def corrupt() -> None:
        if control.wait_measuring(120) is not None and not control.stop_requested:
            threading.Event().wait(3)  # let vdbench write blocks it will read back
            subprocess.run(["dd", "if=/dev/urandom", f"of={backing}", "bs=1M", f"count={SIZE >> 20}", "conv=notrunc",
                            "oflag=direct", "status=none"], check=True)

    corrupter = threading.Thread(target=corrupt, daemon=True)
    corrupter.start()
    result = engine.run_plan(plan, control)
    corrupter.join()
    verdict = no_io_errors.evaluate(result, no_io_errors.Params())
    assert not verdict.passed and "EILSEQ" in verdict.detail, verdict.detail
    assert Path(result.artifacts["vdbench output"], "errorlog.html").exists()
