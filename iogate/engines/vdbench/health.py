"""Whether vdbench's own words say a run went wrong, whatever its files look like.

vdbench exits 157 on any failure, but it also finishes "successfully" after
warnings that make the numbers untrustworthy (the load host's CPU saturated,
skew not met, slave trouble). Any warning, abort, exception or termination
message in the console or logfile.html is an EngineError; so is a console
without vdbench's closing "completed successfully" line. The one exception is
the early end IOGate itself asked for (monitor file), when it did ask.

`tolerated` lets a caller accept named warnings, each with its reason in the
caller's code: CPU_WARNING is vdbench's notice that the *whole machine* averaged
over 80 % CPU during the run, which on a machine shared with other work says
nothing about this run (IOGate reports the host's CPU itself: cpu_busy_pct).
"""

from __future__ import annotations

import re

from iogate.errors import EngineError

BAD = re.compile(r"\bwarning\b|\babort|exception|terminat|\bfailure\b|prematurely", re.IGNORECASE)
OUR_STOP = re.compile(r"User requested early (Vdbench termination|shutdown of this run)")
DONE = "Vdbench execution completed successfully"
CPU_WARNING = re.compile(r"\* Warning for host=\S+: average processor utilization [\d.]+%")
# Warnings a lab file may accept by name (`vdbench_tolerate: [cpu]`); the product tolerates none
# unless the lab says so (fail closed).
TOLERABLE: dict[str, re.Pattern[str]] = {"cpu": CPU_WARNING}


def check(where: str, rc: int, console: str, logfile: str, *, stop_requested: bool,
          tolerated: tuple[re.Pattern[str], ...] = ()) -> None:
    tail = "\n".join(console.strip().splitlines()[-15:])
    if rc != 0:
        raise EngineError(f"{where}: vdbench exited {rc}" + (" (vdbench's failure code)" if rc == 157 else "") + f":\n{tail}")
    for source, text in (("console", console), ("logfile.html", logfile)):
        for line in text.splitlines():
            if not BAD.search(line) or (stop_requested and OUR_STOP.search(line)):
                continue
            if not any(pattern.search(line) for pattern in tolerated):
                raise EngineError(f"{where}: vdbench {source} says: {line.strip()[:300]}")
    if DONE not in console:
        raise EngineError(f"{where}: vdbench did not report completion:\n{tail}")
