"""Was the load generator fit to measure? A host whose CPU was saturated over a run point.

An initiator busy beyond GENERATOR_CPU_BUSY_MAX_PCT (all CPUs, /proc/stat's first
eight fields (iogate/metrics/hostcpu.py), over the run point: RunResult.cpu_busy_pct)
queues its own I/O behind its own work, or behind whatever else runs on it: a
throughput or latency figure it measured is the host's, not the array's. vdbench
says the same of its own slaves (its "cpu%" columns are there for that). Such a
figure can neither pass nor fail the array: a verdict judged on it is an invalid
measurement (plugins/verdicts.py), never a pass (never stored as one, never a
baseline, never a calibration value) and never an array defect.

The excuse is narrow (`invalid_reason`): it covers only a verdict judged on the run
point and host that were saturated (Verdict.point, Verdict.host). It never covers
an error count (errors are counted, not timed), a no-data verdict (the array
delivered nothing to judge, however busy the host), a failed verdict that names no
run point (nothing shows it was judged on the saturated one), nor a target miss or
a stall (0 IOPS in an interval) of a VM whose own host was fit in that point. A passed verdict that names no run point
could have been judged on any of the test's points: in a test with a saturated
point it is invalid (fail closed both ways).

Where the lab's array runs on the initiator's own CPUs (the local and netns labs:
the loop devices' workers, nbdkit, the dedupe pass; the lab VM whose guest is both target
and initiator), the array's work counts in that host's /proc/stat too: the reason
says so (`hosts_sharing_array_cpus`), since there a busy host may be the array.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from iogate.metrics.types import RunResult
from iogate.verdict import Unit, Verdict

if TYPE_CHECKING:
    from iogate.lab import Lab

# Beyond this, fio's own submission and completion threads wait for a CPU: latency and IOPS figures
# then carry the host's scheduling delay (2-core CI machines reach 100 % when anything else runs).
GENERATOR_CPU_BUSY_MAX_PCT = 90.0

# What a no-data verdict's detail starts with (iogate/judging/common.py no_data).
NO_DATA_PREFIX = "no data:"


@dataclass(frozen=True)
class SaturatedHost:
    point: str
    host: str
    busy_pct: float

    def line(self) -> str:
        return f"host {self.host} was {self.busy_pct:.1f} % CPU busy over run point {self.point}"


def saturated_hosts(points: Iterable[tuple[str, RunResult]],
                    limit_pct: float = GENERATOR_CPU_BUSY_MAX_PCT) -> list[SaturatedHost]:
    """Every (run point, host) whose CPU busy % over the run reached `limit_pct`."""
    return [SaturatedHost(point, host, busy) for point, result in points
            for host, busy in sorted(result.cpu_busy_pct.items()) if busy >= limit_pct]


def judged_on(inputs: Iterable[Any]) -> dict[str, str]:
    """The run point (and host, when it ran on one host only) a criterion's inputs came from, as Verdict fields:
    {"point": name, "host": host or ""} when exactly one RunResult is among them, else {} (not known)."""
    runs = {id(item): item for item in inputs if isinstance(item, RunResult)}
    if len(runs) != 1:
        return {}
    (run,) = runs.values()
    hosts = {job.host for job in run.jobs}
    return {"point": run.name, "host": next(iter(hosts)) if len(hosts) == 1 else ""}


def is_no_data(verdict: Verdict) -> bool:
    """A verdict that had nothing to judge (iogate/judging/common.py no_data): NaN measured, or its detail says so
    anywhere (a family may put its finding ahead of the criterion's detail)."""
    return math.isnan(verdict.measured) or NO_DATA_PREFIX in verdict.detail


# How a window names a VM that completed no I/O in some interval (iogate/metrics/windows.py `stalls`):
# "h1/vm3: 0 IOPS in 6 of 10 intervals of the event window".
_STALLED_VM = re.compile(r"([^\s/;:]+)/[^\s;:]+: 0 IOPS in \d+ of \d+ intervals")


def missed_vm_hosts(verdict: Verdict) -> set[str]:
    """Hosts of the VMs a failed verdict names as missed: its evidence rows ("vm": "host/job", "passed": False,
    target_iops_held) and the VMs its detail says stalled (0 IOPS in an interval: throughput_impact)."""
    missed = {str(row["vm"]).split("/", 1)[0] for row in verdict.evidence
              if row.get("passed") is False and "/" in str(row.get("vm", ""))}
    return missed | set(_STALLED_VM.findall(verdict.detail))


def hosts_sharing_array_cpus(lab: Lab) -> dict[str, str]:
    """host -> why the lab's array runs on that host's CPUs (its work then counts in the host's /proc/stat)."""
    shared: dict[str, str] = {}
    array_transport = str(lab.array.options.get("transport", ""))
    for host in lab.hosts:
        if lab.array.driver == "local" and (host.transport.startswith("local://") or host.namespace):
            shared[host.name] = (f"lab {lab.name}'s array (driver local: loop devices and their kernel workers, nbdkit, "
                                 "its dedupe pass) runs on this machine's CPUs, so its work counts in this host's /proc/stat")
        elif array_transport and array_transport == host.transport:
            shared[host.name] = (f"lab {lab.name}'s array (driver {lab.array.driver}) runs in this host itself, "
                                 "so its work counts in this host's /proc/stat")
    return shared


def _reason(hits: Sequence[SaturatedHost], shared: Mapping[str, str], what: str) -> str:
    """"generator saturated: host h2 was 93.0 % CPU busy over run point p, fit to measure below 90 %: <what> measured
    the initiator, not the array", then, per host whose CPUs the array shares, why its busy % may be the array's."""
    sharing = [f"host {host}: {shared[host]}" for host in dict.fromkeys(s.host for s in hits) if host in shared]
    return (f"generator saturated: {'; '.join(s.line() for s in hits)}, fit to measure below {GENERATOR_CPU_BUSY_MAX_PCT:g} %: "
            f"{what} measured the initiator, not the array"
            + (f"; here the array shares the initiator's CPUs, so part of that busy % may be the array's own work "
               f"({'; '.join(sharing)})" if sharing else ""))


def invalid_reason(verdict: Verdict, saturated: Sequence[SaturatedHost], shared: Mapping[str, str] | None = None) -> str | None:
    """Why this verdict is an invalid measurement (judged on a saturated generator), or None when it stands."""
    shared = shared or {}
    # Never excused: an error count, a no-data FAIL, a spec gap (no check judged: unit CHECKS).
    if not saturated or verdict.unit in (Unit.ERRORS, Unit.CHECKS) or (not verdict.passed and is_no_data(verdict)):
        return None
    if not verdict.point:
        if not verdict.passed:
            return None  # nothing shows the failure was judged on the saturated point: it stands
        return _reason(saturated, shared, "this pass names no run point: it may have been judged there and")
    in_point = [s for s in saturated if s.point == verdict.point]
    if not in_point:
        return None
    missed = missed_vm_hosts(verdict) if not verdict.passed else set()
    if missed:
        # A target miss or a stall is excused only where every VM that missed ran on a host saturated in this point.
        hits = [s for s in in_point if s.host in missed]
        return _reason(hits, shared, "the VMs that missed") if {s.host for s in hits} == missed else None
    hits = [s for s in in_point if not verdict.host or s.host == verdict.host]
    if not hits:
        return None
    return _reason(hits, shared, "this pass" if verdict.passed else "this failure")
