"""`python -m iogate labvm build|up|down`: the lab VM by hand.

`up` leaves qemu running after it returns and writes <workdir>/labvm.json (port,
key, run directory); `down` stops it through that run's ledger, so what `up`
made is exactly what `down` (or `iogate cleanup`) removes.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from iogate.errors import IOGateError
from iogate.labs.labvm import image as image_mod
from iogate.labs.labvm import vm as vm_mod
from iogate.run import Run
from iogate.run.ledger import Ledger
from iogate.run.resources import release_all

DEFAULT_WORKDIR = "/var/tmp/iogate"
STATE_NAME = "labvm.json"
LAB_PORT = 10022


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m iogate labvm", description="Build, boot and stop the qemu lab VM.")
    sub = parser.add_subparsers(dest="command", required=True)
    build = sub.add_parser("build", help="build the image into the cache (when missing or stale)")
    build.add_argument("--force", action="store_true", help="rebuild even when the cached image is current")
    up = sub.add_parser("up", help="boot the VM and wait for its sshd")
    up.add_argument("--memory-mib", type=int, default=2048)
    up.add_argument("--cpus", type=int, default=2)
    up.add_argument("--pool-size", default="16G", help="size of the array's pool disk (sparse)")
    up.add_argument("--port", type=int, default=LAB_PORT, help="SSH port on 127.0.0.1 (labs/labvm.yaml expects 10022)")
    up.add_argument("--tcg-threads", choices=vm_mod.TCG_THREADS, default=vm_mod.DEFAULT_TCG_THREADS,
                    help="qemu's vCPU threads: multi (the default, a thread per vCPU; criteria/emulated.yaml was "
                    "calibrated so) or single (one thread runs them in turn: 100 ms stalls, docs/selftests.md)")
    up.add_argument("--die-with-caller", action="store_true",
                    help="qemu gets PR_SET_PDEATHSIG(SIGKILL) and `up` stays in the foreground until qemu ends, "
                    "so killing the caller (even with SIGKILL) kills qemu")
    sub.add_parser("down", help="stop the VM that `up` started")
    for command in (build, up, sub.choices["down"]):
        command.add_argument("--workdir", default=DEFAULT_WORKDIR, help="where runs and the VM's state file live")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    state_path = Path(args.workdir) / STATE_NAME
    try:
        if args.command == "build":
            return _build(args.force)
        if args.command == "up":
            return _up(state_path, args, stay=args.die_with_caller)
        return _down(state_path)
    except IOGateError as exc:
        print(f"labvm {args.command}: {exc}")
        return 1


def _build(force: bool) -> int:
    started = time.monotonic()
    image = image_mod.ensure_image(force=force)
    facts = image.facts()
    print(
        f"image {image.root} ready in {time.monotonic() - started:.0f} s: kernel {facts['kernel_release']} "
        f"({facts.get('kernel_origin')}), vdo tools {facts.get('vdo_tools')}"
    )
    return 0


def up_with_caller(workdir: str | Path) -> int:
    """Boot the VM for this process (a pytest session) without waiting in the foreground: qemu is SIGKILLed by
    the kernel when the thread that called this exits (call it from the main thread), so a killed session
    leaves no qemu behind; `labvm down` or `iogate cleanup` still stop it the ordinary way."""
    args = _parser().parse_args(["up", "--workdir", str(workdir), "--die-with-caller"])
    return _up(Path(workdir) / STATE_NAME, args, stay=False)


def _up(state_path: Path, args: argparse.Namespace, *, stay: bool) -> int:
    if state_path.exists():
        state = json.loads(state_path.read_text())
        if _qemu_alive(state):
            print(f"lab VM already up: {state['transport']} (key {state['ssh_key']}); `labvm down` first")
            return 1
    image = image_mod.ensure_image()
    run = Run.start(args.workdir, "labvm")
    vm = vm_mod.boot(run, image, memory_mib=args.memory_mib, cpus=args.cpus, pool_size=args.pool_size, port=args.port,
                      die_with_caller=args.die_with_caller, tcg_threads=args.tcg_threads)
    state = {"transport": vm.transport, "ssh_key": vm.ssh_key, "pid": vm.pid, "marker": vm.marker, "run_dir": str(run.run_dir)}
    state_path.write_text(json.dumps(state, indent=2) + "\n")
    print(f"lab VM up in {vm.boot_seconds:.0f} s: {vm.transport} (key {vm.ssh_key}); ssh -i {vm.ssh_key} -p {vm.port} root@127.0.0.1",
          flush=True)
    if stay:
        # qemu dies with this process (PDEATHSIG, set from the main thread): stay here until qemu ends.
        while vm.alive():
            time.sleep(2)
        vm.stop()
        state_path.unlink(missing_ok=True)
    return 0


def is_up(workdir: str | Path = DEFAULT_WORKDIR) -> bool:
    """True while the VM that `labvm up` started under workdir still runs."""
    return running_marker(workdir) is not None


def running_marker(workdir: str | Path = DEFAULT_WORKDIR) -> str | None:
    """The qemu marker of the VM that `labvm up` started under workdir, while it runs."""
    state_path = Path(workdir) / STATE_NAME
    state = json.loads(state_path.read_text()) if state_path.exists() else None
    return str(state["marker"]) if state and _qemu_alive(state) else None


def _qemu_alive(state: dict[str, object]) -> bool:
    try:
        cmdline = Path(f"/proc/{state['pid']}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return False
    return str(state["marker"]) in cmdline


def _down(state_path: Path) -> int:
    if not state_path.exists():
        print(f"no lab VM state at {state_path}: nothing to stop")
        return 0
    state = json.loads(state_path.read_text())
    ledger, _ = Ledger.load(Path(state["run_dir"]) / "ledger.jsonl")
    for line in release_all(ledger):
        print(line)
    # A `labvm up --die-with-caller` still waiting on qemu removes the state itself once qemu is gone.
    state_path.unlink(missing_ok=True)
    return 0
