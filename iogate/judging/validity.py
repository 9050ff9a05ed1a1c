"""The invalid-measurement rule's entry points: which verdicts, and which run points, were measured on a saturated
load generator.

A verdict judged on the run point and host whose initiator's CPU was saturated is neither pass nor fail
(iogate/metrics/generator.py `invalid_reason`: never a no-data verdict nor an error count); where the lab's
array shares the initiator's CPUs, the reason says so.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from iogate.lab import Lab
from iogate.metrics.generator import GENERATOR_CPU_BUSY_MAX_PCT, hosts_sharing_array_cpus, invalid_reason, saturated_hosts
from iogate.metrics.types import RunResult
from iogate.verdict import Verdict


def invalid_reasons(verdicts: Sequence[Verdict], points: Iterable[tuple[str, RunResult]], lab: Lab | None) -> list[str | None]:
    """For each verdict, why it is an invalid measurement, or None where it stands."""
    saturated = saturated_hosts(points)
    shared = hosts_sharing_array_cpus(lab) if saturated and lab is not None else {}
    return [invalid_reason(v, saturated, shared) for v in verdicts]


def point_invalid_reason(point: str, result: RunResult, lab: Lab | None = None) -> str | None:
    """Why one run point's figures measured its initiator, not the array (a host of *this* point saturated), or
    None where they stand. Only this point's hosts count: a host saturated in another point of the same test
    voids nothing here (the excuse is the point's and host's, never the test's). The results store keeps the
    reason with the point: never a baseline, never a calibration value, INVALID in a bake-off."""
    saturated = saturated_hosts([(point, result)])
    if not saturated:
        return None
    shared = hosts_sharing_array_cpus(lab) if lab is not None else {}
    sharing = [f"host {s.host}: {shared[s.host]}" for s in saturated if s.host in shared]
    return (f"generator saturated: {'; '.join(s.line() for s in saturated)} (fit to measure below "
            f"{GENERATOR_CPU_BUSY_MAX_PCT:g} %)" + (f"; the array shares the initiator's CPUs ({'; '.join(sharing)})"
                                                    if sharing else ""))
