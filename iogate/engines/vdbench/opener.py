"""The vdbench engine's registry entry: vdbench from the lab's installation (`vdbench_home`,
else VDBENCH_HOME, else the repository's neighbour shared/tools/vdbench), found before the
first run point so a missing installation stops the session with its name, not a test.

Hosts that are network namespaces on this machine (the netns lab: `namespace:` in the lab file)
give the engine what it needs for plans spanning hosts: it brings the master namespace up over
them at the first such plan and tears it down when the session closes the engine. A lab whose
hosts are not namespaces gets those plans refused, with the reason (the test skips)."""

from __future__ import annotations

from collections.abc import Mapping

from iogate.engines.base import Engine, EngineSettings
from iogate.engines.vdbench import health
from iogate.engines.vdbench.locate import vdbench_home
from iogate.engines.vdbench.runner import VdbenchEngine
from iogate.errors import EngineError
from iogate.hosts.guard import Guard
from iogate.hosts.initiator import Initiator
from iogate.run import Run


def open_vdbench(run: Run, initiators: Mapping[str, Initiator], guard: Guard, settings: EngineSettings) -> Engine:
    home = vdbench_home(settings.vdbench_home)
    namespaces = {name: i.config.namespace for name, i in initiators.items() if i.config.namespace}
    unknown = [w for w in settings.vdbench_tolerate if w not in health.TOLERABLE]
    if unknown:
        raise EngineError(f"vdbench: cannot tolerate unknown warning(s) {unknown} (known: {sorted(health.TOLERABLE)})")
    return VdbenchEngine(run, initiators, guard, str(home), master_namespaces=namespaces,
                         tolerated_warnings=tuple(health.TOLERABLE[w] for w in settings.vdbench_tolerate))
