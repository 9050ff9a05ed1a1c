"""A fio that cannot be stopped (its I/O stuck in the kernel: a frozen or dead array) must not hang the engine.

`timeout` stops fio at its deadline with TERM, then KILL; a process in uninterruptible I/O survives both
and `timeout` waits for it. The engine waits a bounded time for the host command and then reports the
hang, naming host, device and volume, and leaves fio journalled for the teardown to remove later.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import cast

import pytest

from iogate.arrays.base import Volume
from iogate.engines.fio import runner
from iogate.engines.fio.runner import FioEngine, _bounded
from iogate.engines.workload import JobSpec, RunPlan, WorkloadSpec
from iogate.errors import EngineError, HostError
from iogate.hosts.connectors.base import Connection
from iogate.hosts.guard import Guard
from iogate.hosts.initiator import Initiator
from iogate.lab import DeviceIdentity, HostConfig
from iogate.run import Run
from iogate.run.resources import release_all


def test_a_host_command_is_waited_for_a_bounded_time() -> None:
    me = Initiator.from_config(HostConfig(name="me"))
    started = time.monotonic()
    assert _bounded(me, "sleep 3", 0.3) is None
    assert time.monotonic() - started < 2
    done = _bounded(me, "echo ended; exit 3", 10)
    assert done is not None and done.rc == 3 and done.stdout.strip() == "ended"


class _Unreachable:
    name = "far"

    def run_unchecked(self, command: str, *args: str) -> object:
        raise HostError("host far: cannot run: Connection refused")


def test_a_transport_failure_still_reaches_the_caller() -> None:
    with pytest.raises(HostError, match="host far: cannot run"):
        _bounded(cast(Initiator, _Unreachable()), "true", 5)


class _Blind(Guard):
    def check(self, initiator: Initiator, connection: Connection) -> None:
        return None


def test_an_unstoppable_fio_is_reported_as_a_hang_and_stays_journalled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner, "_bounded", lambda initiator, command, wait_s: None)  # what a fio in D state looks like
    run = Run.start(tmp_path / "work", "hung")
    me = Initiator.from_config(HostConfig(name="localhost"))
    volume = Volume("lun7", 64 << 20, DeviceIdentity(backing_file="/pool/lun7.img"))
    target = Connection.to_device("block", me.name, volume, "/dev/loop97")
    plan = RunPlan("p", (JobSpec("w", WorkloadSpec("w", read_pct=0, runtime_s=2), target),))
    with pytest.raises(EngineError) as failure:
        FioEngine(run, {me.name: me}, _Blind()).run_plan(plan)
    message = str(failure.value)
    for part in ("host localhost", f"did not end within {2 + runner.GRACE_S} s", "could not be stopped", "I/O hung",
                 "/dev/loop97 (volume lun7)", "uninterruptible"):
        assert part in message, f"{part!r} not in {message}"
    # Still running as far as the engine knows: its journal entry stays for the teardown's remover.
    assert [e.attrs["name"] for e in run.ledger.open_entries("process")] == ["fio on localhost"]
    release_all(run.ledger)
