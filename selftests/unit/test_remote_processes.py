"""A load process on a host whose processes the controller cannot see is stopped on that host.

The kill script is run here for real (bash, pkill, pgrep), as the host would run it over its
transport: it stops exactly the processes whose command line carries the marker as a whole
argument, and never the shell running it. Which kind an engine journals is decided by the host:
this machine and its network namespaces keep the controller-side kill.
"""

from __future__ import annotations

import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from iogate.hosts import initiator as initiator_mod
from iogate.hosts import processes
from iogate.hosts.initiator import Initiator
from iogate.lab import HostConfig
from iogate.run import Run

UNREACHABLE = "ssh://root@127.0.0.1:1"


@pytest.fixture(params=["job.fio", "parm"])  # with and without a character the pattern must escape
def marker(tmp_path: Path, request: pytest.FixtureRequest) -> str:
    return f"{tmp_path}/iogate-remote/run-{uuid.uuid4().hex[:8]}/p1/h1/{request.param}"


def _carrying(argument: str) -> subprocess.Popen[bytes]:
    """A stand-in for fio: a sleeping process whose command line carries `argument`."""
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", argument])


@pytest.fixture
def sleepers() -> Iterator[list[subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for process in started:
        process.kill()
        process.wait()


def test_the_kill_script_stops_the_marked_process_and_only_it(marker: str, sleepers: list[subprocess.Popen[bytes]]) -> None:
    ours = _carrying(marker)
    neighbour = _carrying(marker.replace("/p1/", "/p10/"))  # another run point of the same run
    longer = _carrying(marker + ".bak")
    sleepers.extend([ours, neighbour, longer])
    done = subprocess.run(["bash", "-c", processes.kill_script(marker)], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert ours.wait(timeout=5) is not None
    assert neighbour.poll() is None and longer.poll() is None


def test_the_kill_script_with_nothing_to_stop_succeeds(marker: str) -> None:
    done = subprocess.run(["bash", "-c", processes.kill_script(marker)], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr


def test_the_pattern_never_holds_the_marker_itself(marker: str) -> None:
    assert marker not in processes.kill_script(marker)
    assert processes.pattern("/var/tmp/a.b+c/job.fio") == "[/]var/tmp/a[.]b[+]c/job[.]fio( |$)"


@pytest.mark.parametrize("bad", ["relative/job.fio", "/var/tmp/it's/job.fio", "/var/tmp/a b/job.fio", "/var/tmp/$(x)"])
def test_a_marker_that_needs_quoting_is_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="process marker"):
        processes.pattern(bad)


def _host(**fields: str) -> Initiator:
    return Initiator.from_config(HostConfig(name="h1", **fields))


@pytest.mark.parametrize(("fields", "kind"), [
    ({}, "process"),
    ({"transport": "ssh://root@10.91.0.2", "namespace": "iogate-h1"}, "process"),
    ({"transport": "ssh://root@192.0.2.10"}, "remote"),
])
def test_who_kills_follows_whose_processes_they_are(tmp_path: Path, fields: dict[str, str], kind: str) -> None:
    run = Run.start(tmp_path / "work", "journal")
    entry = processes.journal(run.ledger, _host(**fields), "fio on h1", "/var/tmp/iogate-remote/r/p1/h1/job.fio")
    assert entry.kind == kind
    if kind == "remote":
        assert entry.attrs["undo"] == processes.kill_script("/var/tmp/iogate-remote/r/p1/h1/job.fio")
        assert entry.attrs["transport"] == "ssh://root@192.0.2.10"


def test_a_clean_exit_on_a_remote_host_costs_no_round_trip(tmp_path: Path) -> None:
    run = Run.start(tmp_path / "work", "clean")
    host = _host(transport=UNREACHABLE)
    entry = processes.journal(run.ledger, host, "fio on h1", "/var/tmp/x/job.fio")
    processes.ended(run.ledger, entry, host, exited_cleanly=True)  # the unreachable host is never asked
    assert not run.ledger.open_entries()


def test_an_unreachable_host_keeps_its_process_journalled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(initiator_mod, "CONNECT_BACKOFF_S", 0.0)
    run = Run.start(tmp_path / "work", "lost")
    host = _host(transport=UNREACHABLE)
    entry = processes.journal(run.ledger, host, "fio on h1", "/var/tmp/x/job.fio")
    processes.ended(run.ledger, entry, host, exited_cleanly=False)  # the caller's own error stands
    assert [e.id for e in run.ledger.open_entries()] == [entry.id]
