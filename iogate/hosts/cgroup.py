"""Putting a host's processes under the array's blkio cgroup when that host is this machine.

The local array's QoS is a cgroup v1 blkio throttle: it caps only the processes
inside the run's cgroup. fio run by the controller joins it as it starts (the
engines' `echo $$ > cgroup.procs`), but a host that is a network namespace of
this machine (the netns lab) serves I/O from long-lived processes started at
`lab up`: its sshd and its `fio --server`. Moving every process of the
namespace into the cgroup caps them all, and whatever they fork later (fio's
job processes, an SSH session's shell, vdbench's slaves) inherits the cgroup.
The cgroup's remover hands them back to its parent at the end of the run.
"""

from __future__ import annotations

import shlex
import subprocess
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from iogate.errors import HostError

PF_EXITING = 0x4  # include/linux/sched.h: the kernel skips an exiting task when it migrates a cgroup


def _exiting_or_gone(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    # Field 9 (flags) counts from after the ")" that closes the command name, which may hold spaces.
    return bool(int(stat.rsplit(")", 1)[1].split()[6]) & PF_EXITING)


def join(cgroup: str, pids: Iterable[int], owner: str) -> list[int]:
    """Move each live pid into `cgroup`; returns the pids moved. A pid that exits meanwhile is skipped
    (its children, if any, are listed by the caller too); any other refusal is an error naming `owner`."""
    procs = Path(cgroup, "cgroup.procs")
    moved = []
    for pid in pids:
        try:
            procs.write_text(f"{pid}\n")
        except OSError as exc:
            if _exiting_or_gone(pid):
                continue
            raise HostError(f"{owner}: cannot move process {pid} into {cgroup}: {exc}") from exc
        moved.append(pid)
    return moved


def namespace_pids(namespace: str) -> list[int]:
    """Every process whose network namespace is `namespace` (ip netns pids)."""
    done = subprocess.run(["ip", "netns", "pids", namespace], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise HostError(f"network namespace {namespace}: cannot list its processes: {done.stderr.strip()}")
    return [int(word) for word in done.stdout.split()]


def join_namespace(cgroup: str, namespace: str, host: str) -> list[int]:
    """Put every process of the host's namespace under `cgroup`; an error if none is left to move."""
    moved = join(cgroup, namespace_pids(namespace), f"host {host}")
    if not moved:
        raise HostError(f"host {host}: no process in network namespace {namespace} to put under {cgroup} "
                        "(is the lab up? `python -m iogate lab up LAB`)")
    return moved


def join_cgroup_shell(cgroup: str) -> str:
    """Shell that puts itself under `cgroup` (a cgroup v1 directory) unless it already runs there.

    A host that is a network namespace of this machine sees its own sysfs (`ip netns exec` mounts
    one), without the cgroup mounts: the echo cannot work there, and need not, since connecting the
    volume put that host's sshd, whose sessions inherit it, under the cgroup already. Elsewhere the
    echo joins it, or fails and says so in the console."""
    procs = f"echo $$ > {shlex.quote(f'{cgroup}/cgroup.procs')}"
    parts = PurePosixPath(cgroup).parts
    if parts[:4] != ("/", "sys", "fs", "cgroup") or len(parts) < 6:
        return procs
    # /proc/self/cgroup of cut, a child of this shell, lists the shell's cgroups: "N:blkio:/iogate-...".
    member = f"{parts[4]}:/{'/'.join(parts[5:])}"
    return f"{{ cut -d: -f2- /proc/self/cgroup | grep -qxF {shlex.quote(member)} || {procs}; }}"
