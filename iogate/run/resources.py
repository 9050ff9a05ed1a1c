"""Local resources the ledger tracks, and how each kind is removed safely.

Each remover takes the journalled attributes, checks that the thing is still ours
(by identity, not by name) and removes it; it returns a line for the cleanup
report, or None when there was nothing left to remove. Removers are idempotent.
Adding a kind = one function and one line in REMOVERS.
"""

from __future__ import annotations

import errno
import os
import shutil
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from iogate import shell
from iogate.errors import IOGateError
from iogate.run.ledger import Entry, Ledger, owner_alive, owner_state, process_start_ticks

CGROUP_DRAIN_S = 10.0  # how long a cgroup's exiting tasks may keep it busy before its removal fails

Remover = Callable[[dict[str, Any]], str | None]


def loop_backing_file(device: str) -> str | None:
    """The backing file of /dev/loopN as the kernel reports it, or None if detached."""
    name = Path(device).name
    try:
        return Path(f"/sys/block/{name}/loop/backing_file").read_text().strip()
    except OSError:
        return None


def loops_backed_by(backing_file: str) -> list[str]:
    """All loop devices currently backed by this file (the kernel's view)."""
    found = []
    for entry in Path("/sys/block").glob("loop*"):
        if loop_backing_file(f"/dev/{entry.name}") == backing_file:
            found.append(f"/dev/{entry.name}")
    return sorted(found)


def _remove_loop(attrs: dict[str, Any]) -> str | None:
    devices = loops_backed_by(attrs["backing_file"])
    for device in devices:
        shell.run(["losetup", "-d", device])
    return f"detached {', '.join(devices)} ({attrs['backing_file']})" if devices else None


def _remove_mount(attrs: dict[str, Any]) -> str | None:
    target = attrs["target"]
    mounted = any(line.split()[1] == target for line in Path("/proc/mounts").read_text().splitlines())
    if not mounted:
        return None
    done = shell.run(["umount", target], check=False)
    if done.returncode != 0:
        shell.run(["umount", "-l", target])
        return f"unmounted {target} (lazily: it was busy)"
    return f"unmounted {target}"


def _remove_cgroup(attrs: dict[str, Any]) -> str | None:
    path = Path(attrs["path"])
    if not path.is_dir():
        return None
    # A cgroup with tasks cannot be removed: hand them back to the parent first. A task still exiting
    # cannot be moved and keeps the cgroup busy until it is gone (seen: 16 fio hosts ending on a slow
    # disk), so the removal is tried again, moving what is left, until CGROUP_DRAIN_S have passed.
    parent_procs = path.parent / "cgroup.procs"
    deadline = time.monotonic() + CGROUP_DRAIN_S
    while True:
        for pid in (path / "cgroup.procs").read_text().split():
            try:
                parent_procs.write_text(pid)
            except OSError:
                pass
        try:
            path.rmdir()
        except OSError as exc:
            if exc.errno != errno.EBUSY or time.monotonic() > deadline:
                raise
            time.sleep(0.1)
            continue
        return f"removed cgroup {path}"


def marker_pids(marker: str) -> list[int]:
    """Pids (other than ours) whose command line contains the marker: what the "process" remover kills."""
    pids = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in cmdline:
            pids.append(int(proc.name))
    return sorted(pids)


def _remove_process(attrs: dict[str, Any]) -> str | None:
    """Kill processes whose command line carries the run's marker (e.g. its job file).

    Listed again after each kill: a fio killed while it starts forks its job processes after the
    first listing, and an orphaned job waits for its dead parent forever."""
    killed: list[int] = []
    for _ in range(3):
        pids = [p for p in marker_pids(attrs["marker"]) if p not in killed]
        if not pids:
            break
        for pid in pids:
            _signal(pid, signal.SIGTERM)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and any(process_start_ticks(p) is not None for p in pids):
            time.sleep(0.1)
        for pid in pids:
            _signal(pid, signal.SIGKILL)
        killed += pids
        deadline = time.monotonic() + 2
        while time.monotonic() < deadline and any(process_start_ticks(p) is not None for p in pids):
            time.sleep(0.05)
    if not killed:
        return None
    return f"killed {attrs.get('name', 'process')} pid {', '.join(map(str, killed))}"


def _signal(pid: int, sig: signal.Signals) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def _remove_file(attrs: dict[str, Any]) -> str | None:
    path = Path(attrs["path"])
    if not path.exists():
        return None
    path.unlink()
    return f"deleted {path}"


def _remove_dir(attrs: dict[str, Any]) -> str | None:
    path = Path(attrs["path"])
    if not path.is_dir():
        return None
    shutil.rmtree(path)
    return f"deleted directory {path}"


REMOVERS: dict[str, Remover] = {
    "process": _remove_process,
    "loop": _remove_loop,
    "mount": _remove_mount,
    "cgroup": _remove_cgroup,
    "file": _remove_file,
    "dir": _remove_dir,
}


# Kinds whose remover lives in the module that creates them; release() imports it on
# demand, so `cleanup` in a fresh process knows every kind a ledger may hold.
REMOVER_MODULES: dict[str, str] = {
    "netns": "iogate.labs.netns",
    "veth": "iogate.labs.netns",
    "remote": "iogate.hosts.remote",
    "vendor_object": "iogate.arrays.rest_common",
}


def _remover(kind: str) -> Remover | None:
    if kind not in REMOVERS and kind in REMOVER_MODULES:
        import importlib

        importlib.import_module(REMOVER_MODULES[kind])
    return REMOVERS.get(kind)


def register_remover(kind: str, remover: Remover) -> None:
    """Let a module that creates a new kind of resource (netns, VM) teach cleanup."""
    REMOVERS[kind] = remover


def release_all(ledger: Ledger) -> list[str]:
    """Remove every open resource of a ledger, newest first; return what was done."""
    return release(ledger, ledger.open_entries())


def release(ledger: Ledger, entries: list[Entry]) -> list[str]:
    """Remove the given resources, newest first.

    Keeps going after a failure so one stuck resource does not leak the rest, and
    raises at the end naming every resource that could not be removed.
    """
    report: list[str] = []
    failures: list[str] = []
    for entry in sorted((e for e in entries if e.open), key=lambda e: e.id, reverse=True):
        remover = _remover(entry.kind)
        if remover is None:
            failures.append(f"{entry.describe()}: no remover for kind {entry.kind!r}")
            continue
        try:
            line = remover(entry.attrs)
        except (OSError, IOGateError) as exc:
            failures.append(f"{entry.describe()}: {exc}")
            continue
        if line:
            report.append(line)
        ledger.released(entry)
    if failures:
        raise IOGateError("could not release: " + "; ".join(failures))
    return report


def cleanup(workdir: Path, *, include_live: bool = False) -> list[str]:
    """Release what dead runs under workdir left behind; skip runs still alive."""
    from iogate.lab import registry  # noqa: F401  (its modules register removers of their kinds)

    report: list[str] = []
    for path in sorted((workdir / "runs").glob("*/ledger.jsonl")):
        ledger, header = Ledger.load(path)
        if not ledger.open_entries():
            continue
        if owner_alive(header) and not include_live:
            report.append(f"run {ledger.run_id}: still running (pid {header.get('pid')}), left alone")
            continue
        lines = release_all(ledger)
        report.extend(f"run {ledger.run_id}: {line}" for line in lines)
    return report


@dataclass
class HealReport:
    """What a session start found in its workdir: dead runs cleaned, live ones left alone."""

    cleaned: list[str] = field(default_factory=list)  # run id: what was removed
    left_alone: list[str] = field(default_factory=list)  # run id: why (alive, another host)
    failed: list[str] = field(default_factory=list)  # run id: what could not be removed

    def summary(self) -> str:
        runs = {line.split(":", 1)[0] for line in self.cleaned}
        parts = [f"cleaned {len(self.cleaned)} leftover resource(s) of {len(runs)} dead run(s)"] if self.cleaned else []
        parts += [f"left {len(self.left_alone)} live run(s) alone"] if self.left_alone else []
        parts += [f"could not clean {len(self.failed)} run(s)"] if self.failed else []
        return "; ".join(parts)


def heal(workdir: Path | str) -> HealReport:
    """Release what runs under workdir left when their controller died (host, pid and start time
    in the ledger say so); a run whose controller lives, or that another host opened, is never
    touched. Called at every session start so a SIGKILLed session does not leave the next one
    running beside its loop devices, mounts, fio processes and cgroups."""
    from iogate.lab import registry  # noqa: F401  (its modules register removers of their kinds)

    report = HealReport()
    for path in sorted((Path(workdir) / "runs").glob("*/ledger.jsonl")):
        try:
            ledger, header = Ledger.load(path)
        except (IOGateError, KeyError, TypeError) as exc:  # a journal hand-edited or torn mid-record
            report.failed.append(f"{path.parent.name}: unreadable journal {path}: {exc!r}")
            continue
        if not ledger.open_entries():
            continue
        state = owner_state(header)
        if state != "gone":
            where = f"pid {header.get('pid')}" if state == "alive" else f"host {header.get('host')}"
            report.left_alone.append(f"{ledger.run_id}: controller {state} ({where}), left alone")
            continue
        try:
            lines = release_all(ledger)
        except IOGateError as exc:
            report.failed.append(f"{ledger.run_id}: {exc}")
            continue
        gone = f"controller pid {header.get('pid')} gone"
        report.cleaned.extend(f"{ledger.run_id}: {line} ({gone})" for line in lines or ["journal closed, nothing was left"])
    return report
