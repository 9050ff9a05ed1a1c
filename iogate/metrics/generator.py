"""Was the load generator fit to measure? A host whose CPU was saturated over a run point.

An initiator busy beyond GENERATOR_CPU_BUSY_MAX_PCT (all CPUs, /proc/stat, over the
run point: RunResult.cpu_busy_pct) queues its own I/O behind its own work, or behind
whatever else runs on it: a throughput or latency figure it measured is the host's,
not the array's. vdbench says the same of its own slaves (its "cpu%" columns are
there for that). Such a figure can neither pass nor fail the array: a failed
performance verdict on it is an invalid measurement (plugins/verdicts.py), never a
pass and never an array defect. An error count is never excused by it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from iogate.metrics.types import RunResult

# Beyond this, fio's own submission and completion threads wait for a CPU: latency and IOPS figures
# then carry the host's scheduling delay (2-core CI machines reach 100 % when anything else runs).
GENERATOR_CPU_BUSY_MAX_PCT = 90.0


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
