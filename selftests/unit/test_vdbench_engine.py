"""VdbenchEngine without a JVM: where vdbench is found, and what is refused before anything runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from iogate.arrays.base import Volume
from iogate.engines.vdbench import locate
from iogate.engines.vdbench.parmfile import Unsupported
from iogate.engines.vdbench.runner import VdbenchEngine
from iogate.engines.workload import JobSpec, RunPlan, WorkloadSpec
from iogate.errors import EngineError
from iogate.hosts.connectors.base import Connection
from iogate.hosts.guard import Guard
from iogate.lab import DeviceIdentity
from iogate.run import Run

VOLUME = Volume("v1", 1 << 30, DeviceIdentity(backing_file="/p/v1.img"))


def test_configured_home_wins_and_a_missing_one_says_where_it_looked(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "vdb"
    home.mkdir()
    (home / "vdbench").write_text("#!/bin/sh\n")
    (home / "vdbench").chmod(0o755)
    monkeypatch.setenv("VDBENCH_HOME", str(tmp_path / "elsewhere"))
    assert locate.vdbench_home(str(home)) == home
    with pytest.raises(EngineError, match=f"looked in {tmp_path / 'elsewhere'}"):
        locate.vdbench_home()
    monkeypatch.setenv("VDBENCH_HOME", str(home))
    assert locate.vdbench_home() == home


def test_a_plan_spanning_hosts_without_a_master_is_refused_before_anything_runs(tmp_path: Path) -> None:
    run = Run.start(tmp_path, "unit")
    jobs = tuple(JobSpec(f"j{h}", WorkloadSpec("w"), Connection("block", h, VOLUME, f"/dev/loop{n}"))
                 for n, h in enumerate(("h1", "h2")))
    with pytest.raises(Unsupported, match="spans hosts .* needs a master namespace"):
        VdbenchEngine(run, {}, Guard()).run_plan(RunPlan("two", jobs))
    assert not run.ledger.open_entries()
