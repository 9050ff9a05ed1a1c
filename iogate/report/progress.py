"""Live progress of a long run: current test, run point k of N, ETA, live IOPS and latency.

fio run with `--status-interval=1 --output-format=json` prints one complete JSON
report per interval on stdout (top-level braces at column 0), possibly after a
plain-text line or two. Its counters are cumulative since the job started (or
since ramp_time ended, when fio resets them), so the live rate of an interval
is the difference of two consecutive reports: ios / runtime for IOPS, and the
sample-weighted difference of the completion-latency means for latency.

Nothing is printed under CI (env CI set) or when stdout is not a terminal:
logs stay clean and pytest's own output is untouched.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Self

from rich.console import Console
from rich.live import Live
from rich.text import Text

from iogate.metrics.types import Dir
from iogate.units import NS_PER_MS, ns_to_ms, ns_to_us

FIO_ETA_UNKNOWN = 2147483647  # fio prints INT_MAX while it cannot estimate
_MIN_INTERVAL_MS = 500  # closer reports are fio's final one, not a status interval
_OBJECT_START = re.compile(r"^\{", re.MULTILINE)
_OBJECT_END = re.compile(r"^\}[ \t]*$", re.MULTILINE)


@dataclass(frozen=True)
class LiveStatus:
    """One fio status interval, summed over jobs: rates of that interval, not since start."""

    t_ms: int  # fio's timestamp_ms of the report
    elapsed_s: int
    eta_s: int | None  # None while fio cannot estimate
    iops: Mapping[str, float] = field(default_factory=dict)  # direction -> IOPS
    clat_mean_ns: Mapping[str, float] = field(default_factory=dict)  # direction -> mean completion latency

    @property
    def total_iops(self) -> float:
        return sum(self.iops.values())


@dataclass
class _Counters:
    t_ms: int
    ios: int
    runtime_ms: int
    clat_samples: int
    clat_mean_ns: float


class FioStatusParser:
    """Feed it stdout chunks of `fio --status-interval=N --output-format=json`; it returns the new intervals.

    >>> parser = FioStatusParser()
    >>> for chunk in stream:
    ...     for status in parser.feed(chunk):
    ...         progress.update(status)
    """

    def __init__(self) -> None:
        self._buffer = ""
        self._previous: dict[tuple[str, str], _Counters] = {}
        self.skipped_text: list[str] = []  # non-JSON lines and unreadable reports, kept for diagnostics

    def feed(self, chunk: str) -> list[LiveStatus]:
        self._buffer += chunk
        statuses = []
        while True:
            start = _OBJECT_START.search(self._buffer)
            if start is None:
                # No report begins yet; keep only an unfinished last line (it may become "{").
                complete, _, partial = self._buffer.rpartition("\n")
                self._skip(complete)
                self._buffer = partial
                return statuses
            self._skip(self._buffer[: start.start()])
            self._buffer = self._buffer[start.start():]
            end = _OBJECT_END.search(self._buffer)
            if end is None:
                return statuses  # report still arriving
            text, self._buffer = self._buffer[: end.end()], self._buffer[end.end():]
            try:
                report = json.loads(text)
            except json.JSONDecodeError:
                self._skip(text)
                continue
            if isinstance(report, dict) and isinstance(report.get("jobs"), list):
                statuses.append(self._interval(report))
            else:
                self._skip(text)

    def _skip(self, text: str) -> None:
        if text.strip():
            self.skipped_text.append(text.strip())

    def _interval(self, report: Mapping[str, Any]) -> LiveStatus:
        t_ms = int(report.get("timestamp_ms") or report.get("timestamp", 0) * 1000)
        iops: dict[str, float] = {}
        latency_weighted: dict[str, float] = {}
        elapsed_s, etas = 0, []
        for job in report["jobs"]:
            elapsed_s = max(elapsed_s, int(job.get("elapsed", 0)))
            if job.get("eta") is not None and int(job["eta"]) != FIO_ETA_UNKNOWN:
                etas.append(int(job["eta"]))
            for direction in Dir:
                stats = job.get(str(direction))
                if not isinstance(stats, Mapping):
                    continue
                rate, latency = self._job_rate(str(job.get("jobname", "")), str(direction), t_ms, stats)
                if rate <= 0:
                    continue
                iops[str(direction)] = iops.get(str(direction), 0.0) + rate
                latency_weighted[str(direction)] = latency_weighted.get(str(direction), 0.0) + rate * latency
        clat = {d: latency_weighted[d] / iops[d] for d in iops}
        return LiveStatus(t_ms=t_ms, elapsed_s=elapsed_s, eta_s=max(etas) if etas else None, iops=iops, clat_mean_ns=clat)

    def _job_rate(self, job: str, direction: str, t_ms: int, stats: Mapping[str, Any]) -> tuple[float, float]:
        clat = stats.get("clat_ns") or {}
        now = _Counters(t_ms=t_ms, ios=int(stats.get("total_ios", 0)), runtime_ms=int(stats.get("runtime", 0)),
                        clat_samples=int(clat.get("N", 0)), clat_mean_ns=float(clat.get("mean", 0.0)))
        before = self._previous.get((job, direction))
        self._previous[(job, direction)] = now
        cumulative = (float(stats.get("iops", 0.0)), now.clat_mean_ns)
        if before is None:
            return cumulative  # first report: since-start is this interval's best estimate
        ios, runtime_ms = now.ios - before.ios, now.runtime_ms - before.runtime_ms
        wall_ms = now.t_ms - before.t_ms
        if wall_ms < _MIN_INTERVAL_MS:
            return cumulative  # the closing report at exit, ms after the last one: show the job's result
        if ios < 0 or runtime_ms < 0 or 0 < runtime_ms < wall_ms / 2:
            # Counters were reset (ramp_time ended) during the interval: the since-reset figures are right.
            return cumulative
        if ios == 0 or runtime_ms == 0:
            return 0.0, 0.0  # job idle or finished in this interval
        samples = now.clat_samples - before.clat_samples
        if samples > 0:
            latency = (now.clat_mean_ns * now.clat_samples - before.clat_mean_ns * before.clat_samples) / samples
        else:
            latency = now.clat_mean_ns
        return ios * 1000.0 / runtime_ms, max(latency, 0.0)


def progress_wanted(stream: Any = None) -> bool:
    """Live output only on an interactive terminal and never under CI."""
    if os.environ.get("CI"):
        return False
    target = stream if stream is not None else sys.stdout
    isatty = getattr(target, "isatty", None)
    return bool(isatty and isatty())


def _format_latency(ns: float) -> str:
    if ns >= NS_PER_MS:
        return f"{ns_to_ms(ns):.2f} ms"
    return f"{ns_to_us(ns):.0f} us"


def _format_duration(seconds: float) -> str:
    seconds = max(int(seconds), 0)
    return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


class Progress:
    """One status line for a run of N points; update it with fio's live intervals.

    >>> with Progress(total_points=96) as progress:
    ...     progress.start_point("test_sweep[4k-70-8]", 1, planned_s=100)
    ...     progress.feed_fio(chunk)
    """

    def __init__(self, total_points: int, *, enabled: bool | None = None, console: Console | None = None,
                 clock: Any = time.monotonic):
        self.total_points = total_points
        self.enabled = progress_wanted() if enabled is None else enabled
        self._clock = clock
        self._parser = FioStatusParser()
        self._test = ""
        self._point = 0
        self._point_started: float | None = None
        self._planned_s: float | None = None
        self._finished_durations: list[float] = []
        self._status: LiveStatus | None = None
        self._live: Live | None = None
        if self.enabled:
            self._live = Live(self.render(), console=console or Console(stderr=False), refresh_per_second=4, transient=False)
            self._live.start()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, trace: TracebackType | None) -> None:
        self.close()

    def start_point(self, test: str, index: int | None = None, *, planned_s: float | None = None) -> None:
        """A run point begins: `index` is k of N (1-based; default: the next one), `planned_s` its ramp + runtime."""
        if self._point_started is not None:
            self._finished_durations.append(self._clock() - self._point_started)
        self._test = test
        self._point = index if index is not None else self._point + 1
        self._point_started = self._clock()
        self._planned_s = planned_s
        self._status = None
        self._parser = FioStatusParser()  # counters belong to one fio process
        self._refresh()

    def feed_fio(self, chunk: str) -> list[LiveStatus]:
        """Parse a chunk of fio status output and show the newest interval."""
        statuses = self._parser.feed(chunk)
        if statuses:
            self.update(statuses[-1])
        return statuses

    def update(self, status: LiveStatus) -> None:
        self._status = status
        self._refresh()

    def eta_s(self) -> float | None:
        """Seconds left for the whole run: this point's remainder plus the remaining points at the mean point duration."""
        remaining_points = max(self.total_points - self._point, 0)
        if self._status is not None and self._status.eta_s is not None:
            current_left = float(self._status.eta_s)
        elif self._planned_s is not None and self._point_started is not None:
            current_left = max(self._planned_s - (self._clock() - self._point_started), 0.0)
        else:
            current_left = None
        durations = self._finished_durations
        per_point = sum(durations) / len(durations) if durations else self._planned_s
        if remaining_points == 0:
            return current_left
        if current_left is None or per_point is None:
            return None
        return current_left + remaining_points * per_point

    def render(self) -> Text:
        line = Text()
        line.append(f"[{self._point}/{self.total_points}] ", style="bold")
        line.append(self._test or "starting")
        if self._status is not None:
            for direction, iops in sorted(self._status.iops.items()):
                latency = self._status.clat_mean_ns.get(direction, 0.0)
                line.append(f"  {direction} {iops:,.0f} IOPS @ {_format_latency(latency)}", style="cyan")
        eta = self.eta_s()
        line.append(f"  ETA {_format_duration(eta)}" if eta is not None else "  ETA --:--:--", style="green")
        return line

    def _refresh(self) -> None:
        if self._live is not None:
            self._live.update(self.render(), refresh=True)

    def close(self) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None
