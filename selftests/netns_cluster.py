"""A throwaway netns lab for self-tests: N namespace hosts, one 64 MiB loop volume each, connected."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from iogate.arrays.base import Volume
from iogate.arrays.local import LocalArray
from iogate.hosts.connectors.base import Connection
from iogate.hosts.guard import Guard
from iogate.hosts.initiator import Initiator
from iogate.lab import Lab, load_lab
from iogate.lab.registry import connector_class
from iogate.labs import netns
from iogate.run import Run

REPO = Path(__file__).resolve().parents[1]


@dataclass
class NetnsCluster:
    lab: Lab
    hosts: list[netns.NsHost]
    run: Run
    array: LocalArray
    guard: Guard
    initiators: dict[str, Initiator]
    volumes: dict[str, Volume]
    targets: dict[str, Connection]


@contextmanager
def netns_cluster(workdir: Path, tag: str, count: int, subnet_base: int, lab_file: str = "labs/netns.yaml") -> Iterator[NetnsCluster]:
    """Bring the hosts up, give each its own volume and block connection; everything is gone afterwards.

    lab_file: the netns lab copied (its first `count` hosts); labs/netns-100.yaml for more than 4.
    """
    base = load_lab(REPO / lab_file)
    lab = netns.variant(base, workdir=workdir, tag=f"{os.getpid() % 10000}{tag}", count=count, subnet_base=subnet_base)
    lab = lab.model_copy(update={"array": lab.array.model_copy(update={"options": {"pool_size": "1GiB"}})})
    _, hosts = netns.up(lab)
    try:
        run = Run.start(workdir, tag)
        array = LocalArray(lab, run)
        try:
            array.setup()
            guard = Guard()
            initiators = {h.name: Initiator.from_config(h) for h in lab.hosts}
            connector = connector_class("block")(lab.protocol("block"), run)
            volumes, targets = {}, {}
            for host in lab.hosts:
                volumes[host.name] = array.create_volume(f"vol-{host.name}", 64 << 20)
                guard.admit(volumes[host.name].identity)
                targets[host.name] = connector.connect(initiators[host.name], volumes[host.name])
            yield NetnsCluster(lab, hosts, run, array, guard, initiators, volumes, targets)
        finally:
            array.teardown()  # the cgroup's remover hands any fio server moved into it back to the root cgroup
    finally:
        # The hosts go even when the run's release failed: namespaces, veths and sshds left behind
        # would collide with the next test's and outlive the session.
        netns.down(lab)
    assert netns.leftovers(hosts, netns.lab_run_dir(lab)) == []
