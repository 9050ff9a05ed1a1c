"""After a failed point, what is left on a remote host is asked for once, never through connect retries.

The host may be the very thing lost; a round of retries (4 tries, 3 + 6 + 9 s apart, each up to ssh's
30 s ConnectTimeout) per leftover would hold the point's own error back by minutes. What cannot be
removed stays journalled: the session's teardown and `iogate cleanup` try again and name it.
"""

from __future__ import annotations

from pathlib import Path

from iogate.hosts import processes
from iogate.hosts.initiator import Initiator
from iogate.hosts.workdir import RemoteWorkdir
from iogate.lab import HostConfig
from iogate.run import Run


class _LosableHost:
    """A testinfra host that answers until it is lost, then never connects again; counts the tries."""

    def __init__(self) -> None:
        self.lost = False
        self.tries = 0

    def run(self, line: str) -> object:
        if not self.lost:
            return type("Said", (), {"rc": 0, "stdout": "", "stderr": "", "command": line})()
        self.tries += 1
        raise RuntimeError("ssh: connect to host 192.0.2.10 port 22: Connection timed out")


def _initiator(host: _LosableHost) -> Initiator:
    return Initiator(config=HostConfig(name="h1", transport="ssh://root@192.0.2.10"), host=host)


def test_the_load_process_of_a_failed_point_is_asked_for_once(tmp_path: Path) -> None:
    run = Run.start(tmp_path / "work", "lost-process")
    host = _LosableHost()
    entry = processes.journal(run.ledger, _initiator(host), "fio on h1", "/var/tmp/x/job.fio")
    host.lost = True
    processes.ended(run.ledger, entry, _initiator(host), exited_cleanly=False)
    assert host.tries == 1
    assert [e.id for e in run.ledger.open_entries()] == [entry.id]


def test_the_working_directory_of_a_failed_point_is_asked_for_once(tmp_path: Path) -> None:
    run = Run.start(tmp_path / "work", "lost-workdir")
    host = _LosableHost()
    workdir = RemoteWorkdir(run, _initiator(host), "p1")
    host.lost = True
    workdir.remove(failing=True)
    assert host.tries == 1
    assert [e.id for e in run.ledger.open_entries()] == [workdir.entry.id]
