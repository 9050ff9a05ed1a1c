"""`python -m iogate vdbench-parse OUTDIR [--json]`: what IOGate reads from a vdbench output directory.

Per run point: rd (with its for-loop values), the number of intervals averaged,
iops, mb_per_s, resp_ms, read_resp_ms, write_resp_ms (recomputed from the
flatfile's intervals, see window.py) and latency percentiles from
histogram.html (upper bucket edges, see buckets.py; null where the point did no
I/O; in the open-ended top bucket the string ">LAST_EDGE", since JSON has no inf).
A response time of a direction that did no I/O is null (absent), never 0.0: a
read-only point has no write response. A run point vdbench stopped on errors
before averaging it has intervals 0 and null figures; the errors are printed.
Exit 1 when errorlog.html holds I/O or data-validation errors.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

from iogate.engines.vdbench.buckets import BucketHistogram
from iogate.engines.vdbench.outdir import Point, parse_outdir

PERCENTILES = (50.0, 90.0, 95.0, 99.0, 99.9)
KEYS = ("rd", "intervals", "iops", "mb_per_s", "resp_ms", "read_resp_ms", "write_resp_ms", "percentiles")


def point_record(point: Point) -> dict[str, Any]:
    s = point.total.stats
    return {
        "rd": point.label,
        "intervals": point.total.intervals,
        "iops": round(s.iops, 4),
        "mb_per_s": round(s.mb_per_s, 4),
        "resp_ms": _resp(s.iops, s.resp_ms),
        "read_resp_ms": _resp(s.read_iops, s.read_resp_ms),
        "write_resp_ms": _resp(s.write_iops, s.write_resp_ms),
        "percentiles": _percentiles(point.histograms.get("all")),
    }


def stopped_record(label: str) -> dict[str, Any]:
    """A run point vdbench stopped on errors before averaging it: no figures at all."""
    return {"rd": label, "intervals": 0, "iops": None, "mb_per_s": None, "resp_ms": None, "read_resp_ms": None,
            "write_resp_ms": None, "percentiles": _percentiles(None)}


def _resp(rate: float, resp_ms: float) -> float | None:
    """A mean response time, absent (None) where the direction did no I/O."""
    return round(resp_ms, 4) if rate else None


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _percentiles(histogram: BucketHistogram | None) -> dict[str, float | str | None]:
    """p -> ms; None when the point did no I/O (vdbench prints an all-zero or no histogram)."""
    out: dict[str, float | str | None] = {}
    for pct in PERCENTILES:
        key = f"p{pct:g}_ms"
        if histogram is None or histogram.total == 0:
            out[key] = None
            continue
        value = histogram.percentile_ms(pct)
        out[key] = value if math.isfinite(value) else f">{histogram.edges_ms[-2]:g}"
    return out


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m iogate vdbench-parse", description=__doc__.splitlines()[0])
    parser.add_argument("outdir", type=Path, help="a vdbench output directory (vdbench -o)")
    parser.add_argument("--json", action="store_true", help="a JSON list, one object per run point")
    args = parser.parse_args(argv)
    output = parse_outdir(args.outdir)
    records = [point_record(p) for p in output.points] + [stopped_record(label) for label in output.stopped]
    if args.json:
        print(json.dumps(records, indent=2))
    else:
        for r in records:
            if r["iops"] is None:
                print(f"{r['rd']}: no measurements: vdbench stopped it on the errors below")
                continue
            pct = " ".join(f"{k[:-3]}={v}" for k, v in r["percentiles"].items())
            print(f"{r['rd']}: {r['intervals']} intervals, {r['iops']:.2f} IOPS, {r['mb_per_s']:.2f} MB/s, "
                  f"resp {_ms(r['resp_ms'])} ms (read {_ms(r['read_resp_ms'])}, write {_ms(r['write_resp_ms'])}), {pct}")
        if output.errors:
            print(f"{len(output.errors)} error(s) in errorlog.html, first: {output.errors[0].text.strip()}")
    return 1 if output.errors else 0
