"""The fio engine's registry entry: fio on the host itself for a one-host lab, fio client/server
from this controller when several hosts must start their load together (two strategies of one
engine; the rest of the suite never tells them apart)."""

from __future__ import annotations

from collections.abc import Mapping

from iogate.engines.base import Engine, EngineSettings
from iogate.engines.fio.client_server import ClientServerEngine
from iogate.engines.fio.runner import FioEngine
from iogate.hosts.guard import Guard
from iogate.hosts.initiator import Initiator
from iogate.run import Run


def open_fio(run: Run, initiators: Mapping[str, Initiator], guard: Guard, settings: EngineSettings) -> Engine:
    if len(initiators) > 1:
        return ClientServerEngine(run, initiators, guard, liveness=settings.liveness)
    return FioEngine(run, initiators, guard, observer=settings.observer)
