"""A load process on a lab host (fio, vdbench), journalled so that cleanup can stop it after a crash.

Cleanup recognises the process by a marker its command line carries (the run point's job file
or parmfile path, unique to the run), never by name. Where it looks depends on whose processes
the host's are:
- this machine, or a network namespace of it (`namespace:`): the controller sees the process
  itself and kills it by marker (kind "process", iogate/run/resources.py);
- any other host (a real initiator, the lab VM's guest): the controller sees only its own ssh
  client, so the kill runs on the host, over the journalled transport (kind "remote", with
  KILL_SCRIPT as its undo). Without it a crashed run's fio would write on until its own deadline
  (runtime + grace) while cleanup unmapped and deleted its volume.
"""

from __future__ import annotations

import re

from iogate.errors import HostError
from iogate.hosts import remote
from iogate.hosts.initiator import Initiator
from iogate.run.ledger import Entry, Ledger
from iogate.run.resources import release

# What a marker may hold: the paths IOGate builds (run ids, point and host names). Anything else
# would need quoting inside a regular expression and a shell word at once.
_MARKER = re.compile(r"/[A-Za-z0-9/._+-]+")

# TERM, up to 5 s to go, then KILL, up to 2 s; exit 1 naming the pids still there (I/O a frozen
# array holds in the kernel). The pattern brackets the marker's first character so that it never
# matches the shell running this script, whose command line carries the pattern, not the marker.
KILL_SCRIPT = (
    "p={pattern}; pkill -TERM -f -- \"$p\"; i=0; "
    "while pgrep -f -- \"$p\" >/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done; "
    "pkill -KILL -f -- \"$p\"; i=0; "
    "while pgrep -f -- \"$p\" >/dev/null && [ $i -lt 20 ]; do sleep 0.1; i=$((i+1)); done; "
    "left=$(pgrep -f -- \"$p\" | tr '\\n' ' '); "
    "[ -z \"$left\" ] || {{ echo \"processes matching $p survive SIGKILL: $left\" >&2; exit 1; }}"
)


def shares_processes(host: Initiator) -> bool:
    """Are the host's processes this machine's (the controller sees and can kill them itself)?"""
    return host.is_local or host.config.namespace is not None


def pattern(marker: str) -> str:
    """An extended regular expression matching the marker, whose own text does not contain it."""
    if not _MARKER.fullmatch(marker):
        raise ValueError(f"process marker {marker!r}: expected an absolute path of [A-Za-z0-9/._+-]")
    escaped = re.sub(r"([.+])", r"[\1]", marker[1:])
    # Ends where the argument ends: run point p1's marker must not match p10's.
    return f"[{marker[0]}]{escaped}( |$)"


def kill_script(marker: str) -> str:
    return KILL_SCRIPT.format(pattern=f"'{pattern(marker)}'")


def journal(ledger: Ledger, host: Initiator, name: str, marker: str) -> Entry:
    """Journal a process about to start on `host` whose command line carries `marker`."""
    if shares_processes(host):
        return ledger.intend("process", name=name, marker=marker, host=host.name)
    return remote.intend(ledger, host, f"{name} ({marker})", kill_script(marker))


def ended(ledger: Ledger, entry: Entry, host: Initiator, *, exited_cleanly: bool) -> None:
    """The command that ran the process on `host` has returned, or its transport broke.

    On this machine whatever still carries the marker is killed, as before. On a remote host a
    clean exit (0) leaves nothing behind (the process reaped its children), nor does a lab VM that is
    gone (HostConfig.vanishes_with): no extra round trip.
    Otherwise the kill runs there now, over the session's own transport; where the host cannot be
    reached (the very failure being reported, perhaps) the entry stays journalled, so the session's
    teardown or `iogate cleanup` tries again and names it, and the caller's own error is the one raised."""
    if entry.kind != remote.KIND:
        release(ledger, [entry])
        return
    if not exited_cleanly and not remote.vanished(entry.attrs):
        try:
            # One try: a lost host must not hold the point's own error back by a round of connect retries.
            host.run(entry.attrs["undo"], attempts=1)
        except HostError:
            return
    ledger.released(entry)
