"""vdbench (and fio) on a remote host: where its vdbench is looked for, the working directory a run
point leaves there (journalled, removed, and removed by cleanup after a crash), and vdbench's ramp."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest
import testinfra

from iogate.arrays.base import Volume
from iogate.engines.base import EngineSettings
from iogate.engines.fio.runner import FioEngine
from iogate.engines.vdbench import locate, parmfile
from iogate.engines.vdbench.opener import open_vdbench
from iogate.engines.vdbench.runner import MIN_RAMP_INTERVALS, VdbenchEngine, vdbench_timed
from iogate.engines.workload import JobSpec, RunPlan, WorkloadSpec
from iogate.errors import EngineError, HostError
from iogate.hosts import processes
from iogate.hosts import workdir as remote_workdir
from iogate.hosts.connectors.base import Connection
from iogate.hosts.guard import Guard
from iogate.hosts.initiator import Initiator
from iogate.hosts.workdir import RemoteWorkdir
from iogate.lab import DeviceIdentity, HostConfig
from iogate.run import Run
from iogate.run.resources import release_all
from selftests.fake_host import Said

VOLUME = Volume("v1", 1 << 30, DeviceIdentity(backing_file="/p/v1.img"))
TARGET = Connection("block", "h1", VOLUME, "/dev/sdb")


@dataclass
class _Host:
    """A remote host's shell as testinfra gives it: records every command; `answers` maps a
    fragment of a command to what the host says to it (first match), anything else succeeds silently."""

    answers: dict[str, Said] = field(default_factory=dict)
    commands: list[str] = field(default_factory=list)

    def run(self, line: str) -> Said:
        self.commands.append(line)
        return next((said for fragment, said in self.answers.items() if fragment in line), Said(command=line))


def _remote(name: str = "h1", host: object | None = None) -> Initiator:
    return Initiator(config=HostConfig(name=name, transport=f"ssh://root@{name}.lab"), host=host or _Host())


def _launcher(directory: Path) -> Path:
    directory.mkdir()
    (directory / "vdbench").write_text("#!/bin/sh\n")
    (directory / "vdbench").chmod(0o755)
    return directory


# -- 1. where a remote host's vdbench is -----------------------------------------------------------

def test_a_remote_host_without_a_configured_home_is_refused_at_session_start_naming_the_lab_option(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The controller's fallback installation is never handed to a remote host: no lab option, no session."""
    monkeypatch.setenv("VDBENCH_HOME", str(_launcher(tmp_path / "controller")))
    host = _Host()
    with pytest.raises(EngineError) as caught:
        open_vdbench(Run.start(tmp_path, "unit"), {"h1": _remote(host=host)}, Guard(), EngineSettings())
    message = str(caught.value)
    assert "host(s) ['h1'] are remote" in message and "`vdbench_home:`" in message, message
    assert host.commands == []  # nothing is asked of the host before the lab names a path


def test_a_remote_home_is_checked_on_that_host_not_on_the_controller(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """/opt/vdbench exists on no controller here: a host that has it opens the engine, with the lab's
    path as written; a host that lacks it is named with the path, in the host's own words."""
    monkeypatch.setenv("VDBENCH_HOME", str(tmp_path / "nowhere"))  # the controller has no vdbench at all
    good = _Host()
    engine = open_vdbench(Run.start(tmp_path, "unit"), {"h1": _remote(host=good)}, Guard(),
                          EngineSettings(vdbench_home="/opt/vdbench"))
    assert isinstance(engine, VdbenchEngine) and engine.configured_home == "/opt/vdbench"
    assert len(good.commands) == 1 and "[ ! -x /opt/vdbench/vdbench ]" in good.commands[0], good.commands
    assert 'command -v "${VDBENCH_JAVA:-java}"' in good.commands[0]

    bad = _Host(answers={"-x /opt/vdbench/vdbench": Said(stdout="no executable /opt/vdbench/vdbench\n")})
    with pytest.raises(EngineError) as caught:
        open_vdbench(Run.start(tmp_path, "unit"), {"h1": _remote(host=good), "h2": _remote("h2", bad)}, Guard(),
                     EngineSettings(vdbench_home="/opt/vdbench"))
    message = str(caught.value)
    assert "`vdbench_home: /opt/vdbench`" in message and "host h2: no executable /opt/vdbench/vdbench" in message
    assert "host h1" not in message, message


def test_a_local_host_still_needs_the_controllers_installation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VDBENCH_HOME", str(tmp_path / "nowhere"))
    local = Initiator.from_config(HostConfig(name="h0"))
    with pytest.raises(EngineError, match="no vdbench installation"):
        open_vdbench(Run.start(tmp_path, "unit"), {"h0": local, "h1": _remote()}, Guard(),
                     EngineSettings(vdbench_home=str(tmp_path / "absent")))


def test_the_remote_check_in_a_real_shell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The check's script as a host's shell runs it (this machine's, behind a remote-looking config)."""
    host = Initiator(config=HostConfig(name="h1", transport="ssh://root@h1.lab"), host=testinfra.get_host("local://"))
    home = _launcher(tmp_path / "vdb")
    monkeypatch.setenv("VDBENCH_JAVA", "/bin/true")
    assert locate.remote_problem(host, str(home)) is None
    assert locate.remote_problem(host, str(tmp_path / "none")) == f"no executable {tmp_path / 'none'}/vdbench"
    (home / "vdbench").chmod(0o644)
    assert locate.remote_problem(host, f"{home}/") == f"no executable {home}/vdbench"
    (home / "vdbench").chmod(0o755)
    monkeypatch.setenv("VDBENCH_JAVA", str(tmp_path / "no-java"))
    assert locate.remote_problem(host, str(home)) == f"no java ({tmp_path / 'no-java'}) on its PATH"


# -- 2. the remote working directory -------------------------------------------------------------

def test_a_remote_workdir_is_journalled_before_it_exists_and_removed_over_the_hosts_transport(
        tmp_path: Path) -> None:
    run = Run.start(tmp_path, "unit")
    host = _Host()
    workdir = RemoteWorkdir(run, _remote(host=host), "001-p")
    path = f"{remote_workdir.REMOTE_ROOT}/{run.run_id}/001-p/h1"
    assert workdir.path == path
    records = (run.run_dir / "ledger.jsonl").read_text().splitlines()
    assert ['"op": "intend"' in r for r in records[1:]] == [True, False] and '"op": "created"' in records[2]
    (entry,) = run.ledger.open_entries()
    assert entry.kind == "remote" and entry.attrs["host"] == "h1" and entry.attrs["transport"] == "ssh://root@h1.lab"
    assert host.commands == [f"mkdir -p {path}"]
    workdir.remove()
    assert host.commands[1] == entry.attrs["undo"] and entry.attrs["undo"].startswith(f"rm -rf {path} && ")
    assert run.ledger.open_entries() == []


def test_a_workdir_that_cannot_be_removed_stays_journalled(tmp_path: Path) -> None:
    """After the point failed (the host may be gone) the point's error is the one raised; otherwise the removal's."""
    run = Run.start(tmp_path, "unit")
    host = _Host(answers={"rm -rf": Said(rc=1, stderr="rm: Read-only file system")})
    workdir = RemoteWorkdir(run, _remote(host=host), "001-p")
    workdir.remove(failing=True)
    assert len(run.ledger.open_entries()) == 1
    with pytest.raises(HostError, match="Read-only file system"):
        workdir.remove()
    assert len(run.ledger.open_entries()) == 1


def test_cleanup_removes_a_leftover_workdir_in_a_real_shell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A crash between creating the directory and removing it: cleanup runs the journalled script over
    the journalled transport (local:// here) and removes the run's empty directories with it, not a neighbour's."""
    root = tmp_path / "remote"
    monkeypatch.setattr(remote_workdir, "REMOTE_ROOT", str(root))
    run = Run.start(tmp_path / "work", "unit")
    host = Initiator(config=HostConfig(name="h1", transport="local://"), host=testinfra.get_host("local://"))
    workdir = RemoteWorkdir(run, host, "001-p")
    (Path(workdir.path) / "out").mkdir()
    (Path(workdir.path) / "out" / "flatfile.html").write_text("rows")
    (root / "other-run").mkdir()
    assert release_all(run.ledger) == [f"removed working directory {workdir.path} on host h1"]
    assert sorted(p.name for p in root.iterdir()) == ["other-run"]
    assert run.ledger.open_entries() == []


def test_a_vdbench_that_fails_on_a_remote_host_leaves_no_workdir_there(tmp_path: Path) -> None:
    """The point fails (vdbench missing there): the working directory still goes, and the failure is vdbench's."""
    run = Run.start(tmp_path, "unit")
    host = _Host(answers={"sh -c": Said(rc=127), "cat ": Said(stdout="vdbench: not found\n")})
    engine = VdbenchEngine(run, {"h1": _remote(host=host)}, Guard(allowed=[]), "/opt/vdbench")
    plan = RunPlan("p", (JobSpec("j", WorkloadSpec("w", runtime_s=5, ramp_s=1), TARGET),))
    engine.guard.check = lambda *_: None  # type: ignore[method-assign]
    with pytest.raises(EngineError, match="vdbench exited 127"):
        engine.run_plan(plan)
    work = f"{remote_workdir.REMOTE_ROOT}/{run.run_id}/001-p/h1"
    assert any(c.startswith(f"rm -rf {work} && ") for c in host.commands), host.commands
    assert run.ledger.open_entries() == []


def test_fios_per_host_runner_removes_its_remote_workdir_after_a_failed_point(tmp_path: Path) -> None:
    run = Run.start(tmp_path, "unit")
    host = _Host(answers={"/proc/stat": Said(stdout="cpu  10 0 10 80 0 0 0 0 0 0\n"), "timeout --kill-after": Said(rc=1)})
    plan = RunPlan("p", (JobSpec("j", WorkloadSpec("w", runtime_s=5), TARGET),))
    engine = FioEngine(run, {"h1": _remote(host=host)}, Guard(allowed=[]))
    engine.guard.check = lambda *_: None  # type: ignore[method-assign]
    with pytest.raises(EngineError, match="fio exited 1 without output"):
        engine.run_plan(plan)
    work = f"{remote_workdir.REMOTE_ROOT}/{run.run_id}/001-p/h1"
    assert host.commands[0] == f"mkdir -p {work}"
    assert any(c.startswith(f"rm -rf {work} && ") for c in host.commands), host.commands
    # fio did not exit cleanly: whatever of it is left there is stopped there, not on this machine.
    assert processes.kill_script(f"{work}/job.fio") in host.commands, host.commands
    assert run.ledger.open_entries() == []


# -- 3. the judged window never starts at vdbench's first (late) statistics request ---------------

def test_a_ramp_shorter_than_two_intervals_runs_as_two_and_the_runtime_is_kept() -> None:
    def plan(ramp_s: float) -> RunPlan:
        return RunPlan("p", (JobSpec("j", WorkloadSpec("w", runtime_s=8, ramp_s=ramp_s), TARGET),))

    assert MIN_RAMP_INTERVALS == 2
    for asked, runs in ((0, 0), (0.5, 2), (1, 2), (2, 2), (5, 5)):
        timed = vdbench_timed(plan(asked)).jobs[0].workload
        assert (timed.ramp_s, timed.runtime_s) == (runs, 8), asked
    # warmup = ramp + 1 (parmfile.py): vdbench's window and the runner's then start at interval 3.
    assert "warmup=3,elapsed=7" in parmfile.render(vdbench_timed(plan(1)).jobs, monitor_file="m")
