"""The vdbench engine's registry entry: vdbench from the lab's installation (`vdbench_home`,
else VDBENCH_HOME, else the repository's neighbour shared/tools/vdbench), found before the
first run point so a missing installation stops the session with its name, not a test."""

from __future__ import annotations

from collections.abc import Mapping

from iogate.engines.base import Engine, EngineSettings
from iogate.engines.vdbench.locate import vdbench_home
from iogate.engines.vdbench.runner import VdbenchEngine
from iogate.hosts.guard import Guard
from iogate.hosts.initiator import Initiator
from iogate.run import Run


def open_vdbench(run: Run, initiators: Mapping[str, Initiator], guard: Guard, settings: EngineSettings) -> Engine:
    home = vdbench_home(settings.vdbench_home)
    return VdbenchEngine(run, initiators, guard, str(home))
