"""Live intervals from a host's block counters: the live feed of a fio client/server point.

fio's client keeps its servers' status reports to the end (client_server.status_reports_named),
so a client/server point has no live series from fio itself. The kernel counts every completed
request of each block device (/sys/class/block/<dev>/stat, iogate/arrays/blockstat.py); the
point's sampler reads the counters of the jobs' devices on each host once a second
(iogate/hosts/cpu_sampler.py, lines `<epoch us> dev <index> <stat fields>`), and DeviceTail cuts
them into whole intervals on the measured phase's grid (its start + n x interval, the cumulative
counts interpolated linearly between readings, as iogate/engines/fio/live.py does with fio's
reports). An interval is published once a reading at or after its end exists.

What the counters can say, and so what is published:
* IOPS: the device's completed requests. They are one job's only where that job (its numjobs
  clones together) is the only one on the device; jobs sharing a device, or doing file I/O (NFS),
  get no live series, and the live judge then takes no decision for the point (it runs its
  planned time).
* Mean latency: the device's summed ticks over its requests, i.e. from a request's entry into the
  block layer to its completion, the array's answer as this host's kernel sees it. A cgroup
  throttle's wait comes before that (the local and netns labs' caps) and is not in it.
* Intervals end at the planned runtime: after it, the device is idle because the load ended, not
  because it stalled.

These intervals only decide when to stop; every verdict comes from fio's own per-second logs and
histograms after the point (iogate/engines/fio/parse.py).

>>> tail = DeviceTail("h1", {0: ("scale-h1", (Dir.READ,))}, start_ms=1_000, end_ms=10_000)
>>> tail.feed("1000000 dev 0 10 0 80 20 0 0 0 0 0 0 0\\n2000000 dev 0 110 0 880 220 0 0 0 0 0 0 0\\n")
[Sample(t_ms=2000, job='scale-h1', host='h1', dir=<Dir.READ: 'read'>, iops=100.0, clat_mean_ns=2000000.0, clone=0)]
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from itertools import pairwise

from iogate.arrays.blockstat import TICKS_WRAP, parse_stat
from iogate.metrics.types import Dir, Sample
from iogate.units import ms_to_ns

Point = tuple[int, float, float]  # (epoch ms, cumulative I/Os, cumulative ticks in ms)


def cumulative_at(points: list[Point], t_ms: int) -> tuple[float, float]:
    """The cumulative figures at t_ms, linear between the readings around it (the last one past the end)."""
    for (t0, n0, l0), (t1, n1, l1) in pairwise(points):
        if t0 <= t_ms <= t1:
            share = (t_ms - t0) / (t1 - t0) if t1 > t0 else 1.0
            return n0 + share * (n1 - n0), l0 + share * (l1 - l0)
    return points[-1][1], points[-1][2]


class DeviceTail:
    """One host's sampler lines -> whole intervals per (job, direction) of the jobs alone on a device."""

    def __init__(self, host: str, jobs: Mapping[int, tuple[str, tuple[Dir, ...]]], *, start_ms: int, end_ms: int,
                 interval_ms: int = 1000) -> None:
        self.host = host
        self.jobs = dict(jobs)  # the sampler's device index -> (the job alone on it, the directions it does)
        self.start_ms, self.end_ms, self.interval_ms = start_ms, end_ms, interval_ms
        self.points: dict[tuple[int, Dir], list[Point]] = {}
        self._wraps: dict[tuple[int, Dir], tuple[int, int]] = {}  # last raw ticks, wraps seen
        self.emitted = 0  # whole intervals published (the same for every device: one grid)
        self._text = ""

    def feed(self, chunk: str) -> list[Sample]:
        """New text of the sampler's file -> the intervals it completes (time order)."""
        self._text += chunk
        lines = self._text.split("\n")
        self._text = lines.pop()  # a line still being written
        for line in lines:
            self._take(line)
        return self._whole()

    def _take(self, line: str) -> None:
        fields = line.split(maxsplit=3)
        if len(fields) < 4 or fields[1] != "dev" or not fields[0].isdigit() or not fields[2].isdigit():
            return  # the CPU lines, or a line cut short
        index = int(fields[2])
        if index not in self.jobs:
            return
        try:
            stat = parse_stat(fields[3])
        except ValueError:
            return
        t_ms = int(fields[0]) // 1000
        for direction, ios, ticks in ((Dir.READ, stat.read_ios, stat.read_ticks_ms), (Dir.WRITE, stat.write_ios, stat.write_ticks_ms)):
            if direction not in self.jobs[index][1]:
                continue
            last, wraps = self._wraps.get((index, direction), (ticks, 0))
            wraps += ticks < last  # the ticks are printed as 32-bit milliseconds
            self._wraps[(index, direction)] = (ticks, wraps)
            points = self.points.setdefault((index, direction), [])
            if not points or t_ms > points[-1][0]:
                points.append((t_ms, float(ios), float(ticks + wraps * TICKS_WRAP)))

    def _whole(self) -> list[Sample]:
        if not self.points or len(self.points) < sum(len(dirs) for _, dirs in self.jobs.values()):
            return []  # a device not read yet: its intervals would be missing, never zero
        newest = min(points[-1][0] for points in self.points.values())
        if min(points[0][0] for points in self.points.values()) > self.start_ms:
            return []  # the sampler began after the measured phase: its first interval cannot be cut
        last = math.floor((min(newest, self.end_ms) - self.start_ms) / self.interval_ms)
        out: list[Sample] = []
        for n in range(self.emitted + 1, last + 1):
            begin, end = self.start_ms + (n - 1) * self.interval_ms, self.start_ms + n * self.interval_ms
            for (index, direction), points in sorted(self.points.items(), key=lambda item: (item[0][0], item[0][1].value)):
                n0, l0 = cumulative_at(points, begin)
                n1, l1 = cumulative_at(points, end)
                ios = max(n1 - n0, 0.0)
                latency = ms_to_ns((l1 - l0) / ios) if ios > 0 else None
                out.append(Sample(t_ms=end, job=self.jobs[index][0], host=self.host, dir=direction,
                                  iops=ios * 1000.0 / self.interval_ms, clat_mean_ns=latency))
        self.emitted = max(self.emitted, last)
        return out


def alone_on_device(devices: Mapping[str, str | None]) -> dict[str, str]:
    """{job: its device's stat path} for the jobs that are the only one on their device (a job with no
    device, None, is left out): the device's counters are then that job's.

    >>> alone_on_device({"a": "/sys/class/block/loop1/stat", "b": "/sys/class/block/loop1/stat",
    ...                  "c": "/sys/class/block/loop2/stat", "d": None})
    {'c': '/sys/class/block/loop2/stat'}
    """
    users: dict[str, list[str]] = {}
    for job, path in devices.items():
        if path:
            users.setdefault(path, []).append(job)
    return {jobs[0]: path for path, jobs in users.items() if len(jobs) == 1}
