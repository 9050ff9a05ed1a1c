"""Host CPU per I/O (Dell's metric): average CPU utilisation / average IOPS over the same period.

RunResult.cpu_busy_pct holds each initiator's CPU busy % over the run (from
/proc/stat, all CPUs). Per host, CPU % per I/O = busy % / that host's IOPS;
quoted per 1000 IOPS so the figure is readable ("1.8 % CPU per kIOPS").
With the host's CPU count it is also CPU time per I/O in microseconds.

CPU busy is read from the aggregate "cpu" line of /proc/stat, its first eight
fields only (user nice system idle iowait irq softirq steal): the kernel counts
guest time inside user and guest_nice inside nice as well as in fields 9 and 10
(proc(5)), so a KVM host summing all ten counts its guests twice (82 % busy reads
90.1 %). Busy = everything but idle and iowait (an idle CPU waiting for I/O is idle).

Niced time is busy. fio runs at nice 0, but under CFS a nice-10 neighbour still
weighs 110 against fio's 1024 (a nice-19 one 15): on a contended CPU it takes
its share from fio's submission and completion threads. An initiator whose CPUs
are full of "background" work is not fit to measure, whatever its niceness.
"""

from __future__ import annotations

from dataclasses import dataclass

from iogate.metrics.types import Dir, RunResult
from iogate.units import s_to_us

# user nice system idle iowait irq softirq steal: the counters that partition CPU time.
_STAT_FIELDS = 8
_IDLE, _IOWAIT = 3, 4


def cpu_ticks(proc_stat: str) -> tuple[int, int]:
    """(busy, total) jiffies of all CPUs from /proc/stat's text: CPU % over a run = d(busy) / d(total).

    >>> cpu_ticks("cpu  8190 0 6 1700 100 1 3 0 8182 0")
    (8200, 10000)
    """
    first = proc_stat.split("\n", 1)[0].split()
    if not first or first[0] != "cpu":
        raise ValueError(f"/proc/stat: first line is not the aggregate cpu line: {first[:1]}")
    fields = [int(x) for x in first[1:1 + _STAT_FIELDS]]
    if len(fields) < _IOWAIT + 1:
        raise ValueError(f"/proc/stat: cpu line has {len(fields)} fields, need at least {_IOWAIT + 1}")
    total = sum(fields)
    return total - fields[_IDLE] - fields[_IOWAIT], total


def busy_pct_between(before: tuple[int, int], after: tuple[int, int]) -> float:
    """CPU busy % between two cpu_ticks readings (0 when no tick passed)."""
    return 100.0 * (after[0] - before[0]) / max(after[1] - before[1], 1)


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
