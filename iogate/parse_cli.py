"""`python -m iogate parse PATH [--json]`: what IOGate reads from a fio output file or a vdbench output directory.

For reviewing evidence from a report: the figures IOGate's criteria would judge, per
fio job and host (json, json+, client/server) or per vdbench run point (with its
hosts and workloads): IOPS, MB/s, mean and percentile latency per direction, errors.

Records (`--json`: a list) use vdbench-parse's keys (iops, mb_per_s, resp_ms,
read_resp_ms, write_resp_ms, percentiles) and add: engine, host, read_iops,
write_iops, read_percentiles, write_percentiles, mb_bytes (the MB of mb_per_s:
vdbench's own 1048576, fio's figures in decimal 1000000), errors (texts).
fio records have `job`; vdbench records `rd`, `intervals`, and per-host and
per-workload figures under `hosts` and `workloads`.

Absent is null, never 0.0: the response time and percentiles of a direction that
did no I/O; fio percentiles without json+ bins (plain json prints its own, which
IOGate does not judge); vdbench percentiles where histogram.html has none.
Percentiles: fio's own rule over its json+ bins; vdbench's bucket upper edges
(iogate/engines/vdbench/buckets.py; the open top bucket as ">EDGE").
A file or directory IOGate cannot read is refused with one line naming why (exit 1);
exit 1 also when the output holds I/O errors.
"""

from __future__ import annotations

import argparse
import json
import math
import os
from pathlib import Path
from typing import Any

from iogate.engines.fio.output import FioOutput, read_fio_output
from iogate.engines.vdbench.cli import PERCENTILES, point_record, stopped_record
from iogate.engines.vdbench.outdir import Output, Point, Windowed, parse_outdir
from iogate.errors import EngineError
from iogate.metrics.latency import LatencyHistogram
from iogate.metrics.nodata import NoData
from iogate.metrics.types import Dir, JobResult
from iogate.units import BYTES_PER_MB, BYTES_PER_MIB, bytes_per_s_to_mb_per_s, ns_to_ms


def parse_path(path: Path) -> tuple[list[dict[str, Any]], bool]:
    """The records of a fio file or vdbench directory, and whether it holds I/O errors."""
    if path.is_dir():
        return vdbench_records(parse_outdir(path))
    if not path.is_file():
        raise EngineError(f"{path}: no such file or directory")
    return fio_records(path)


# -- vdbench ------------------------------------------------------------------------------------

def vdbench_records(output: Output) -> tuple[list[dict[str, Any]], bool]:
    errors = [e.text.strip() for e in output.errors]
    records = []
    for point in output.points:
        record = {"engine": "vdbench", "host": None, **point_record(point), **_directions(point)}
        record["mb_bytes"] = BYTES_PER_MIB
        record["hosts"] = {name: _windowed(w) for name, w in sorted(point.reports.get("host", {}).items())}
        record["workloads"] = {name: _windowed(w) for name, w in sorted(point.reports.get("wd", {}).items())}
        record["errors"] = errors
        records.append(record)
    for label in output.stopped:
        records.append({"engine": "vdbench", "host": None, **stopped_record(label), "read_iops": None, "write_iops": None,
                        "read_percentiles": _vdbench_percentiles(None), "write_percentiles": _vdbench_percentiles(None),
                        "mb_bytes": BYTES_PER_MIB, "hosts": {}, "workloads": {}, "errors": errors})
    return records, bool(errors)


def _directions(point: Point) -> dict[str, Any]:
    s = point.total.stats
    return {"read_iops": round(s.read_iops, 4), "write_iops": round(s.write_iops, 4),
            "read_percentiles": _vdbench_percentiles(point.histograms.get("read") if s.read_iops else None),
            "write_percentiles": _vdbench_percentiles(point.histograms.get("write") if s.write_iops else None)}


def _vdbench_percentiles(histogram: Any) -> dict[str, float | str | None]:
    return _percentiles(histogram.latency() if histogram is not None else None)


def _windowed(windowed: Windowed) -> dict[str, Any]:
    s = windowed.stats
    return {"iops": round(s.iops, 4), "mb_per_s": round(s.mb_per_s, 4), "read_iops": round(s.read_iops, 4),
            "write_iops": round(s.write_iops, 4), "resp_ms": _resp(s.iops, s.resp_ms),
            "read_resp_ms": _resp(s.read_iops, s.read_resp_ms), "write_resp_ms": _resp(s.write_iops, s.write_resp_ms)}


def _resp(rate: float, resp_ms: float) -> float | None:
    return round(resp_ms, 4) if rate else None


# -- fio ----------------------------------------------------------------------------------------

def fio_records(path: Path) -> tuple[list[dict[str, Any]], bool]:
    output = read_fio_output(path, host="local")
    if not output.jobs:
        raise EngineError(f"{path}: fio output without jobs: no data")
    records = [_fio_record(output, job) for job in output.jobs]
    return records, any(job.error for job in output.jobs)


def _fio_record(output: FioOutput, job: JobResult) -> dict[str, Any]:
    dirs = {d: job[d] for d in (Dir.READ, Dir.WRITE, Dir.TRIM)}
    iops = sum(d.iops for d in dirs.values())
    bw = sum(d.bw_bytes_per_s for d in dirs.values())
    done = [d for d in dirs.values() if d.clat.samples]
    samples = sum(d.clat.samples for d in done)
    histograms = [d.clat.histogram for d in done if d.clat.histogram is not None]
    every = LatencyHistogram.merged(histograms) if done and len(histograms) == len(done) else None
    return {
        "engine": "fio", "version": output.version, "job": job.name, "host": job.host,
        "iops": round(iops, 4), "mb_per_s": round(bytes_per_s_to_mb_per_s(bw), 4), "mb_bytes": BYTES_PER_MB,
        "read_iops": round(dirs[Dir.READ].iops, 4), "write_iops": round(dirs[Dir.WRITE].iops, 4),
        "resp_ms": round(ns_to_ms(sum(d.clat.mean_ns * d.clat.samples for d in done) / samples), 4) if samples else None,
        "read_resp_ms": _fio_mean(dirs[Dir.READ]), "write_resp_ms": _fio_mean(dirs[Dir.WRITE]),
        "percentiles": _percentiles(every),
        "read_percentiles": _fio_percentiles(output, job, Dir.READ),
        "write_percentiles": _fio_percentiles(output, job, Dir.WRITE),
        "errors": [f"errno {job.error} ({os.strerror(job.error)})"] if job.error else [],
    }


def _fio_percentiles(output: FioOutput, job: JobResult, direction: Dir) -> dict[str, float | str | None]:
    """From the json+ bins where the job has them, else the percentiles fio printed for the whole job."""
    if job[direction].clat.histogram is not None:
        return _percentiles(job[direction].clat.histogram)
    printed = output.clat_percentiles_ns(job, direction)
    return {f"p{pct:g}_ms": (round(ns_to_ms(printed[pct]), 4) if pct in printed else None) for pct in PERCENTILES}


def _fio_mean(direction: Any) -> float | None:
    return round(ns_to_ms(direction.clat.mean_ns), 4) if direction.clat.samples else None


# -- both ---------------------------------------------------------------------------------------

def _percentiles(histogram: LatencyHistogram | None) -> dict[str, float | str | None]:
    """p -> ms by the histogram's own rule; None without a histogram or I/O; ">EDGE" in an open top bucket."""
    out: dict[str, float | str | None] = {}
    for pct in PERCENTILES:
        key = f"p{pct:g}_ms"
        try:
            value = histogram.percentile_ns(pct) if histogram is not None else None
        except NoData:
            value = None
        if value is not None and math.isinf(value):
            edges = getattr(histogram.scheme, "edges_ns", None) if histogram is not None else None
            out[key] = f">{ns_to_ms(edges[-2]):g}" if edges else ">max"
        else:
            out[key] = None if value is None else round(ns_to_ms(value), 4)
    return out


def _text(record: dict[str, Any]) -> str:
    def ms(value: float | None) -> str:
        return "-" if value is None else f"{value:.3f}"

    unit = "MiB/s" if record["mb_bytes"] == BYTES_PER_MIB else "MB/s"
    who = f"rd {record['rd']}" if record["engine"] == "vdbench" else f"job {record['job']} host {record['host']}"
    if record["iops"] is None:
        return f"{who}: no measurements; errors: {len(record['errors'])}, first: {record['errors'][0] if record['errors'] else '-'}"
    pct = {d: " ".join(f"{k[:-3]}={v if v is not None else '-'}" for k, v in record[f"{d}percentiles"].items())
           for d in ("", "read_", "write_")}
    lines = [f"{who}: {record['iops']:.2f} IOPS ({record['read_iops']:.2f} read, {record['write_iops']:.2f} write), "
             f"{record['mb_per_s']:.2f} {unit}" + (f", {record['intervals']} intervals" if "intervals" in record else ""),
             f"  latency ms: mean {ms(record['resp_ms'])} (read {ms(record['read_resp_ms'])}, "
             f"write {ms(record['write_resp_ms'])}); all {pct['']}",
             f"  read {pct['read_']}", f"  write {pct['write_']}"]
    for kind in ("hosts", "workloads"):
        for name, f in record.get(kind, {}).items():
            lines.append(f"  {kind[:-1]} {name}: {f['iops']:.2f} IOPS, {f['mb_per_s']:.2f} {unit}, mean {ms(f['resp_ms'])} ms "
                         f"(read {ms(f['read_resp_ms'])}, write {ms(f['write_resp_ms'])})")
    if record["errors"]:
        lines.append(f"  errors: {len(record['errors'])}, first: {record['errors'][0]}")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m iogate parse", description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path, help="a fio output file (json, json+, client/server) or a vdbench output directory")
    parser.add_argument("--json", action="store_true", help="a JSON list of records (see the module docstring)")
    args = parser.parse_args(argv)
    records, errors = parse_path(args.path)
    if args.json:
        print(json.dumps(records, indent=2))
    else:
        print("\n".join(_text(r) for r in records))
    return 1 if errors else 0
