"""Run a command against emulated vendor labs, end to end: `python -m selftests.vendors.emulated_run`.

    python -m selftests.vendors.emulated_run pure,powerstore,ontap -- \\
        python -m pytest tests -m "baseline or tiles or events" --profile smoke --lab {lab}

Boots a lab VM of its own (its own port and working directory, so a lab VM of
the labvm tier or of `labvm up` is never touched), then for each vendor in turn
starts the emulated array (selftests/vendors/emulate.py: the backed,
spec-checked fake over the guest, capped at its service level), runs the command
with `{lab}` replaced by the generated lab file and `{vendor}` by the vendor's
name, and stops the emulator (which removes its backing from the guest and fails
on any spec violation it saw). The VM goes down at the end, whatever happened:
even a SIGKILLed emulated_run takes qemu with it (`labvm up --die-with-caller`).
Exit status: 0 only when every command and every emulator ended with 0; the
emulator ends with 1 when anything is left on the fake array, of it in the guest,
or as an iSCSI session / NVMe controller on the host (emulate.py leftovers).

With `--kill-after S` the command is SIGKILLed S seconds after it started (its
whole process group, as a crashed controller), then `python -m iogate cleanup
--workdir <the lab's workdir>` runs, and the emulator's own check says whether
anything was left: the crash-cleanup acceptance of an emulated array.

    python -m selftests.vendors.emulated_run vast --kill-after 240 -- \\
        python -m pytest tests -m "baseline or tiles or events" --profile smoke --lab {lab}

With `--together` the vendors are served at once by one emulator (one pool in the guest, each vendor its
own array on it: emulate.py) and the command runs once, `{labs}` replaced by `--lab <file>` per vendor in
the order named: a bake-off of the emulated arrays in one pytest session.

    python -m selftests.vendors.emulated_run pure,ontap,huawei --together -- \\
        python -m pytest tests -m baseline --profile smoke {labs}
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import yaml

from iogate.labs.labvm.cli import STATE_NAME
from iogate.labs.labvm.vm import DEFAULT_TCG_THREADS, TCG_THREADS, die_with_parent, free_port, launch
from selftests.vendors.behaviour.conftest import VENDORS
from selftests.vendors.emulate import DEFAULT_IOPS_PER_VOLUME

ROOT = Path(__file__).resolve().parents[2]
INTERRUPTED = 2  # what pytest and a Python tool interrupted by ^C exit with (pytest's ExitCode.INTERRUPTED)


def _labvm(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "iogate", "labvm", *args], cwd=ROOT, check=True)


def _labvm_up(vm_dir: Path, tcg_threads: str = DEFAULT_TCG_THREADS) -> subprocess.Popen[bytes]:
    """`labvm up --die-with-caller` in the foreground of a child that itself dies with this process: a SIGKILLed
    emulated_run takes the child and so qemu with it. Returns once the child says the VM is up."""
    argv = [sys.executable, "-m", "iogate", "labvm", "up", "--die-with-caller", "--workdir", str(vm_dir), "--port", str(free_port()),
            "--tcg-threads", tcg_threads]
    child = launch(argv, stdout=subprocess.PIPE, die_with_caller=True)
    assert child.stdout is not None
    said = []
    for raw in child.stdout:
        line = raw.decode(errors="replace").rstrip()
        print(line, flush=True)
        said.append(line)
        if line.startswith("lab VM up"):
            return child
    child.wait()
    raise SystemExit(f"emulated_run: `labvm up` ended with {child.returncode} before the VM was up: {' | '.join(said[-5:])}")


def _start_emulator(vendor: str, state: dict[str, str], where: Path, iops: int) -> tuple[subprocess.Popen[str], Path]:
    emulator, (lab,) = _start_emulators([vendor], state, where, iops)
    return emulator, lab


def _start_emulators(vendors: list[str], state: dict[str, str], where: Path, iops: int) -> tuple[subprocess.Popen[str], list[Path]]:
    """One emulator serving `vendors` at once; its lab files, one per vendor in order, once every array serves."""
    argv = [sys.executable, "-m", "selftests.vendors.emulate", ",".join(vendors), "--transport", state["transport"],
            "--ssh-key", state["ssh_key"], "--dir", str(where), "--iops-per-volume", str(iops)]
    emulator = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, text=True, preexec_fn=die_with_parent)  # main thread
    assert emulator.stdout is not None
    labs = []
    for vendor in vendors:
        line = emulator.stdout.readline().strip()  # the vendor's lab file, once its array serves; '' if it ended
        if not line:
            emulator.send_signal(signal.SIGTERM)  # the arrays already served go down with their backing
            emulator.wait()
            raise SystemExit(f"emulated {vendor}: the emulator ended before it served (exit {emulator.returncode})")
        labs.append(Path(line))
    return emulator, labs


def expand_labs(command: list[str], labs: list[Path]) -> list[str]:
    """The command with the word `{labs}` replaced by `--lab <file>` per lab (other words as they are)."""
    return [word for item in command for word in
            ([w for lab in labs for w in ("--lab", str(lab))] if item == "{labs}" else [item])]


def _together(vendors: list[str], state: dict[str, str], args: argparse.Namespace, command: list[str]) -> list[str]:
    """Every vendor served at once, the command run once over all their labs: what failed ([] for nothing)."""
    failed = []
    emulator, labs = _start_emulators(vendors, state, args.workdir / "together", args.iops_per_volume)
    try:
        argv_v = expand_labs(command, labs)
        print(f"emulated {','.join(vendors)} together: {shlex.join(argv_v)}", flush=True)
        returncode = subprocess.run(argv_v, cwd=ROOT, check=False).returncode
        if returncode != 0:
            failed.append("command")
        if returncode < 0 or returncode == INTERRUPTED:
            raise KeyboardInterrupt
    finally:
        if _stop_emulator(emulator) != 0:
            failed.append("emulator (spec violations or a backing left behind)")
    return failed


def _stop_emulator(emulator: subprocess.Popen[str]) -> int:
    emulator.send_signal(signal.SIGTERM)
    return emulator.wait()


def _killed_run(argv_v: list[str], lab: Path, kill_after_s: float) -> int:
    """The command SIGKILLed after kill_after_s, then `iogate cleanup` of its lab's workdir: cleanup's exit status,
    or 1 when the command ended before it could be killed (nothing was tested)."""
    started = time.monotonic()
    child = subprocess.Popen(argv_v, cwd=ROOT, start_new_session=True)
    try:
        child.wait(timeout=kill_after_s)
        print(f"emulated_run: the command ended (exit {child.returncode}) before the kill at {kill_after_s:g} s", file=sys.stderr)
        return 1
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        child.wait()
    print(f"emulated_run: SIGKILLed the run after {time.monotonic() - started:.0f} s", flush=True)
    workdir = yaml.safe_load(lab.read_text())["workdir"]
    done = subprocess.run([sys.executable, "-m", "iogate", "cleanup", "--workdir", workdir], cwd=ROOT, check=False)
    return done.returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("vendors", help=f"comma-separated, of {', '.join(sorted(VENDORS))}")
    parser.add_argument("--workdir", type=Path, default=Path("/var/tmp/iogate-emulated-run"))
    parser.add_argument("--iops-per-volume", type=int, default=DEFAULT_IOPS_PER_VOLUME)
    parser.add_argument("--together", action="store_true",
                        help="serve every vendor at once and run the command once, {labs} = --lab per vendor")
    parser.add_argument("--tcg-threads", choices=TCG_THREADS, default=DEFAULT_TCG_THREADS,
                        help="the lab VM's (`iogate labvm up --tcg-threads`)")
    parser.add_argument("--kill-after", type=float, default=None, metavar="S",
                        help="SIGKILL the command after S seconds, then `iogate cleanup` its lab's workdir")
    argv = sys.argv[1:] if argv is None else argv
    split = argv.index("--") if "--" in argv else len(argv)
    args = parser.parse_args(argv[:split])
    command = argv[split + 1:]  # after --: the command, with {lab} and {vendor}
    vendors = [v for v in args.vendors.split(",") if v]
    unknown = [v for v in vendors if v not in VENDORS]
    if unknown or not vendors or not command:
        parser.error(f"vendors from {sorted(VENDORS)} and a command after --; unknown: {unknown}")
    if args.together and (args.kill_after is not None or "{labs}" not in command or len(set(vendors)) != len(vendors)):
        parser.error("--together: each vendor once, the word {labs} in the command, and no --kill-after")
    args.workdir.mkdir(parents=True, exist_ok=True)
    vm_dir = args.workdir / "vm"
    up = _labvm_up(vm_dir, args.tcg_threads)
    failed: list[str] = []
    try:
        state = json.loads((vm_dir / STATE_NAME).read_text())
        if args.together:
            failed.extend(_together(vendors, state, args, command))
        for vendor in [] if args.together else vendors:
            emulator, lab = _start_emulator(vendor, state, args.workdir / vendor, args.iops_per_volume)
            try:
                argv_v = [word.replace("{lab}", str(lab)).replace("{vendor}", vendor) for word in command]
                print(f"emulated {vendor}: {shlex.join(argv_v)}", flush=True)
                if args.kill_after is None:
                    returncode = subprocess.run(argv_v, cwd=ROOT, check=False).returncode
                else:
                    returncode = _killed_run(argv_v, lab, args.kill_after)
                if returncode != 0:
                    failed.append(f"{vendor}: command")
                if returncode < 0 or returncode == INTERRUPTED:  # a ^C reaches the command too: stop here
                    raise KeyboardInterrupt
            finally:
                if _stop_emulator(emulator) != 0:
                    failed.append(f"{vendor}: emulator (spec violations or a backing left behind)")
    finally:
        _labvm("down", "--workdir", str(vm_dir))
        up.wait(timeout=120)  # it leaves once qemu has ended
    for item in failed:
        print(f"emulated_run: failed: {item}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
