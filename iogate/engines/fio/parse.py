"""Parse fio json+ output and per-second logs into the typed records.

Unknown or broken output raises EngineError naming the file; it never turns
into zeros that a criterion would then happily judge.
"""

from __future__ import annotations

import bisect
import json
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from iogate.errors import EngineError
from iogate.metrics.histogram import PLAT_NR
from iogate.metrics.merge import merge_directions
from iogate.metrics.types import Dir, Direction, HistSample, JobResult, JobSpan, LatencyStats, Sample

_DDIR = {0: Dir.READ, 1: Dir.WRITE, 2: Dir.TRIM}
_LOG_NAME = re.compile(r"^(?P<job>.+)_(?P<kind>iops|clat|clat_hist)\.(?P<n>\d+)\.log$")


def load_json(text: str, source: str) -> dict[str, Any]:
    """The final fio report in text.

    fio may print warnings before the JSON, and with --status-interval the file
    holds one report per interval before the final one: the last report wins.
    """
    decoder = json.JSONDecoder()
    start = text.find("{")
    if start < 0:
        raise EngineError(f"{source}: no JSON in fio output: {text[:300]!r}")
    last: Any = None
    while start >= 0:
        try:
            last, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError as exc:
            if last is None:
                raise EngineError(f"{source}: fio output is not valid JSON: {exc}") from exc
            raise EngineError(f"{source}: fio output ends in a truncated report: {exc}") from exc
        start = text.find("{", end)
    if not isinstance(last, dict) or not ("jobs" in last or "client_stats" in last):
        raise EngineError(f"{source}: not fio json output (no 'jobs' or 'client_stats')")
    return last


def _latency(raw: Mapping[str, Any] | None) -> LatencyStats:
    if not raw or not raw.get("N"):
        return LatencyStats()
    return LatencyStats(
        min_ns=float(raw["min"]),
        max_ns=float(raw["max"]),
        mean_ns=float(raw["mean"]),
        stddev_ns=float(raw["stddev"]),
        samples=int(raw["N"]),
        bins={int(k): int(v) for k, v in raw.get("bins", {}).items()},
    )


def parse_direction(direction: Dir, raw: Mapping[str, Any]) -> Direction:
    try:
        return Direction(
            dir=direction,
            ios=int(raw["total_ios"]),
            io_bytes=int(raw["io_bytes"]),
            runtime_ms=int(raw["runtime"]),
            iops=float(raw["iops"]),
            bw_bytes_per_s=float(raw["bw_bytes"]),
            clat=_latency(raw.get("clat_ns")),
            lat=_latency(raw.get("lat_ns")),
            short_ios=int(raw.get("short_ios", 0)),
            drop_ios=int(raw.get("drop_ios", 0)),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise EngineError(f"fio json: {direction} section lacks {exc}") from exc


def parse_jobs(data: Mapping[str, Any], host: str) -> list[JobResult]:
    """JobResults of one host's fio output; numjobs clones of a job merge into one."""
    raw_jobs = data.get("jobs")
    if raw_jobs is None:
        raise EngineError("fio json: no 'jobs' (client/server output goes through client_server parsing)")
    grouped: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for raw in raw_jobs:
        grouped[raw["jobname"]].append(raw)
    results = []
    for name, clones in grouped.items():
        directions = {d: merge_directions(d, [parse_direction(d, c[d.value]) for c in clones]) for d in Dir}
        results.append(
            JobResult(
                name=name,
                host=host,
                directions=directions,
                error=sum(int(c.get("error", 0)) for c in clones),
                usr_cpu_pct=sum(float(c.get("usr_cpu", 0)) for c in clones),
                sys_cpu_pct=sum(float(c.get("sys_cpu", 0)) for c in clones),
            )
        )
    return results


def _log_rows(text: str, source: str) -> Iterable[list[str]]:
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        fields = [f.strip() for f in line.split(",")]
        if len(fields) < 3:
            raise EngineError(f"{source} line {number}: not a fio log line: {line[:80]!r}")
        yield fields


def _nearest(times: list[int], values: list[float], t_ms: int, within_ms: int) -> float | None:
    """Value logged closest to t_ms, if within the tolerance; None (unknown, never 0 ns) otherwise."""
    index = bisect.bisect_left(times, t_ms)
    best = min((i for i in (index - 1, index) if 0 <= i < len(times)), key=lambda i: abs(times[i] - t_ms), default=None)
    return values[best] if best is not None and abs(times[best] - t_ms) <= within_ms else None


def parse_logs(files: Mapping[str, str], host: str, interval_ms: int = 1000) -> tuple[list[Sample], list[HistSample]]:
    """Per-second samples from fio log files given as {file name: text}.

    IOPS and mean-clat logs pair up by (job, clone, direction) and nearest time:
    fio stamps the two logs up to a few hundred ms apart; an IOPS line with no
    clat line within half an interval gets clat_mean_ns None (unknown, not 0).
    numjobs clones stay separate samples of the same job (`clone` = the log
    file number), each on its own interval grid (iogate.metrics.grid).
    """
    iops: dict[tuple[str, str, Dir], list[tuple[int, float]]] = defaultdict(list)
    clat: dict[tuple[str, str, Dir], list[tuple[int, float]]] = defaultdict(list)
    hist: list[HistSample] = []
    for name, text in files.items():
        match = _LOG_NAME.match(Path(name).name)
        if not match:
            continue
        job, kind, clone = match["job"], match["kind"], match["n"]
        for fields in _log_rows(text, name):
            t_ms, ddir = int(fields[0]), _DDIR.get(int(fields[2]) if kind != "clat_hist" else int(fields[1]))
            if ddir is None:
                continue
            if kind == "clat_hist":
                counts = [int(c) for c in fields[3:]]
                if len(counts) != PLAT_NR:
                    raise EngineError(f"{name}: histogram line has {len(counts)} bins, expected {PLAT_NR} (log_hist_coarseness must be 0)")
                hist.append(HistSample(t_ms, job, host, ddir, {i: c for i, c in enumerate(counts) if c}))
            else:
                (iops if kind == "iops" else clat)[(job, clone, ddir)].append((t_ms, float(fields[1])))
    samples = []
    for key, points in iops.items():
        latency = sorted(clat.get(key, []))
        times, values = [t for t, _ in latency], [v for _, v in latency]
        for t_ms, value in points:
            mean_ns = _nearest(times, values, t_ms, interval_ms // 2)
            samples.append(Sample(t_ms=t_ms, job=key[0], host=host, dir=key[2], iops=value, clat_mean_ns=mean_ns,
                                  clone=int(key[1])))
    samples.sort(key=lambda s: (s.t_ms, s.job, s.clone, s.dir.value))
    return samples, hist


def job_spans(data: Mapping[str, Any], host: str) -> list[JobSpan]:
    """Each job's measured phase on the epoch clock, from one fio process' json.

    fio resets its clock when the ramp ends and every job of one process starts
    measuring then: the start is the report's timestamp_ms minus the longest
    job_runtime; a job ends job_runtime (its longest clone's) after that start.
    The grid (iogate.metrics.grid) expects an interval from each job for every
    interval of this span, a missing one counting as 0 IOPS.
    """
    try:
        end_ms = int(data["timestamp_ms"])
        runtimes: dict[str, int] = defaultdict(int)
        for raw in data["jobs"]:
            runtimes[raw["jobname"]] = max(runtimes[raw["jobname"]], int(raw["job_runtime"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise EngineError(f"fio json of host {host}: cannot tell when the jobs ran (lacks {exc})") from exc
    start_ms = end_ms - max(runtimes.values(), default=0)
    return [JobSpan(host, name, start_ms, start_ms + runtime) for name, runtime in sorted(runtimes.items())]
