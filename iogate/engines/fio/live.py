"""fio's live interval feed: whole per-second intervals from its periodic status reports, while it runs.

fio writes its per-second logs (write_iops_log, write_lat_log) only when a job
ends, so the live feed reads what fio writes as it runs: with
`--status-interval=1` it appends a full json report to its output file every
second. Each report holds, per job and direction, the cumulative I/O count and
mean completion latency since the measured phase began (fio resets both when
the ramp ends; `job_runtime` counts from then). The difference of two reports
is what completed between them; whole intervals are cut on each job's own grid
(its measured start + n x interval, as its log lines tick), the cumulative
figures interpolated linearly between the reports around each interval end
(reports come ~1 s apart, a SIGUSR1 report in between only refines them).

An interval is published only once a report at or after its end exists: a
partial interval is never fed to the live judge. The final series still comes
from fio's own logs (iogate/engines/fio/parse.py); this feed only decides when
to stop.

>>> tail = StatusTail("h1", {"w": (Dir.READ, Dir.WRITE)}, first_elapsed_s=3)
>>> samples = tail.feed(new_text_of_out_json)
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from iogate.engines.workload import JobSpec
from iogate.metrics.device_feed import cumulative_at
from iogate.metrics.types import Dir, Sample

_DIRS = {"read": Dir.READ, "write": Dir.WRITE}


def planned_dirs(jobs: Sequence[JobSpec]) -> dict[str, tuple[Dir, ...]]:
    """The directions each job does (its read share): the live feed reports those, a silent one at 0 IOPS."""
    out: dict[str, tuple[Dir, ...]] = {}
    for job in jobs:
        read_pct = job.workload.read_pct
        out[job.name] = tuple(d for d, on in ((Dir.READ, read_pct > 0), (Dir.WRITE, read_pct < 100)) if on)
    return out


def reports(text: str) -> tuple[list[dict[str, Any]], int]:
    """The complete json reports in `text` and how many characters they used (the rest waits for more)."""
    decoder = json.JSONDecoder()
    found: list[dict[str, Any]] = []
    used = 0
    start = text.find("{")
    while start >= 0:
        try:
            doc, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            break  # a report still being written
        if isinstance(doc, dict) and "jobs" in doc:
            found.append(doc)
        used = end
        start = text.find("{", end)
    return found, used


class StatusTail:
    """One host's fio status reports -> whole intervals per (job, direction), each published once."""

    def __init__(self, host: str, dirs: Mapping[str, tuple[Dir, ...]], first_elapsed_s: int, interval_ms: int = 1000) -> None:
        self.host = host
        self.dirs = dict(dirs)
        self.first_elapsed_s = first_elapsed_s  # reports before this (the ramp) carry pre-reset figures
        self.interval_ms = interval_ms
        self.start_ms: dict[str, int] = {}  # job -> its measured phase's start
        # (job, dir) -> cumulative points (t_ms, ios, ios x mean latency ns)
        self.points: dict[tuple[str, Dir], list[tuple[int, float, float]]] = {}
        self.emitted: dict[tuple[str, Dir], int] = {}
        self.confirmed: set[str] = set()
        self.failed: dict[str, int] = {}  # job -> the errno fio reported for it (any report, ramp included)
        self._text = ""

    def feed(self, chunk: str) -> list[Sample]:
        """New text of fio's output file -> the intervals it completes (time order)."""
        self._text += chunk
        docs, used = reports(self._text)
        self._text = self._text[used:]
        for doc in docs:
            self._take(doc)
        return self._whole()

    def _take(self, doc: Mapping[str, Any]) -> None:
        stamp = int(doc.get("timestamp_ms", 0))
        per_job: dict[str, list[Mapping[str, Any]]] = {}
        for job in doc.get("jobs", ()):
            per_job.setdefault(str(job.get("jobname")), []).append(job)
        for name, clones in per_job.items():
            if name not in self.dirs:
                continue
            errno = next((int(c.get("error", 0)) for c in clones if int(c.get("error", 0))), 0)
            if errno:
                self.failed.setdefault(name, errno)
            runtime = min(int(c.get("job_runtime", 0)) for c in clones)
            if runtime <= 0 or min(int(c.get("elapsed", 0)) for c in clones) < self.first_elapsed_s:
                continue
            start = stamp - runtime
            known = self.start_ms.get(name)
            if known is None or abs(start - known) > self.interval_ms // 4:
                # First sight, or fio reset its figures since (the ramp ended between two reports): begin again.
                # A start is trusted once a second report agrees with it.
                self.start_ms[name] = start
                self.confirmed.discard(name)
                for direction in self.dirs[name]:
                    self.points.pop((name, direction), None)
            else:
                self.confirmed.add(name)
            start = self.start_ms[name]
            for key, direction in _DIRS.items():
                if direction not in self.dirs[name]:
                    continue
                ios = sum(float(c.get(key, {}).get("total_ios", 0)) for c in clones)
                means = [(float(c.get(key, {}).get("total_ios", 0)), float(c.get(key, {}).get("clat_ns", {}).get("mean", 0.0)))
                         for c in clones]
                # A mean of 0 over completed I/Os is fio not having it yet: unknown, never 0 ns.
                lat = math.nan if any(n > 0 and m <= 0 for n, m in means) else sum(n * m for n, m in means)
                series = self.points.setdefault((name, direction), [(start, 0.0, 0.0)])
                if stamp > series[-1][0]:
                    series.append((stamp, ios, lat))

    def _whole(self) -> list[Sample]:
        out: list[Sample] = []
        for (name, direction), points in self.points.items():
            if name not in self.confirmed:
                continue
            start = self.start_ms[name]
            done = self.emitted.get((name, direction), 0)
            last = math.floor((points[-1][0] - start) / self.interval_ms)
            for n in range(done + 1, last + 1):
                n0, l0 = cumulative_at(points, start + (n - 1) * self.interval_ms)
                n1, l1 = cumulative_at(points, start + n * self.interval_ms)
                ios = max(n1 - n0, 0.0)
                latency = (l1 - l0) / ios if ios > 0 and l1 > l0 and not math.isnan(l1 - l0) else None
                out.append(Sample(t_ms=start + n * self.interval_ms, job=name, host=self.host, dir=direction,
                                  iops=ios * 1000.0 / self.interval_ms, clat_mean_ns=latency))
            self.emitted[(name, direction)] = max(done, last)
        out.sort(key=lambda s: (s.t_ms, s.job, s.dir.value))
        return out
