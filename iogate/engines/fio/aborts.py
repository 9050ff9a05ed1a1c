"""fio's own aborts and interruptions, which only its text output tells.

fio refuses some jobs ("fio: /dev/loop0 appears mounted, and 'allow_mounted_write'
isn't set. Aborting.") with exit status 0 and a json whose jobs say error 0 and
did no I/O; read as results that is 0 IOPS and a passing error check. Both
engines look for the line in fio's stdout/stderr and raise instead. Likewise a fio
interrupted by a signal it did not get from IOGate ("fio: terminating on signal 2"),
and one killed outright (`unfinished`: its exit status; no line, no final report).
"""

from __future__ import annotations

import json
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


def _report_after(text: str) -> bool:
    """Whether a complete fio report (a json object with `jobs`) follows in `text`."""
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start >= 0:
        try:
            doc, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            return False
        if isinstance(doc, dict) and "jobs" in doc:
            return True
        start = text.find("{", end)
    return False


def unfinished(rc: int, text: str, *, stop_asked: bool, threads: int) -> str | None:
    """Why fio neither ran to its end nor ended as asked, None when it did (the engine's result stands).

    `text` is fio's stdout, stderr and output file, in that order; `threads` the jobs' clones (numjobs summed).
    fio's own exit value is the count of jobs that failed (I/O errors are judged, not an engine error); on
    SIGINT/SIGTERM it says "fio: terminating on signal N", sets 128 and writes a final report (fio 3.33,
    measured). So:

    * asked to stop (the live judge: our SIGINT) and fio said so and wrote its report after that line: as asked;
    * a signal fio caught that nobody here sent: interrupted (interrupted_message);
    * killed (a negative rc: the signal; 128 + N from a shell, or `timeout` re-raising it) with no line of its
      own: it died, and what its output holds is a status report, not the run's end (with --status-interval
      the file holds one each second): the point is lost, never a stopped or a short clean run.
    """
    if rc < 0:
        return (f"fio was killed by {signal_name(-rc)} (exit {rc}) before it wrote its final report: "
                "not a stop IOGate asked for; the point is lost")
    match = _TERMINATED.search(text)
    if match is not None:
        number = int(match["number"])
        if not (stop_asked and number == signal.SIGINT):
            return interrupted_message(text)
        if not _report_after(text[match.end():]):
            return (f"fio was stopped as asked (SIGINT) but ended without its final report (exit {rc}): "
                    "it died while stopping; the point is lost")
        return None
    if rc >= 128 and rc > threads:
        return (f"fio died: exit {rc} ({signal_name(rc - 128)}) without saying it was terminating, so killed by "
                f"someone else{' while IOGate was stopping it' if stop_asked else ''}; its output holds no final "
                "report: the point is lost")
    return None
