"""A resource journalled on a host that runs inside a lab VM vanishes with the VM.

The host's `vanishes_with` (the qemu marker of its VM) goes into every remote entry
journalled on it; cleanup reaches for the host only while a process carrying that
marker lives, and skips the entry once it is gone (a killed VM takes its working
directories and sessions with it). The transport here refuses every connection
(port 1), so a cleanup that reached for the host would fail naming it.
"""

from __future__ import annotations

import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from iogate.errors import IOGateError
from iogate.hosts import initiator as initiator_mod
from iogate.hosts import processes, remote
from iogate.hosts.initiator import Initiator
from iogate.lab import HostConfig
from iogate.run import Run
from iogate.run.resources import release_all

UNREACHABLE = "ssh://root@127.0.0.1:1"


@pytest.fixture
def marker() -> str:
    return f"iogate-labvm-selftest-{uuid.uuid4().hex}"


@pytest.fixture
def vm_process(marker: str) -> Iterator[subprocess.Popen[bytes]]:
    """A stand-in for the VM's qemu: a process whose command line carries the marker."""
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", marker])
    yield process
    process.kill()
    process.wait()


def _journal(tmp_path: Path, marker: str) -> Run:
    run = Run.start(tmp_path / "work", "vanish")
    guest = Initiator.from_config(HostConfig(name="guest", transport=UNREACHABLE, vanishes_with=marker))
    entry = remote.intend(run.ledger, guest, "working directory /var/tmp/iogate-remote/x", "rm -rf /var/tmp/iogate-remote/x")
    run.ledger.created(entry)
    assert entry.attrs["vanishes_with"] == marker
    return run


def test_a_gone_vm_takes_the_hosts_resources_with_it(tmp_path: Path, marker: str) -> None:
    run = _journal(tmp_path, marker)
    assert release_all(run.ledger) == []
    assert not run.ledger.open_entries()


def test_a_live_vm_is_reached_over_the_hosts_transport(tmp_path: Path, marker: str, vm_process: subprocess.Popen[bytes],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(initiator_mod, "CONNECT_BACKOFF_S", 0.0)
    run = _journal(tmp_path, marker)
    with pytest.raises(IOGateError, match=r"could not release: remote\(.*host guest: cannot run"):
        release_all(run.ledger)
    assert run.ledger.open_entries()


def test_a_host_outside_any_vm_is_always_reached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(initiator_mod, "CONNECT_BACKOFF_S", 0.0)
    run = Run.start(tmp_path / "work", "real-host")
    host = Initiator.from_config(HostConfig(name="real", transport=UNREACHABLE))
    run.ledger.created(remote.intend(run.ledger, host, "working directory /x", "rm -rf /x"))
    with pytest.raises(IOGateError, match="host real: cannot run"):
        release_all(run.ledger)


def test_a_process_on_a_host_of_a_gone_vm_is_not_chased(tmp_path: Path, marker: str) -> None:
    """fio's transport broke because its VM was killed: nothing to stop there, and no 18 s of connect retries."""
    run = Run.start(tmp_path / "work", "vm-gone")
    guest = Initiator.from_config(HostConfig(name="guest", transport=UNREACHABLE, vanishes_with=marker))
    entry = processes.journal(run.ledger, guest, "fio on guest", "/var/tmp/iogate-remote/x/job.fio")
    processes.ended(run.ledger, entry, guest, exited_cleanly=False)
    assert not run.ledger.open_entries()
