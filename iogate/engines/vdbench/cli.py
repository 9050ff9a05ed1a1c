"""`python -m iogate vdbench-parse OUTDIR [--json]`: what IOGate reads from a vdbench output directory.

Per run point: rd (with its for-loop values), the number of intervals averaged,
iops, mb_per_s, resp_ms, read_resp_ms, write_resp_ms (recomputed from the
flatfile's intervals, see window.py) and latency percentiles from
histogram.html (upper bucket edges, see buckets.py; null where the point did no
I/O; in the open-ended top bucket the string ">LAST_EDGE", since JSON has no inf).
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
        "resp_ms": round(s.resp_ms, 4),
        "read_resp_ms": round(s.read_resp_ms, 4),
        "write_resp_ms": round(s.write_resp_ms, 4),
        "percentiles": _percentiles(point.histograms.get("all")),
    }


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
    records = [point_record(p) for p in output.points]
    if args.json:
        print(json.dumps(records, indent=2))
    else:
        for r in records:
            pct = " ".join(f"{k[:-3]}={v}" for k, v in r["percentiles"].items())
            print(f"{r['rd']}: {r['intervals']} intervals, {r['iops']:.2f} IOPS, {r['mb_per_s']:.2f} MB/s, "
                  f"resp {r['resp_ms']:.3f} ms (read {r['read_resp_ms']:.3f}, write {r['write_resp_ms']:.3f}), {pct}")
        if output.errors:
            print(f"{len(output.errors)} error(s) in errorlog.html, first: {output.errors[0].text.strip()}")
    return 1 if output.errors else 0
