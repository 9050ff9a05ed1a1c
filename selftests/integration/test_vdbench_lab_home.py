"""The engine runs the lab's own vdbench (`vdbench_home:` in the lab file), not whatever this machine has.

The real vdbench of ../shared/tools is named only through the lab's `vdbench_home`, while VDBENCH_HOME
points at an empty directory: without the lab's key the engine refuses (naming where it looked), with
it a short run completes, and `iogate parse` reads the output directory it left.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from iogate.__main__ import main as iogate_main
from iogate.arrays.local import LocalArray
from iogate.engines.base import EngineSettings
from iogate.engines.vdbench.opener import open_vdbench
from iogate.engines.vdbench.parmfile import RD_NAME
from iogate.engines.workload import JobSpec, RunPlan, WorkloadSpec
from iogate.errors import EngineError
from iogate.hosts.connectors.block import BlockConnector
from iogate.hosts.guard import Guard
from iogate.hosts.initiator import Initiator
from iogate.lab import Lab
from iogate.run import Run
from selftests.vdbench_home import require_vdbench

pytestmark = [pytest.mark.integration]

SHORT = WorkloadSpec("short", read_pct=50, random_pct=100, bs=4 << 10, iodepth=1, rate_iops=100, runtime_s=3, ramp_s=1)


def test_engine_runs_the_labs_vdbench_home(local_lab: Lab, local_run: Run, local_array: LocalArray, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    home = require_vdbench()
    empty = tmp_path / "no-vdbench-here"
    empty.mkdir()
    monkeypatch.setenv("VDBENCH_HOME", str(empty))
    lab = local_lab.model_copy(update={"vdbench_home": str(home)})
    volume = local_array.create_volume("home", 64 << 20)
    guard = Guard()
    guard.admit(volume.identity)
    initiator = Initiator.from_config(lab.hosts[0])
    initiators = {initiator.name: initiator}
    with pytest.raises(EngineError, match=f"no vdbench installation.*{empty}"):
        open_vdbench(local_run, initiators, guard, EngineSettings(vdbench_home=None))
    # Shared 2-core machine: vdbench's whole-machine CPU notice says nothing about this run.
    engine = open_vdbench(local_run, initiators, guard, EngineSettings(vdbench_home=lab.vdbench_home, vdbench_tolerate=("cpu",)))
    try:
        connection = BlockConnector(lab.protocol("block"), local_run).connect(initiator, volume)
        result = engine.run_plan(RunPlan("home", (JobSpec("vm1", SHORT, connection),)))
    finally:
        engine.close()
    assert result.errors == 0 and result.total_iops > 0
    outdir = result.artifacts["vdbench output"]
    assert iogate_main(["parse", outdir, "--json"]) == 0
    records = [r for r in json.loads(capsys.readouterr().out) if r["rd"].split(" ")[0] == RD_NAME]
    assert len(records) == 1 and records[0]["iops"] > 0 and records[0]["errors"] == []
