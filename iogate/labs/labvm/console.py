"""The lab VM's serial console, read after a failure: did the guest kernel die, and of what.

The guest boots with panic=1 oops=panic and qemu's -no-reboot (vm.KERNEL_ARGS): an oops ends qemu at
once, and the console (the run's labvm/serial.log) keeps the kernel's last words. Every test that
used that guest afterwards fails on "connection refused"; the oops is what names the cause.
"""

from __future__ import annotations

import re
from pathlib import Path

PANIC = re.compile(r"Kernel panic - not syncing")
# The first line of a kernel's report of its own fault (an oops, a BUG, a trap it cannot handle).
FAULT = re.compile(r"\] (Oops: |BUG: |general protection fault|traps: |kernel BUG at |Unable to handle)")
EXCERPT_MAX_LINES = 60  # an x86 oops with its call trace and module list is about 50 lines


def kernel_death(console: str) -> str | None:
    """The console's lines from the kernel's first fault report to its panic, or None when it did not panic.

    A panic with no fault report before it (a watchdog, a hung task with hung_task_panic) is its own line
    with the 10 lines before it."""
    lines = console.splitlines()
    panic_at = next((i for i, line in enumerate(lines) if PANIC.search(line)), None)
    if panic_at is None:
        return None
    fault_at = next((i for i, line in enumerate(lines[:panic_at]) if FAULT.search(line)), max(0, panic_at - 10))
    excerpt = lines[fault_at : panic_at + 1]
    if len(excerpt) > EXCERPT_MAX_LINES:
        skipped = len(excerpt) - EXCERPT_MAX_LINES + 1
        excerpt = [*excerpt[: EXCERPT_MAX_LINES - 2], f"[... {skipped} lines ...]", excerpt[-1]]
    return "\n".join(excerpt)


def kernel_death_in(serial_log: Path) -> str | None:
    """kernel_death of a console log file; None when there is no file (the guest never started)."""
    try:
        return kernel_death(serial_log.read_text(errors="replace"))
    except FileNotFoundError:
        return None
