"""Which engine runs a session's load: the lab's `engine:` (default fio), or --engine.

Engines are found by name in iogate/lab/registry.py ENGINES; each entry opens its engine
for the session's hosts (fio picks local or client/server itself).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from iogate.engines.base import Engine, EngineSettings, StatusObserver
from iogate.engines.fio.client_server import FIO_SERVER_PORT
from iogate.hosts.guard import Guard
from iogate.hosts.initiator import Initiator
from iogate.lab import DEFAULT_LIVENESS, HostLiveness, registry
from iogate.run import Run

DEFAULT_ENGINE = "fio"


def uses_client_server(initiators: Mapping[str, Initiator], engine: str = DEFAULT_ENGINE) -> bool:
    """Several hosts start their fio load together through fio client/server; a single host
    (this machine or one reached over SSH) runs fio itself."""
    return engine == "fio" and len(initiators) > 1


def fio_server_port(initiators: Mapping[str, Initiator], engine: str = DEFAULT_ENGINE) -> int | None:
    """The port preflight checks each host's fio server on: FIO_SERVER_PORT under client/server, else None."""
    return FIO_SERVER_PORT if uses_client_server(initiators, engine) else None


def choose_engine(run: Run, initiators: Mapping[str, Initiator], guard: Guard, observer: StatusObserver | None = None,
                  *, engine: str = DEFAULT_ENGINE, vdbench_home: str | None = None,
                  liveness: HostLiveness = DEFAULT_LIVENESS, vdbench_tolerate: Sequence[str] = ()) -> Engine:
    """The named engine (from the registry) opened for these hosts; the caller close()s it at the session's end."""
    opener = registry.engine_opener(engine, loc=("--engine",))
    return opener(run, initiators, guard, EngineSettings(observer=observer, vdbench_home=vdbench_home, liveness=liveness,
                                                         vdbench_tolerate=tuple(vdbench_tolerate)))
