"""An ssh that never reached sshd is retried; a session that broke mid-command never is.

The CI run of a loaded qemu guest lost whole tests to one "Connection timed out during
banner exchange": the command had never been sent, so a second try cannot run it twice.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from iogate.errors import HostError
from iogate.hosts import initiator as initiator_mod
from iogate.hosts.initiator import Initiator
from iogate.lab import HostConfig


@dataclass
class _Said:
    stderr: str


@dataclass
class _FlakyHost:
    failures: list[str]
    commands: list[str] = field(default_factory=list)

    def run(self, line: str) -> object:
        self.commands.append(line)
        if self.failures:
            raise RuntimeError(_Said(self.failures.pop(0)))
        return "ran"


def _initiator(host: _FlakyHost) -> Initiator:
    return Initiator(config=HostConfig(name="guest", transport="ssh://root@127.0.0.1:2222"), host=host)


@pytest.fixture(autouse=True)
def _no_sleep(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(initiator_mod, "CONNECT_BACKOFF_S", 0.0)


@pytest.mark.parametrize("said", [
    "Connection timed out during banner exchange\nConnection to 127.0.0.1 port 32791 timed out",
    "kex_exchange_identification: read: Connection reset by peer",
    "ssh: connect to host 127.0.0.1 port 2222: Connection refused",
])
def test_a_connection_that_never_reached_sshd_is_retried(said: str) -> None:
    host = _FlakyHost([said, said])
    assert _initiator(host).run_unchecked("echo %s", "x") == "ran"
    assert host.commands == ["echo x"] * 3


def test_retries_end_in_an_error_naming_host_command_and_attempts() -> None:
    said = "Connection timed out during banner exchange"
    host = _FlakyHost([said] * 10)
    with pytest.raises(HostError, match=r"host guest: cannot run 'true': Connection timed out during banner "
                                        r"exchange \(after 4 attempts to connect\)"):
        _initiator(host).run_unchecked("true")
    assert len(host.commands) == 4


def test_a_session_broken_mid_command_is_not_run_again() -> None:
    host = _FlakyHost(["Connection to 127.0.0.1 closed by remote host."])
    with pytest.raises(HostError, match="closed by remote host"):
        _initiator(host).run_unchecked("dd if=/dev/zero of=/dev/sdx")
    assert host.commands == ["dd if=/dev/zero of=/dev/sdx"]


def test_one_attempt_asks_once_and_says_so_plainly() -> None:
    """Clean-up after a failure asks a host that may be the very thing lost once (what is left stays journalled)."""
    said = "ssh: connect to host 192.0.2.10 port 22: Connection refused"
    host = _FlakyHost([said] * 10)
    with pytest.raises(HostError, match=r"^host guest: cannot run 'true': ssh: connect to host 192\.0\.2\.10 port 22: "
                                        r"Connection refused$"):
        _initiator(host).run("true", attempts=1)
    assert host.commands == ["true"]
