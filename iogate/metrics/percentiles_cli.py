"""`python -m iogate percentiles FILE.json [...] --p 50,99,99.9 [--json]`.

Completion-latency percentiles per direction, merged over every job of every
fio json+ output given (plain runs: "jobs"; client/server runs: "client_stats",
one entry per job per server). Merging sums fio's histogram bins, so the result
is what one fio job doing all those I/Os would report: for a single job, exactly
fio's own json percentiles (fio's rank rule, iogate.metrics.histogram). A
direction that did I/O but holds no latency bins is an error (exit 2), never a
silent gap. The "All clients" aggregate entry carries no bins and is
skipped: every I/O is counted once. fio 2.x output (usec bins of another
layout, 2.1.4 without total_ios) is refused naming its version
(iogate.engines.fio.versions), not read as a run without I/O.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from iogate.engines.fio.versions import refusal
from iogate.metrics.histogram import Histogram
from iogate.units import ns_to_us

DIRECTIONS = ("read", "write", "trim")
AGGREGATE_JOBNAME = "All clients"


class FioOutputError(ValueError):
    """A file is not fio json+ output (names the file and what is missing)."""


def load_fio_json(path: Path) -> dict[str, Any]:
    """fio's JSON document; fio may print warnings ("fio: pid=..., err=84") before it."""
    try:
        text = path.read_text()
    except OSError as exc:
        raise FioOutputError(f"{path}: cannot read: {exc.strerror}") from exc
    if text.startswith("{"):
        start = 0
    else:
        newline = text.find("\n{")  # the document starts on its own line after any warnings
        if newline < 0:
            raise FioOutputError(f"{path}: no JSON document found (run fio with --output-format=json+)")
        start = newline + 1
    try:
        doc = json.loads(text[start:])
    except json.JSONDecodeError as exc:
        raise FioOutputError(f"{path}: not fio JSON output: {exc}") from exc
    if not isinstance(doc, dict):
        raise FioOutputError(f"{path}: not fio JSON output: top level is not an object")
    return doc


def job_entries(doc: dict[str, Any], path: Path) -> list[dict[str, Any]]:
    """Per-job entries: "jobs" of a plain run or "client_stats" of a client/server run, minus the aggregate."""
    if "client_stats" in doc:
        return [entry for entry in doc["client_stats"] if entry.get("jobname") != AGGREGATE_JOBNAME]
    if "jobs" in doc:
        return list(doc["jobs"])
    raise FioOutputError(f"{path}: neither 'jobs' nor 'client_stats' in it: not fio JSON output")


def merged_histograms(paths: Iterable[Path]) -> dict[str, Histogram]:
    """direction -> clat histogram summed over every job in every file (directions with I/O only)."""
    merged: dict[str, Histogram] = {}
    for path in paths:
        doc = load_fio_json(path)
        reason = refusal(doc, str(path))
        if reason:
            raise FioOutputError(reason)
        for entry in job_entries(doc, path):
            where = f"{path}: job {entry.get('jobname', '?')}" + (f" on {entry['hostname']}" if "hostname" in entry else "")
            for direction in DIRECTIONS:
                stats = entry.get(direction) or {}
                ios = int(stats.get("total_ios", 0) or 0)
                bins = (stats.get("clat_ns") or {}).get("bins")
                if ios and bins is None:
                    raise FioOutputError(f"{where}: {direction} did {ios} I/Os but has no clat_ns bins: use --output-format=json+")
                if ios and not any(bins.values()):
                    # No data is never a result: a direction that did I/O with no latency sample is an error, not a gap.
                    raise FioOutputError(f"{where}: {direction} did {ios} I/Os but holds no latency samples (empty clat_ns bins)")
                if bins:
                    try:
                        merged.setdefault(direction, Histogram()).add(Histogram.from_json_bins(bins))
                    except ValueError as exc:
                        raise FioOutputError(f"{where}: {direction}: {exc}") from None
    return {d: h for d, h in merged.items() if h.total}


def parse_percentiles(text: str) -> list[float]:
    try:
        values = [float(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--p {text!r}: comma-separated numbers, e.g. 50,99,99.9") from None
    if not values or any(not 0 < v <= 100 for v in values):
        raise argparse.ArgumentTypeError(f"--p {text!r}: every percentile must be in (0, 100]")
    return values


def pct_key(pct: float) -> str:
    """99.0 -> "99", 99.9 -> "99.9" (the keys of --json output)."""
    return f"{pct:g}"


def percentile_table(histograms: dict[str, Histogram], pcts: Sequence[float]) -> dict[str, dict[str, float]]:
    return {d: {pct_key(p): h.percentile_ns(p) for p in pcts} for d, h in histograms.items()}


def format_table(histograms: dict[str, Histogram], pcts: Sequence[float]) -> str:
    """Human table in microseconds, with the I/O count behind each row."""
    head = ["direction", "ios"] + [f"p{pct_key(p)} us" for p in pcts]
    rows = [[d, str(h.total)] + [f"{ns_to_us(h.percentile_ns(p)):.1f}" for p in pcts] for d, h in histograms.items()]
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    return "\n".join("  ".join(cell.rjust(w) for cell, w in zip(r, widths, strict=True)) for r in [head, *rows])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m iogate percentiles",
        description="Merged completion-latency percentiles over fio json+ outputs (all jobs, all clients).",
    )
    parser.add_argument("files", nargs="+", type=Path, metavar="FILE.json", help="fio --output-format=json+ output")
    parser.add_argument("--p", dest="pcts", type=parse_percentiles, default=[50.0, 99.0, 99.9], help="percentiles (default 50,99,99.9)")
    parser.add_argument("--json", action="store_true", help='print {"read": {"99": ns, ...}, ...} in ns')
    args = parser.parse_args(argv)
    try:
        histograms = merged_histograms(args.files)
    except FioOutputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not histograms:
        print("error: no completed I/O with latency bins in " + ", ".join(map(str, args.files)), file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(percentile_table(histograms, args.pcts), indent=2))
    else:
        print(format_table(histograms, args.pcts))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
