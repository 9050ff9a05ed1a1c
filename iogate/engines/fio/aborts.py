"""fio's own aborts and interruptions, which only its text output tells.

fio refuses some jobs ("fio: /dev/loop0 appears mounted, and 'allow_mounted_write'
isn't set. Aborting.") with exit status 0 and a json whose jobs say error 0 and
did no I/O; read as results that is 0 IOPS and a passing error check. Both
engines look for the line in fio's stdout/stderr and raise instead. Likewise a fio
interrupted by a signal it did not get from IOGate ("fio: terminating on signal 2").
"""

from __future__ import annotations

import re
import signal

# A client/server line may carry the server's name before "fio:".
_ABORT = re.compile(r"^(?:<[^>]*>\s*)?(fio: .*\bAborting\b.*)$", re.MULTILINE)


def abort_message(text: str) -> str | None:
    """fio's first "fio: ... Aborting" line (None when it did not abort)."""
    match = _ABORT.search(text)
    return match.group(1).strip() if match else None


# fio's main process on SIGINT/SIGTERM (backend.c sig_int; a --server logs nothing itself: "fio: terminating on signal %d"); it still writes
# a report, which reads like a short clean run. A client/server line may carry the server's name first.
_TERMINATED = re.compile(r"^(?:<[^>]*>\s*)?fio: terminating on signal (?P<number>\d+)", re.MULTILINE)


def terminating_signal(text: str) -> int | None:
    """The signal fio said it was terminated by ("fio: terminating on signal 2"), None if it was not."""
    match = _TERMINATED.search(text)
    return int(match["number"]) if match else None


def signal_name(number: int) -> str:
    """SIGINT for 2, ... ("signal 99" for a number this platform does not name)."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def interrupted_message(text: str) -> str | None:
    """One line naming the signal that interrupted fio, None when fio ran to its end."""
    number = terminating_signal(text)
    if number is None:
        return None
    return (f"fio was interrupted by {signal_name(number)} (\"fio: terminating on signal {number}\"): "
            "its figures cover only the part of the run before the signal")
