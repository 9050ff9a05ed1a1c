"""The vdbench engine's registry entry: vdbench found where it will run, before the first run
point, so a missing installation stops the session with its name and place, not a test.

Two installations may be involved. The controller's (the lab's `vdbench_home`, else VDBENCH_HOME,
else the repository's neighbour shared/tools/vdbench) runs vdbench for hosts that are this machine
and the master of plans spanning hosts; it is looked up only when such a host exists. A remote
host runs its own vdbench, at the lab's `vdbench_home` (nothing else names a path on that host):
checked there, over the host's transport; a remote host with no `vdbench_home` set is refused.

Hosts that are network namespaces on this machine (the netns lab: `namespace:` in the lab file)
give the engine what it needs for plans spanning hosts: it brings the master namespace up over
them at the first such plan and tears it down when the session closes the engine. A lab whose
hosts are not namespaces gets those plans refused, with the reason (the test skips)."""

from __future__ import annotations

from collections.abc import Mapping

from iogate.engines.base import Engine, EngineSettings
from iogate.engines.vdbench import health
from iogate.engines.vdbench.locate import remote_problem, vdbench_home
from iogate.engines.vdbench.runner import VdbenchEngine
from iogate.errors import EngineError
from iogate.hosts.guard import Guard
from iogate.hosts.initiator import Initiator
from iogate.run import Run

# The lab file's field (iogate/lab/model.py Lab.vdbench_home).
LAB_OPTION = "vdbench_home"


def open_vdbench(run: Run, initiators: Mapping[str, Initiator], guard: Guard, settings: EngineSettings) -> Engine:
    namespaces = {name: i.config.namespace for name, i in initiators.items() if i.config.namespace}
    unknown = [w for w in settings.vdbench_tolerate if w not in health.TOLERABLE]
    if unknown:
        raise EngineError(f"vdbench: cannot tolerate unknown warning(s) {unknown} (known: {sorted(health.TOLERABLE)})")
    check_installations(initiators, settings.vdbench_home, namespaces)
    # The lab's home as written, never the controller's fallback: a remote host gets only what the lab named.
    return VdbenchEngine(run, initiators, guard, settings.vdbench_home, master_namespaces=namespaces,
                         tolerated_warnings=tuple(health.TOLERABLE[w] for w in settings.vdbench_tolerate))


def check_installations(initiators: Mapping[str, Initiator], configured: str | None, namespaces: Mapping[str, str]) -> None:
    """Raise EngineError, naming the host (or the controller), the path and the lab option, unless
    every host can start vdbench: this machine's hosts and namespaces through the controller's
    installation, every other host through the lab's `vdbench_home` on that host."""
    remote = [i for name, i in initiators.items() if not i.is_local and name not in namespaces]
    if not remote or len(remote) < len(initiators):
        vdbench_home(configured)  # raises, saying where it looked
    if not remote:
        return
    names = [i.name for i in remote]
    if not configured:
        raise EngineError(f"vdbench: host(s) {names} are remote and run their own vdbench, but the lab sets no "
                          f"`{LAB_OPTION}:` naming where it is installed on them (the controller's own vdbench is not there)")
    problems = [f"host {i.name}: {problem}" for i in remote if (problem := remote_problem(i, configured))]
    if problems:
        raise EngineError(f"vdbench cannot start at the lab's `{LAB_OPTION}: {configured}` on "
                          + "; ".join(problems))
