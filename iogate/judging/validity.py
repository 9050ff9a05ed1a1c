"""The invalid-measurement rule's entry point: which verdicts were judged on a saturated load generator.

A verdict judged on the run point and host whose initiator's CPU was saturated is neither pass nor fail
(iogate/metrics/generator.py `invalid_reason`: never a no-data verdict nor an error count); where the lab's
array shares the initiator's CPUs, the reason says so.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from iogate.lab import Lab
from iogate.metrics.generator import hosts_sharing_array_cpus, invalid_reason, saturated_hosts
from iogate.metrics.types import RunResult
from iogate.verdict import Verdict


def invalid_reasons(verdicts: Sequence[Verdict], points: Iterable[tuple[str, RunResult]], lab: Lab | None) -> list[str | None]:
    """For each verdict, why it is an invalid measurement, or None where it stands."""
    saturated = saturated_hosts(points)
    shared = hosts_sharing_array_cpus(lab) if saturated and lab is not None else {}
    return [invalid_reason(v, saturated, shared) for v in verdicts]
