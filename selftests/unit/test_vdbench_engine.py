"""VdbenchEngine without a JVM: where vdbench is found, and what is refused before anything runs."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from fixtures.expressible import require_expressible
from iogate.arrays.base import Volume
from iogate.engines.base import EngineSettings
from iogate.engines.fio.runner import FioEngine
from iogate.engines.vdbench import health, locate, netns_master
from iogate.engines.vdbench.opener import open_vdbench
from iogate.engines.vdbench.parmfile import Unsupported
from iogate.engines.vdbench.runner import VdbenchEngine
from iogate.engines.workload import Extent, JobSpec, RateProcess, RunPlan, Verify, WorkloadSpec
from iogate.errors import EngineError
from iogate.events.load import fill_plan
from iogate.hosts.cgroup import join_cgroup_shell
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


def test_namespace_hosts_make_a_multi_host_plan_expressible_and_others_are_refused_by_name(tmp_path: Path) -> None:
    """With the lab's hosts as namespaces the plan renders with hd= on the addresses bring_up will give
    (nothing is brought up by check_plan); a host without a namespace is named in the refusal; close()
    without a master does nothing."""
    run = Run.start(tmp_path, "unit")
    jobs = tuple(JobSpec(f"j{h}", WorkloadSpec("w"), Connection("block", h, VOLUME, f"/dev/loop{n}"))
                 for n, h in enumerate(("h1", "h2")))
    plan = RunPlan("two", jobs)
    engine = VdbenchEngine(run, {}, Guard(), master_namespaces={"h1": "ns-h1", "h2": "ns-h2"})
    engine.check_plan(plan)
    assert netns_master.planned_systems({"h2": "b", "h1": "a"}, 89) == {"h1": "10.89.1.2", "h2": "10.89.2.2"}
    assert engine.master is None
    with pytest.raises(Unsupported, match=r"hosts \['h2'\] are not network namespaces on this machine"):
        VdbenchEngine(run, {}, Guard(), master_namespaces={"h1": "ns-h1"}).check_plan(plan)
    engine.close()
    assert not run.ledger.open_entries()


def test_opener_tolerates_only_what_the_lab_names(tmp_path: Path) -> None:
    run = Run.start(tmp_path, "unit")
    home = tmp_path / "vdb"
    home.mkdir()
    (home / "vdbench").write_text("#!/bin/sh\n")
    (home / "vdbench").chmod(0o755)
    engine = open_vdbench(run, {}, Guard(), EngineSettings(vdbench_home=str(home)))
    assert isinstance(engine, VdbenchEngine) and engine.tolerated_warnings == ()
    engine = open_vdbench(run, {}, Guard(), EngineSettings(vdbench_home=str(home), vdbench_tolerate=("cpu",)))
    assert isinstance(engine, VdbenchEngine) and engine.tolerated_warnings == (health.CPU_WARNING,)
    with pytest.raises(EngineError, match="unknown warning"):
        open_vdbench(run, {}, Guard(), EngineSettings(vdbench_home=str(home), vdbench_tolerate=("skew",)))


def test_check_plan_refuses_what_vdbench_cannot_express_and_the_test_skips_naming_it(tmp_path: Path) -> None:
    """A verify job beside a load that writes: check_plan says why without running anything, and
    require_expressible turns that into a one-line skip naming the engine; a fill passes the check."""
    run = Run.start(tmp_path, "unit")
    target = Connection("block", "h1", VOLUME, "/dev/loop9")
    load = JobSpec("load", WorkloadSpec("load", read_pct=0, size=Extent.of_bytes(224 << 20)), target)
    verify = JobSpec("verify", WorkloadSpec("verify", read_pct=0, offset=Extent.of_bytes(224 << 20), size=Extent.of_bytes(32 << 20),
                                            verify=Verify(backlog=64)), target)
    engine = VdbenchEngine(run, {}, Guard())
    with pytest.raises(Unsupported, match=r"^vdbench: verify on jobs \['verify'\] but not on \['load'\], which write"):
        engine.check_plan(RunPlan("snap", (load, verify)))
    with pytest.raises(pytest.skip.Exception, match=r"^vdbench: verify on jobs .* would add reads to their writes$"):
        require_expressible(engine, RunPlan("snap", (load, verify)))
    engine.check_plan(fill_plan("fill", target))
    assert not run.ledger.open_entries()
    fio = FioEngine(run, {}, Guard())
    uniform = JobSpec("u", WorkloadSpec("u", rate_iops=10, rate_process=RateProcess.UNIFORM), target)
    with pytest.raises(pytest.skip.Exception, match=r"^fio: workload u: rate_process=uniform"):
        require_expressible(fio, RunPlan("u", (uniform,)))


def test_a_cgroup_the_shell_is_not_in_and_cannot_reach_fails_the_shell_naming_it(tmp_path: Path) -> None:
    for cgroup in (f"/sys/fs/cgroup/blkio/iogate-absent-{tmp_path.name}", str(tmp_path / "no-such-cgroup")):
        done = subprocess.run(["sh", "-c", f"{join_cgroup_shell(cgroup)} && echo joined"], capture_output=True, text=True)
        assert done.returncode != 0 and "joined" not in done.stdout, (cgroup, done)
        assert f"{cgroup}/cgroup.procs" in done.stderr, (cgroup, done.stderr)
