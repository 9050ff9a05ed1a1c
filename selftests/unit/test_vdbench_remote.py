"""vdbench on a remote host: where its vdbench is looked for (on that host, at the lab's `vdbench_home`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest
import testinfra

from iogate.engines.base import EngineSettings
from iogate.engines.vdbench import locate
from iogate.engines.vdbench.opener import open_vdbench
from iogate.engines.vdbench.runner import VdbenchEngine
from iogate.errors import EngineError
from iogate.hosts.guard import Guard
from iogate.hosts.initiator import Initiator
from iogate.lab import HostConfig
from iogate.run import Run


@dataclass
class _Said:
    rc: int = 0
    stdout: str = ""
    stderr: str = ""
    command: str = ""


@dataclass
class _Host:
    """A remote host's shell as testinfra gives it: records every command; `answers` maps a
    fragment of a command to what the host says to it (first match), anything else succeeds silently."""

    answers: dict[str, _Said] = field(default_factory=dict)
    commands: list[str] = field(default_factory=list)

    def run(self, line: str) -> _Said:
        self.commands.append(line)
        return next((said for fragment, said in self.answers.items() if fragment in line), _Said(command=line))


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

    bad = _Host(answers={"-x /opt/vdbench/vdbench": _Said(stdout="no executable /opt/vdbench/vdbench\n")})
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
