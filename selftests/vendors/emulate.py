"""An emulated vendor array for whole-suite runs: `python -m selftests.vendors.emulate pure ...`.

Against a running lab VM (its SSH transport and key), this sets up the guest
backing, serves the backed, spec-checked fake array on 127.0.0.1 (reachable from
nowhere else), writes a lab file that points the vendor driver at it (CA bundle
for verify_tls, the API credential by ${file:} reference) and the guest as the
host, prints the lab file's path, and serves until SIGTERM/SIGINT; then it
removes the backing from the guest and reports any spec violations seen (exit 1).

    python -m selftests.vendors.emulate pure --transport ssh://root@127.0.0.1:PORT \
        --ssh-key /var/cache/iogate/labvm/id_ed25519 --dir /var/tmp/iogate-emulated
    pytest tests -m "baseline or tiles or events" --lab /var/tmp/iogate-emulated/pure-emulated.yaml

Several vendors at once (`emulate pure,ontap,huawei ...`, for a bake-off): one pool in the guest, each
vendor's array opened on it with its own target, subsystem and object names (emu-<vendor>-...), each
served on its own port with its own lab file (workdir work-<vendor>); one lab file path is printed per
vendor, in the order named. The vendors must differ.
"""

from __future__ import annotations

import argparse
import secrets as pysecrets
import signal
import sys
import threading
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
import yaml

from iogate.hosts.initiator import Initiator
from iogate.lab import load_lab
from iogate.run import Run
from iogate.run.resources import release_all
from selftests.vendors.behaviour.conftest import VENDORS, Vendor
from selftests.vendors.guest_backing import GuestBacking
from selftests.vendors.server import ContractServer

LABVM_LAB = Path(__file__).resolve().parents[2] / "labs" / "labvm.yaml"
# Far below what the TCG guest moves (600-1400 IOPS at queue depth 8, CPU-bound), so the caps, not the
# emulator's CPU, set what the suite measures, and the guest's generator stays clear of saturation.
DEFAULT_IOPS_PER_VOLUME = 200
EMULATED_SPEC = "criteria/emulated.yaml"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("vendor", help=f"one of {', '.join(sorted(VENDORS))}, or several comma-separated")
    parser.add_argument("--transport", required=True, help="ssh://root@127.0.0.1:PORT of the lab VM")
    parser.add_argument("--ssh-key", required=True)
    parser.add_argument("--dir", required=True, type=Path, help="where the lab file, CA and credential go (and the backing's run)")
    parser.add_argument(
        "--iops-per-volume",
        type=int,
        default=DEFAULT_IOPS_PER_VOLUME,
        help="the emulated array's service level: reads and writes of each volume capped at this many IOPS each "
        f"(default {DEFAULT_IOPS_PER_VOLUME}; criteria/emulated.yaml is calibrated at it; a lab at another "
        "cap names no spec: criteria/poc.yaml unless --criteria)",
    )
    args = parser.parse_args(argv)
    names = [v for v in args.vendor.split(",") if v]
    if not names or len(set(names)) != len(names) or not set(names) <= set(VENDORS):
        parser.error(f"vendor {args.vendor!r}: name each once, of {', '.join(sorted(VENDORS))}")
    try:
        vendors = [VENDORS[name]() for name in names]
    except pytest.skip.Exception as missing:  # the vendor's test module skips without its SDK
        parser.exit(2, f"emulate {args.vendor}: {missing.msg} (make vendors)\n")
    args.dir.mkdir(parents=True, exist_ok=True)
    base = load_lab(LABVM_LAB)
    where = {"transport": args.transport, "ssh_key": args.ssh_key}
    guest_lab = base.model_copy(
        update={
            "array": base.array.model_copy(update={"options": {**base.array.options, **where}}),
            "hosts": [h.model_copy(update=where) for h in base.hosts],
        }
    )
    run = Run.start(args.dir / "backing", "emulated-array")
    backing = GuestBacking(guest_lab, run, iops_per_volume=args.iops_per_volume or None)
    credential = pysecrets.token_hex(16)
    secret_file = args.dir / "credential"
    secret_file.write_text(credential)
    secret_file.chmod(0o600)
    several = len(vendors) > 1
    opened: list[GuestBacking] = []
    violations: list[str] = []
    left: list[str] = []
    stop = threading.Event()  # from here: a SIGTERM while arrays are being opened still cleans up after them
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    try:
        backing.setup()
        with ExitStack() as serving:
            served = []
            for vendor in vendors:
                # One vendor: the pool's own backing, as ever. Several: each its own array on the one pool.
                own = GuestBacking(guest_lab, run, iops_per_volume=args.iops_per_volume or None, pool=backing,
                                   prefix=f"emu-{vendor.name}-") if several else backing
                own.open_array(vendor.target_iqn, vendor.subsys_nqn)
                opened.append(own)
                fake = vendor.make_fake(credential, own)
                server_dir = args.dir / vendor.name if several else args.dir  # its certificate and key
                server_dir.mkdir(parents=True, exist_ok=True)
                server = serving.enter_context(ContractServer(fake, vendor.contract(), server_dir))
                lab_file = _write_lab(args, vendor, server, secret_file, where, several)
                served.append((vendor, fake, own, server))
                print(lab_file, flush=True)
            stop.wait()
            guest = Initiator.from_config(guest_lab.hosts[0])
            for vendor, fake, own, server in served:
                violations.extend(f"{vendor.name}: {v}" if several else v for v in server.violations)
                # What the suite (or `iogate cleanup` after a killed run) left behind fails the emulator too.
                left.extend(leftovers(vendor, fake, own, guest))
    finally:
        for own in opened:
            if own is not backing:
                own.close_array()
        backing.teardown()
        release_all(run.ledger)
    for violation in violations:
        print(f"spec violation: {violation}", file=sys.stderr)
    for what in sorted(set(left)):
        print(f"left behind: {what}", file=sys.stderr)
    return 1 if violations or left else 0


def _write_lab(args: argparse.Namespace, vendor: Vendor, server: ContractServer, secret_file: Path, where: dict[str, str],
               several: bool) -> Path:
    """The lab file that points the vendor's driver at its served fake and the guest as the host; checked by load_lab."""
    options = {**vendor.options(server), "password": f"${{file:{secret_file}}}"}
    raw = yaml.safe_load(LABVM_LAB.read_text())
    raw.update(
        name=f"{vendor.name}-emulated",
        array={"name": f"{vendor.name}-emulated", "driver": vendor.name, "options": options},
        hosts=[{**h, **where} for h in raw["hosts"]],
        protocols=[p for p in raw["protocols"] if p["connector"] == vendor.protocol],
        baseline_protocol=next(p["name"] for p in raw["protocols"] if p["connector"] == vendor.protocol),
        workdir=str(args.dir / (f"work-{vendor.name}" if several else "work")),
    )
    raw.pop("criteria", None)  # labs/labvm.yaml's own spec judges the lab VM's target, not an emulated array
    if args.iops_per_volume == DEFAULT_IOPS_PER_VOLUME:
        raw["criteria"] = EMULATED_SPEC
    raw.pop("bring_up", None)  # the VM is up already, and not ours to bring down
    lab_file = args.dir / f"{vendor.name}-emulated.yaml"
    header = f"# Generated by selftests/vendors/emulate.py: {vendor.name} emulated over the lab VM.\n"
    lab_file.write_text(header + yaml.safe_dump(raw))
    load_lab(lab_file)  # the suite must accept it
    return lab_file


def leftovers(vendor: Vendor, fake: Any, backing: GuestBacking, guest: Initiator) -> list[str]:
    """What is still on the emulated array, of it in the guest, and of the run on the host (iSCSI sessions
    and NVMe controllers): [] when nothing."""
    left = [f"on the emulated {vendor.name}: {kind} {items}" for kind, items in vendor.leftovers(fake).items()]
    in_guest = backing.leftovers()
    if in_guest:
        left.append(f"in the guest, of the emulated array: {in_guest}")
    host = guest.run(
        "iscsiadm -m session 2>/dev/null; iscsiadm -m node 2>/dev/null; ls /sys/class/nvme 2>/dev/null; true"
    ).stdout.strip()
    if host:
        left.append(f"on the host (the guest): {host}")
    return left


if __name__ == "__main__":
    sys.exit(main())
