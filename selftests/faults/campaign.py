"""Helpers of the fault campaign: inject, time the detection, count what is left behind.

Each fault runs in a workdir of its own; `leftovers(work)` counts, by what the
kernel says, the loop devices backed by files under it, mounts under it,
processes whose command line names it, blkio cgroups of its runs, ledger
entries still open, bytes changed on devices no run provisioned (a
session-wide sentinel loop device, and each foreign device a fault offers,
snapshotted right before the fault), and network namespaces and veth links its
runs journalled (open or released) that the kernel still has. After each fault
(and a self-healing start where the controller died) every count must be 0.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from iogate.run.ledger import Ledger
from iogate.run.resources import marker_pids

BLKIO = Path("/sys/fs/cgroup/blkio")
NETNS = Path("/run/netns")
NET = Path("/sys/class/net")


@dataclass
class FaultRow:
    fault: str
    error: str
    detect_s: float
    went_on: bool
    leftovers: dict[str, int] = field(default_factory=dict)


ROWS: list[FaultRow] = []
SENTINELS: dict[Path, bytes] = {}  # backing image of a device no run may write -> its content at session start


def changed_bytes(before: bytes, after: bytes) -> int:
    """How many bytes differ (compared page by page: the images are tens of MiB)."""
    if before == after:
        return 0
    changed = abs(len(after) - len(before))
    for offset in range(0, min(len(before), len(after)), 4096):
        old, new = before[offset:offset + 4096], after[offset:offset + 4096]
        if old != new:
            changed += sum(a != b for a, b in zip(old, new, strict=True))
    return changed


def outside_bytes() -> int:
    return sum(changed_bytes(before, image.read_bytes()) for image, before in SENTINELS.items() if image.exists())


def leftovers(work: Path) -> dict[str, int]:
    root = str(work)
    loops = 0
    for entry in Path("/sys/block").glob("loop*"):
        try:
            loops += (entry / "loop" / "backing_file").read_text().strip().startswith(root)
        except OSError:
            continue
    mounts = sum(1 for line in Path("/proc/mounts").read_text().splitlines() if line.split()[1].startswith(root))
    runs = [p.parent for p in work.glob("runs/*/ledger.jsonl")]
    cgroups = sum(1 for run in runs if (BLKIO / f"iogate-{run.name}").exists())
    ledgers = [Ledger.load(run / "ledger.jsonl")[0] for run in runs]
    open_entries = sum(len(ledger.open_entries()) for ledger in ledgers)
    # Namespaces and links live outside the workdir: their names come from the journals, their existence from the kernel.
    netns = sum(1 for ledger in ledgers for entry in ledger.entries.values()
                if (entry.kind == "netns" and (NETNS / entry.attrs["name"]).exists())
                or (entry.kind == "veth" and (NET / entry.attrs["name"]).exists()))
    return {"loops": loops, "mounts": mounts, "processes": len(marker_pids(root)), "cgroups": cgroups, "ledger": open_entries,
            "outside_bytes": outside_bytes(), "netns": netns}


def detect(action: Callable[[], object], expected: type[BaseException]) -> tuple[str, float]:
    """Run the faulty step; return the error it raised (it must raise `expected`) and how long it took."""
    started = time.monotonic()
    try:
        action()
    except expected as exc:
        return str(exc), time.monotonic() - started
    raise AssertionError(f"the fault went unnoticed: no {expected.__name__}")


def table(rows: list[FaultRow]) -> list[str]:
    head = f"{'fault':<38} {'detect_s':>8} {'went on':>7}  {'left: loops/mounts/procs/cgroups/ledger/outside/netns':<54} error"
    lines = [head, "-" * len(head)]
    keys = ("loops", "mounts", "processes", "cgroups", "ledger", "outside_bytes", "netns")
    for row in rows:
        counts = "/".join(str(row.leftovers.get(k, "?")) for k in keys)
        lines.append(f"{row.fault:<38} {row.detect_s:>8.2f} {'yes' if row.went_on else 'NO':>7}  {counts:<54} "
                     f"{row.error.splitlines()[0][:160]}")
    return lines
