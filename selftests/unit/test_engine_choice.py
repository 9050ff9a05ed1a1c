"""Which engine a session runs its load with (iogate.engines.choice): fio itself on one host,
fio client/server for several."""

from __future__ import annotations

from pathlib import Path

from iogate.engines.choice import choose_engine, fio_server_port, uses_client_server
from iogate.engines.fio.client_server import ClientServerEngine
from iogate.engines.fio.runner import FioEngine
from iogate.hosts.guard import Guard
from iogate.hosts.initiator import Initiator
from iogate.lab import HostConfig
from iogate.run import Run


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
