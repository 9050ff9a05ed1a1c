"""Which engine a session runs its load with: the lab's `engine:` (or --engine) from the engine
registry; fio itself on one host, fio client/server for several; vdbench from its installation."""

from __future__ import annotations

from pathlib import Path

import pytest

from iogate.engines.choice import choose_engine, fio_server_port, uses_client_server
from iogate.engines.fio.client_server import ClientServerEngine
from iogate.engines.fio.runner import FioEngine
from iogate.engines.vdbench.runner import VdbenchEngine
from iogate.errors import EngineError, LabFileError
from iogate.hosts.guard import Guard
from iogate.hosts.initiator import Initiator
from iogate.lab import HostConfig, load_lab, registry
from iogate.run import Run
from selftests.vdbench_home import require_vdbench

LABS = Path(__file__).parents[2] / "labs"


def hosts(*names: str) -> dict[str, Initiator]:
    return {name: Initiator.from_config(HostConfig(name=name)) for name in names}


def test_one_host_runs_fio_itself_with_the_observer(tmp_path: Path) -> None:
    one = hosts("h1")
    observer = object()
    engine = choose_engine(Run.start(tmp_path, "t"), one, Guard(allowed=[]), observer=observer)  # type: ignore[arg-type]
    assert not uses_client_server(one)
    assert fio_server_port(one) is None
    assert type(engine) is FioEngine
    assert engine.observer is observer


def test_several_hosts_run_fio_client_server_on_port_8765(tmp_path: Path) -> None:
    two = hosts("h1", "h2")
    engine = choose_engine(Run.start(tmp_path, "t"), two, Guard(allowed=[]))
    assert uses_client_server(two)
    assert fio_server_port(two) == 8765
    assert type(engine) is ClientServerEngine


def test_vdbench_is_opened_from_its_installation_and_needs_no_fio_server(tmp_path: Path) -> None:
    home = require_vdbench()
    two = hosts("h1", "h2")
    engine = choose_engine(Run.start(tmp_path, "t"), two, Guard(allowed=[]), engine="vdbench", vdbench_home=str(home))
    assert type(engine) is VdbenchEngine
    assert engine.configured_home == str(home)
    assert not uses_client_server(two, "vdbench")
    assert fio_server_port(two, "vdbench") is None


def test_vdbench_without_an_installation_stops_before_any_run_point(tmp_path: Path) -> None:
    with pytest.raises(EngineError, match="no vdbench installation"):
        choose_engine(Run.start(tmp_path, "t"), hosts("h1"), Guard(allowed=[]), engine="vdbench",
                      vdbench_home=str(tmp_path / "nowhere"))


def test_an_unknown_engine_on_the_command_line_is_named() -> None:
    with pytest.raises(LabFileError, match=r"--engine: unknown engine 'iometer' \(known: fio, vdbench\)"):
        registry.engine_opener("iometer", loc=("--engine",))


def test_a_lab_naming_an_unknown_engine_is_refused_at_its_line(tmp_path: Path) -> None:
    text = (LABS / "local.yaml").read_text()
    bad = tmp_path / "lab.yaml"
    bad.write_text(text + "engine: iometer\n")
    line = len(text.splitlines()) + 1
    with pytest.raises(LabFileError, match=rf"{bad} line {line}: engine: unknown engine 'iometer'"):
        load_lab(bad)


def test_the_local_lab_runs_fio_by_default() -> None:
    assert load_lab(LABS / "local.yaml").engine == "fio"
