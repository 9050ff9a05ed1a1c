"""`iogate lab check FILE` checks a lab file before a run; `iogate lab up|down|status FILE` drives a netns lab.

`up` leaves the namespaces, sshds and fio servers running after it exits; their
journal is <workdir>/runs/lab-<name>/ledger.jsonl, which `down` (or `iogate
cleanup`) releases. `status` runs the hosts' preflight (SSH, fio version, clock,
fio server) on any lab.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from iogate.lab.profiles import PROFILES


def _check(argv: list[str]) -> int:
    from iogate.lab.check import check

    parser = argparse.ArgumentParser(
        prog="iogate lab check",
        description="Check a lab file before a run: the schema and every cross-check (each problem as file:line), "
                    "then the plan: volumes and capacity per family, prefill bytes, skipped tests and why, estimated run time. "
                    "Exit 0 only when everything holds.")
    parser.add_argument("lab", help="lab file, e.g. labs/examples/ontap.yaml")
    parser.add_argument("--criteria", metavar="SPEC", help="acceptance spec to load (default: the lab's criteria:, else criteria/poc.yaml)")
    parser.add_argument("--profile", default="smoke", choices=sorted(PROFILES), help="run profile the plan is for (default: smoke)")
    parser.add_argument("--connect", action="store_true",
                        help="also reach every host (SSH as root, fio version, clock, fio --server with 2+ hosts) and log in "
                             "to the array (API version); provisions nothing")
    args = parser.parse_args(argv)
    ok, lines = check(Path(args.lab), args.criteria, args.profile, args.connect)
    print("\n".join(lines))
    return 0 if ok else 1


def _netns(argv: list[str]) -> int:
    from iogate.hosts.initiator import Initiator
    from iogate.hosts.preflight import preflight
    from iogate.lab import load_lab
    from iogate.labs import netns

    parser = argparse.ArgumentParser(prog="iogate lab",
                                     description="Bring a netns lab (labs/netns.yaml) up or down; status: host preflight.")
    parser.add_argument("action", choices=["up", "down", "status"])
    parser.add_argument("lab", help="lab file, e.g. labs/netns.yaml or labs/netns-100.yaml")
    parser.add_argument("--hosts", type=int, metavar="N", help="up / status: only the lab's first N hosts")
    args = parser.parse_args(argv)
    lab = load_lab(args.lab)
    if args.hosts is not None:
        if not 1 <= args.hosts <= len(lab.hosts):
            parser.error(f"--hosts {args.hosts}: lab {lab.name} has {len(lab.hosts)} host(s)")
        lab = lab.model_copy(update={"hosts": lab.hosts[: args.hosts]})
    if args.action == "up":
        started = time.monotonic()
        run, hosts = netns.up(lab)
        for host in hosts:
            print(f"{host.name}: namespace {host.namespace}, {host.ns_addr} (controller side {host.root_addr} on {host.veth}), "
                  f"sshd :{netns.SSH_PORT}, fio --server :{netns.FIO_PORT}")
        print(f"lab {lab.name} up ({len(hosts)} host(s) in {time.monotonic() - started:.1f} s); journal {run.ledger.path}")
        return 0
    if args.action == "down":
        started = time.monotonic()
        lines = netns.down(lab)
        for line in lines:
            print(line)
        print(f"lab {lab.name} down ({len(lines)} action(s) in {time.monotonic() - started:.1f} s)")
        return 0
    checks = preflight([Initiator.from_config(h) for h in lab.hosts], fio_server_port=netns.FIO_PORT, raise_on_problem=False)
    for check in checks:
        print(check.describe())
    return 0 if all(c.ok for c in checks) else 1


def main(argv: list[str]) -> int:
    if argv and argv[0] == "check":
        return _check(argv[1:])
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: iogate lab {check,up,down,status} ...\n\n"
              "  check FILE [--criteria SPEC] [--profile P] [--connect]   check a lab file before a run and print its plan\n"
              "  up FILE [--hosts N] | down FILE                            bring a netns lab (labs/netns.yaml) up or down\n"
              "  status FILE                                                host preflight: SSH, fio version, clock, fio --server\n\n"
              "iogate lab check --help (or up --help) for the options.")
        return 0 if argv else 2
    return _netns(argv)
