"""Which engine runs a session's load, from the lab's hosts.

There is no engine registry: a one-host lab (this machine or one host over SSH)
runs fio itself; several hosts start their load together through fio
client/server from this controller.
"""

from __future__ import annotations

from collections.abc import Mapping

from iogate.engines.base import Engine
from iogate.engines.fio.client_server import FIO_SERVER_PORT, ClientServerEngine
from iogate.engines.fio.runner import FioEngine, StatusObserver
from iogate.hosts.guard import Guard
from iogate.hosts.initiator import Initiator
from iogate.run import Run


def uses_client_server(initiators: Mapping[str, Initiator]) -> bool:
    """Several hosts start their load together through fio client/server; a single host
    (this machine or one reached over SSH) runs fio itself."""
    return len(initiators) > 1


def fio_server_port(initiators: Mapping[str, Initiator]) -> int | None:
    """The port preflight checks each host's fio server on: FIO_SERVER_PORT under client/server, else None."""
    return FIO_SERVER_PORT if uses_client_server(initiators) else None


def choose_engine(run: Run, initiators: Mapping[str, Initiator], guard: Guard, observer: StatusObserver | None = None) -> Engine:
    """fio on the host itself for a one-host lab (feeding `observer` its status lines);
    fio client/server from this controller for several hosts."""
    if not uses_client_server(initiators):
        return FioEngine(run, initiators, guard, observer=observer)
    return ClientServerEngine(run, initiators, guard)
