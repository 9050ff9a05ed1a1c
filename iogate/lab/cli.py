"""`python -m iogate lab up|down|status FILE`: bring a netns lab up or down.

`up` leaves the namespaces, sshds and fio servers running after it exits; their
journal is <workdir>/runs/lab-<name>/ledger.jsonl, which `down` (or `python -m
iogate cleanup`) releases.
"""

from __future__ import annotations

import argparse

from iogate.hosts.initiator import Initiator
from iogate.hosts.preflight import preflight
from iogate.lab import load_lab
from iogate.labs import netns


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m iogate lab", description="Bring a netns lab (labs/netns.yaml) up or down.")
    parser.add_argument("action", choices=["up", "down", "status"])
    parser.add_argument("lab", help="lab file, e.g. labs/netns.yaml")
    args = parser.parse_args(argv)
    lab = load_lab(args.lab)
    if args.action == "up":
        run, hosts = netns.up(lab)
        for host in hosts:
            print(f"{host.name}: namespace {host.namespace}, {host.ns_addr} (controller side {host.root_addr} on {host.veth}), "
                  f"sshd :{netns.SSH_PORT}, fio --server :{netns.FIO_PORT}")
        print(f"lab {lab.name} up; journal {run.ledger.path}")
        return 0
    if args.action == "down":
        lines = netns.down(lab)
        for line in lines:
            print(line)
        print(f"lab {lab.name} down ({len(lines)} action(s))")
        return 0
    checks = preflight([Initiator.from_config(h) for h in lab.hosts], fio_server_port=netns.FIO_PORT, raise_on_problem=False)
    for check in checks:
        print(check.describe())
    return 0 if all(c.ok for c in checks) else 1
