"""Host CPU per I/O (Dell's metric): average CPU utilisation / average IOPS over the same period.

RunResult.cpu_busy_pct holds each initiator's CPU busy % over the run (from
/proc/stat, all CPUs). Per host, CPU % per I/O = busy % / that host's IOPS;
quoted per 1000 IOPS so the figure is readable ("1.8 % CPU per kIOPS").
With the host's CPU count it is also CPU time per I/O in microseconds.
"""

from __future__ import annotations

from dataclasses import dataclass

from iogate.metrics.types import Dir, RunResult
from iogate.units import s_to_us


def cpu_pct_per_kiops(busy_pct: float, iops: float) -> float | None:
    """CPU busy % per 1000 IOPS over the same period; None without I/O."""
    return 1000.0 * busy_pct / iops if iops else None


@dataclass(frozen=True)
class HostCpu:
    host: str
    busy_pct: float
    iops: float
    cpus: int | None = None

    @property
    def pct_per_kiops(self) -> float:
        """CPU busy % per 1000 IOPS (nan without I/O)."""
        value = cpu_pct_per_kiops(self.busy_pct, self.iops)
        return float("nan") if value is None else value

    @property
    def cpu_us_per_io(self) -> float | None:
        """CPU time one I/O costs the host, in µs (needs the CPU count)."""
        if not self.cpus or not self.iops:
            return None
        return s_to_us(self.busy_pct / 100.0 * self.cpus) / self.iops


def host_cpu(result: RunResult, cpus: dict[str, int] | None = None) -> list[HostCpu]:
    """One record per host that ran jobs of the result."""
    out = []
    for host, busy in sorted(result.cpu_busy_pct.items()):
        iops = sum(j[d].iops for j in result.jobs if j.host == host for d in Dir if d in j.directions)
        out.append(HostCpu(host, busy, iops, (cpus or {}).get(host)))
    return out


def mean_pct_per_kiops(records: list[HostCpu]) -> float:
    """The run's figure: the hosts' mean (hosts carry like loads in these procedures)."""
    values = [r.pct_per_kiops for r in records if r.iops]
    return sum(values) / len(values) if values else float("nan")
