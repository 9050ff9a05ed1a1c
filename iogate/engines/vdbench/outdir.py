"""A whole vdbench output directory -> run points -> iogate RunResults.

The flatfile gives every run point's intervals and vdbench's own average;
summary.html names the points (rd + for-loop values); histogram.html gives the
latency buckets; summary.html links the per-host, per-SD and per-WD reports
(each WD's buckets are in <wd>.histogram.html); errorlog.html counts I/O and
data-validation errors (they fail no_io_errors).

Latency percentiles: every job direction of a RunResult carries vdbench's
bucket histogram of that WD (or of the whole point when there is one WD) as a
LatencyHistogram in vdbench's own bucket scheme (buckets.py: upper edge of the
nearest-rank bucket, math.inf in the open top bucket). Those counts cover what
the version counts (version.py): in 5.04.06 *every interval of the run point,
warmup and ramp included*, in 5.04.01 and 5.04.07 the avg row's window (since
warmup); the IOPS and mean latency beside them cover the judged window; the
histogram's `covers` says so, naming the intervals of both. vdbench writes no per-interval
histogram, so no window of it exists. A direction vdbench printed no section
for (a file-system run splits no reads from writes) has no histogram: its
percentiles are NoData, never a guess.
"""

from __future__ import annotations

import errno
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from iogate.engines.vdbench import errorlog
from iogate.engines.vdbench.buckets import BucketHistogram, PointHistograms, parse_histograms
from iogate.engines.vdbench.clock import read_clock
from iogate.engines.vdbench.flatfile import FlatFile, FlatPoint, Stats, parse_flatfile, stats
from iogate.engines.vdbench.reports import ReportPoint, is_file_system, parse_report
from iogate.engines.vdbench.source import Line, planned_labels, read_lines, run_label
from iogate.engines.vdbench.version import Version, read_version
from iogate.engines.vdbench.window import Aggregate, aggregate_rows, aggregate_stats, window
from iogate.errors import EngineError
from iogate.metrics.latency import LatencyHistogram
from iogate.metrics.types import Dir, Direction, JobResult, LatencyStats, RunResult, Sample, Series
from iogate.units import mib_per_s_to_bytes_per_s, ms_to_ns

_LINK = re.compile(r"^Link to (HOST reports|SD reports|workload report):(.*)$")
_HREF = re.compile(r'HREF="([^"#]+)\.html"', re.IGNORECASE)
_INTERVAL = re.compile(r"\binterval=(\d+)")
REPORT_KINDS = {"HOST reports": "host", "SD reports": "sd", "workload report": "wd"}


@dataclass(frozen=True)
class Windowed:
    """One SD/WD/host report over the point's window: its aggregate and its intervals."""

    aggregate: Aggregate
    intervals: tuple[Stats, ...]

    @property
    def stats(self) -> Stats:
        return self.aggregate.stats


@dataclass(frozen=True)
class Point:
    """One run point as vdbench reported it and as IOGate recomputes it."""

    label: str  # "rd_ran xfersize=4k rdpct=0 threads=1"
    flat: FlatPoint
    total: Aggregate  # over the window vdbench's avg row covers (see window.py)
    histograms: dict[str, BucketHistogram]  # "all" / "read" / "write"
    reports: dict[str, dict[str, Windowed]] = field(default_factory=dict)  # kind ("sd"/"wd"/"host") -> name
    report_points: dict[str, dict[str, tuple[Path, ReportPoint]]] = field(default_factory=dict)  # the same, unwindowed
    wd_histograms: dict[str, dict[str, BucketHistogram]] = field(default_factory=dict)  # wd -> its <wd>.histogram.html sections

    def window_from(self, first: int) -> tuple[Aggregate, dict[str, dict[str, Windowed]]]:
        """The point over intervals first..last (vdbench's last) instead of vdbench's own window."""
        last = self.total.last
        if not 1 <= first <= last:
            raise self.flat.avg.line.fail(f"no intervals {first}-{last} in this run point")
        if first == self.total.first:
            return self.total, self.reports
        aggregate = aggregate_rows(self.flat.intervals[first - 1:last], first, last)
        own = stats(self.flat.avg)  # CPU: only vdbench's window has it (see window.py)
        aggregate = replace(aggregate, stats=replace(aggregate.stats, cpu_user_pct=own.cpu_user_pct,
                                                     cpu_kernel_pct=own.cpu_kernel_pct))
        reports = {kind: {name: _report_window(path, rp, first, last) for name, (path, rp) in named.items()}
                   for kind, named in self.report_points.items()}
        return aggregate, reports

    @property
    def rd(self) -> str:
        return self.flat.run


@dataclass(frozen=True)
class Output:
    path: Path
    points: tuple[Point, ...]
    errors: tuple[Line, ...]  # errorlog.html entries
    interval_s: int
    file_system: bool
    version: Version  # which vdbench wrote it (version.py): what its averages and histograms cover
    # Run points summary.html started that vdbench stopped, on the errors above, before averaging them
    # (their labels): the errors are their result; they have no measurements.
    stopped: tuple[str, ...] = ()


def parse_outdir(path: Path) -> Output:
    """Every run point of a vdbench output directory (5.04.01-5.04.07, block or file system).

    Refused (EngineError, one line naming the reason): a directory vdbench had not finished
    (a run point without its avg_X-Y row and no error in errorlog.html to say why: it was
    copied mid-run), an unsupported version, a file that contradicts another. A run vdbench
    stopped on I/O or data-validation errors is no refusal: its unaveraged points are
    `stopped`, with the errors as their result.
    """
    path = Path(path)
    if not path.is_dir():
        raise EngineError(f"{path}: not a vdbench output directory")
    summary = path / "summary.html"
    started = [label for line in read_lines(summary) if (label := run_label(line)) is not None]
    # No point started (a run aborted on its first point's errors): the points its links planned. (Only
    # then: with for-loops, 5.04.06 links fewer points than it runs.)
    labels = started or planned_labels(summary)
    errors = tuple(errorlog.error_lines(path / "errorlog.html"))
    flat = parse_flatfile(path / "flatfile.html", read_clock(summary))
    done = len(flat.points)
    if done > len(started):
        raise EngineError(f"{summary}: {len(started)} run points started but flatfile.html has {done} averages")
    if done < len(labels) and not errors:
        raise EngineError(_unfinished(path, labels, flat))
    if flat.unfinished and done == len(labels):
        raise flat.unfinished[-1].line.fail("intervals of a run point summary.html never planned")
    version = read_version(path)
    hist = parse_histograms(path / "histogram.html")
    if [h.label for h in hist][:done] != labels[:done] or len(hist) > len(labels):
        raise EngineError(f"{path / 'histogram.html'}: run points {[h.label for h in hist]} differ from summary.html's {labels}")
    file_system = is_file_system(summary)
    linked = {} if file_system else _linked_reports(path, summary)
    wd_hist = {wd: _wd_histograms(path / f"{wd}.histogram.html", labels[:done]) for wd in linked.get("wd", {})}
    points = []
    for index, (label, point) in enumerate(zip(labels, flat.points, strict=False)):
        if not label.split(" ")[0] == point.run:
            raise point.avg.line.fail(f"run {point.run} where summary.html's point {index + 1} is {label!r}")
        total = window(point, version)
        # A WD or SD report lists every run point but has rows only for those that ran it (the
        # 5.04.07 oceanstor run: 38 points, one WD each): a report without rows is not this point's.
        raw = {kind: {name: (path / f"{name}.html", rp) for name, report in named.items()
                      if (rp := _report_point(path / f"{name}.html", report, index, label)).rows}
               for kind, named in linked.items()}
        reports = {kind: {name: _report_window(p, rp, total.first, total.last) for name, (p, rp) in named.items()}
                   for kind, named in raw.items()}
        points.append(Point(label, point, total, hist[index].sections, reports, raw,
                            {wd: per_point[index].sections for wd, per_point in wd_hist.items() if per_point}))
    return Output(path, tuple(points), errors, _interval_s(path / "parmfile.html"), file_system, version,
                  tuple(labels[done:]))


def _unfinished(path: Path, labels: list[str], flat: FlatFile) -> str:
    """Why a directory with a run point left unaveraged, and no error to explain it, is refused."""
    done = len(flat.points)
    later = len(labels) - done - 1
    rest = f"; {later} later run point(s) without data" if later else ""
    if flat.unfinished:
        return (f"{path}: committed mid-run: run point {labels[done]!r} has {len(flat.unfinished)} intervals and no "
                f"averages (flatfile.html ends without its avg_X-Y row; errorlog.html holds no error){rest}")
    if done == 0:
        return (f"{path / 'flatfile.html'}: no run point completed (no interval rows) and errorlog.html holds no "
                f"error: no data{rest}")
    return (f"{path}: run point {labels[done]!r} (summary.html) has no intervals or averages in flatfile.html "
            f"and errorlog.html no error: stopped mid-run{rest}")


def _wd_histograms(path: Path, labels: list[str]) -> list[PointHistograms]:
    """A WD's own histogram file, one entry per run point ([] when vdbench wrote none)."""
    if not path.is_file():
        return []
    points = parse_histograms(path)
    if [p.label for p in points] != labels:
        raise EngineError(f"{path}: run points {[p.label for p in points]} differ from summary.html's {labels}")
    return points


def _linked_reports(path: Path, summary: Path) -> dict[str, dict[str, list[ReportPoint]]]:
    linked: dict[str, dict[str, list[ReportPoint]]] = {}
    kind: str | None = None
    for raw in summary.read_text(errors="replace").splitlines():
        match = _LINK.match(raw)
        if match is not None:
            kind = REPORT_KINDS.get(match.group(1))
            rest = match.group(2)
        elif kind is not None and raw.startswith(" ") and "HREF" in raw.upper():
            rest = raw  # a long list of links continues on the next line
        else:
            kind = None
            continue
        for name in _HREF.findall(rest) if kind else ():
            linked.setdefault(kind, {})[name] = parse_report(path / f"{name}.html")
    return linked


def _report_point(path: Path, report: list[ReportPoint], index: int, label: str) -> ReportPoint:
    if index >= len(report) or report[index].label != label:
        found = report[index].label if index < len(report) else "nothing"
        raise EngineError(f"{path}: run point {index + 1} is {found!r} where {label!r} was due")
    return report[index]


def _report_window(path: Path, point: ReportPoint, first: int, last: int) -> Windowed:
    rows = point.intervals
    if first > last:  # an average over no interval (avg_2-1): vdbench's own all-zero row
        if point.avg is None:
            raise EngineError(f"{path}: {point.label}: no avg row for a run point without intervals")
        return Windowed(Aggregate(first, last, point.avg.stats), ())
    if len(rows) < last:
        raise EngineError(f"{path}: {point.label}: {len(rows)} intervals where the flatfile has {last}")
    window = tuple(r.stats for r in rows[first - 1:last])
    return Windowed(aggregate_stats(list(window), first, last), window)


def _interval_s(parmfile: Path) -> int:
    # vdbench's comment lines start with '*', '#' or '/' (a real parmfile keeps older rd= lines as '#rd=...').
    seconds = {int(m) for line in read_lines(parmfile) if not line.text.lstrip().startswith(("*", "#", "/"))
               for m in _INTERVAL.findall(line.text)}
    if len(seconds) > 1:
        raise EngineError(f"{parmfile}: run definitions with different interval= {sorted(seconds)} are not supported")
    return seconds.pop() if seconds else 1


def to_run_result(output: Output, point: Point, host: str, job_names: dict[str, str] | None = None,
                  job_hosts: dict[str, str] | None = None, hd_hosts: dict[str, str] | None = None,
                  first_interval: int | None = None) -> RunResult:
    """The point in IOGate's records: one job per WD report (or the totals when there is one WD).

    `job_names` maps vdbench wd names to IOGate job names (the runner names wds after jobs),
    `job_hosts` wd names to the lab host running them (default: `host`), `hd_hosts` vdbench
    hd names to lab hosts (per-host CPU from the host reports of a multi-host run).
    `first_interval`: judge intervals first_interval..last (the runner's own post-ramp window)
    rather than the window vdbench's avg row happened to cover (see window.py).
    errorlog.html entries mark the first job with an errno (EILSEQ for data validation,
    EIO otherwise; JobResult.error is an errno, as fio's), so no_io_errors fails.
    """
    if first_interval is None and point.total.intervals == 0:
        raise point.flat.avg.line.fail(f"run point {point.label!r} averaged no interval: no data")
    total, reports = point.window_from(first_interval or point.total.first)
    first, last = total.first, total.last
    interval_ms = output.interval_s * 1000
    rows = point.flat.intervals
    window_rows = rows[first - 1:last]
    # The window on vdbench's own interval grid: the row before it closes at start_ms, interval k of
    # the window ends k intervals later. vdbench times its intervals on that nominal grid (its rates
    # are I/Os per nominal interval, see window.py) and prints each row when the slaves' statistics
    # are in, 10-150 ms late and not by the same amount every time (seen: rows 0.877 s and 1.031 s
    # apart): stamped with the print time, a row can fall just outside a window cut on the grid and
    # leave a second without a sample.
    start_ms = rows[first - 2].t_ms if first > 1 else rows[0].t_ms - interval_ms
    wd_reports = reports.get("wd")
    # A WD report without rows for this point is left out (parse_outdir); a WD the caller ran must not be.
    silent = sorted(wd for wd in (job_names or {}) if wd_reports and wd != point.rd and wd not in wd_reports)
    if silent:
        raise EngineError(f"{output.path}: run point {point.label!r}: workload report(s) {silent} hold no intervals")
    per_job = wd_reports or {point.rd: Windowed(total, tuple(stats(r) for r in window_rows))}
    jobs = []
    samples: list[Sample] = []
    for index, (wd, windowed) in enumerate(sorted(per_job.items())):
        name = (job_names or {}).get(wd, wd)
        job_host = (job_hosts or {}).get(wd, host)
        errors = output_errno(output) if index == 0 else 0
        if wd_reports:
            sections, source = point.wd_histograms.get(wd, {}), output.path / f"{wd}.histogram.html"
        else:
            sections, source = point.histograms, output.path / "histogram.html"
        histograms = _latency_histograms(sections, source, f"workload {wd}" if wd_reports else "every workload",
                                         point, first, last, output.version)
        jobs.append(_job(name, job_host, windowed.aggregate, output.interval_s, errors, histograms))
        for k, s in enumerate(windowed.intervals, 1):
            for direction, iops, resp_ms in ((Dir.READ, s.read_iops, s.read_resp_ms),
                                             (Dir.WRITE, s.write_iops, s.write_resp_ms)):
                samples.append(Sample(start_ms + k * interval_ms, name, job_host, direction, iops, ms_to_ns(resp_ms)))
    cpu = total.stats
    busy = {host: (cpu.cpu_user_pct or 0.0) + (cpu.cpu_kernel_pct or 0.0)}
    host_reports = reports.get("host", {})
    if len(host_reports) > 1:
        busy = {(hd_hosts or {}).get(hd, hd): (a.stats.cpu_user_pct or 0.0) + (a.stats.cpu_kernel_pct or 0.0)
                for hd, a in host_reports.items()}
    return RunResult(
        name=point.label,
        jobs=tuple(jobs),
        series=Series(tuple(samples), (), interval_ms),
        start_ms=start_ms,
        end_ms=start_ms + len(window_rows) * interval_ms,
        artifacts={"vdbench output": str(output.path), "vdbench histogram": str(output.path / "histogram.html")},
        cpu_busy_pct=busy,
    )


def output_errno(output: Output) -> int:
    return errors_errno(output.errors)


def errors_errno(errors: tuple[Line, ...] | list[Line]) -> int:
    """errorlog.html's entries as one errno: EILSEQ for data validation, EIO for other I/O errors."""
    if not errors:
        return 0
    validation = any(re.search(r"data validation|corrupt|miscompare", e.text, re.IGNORECASE) for e in errors)
    return errno.EILSEQ if validation else errno.EIO


def stopped_by_errors(out_dir: Path, errors: list[Line], job_names: list[str], job_hosts: dict[str, str], host: str,
                      start_ms: int) -> RunResult:
    """A run vdbench stopped on the array's I/O or data-validation errors before it wrote its averages.

    The failure is the array's: every job carries the errno (no_io_errors fails naming it) and no
    measurements (every other criterion fails closed on "no data"), never a tool error and never
    a partial window that could pass.
    """
    code = errors_errno(errors)
    empty = {d: Direction(d) for d in Dir}
    jobs = tuple(JobResult(name, job_hosts.get(name, host), empty, error=code) for name in job_names)
    return RunResult(name=out_dir.name, jobs=jobs, series=Series((), (), 1000), start_ms=start_ms, end_ms=start_ms,
                     artifacts={"vdbench output": str(out_dir), "vdbench errorlog": str(out_dir / "errorlog.html")})


def _latency_histograms(sections: dict[str, BucketHistogram], source: Path, who: str, point: Point,
                        first: int, last: int, version: Version) -> dict[Dir, LatencyHistogram]:
    """Each direction's vdbench buckets as a LatencyHistogram whose `covers` says what they count
    (version.py: 5.04.06 counts every interval, the others the avg row's window)."""
    counted = (1, len(point.flat.intervals)) if version.histogram_counts_warmup else point.flat.avg_range_or_fail()
    since = "warmup included" if version.histogram_counts_warmup else f"since warmup (vdbench {version.name})"
    span = (f"intervals {counted[0]}-{counted[1]}, the judged window" if (first, last) == counted else
            f"intervals {counted[0]}-{counted[1]}, {since} (the judged window is intervals {first}-{last})")
    return {direction: sections[direction.value].latency(
                f"vdbench {source.name}: every {direction} I/O of {who} in run point {point.label!r}, {span}")
            for direction in (Dir.READ, Dir.WRITE) if direction.value in sections}


def _job(name: str, host: str, aggregate: Aggregate, interval_s: int, errors: int,
         histograms: dict[Dir, LatencyHistogram] | None = None) -> JobResult:
    s: Stats = aggregate.stats
    runtime_ms = aggregate.intervals * interval_s * 1000
    seconds = runtime_ms / 1000

    def direction(d: Dir, iops: float, resp_ms: float, mb: float | None) -> Direction:
        ios = round(iops * seconds)
        share = iops / s.iops if s.iops else 0.0
        bw = mib_per_s_to_bytes_per_s(mb if mb is not None else s.mb_per_s * share)
        latency = LatencyStats(mean_ns=ms_to_ns(resp_ms), samples=ios, histogram=(histograms or {}).get(d))
        return Direction(d, ios=ios, io_bytes=round(bw * seconds), runtime_ms=runtime_ms if ios else 0, iops=iops,
                         bw_bytes_per_s=bw, clat=latency, lat=latency)

    return JobResult(
        name=name,
        host=host,
        directions={
            Dir.READ: direction(Dir.READ, s.read_iops, s.read_resp_ms, s.mb_read_per_s),
            Dir.WRITE: direction(Dir.WRITE, s.write_iops, s.write_resp_ms, s.mb_write_per_s),
            Dir.TRIM: Direction(Dir.TRIM),
        },
        error=errors,
        usr_cpu_pct=s.cpu_user_pct or 0.0,
        sys_cpu_pct=s.cpu_kernel_pct or 0.0,
    )
