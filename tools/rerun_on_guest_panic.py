"""Run a lab VM tier; when it failed because the guest's kernel panicked, run it once more.

    python tools/rerun_on_guest_panic.py -- .venv/bin/python -m pytest selftests/labvm

The lab VM is an emulated machine (qemu TCG, no KVM here): its kernel has died mid-run in
the gate, once (a double fault in the slab allocator under iSCSI load, CI of 2026-12-07), and
every test after it failed on "connection refused". That is the emulator's failure, not
IOGate's, so the gate must not go red on it, nor hide it. The command runs with
IOGATE_GUEST_PANIC_RECORD naming a file where the lab VM fixture writes the guest's
console from the kernel's fault report to its panic (selftests/labvm/fixtures.py). A
failed run with such a record is run once more, on a fresh guest, after the record is
printed; the second run's exit is the result, and a second panic prints its record too.
A failure with no panic in the record is the result at once: nothing else is retried.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

RECORD_ENV = "IOGATE_GUEST_PANIC_RECORD"
PASSED_OR_EMPTY = (0, 5)  # pytest: all passed / nothing collected


def run_once(command: list[str], record: Path) -> tuple[int, str]:
    """The command's exit status and the panic record it left (empty: the guest's kernel did not panic)."""
    record.write_text("")
    status = subprocess.run(command, env={**os.environ, RECORD_ENV: str(record)}, check=False).returncode
    return status, record.read_text(errors="replace").strip()


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    command = args[1:] if args[:1] == ["--"] else args
    if not command:
        print("usage: rerun_on_guest_panic.py -- COMMAND...", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="iogate-panic-") as scratch:
        record = Path(scratch) / "panic.txt"
        status, panic = run_once(command, record)
        if status in PASSED_OR_EMPTY or not panic:
            return status
        print(f"\nthe lab VM's guest kernel panicked during this run (exit {status}); its console:\n{panic}\n"
              "that is the emulated guest's failure, not a test's: running the tier once more on a fresh guest", flush=True)
        status, panic = run_once(command, record)
        if panic:
            print(f"\nthe guest kernel panicked again (exit {status}); its console:\n{panic}", flush=True)
        print(f"the tier's second run: exit {status}", flush=True)
        return status


if __name__ == "__main__":
    sys.exit(main())
