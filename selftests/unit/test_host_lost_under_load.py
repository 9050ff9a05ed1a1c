"""A host whose transport breaks while fio runs on it (crashed, powered off, its VM killed): the error
names the host, that it was lost during the load, and the targets whose I/O was lost; nothing stays
journalled as running."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from iogate.arrays.base import Volume
from iogate.engines.fio.runner import FioEngine
from iogate.engines.workload import JobSpec, RunPlan, WorkloadSpec
from iogate.errors import HostError
from iogate.hosts.connectors.base import Connection
from iogate.hosts.guard import Guard
from iogate.hosts.initiator import Initiator
from iogate.lab import DeviceIdentity, HostConfig
from iogate.run import Run
from selftests.fake_host import Said


@dataclass
class _DyingHost:
    """Answers set-up commands; the connection closes while fio runs."""

    commands: list[str] = field(default_factory=list)

    def run(self, line: str) -> Said:
        self.commands.append(line)
        if "timeout --kill-after" in line:
            raise RuntimeError(Said(rc=255, stderr="Connection to 127.0.0.1 closed by remote host."))
        if "/proc/stat" in line:
            return Said(stdout="cpu  10 0 10 80 0 0 0 0 0 0\n")
        return Said()


class _AdmitAll(Guard):
    def check(self, initiator: Initiator, connection: Connection) -> None:
        return None


def test_transport_lost_while_fio_runs_names_host_and_lost_targets(tmp_path: Path) -> None:
    guest = Initiator(config=HostConfig(name="labvm", transport="ssh://root@127.0.0.1:10022"), host=_DyingHost())
    run = Run.start(tmp_path, "lost")
    target = Connection.to_device("iscsi", "labvm", Volume("v1", 64 << 20, DeviceIdentity(wwn="naa.6001405abc")), "/dev/sdb")
    plan = RunPlan("load", (JobSpec("w", WorkloadSpec("w", read_pct=50, runtime_s=60), target),))
    with pytest.raises(HostError) as raised:
        FioEngine(run, {"labvm": guest}, _AdmitAll()).run_plan(plan)
    message = str(raised.value)
    assert message.startswith("host labvm lost during the load: fio's I/O on /dev/sdb (volume v1) ended without results (host labvm: ")
    assert message.endswith("Connection to 127.0.0.1 closed by remote host.)")
    assert run.ledger.open_entries() == [], "the fio process stays journalled as running"


def test_a_refused_set_up_is_not_called_lost_under_load(tmp_path: Path) -> None:
    """Only a break while fio runs is a loss under load; a host that fails before says what failed."""

    class _Refusing(_DyingHost):
        def run(self, line: str) -> Said:
            raise RuntimeError(Said(rc=255, stderr="Permission denied (publickey)."))

    guest = Initiator(config=HostConfig(name="labvm", transport="ssh://root@127.0.0.1:10022"), host=_Refusing())
    target = Connection.to_device("iscsi", "labvm", Volume("v1", 64 << 20, DeviceIdentity(wwn="naa.6001405abc")), "/dev/sdb")
    plan = RunPlan("load", (JobSpec("w", WorkloadSpec("w", read_pct=50, runtime_s=60), target),))
    with pytest.raises(HostError, match=r"^host labvm: cannot run .*Permission denied"):
        FioEngine(Run.start(tmp_path, "refused"), {"labvm": guest}, _AdmitAll()).run_plan(plan)
