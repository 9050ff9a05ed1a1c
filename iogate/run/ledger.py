"""Journal of every resource a run creates, written *before* the resource exists.

A run that is killed (SIGKILL, power loss, a crashed controller) leaves its
journal behind; `python -m iogate cleanup` walks it backwards and removes what is
still there. Every remover checks identity before it acts (a loop device is only
detached while it is still backed by the file we created, a process is only killed
while its command line still carries our marker), so cleanup never touches a
resource that merely has the same name.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from iogate.errors import LedgerError
from iogate.lab.secrets import redact

LEDGER_NAME = "ledger.jsonl"


@dataclass
class Entry:
    """One resource: its kind (see iogate.run.resources) and what identifies it."""

    id: int
    kind: str
    attrs: dict[str, Any]
    state: str = "intended"  # intended -> created -> released

    @property
    def open(self) -> bool:
        return self.state != "released"

    def describe(self) -> str:
        key = ", ".join(f"{k}={v}" for k, v in sorted(self.attrs.items()))
        return f"{self.kind}({key})"


@dataclass
class Ledger:
    """Append-only journal in one run directory.

    >>> ledger = Ledger.create(run_dir)
    >>> entry = ledger.intend("file", path="/var/tmp/iogate/x/pool.img")
    """

    path: Path
    run_id: str
    entries: dict[int, Entry] = field(default_factory=dict)
    # Event threads and per-host engine threads journal concurrently.
    _lock: threading.RLock = field(default_factory=threading.RLock, repr=False)

    @classmethod
    def create(cls, run_dir: Path) -> Ledger:
        run_dir.mkdir(parents=True, exist_ok=True)
        ledger = cls(path=run_dir / LEDGER_NAME, run_id=run_dir.name)
        ledger._append(
            {
                "op": "open",
                "run_id": ledger.run_id,
                "pid": os.getpid(),
                "pid_start": process_start_ticks(os.getpid()),
                "host": socket.gethostname(),
                "t": time.time(),
            }
        )
        return ledger

    @classmethod
    def load(cls, path: Path) -> tuple[Ledger, dict[str, Any]]:
        """Read a journal back; returns the ledger and its header (owner pid)."""
        ledger = cls(path=path, run_id=path.parent.name)
        header: dict[str, Any] = {}
        try:
            lines = path.read_text().splitlines()
        except OSError as exc:
            raise LedgerError(f"ledger {path}: cannot read: {exc}") from exc
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                # A torn last line is what a kill during write leaves; earlier ones are corruption.
                if number == len(lines):
                    continue
                raise LedgerError(f"ledger {path} line {number}: not JSON") from None
            ledger._apply(record, header)
        return ledger, header

    def _apply(self, record: dict[str, Any], header: dict[str, Any]) -> None:
        op = record["op"]
        if op == "open":
            header.update(record)
        elif op == "intend":
            self.entries[record["id"]] = Entry(record["id"], record["kind"], dict(record["attrs"]))
        elif op in ("created", "released"):
            entry = self.entries[record["id"]]
            entry.state = op
            entry.attrs.update(record.get("attrs", {}))

    def _append(self, record: dict[str, Any]) -> None:
        with self._lock:
            self._write(record)

    def _write(self, record: dict[str, Any]) -> None:
        try:
            with self.path.open("a") as handle:
                # Attributes may quote a command line (a remote undo); no resolved secret goes to disk.
                handle.write(redact(json.dumps(record, sort_keys=True)) + "\n")
                handle.flush()
                os.fsync(handle.fileno())
        except OSError as exc:
            raise LedgerError(f"ledger {self.path}: cannot write: {exc}") from exc

    def intend(self, kind: str, **attrs: Any) -> Entry:
        """Journal a resource about to be created; call before creating it."""
        with self._lock:
            entry = Entry(len(self.entries) + 1, kind, dict(attrs))
            self.entries[entry.id] = entry
            self._append({"op": "intend", "id": entry.id, "kind": kind, "attrs": attrs, "t": time.time()})
        return entry

    def created(self, entry: Entry, **attrs: Any) -> None:
        """Record that the resource exists, with what was learnt (e.g. its loop device)."""
        entry.state = "created"
        entry.attrs.update(attrs)
        self._append({"op": "created", "id": entry.id, "attrs": attrs, "t": time.time()})

    def hand_over(self, pid: int) -> None:
        """Make a long-lived process (a lab's daemon) the owner, so `cleanup` leaves the journal alone while it runs."""
        self._append({"op": "open", "run_id": self.run_id, "pid": pid, "pid_start": process_start_ticks(pid),
                      "host": socket.gethostname(), "t": time.time()})

    def released(self, entry: Entry) -> None:
        entry.state = "released"
        self._append({"op": "released", "id": entry.id, "t": time.time()})

    def open_entries(self, kind: str | None = None) -> list[Entry]:
        return [e for e in self.entries.values() if e.open and (kind is None or e.kind == kind)]


def process_start_ticks(pid: int) -> int | None:
    """Start time of a process in clock ticks since boot; tells a reused pid apart."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name may hold spaces and parentheses: split after the last ')'.
    fields = stat.rsplit(")", 1)[1].split()
    if fields[0] in ("Z", "X"):
        return None  # a zombie has ended; an init that does not reap (some VMs) keeps it listed
    return int(fields[19])


def owner_state(header: dict[str, Any]) -> str:
    """"alive" (same host, pid and start time), "gone" (no such process on this host, or the pid
    now belongs to a later process) or "elsewhere" (opened on another host: cannot be told here)."""
    if header.get("host") not in (None, socket.gethostname()):
        return "elsewhere"
    pid = header.get("pid")
    ticks = process_start_ticks(int(pid)) if pid is not None else None
    if ticks is None:
        return "gone"  # no such process (or a zombie): whatever the header says, nobody drives the run
    # A header without a start time (an old journal) cannot tell a reused pid: count it alive.
    return "alive" if header.get("pid_start") in (None, ticks) else "gone"


def owner_alive(header: dict[str, Any]) -> bool:
    """True while the process that opened the ledger still runs on this host (same pid, same start)."""
    return owner_state(header) == "alive"
