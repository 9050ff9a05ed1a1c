"""vdbench's response-time histogram: its own bucket edges, never fio's bins.

histogram.html (and <sd>/<wd>/<host>.histogram.html) holds, per run point,
sections such as "Reads and writes:", "Reads:", "Writes:" (a file-system run:
"Total of all requested operations:"; a one-direction run: "Only writes done
for this workload:"), each a table of `min(ms) < max(ms) count % cum%` rows;
the last bucket is open-ended ("2000.000 < max").

What it counts depends on the version (version.py): in 5.04.06 every I/O of the
run point, *warmup included* (the sample with warmup=2 counts exactly the sum
over intervals 1..N, while the avg row covers 2..N; see window.py), so its
percentiles include the warmup and the per-interval flatfile figures do not; in
5.04.01 and 5.04.07 the I/Os of the avg row's window X..Y, *since warmup*
(5.04.07 file-system sections say so: "Total of all requested operations since
warmup:"). A point without statistics ("No statistics generated for this run.",
vdbench's one-interval SD_format) has no sections.

Percentile rule (exact, documented because buckets are coarse): for p in
(0, 100], the rank is ceil(p/100 * N) (nearest rank, N = all I/Os, in exact
rationals); the p-th percentile lies in the first bucket whose cumulative count
reaches that rank, and is reported as that bucket's *upper* edge: a bound the
true value does not exceed, so a latency limit never passes on interpolation.
In the open-ended last bucket the bound is infinite (math.inf). Zero I/Os is
NoData. The rule lives in iogate.metrics.latency (Buckets scheme), shared with
every other histogram: `BucketHistogram.latency()` is this table as a
LatencyHistogram in ns, which is what RunResults carry (outdir.py).
"""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass
from pathlib import Path

from iogate.engines.vdbench.source import Line, read_lines, run_label
from iogate.errors import EngineError
from iogate.metrics.latency import LatencyHistogram
from iogate.metrics.nodata import NoData
from iogate.units import ms_to_ns, ns_to_ms

_ROW = re.compile(r"^\s*(\d+\.\d+)\s+<\s+(\d+\.\d+|max)\s+([\d,]+)\s+\d+\.\d+\s+\d+\.\d+")
_COLUMNS = re.compile(r"^\s*min\(ms\)\s+<\s+max\(ms\)\s+count")
# Section title -> which I/Os it counts: "all", and the one direction of a one-direction workload.
SECTIONS: dict[str, tuple[str, ...]] = {
    "Reads and writes:": ("all",),
    "Total of all requested operations:": ("all",),
    "Total of all requested operations since warmup:": ("all",),
    "Reads:": ("read",),
    "Writes:": ("write",),
    "Only reads done for this workload:": ("all", "read"),
    "Only writes done for this workload:": ("all", "write"),
}
ORIGIN = "vdbench histogram buckets"


@dataclass(frozen=True)
class BucketHistogram:
    """Counts per bucket; edges_ms has one more entry than counts, the last is math.inf."""

    edges_ms: tuple[float, ...]
    counts: tuple[int, ...]

    def __post_init__(self) -> None:
        if len(self.edges_ms) != len(self.counts) + 1 or list(self.edges_ms) != sorted(self.edges_ms):
            raise ValueError("bucket edges must be ascending and one more than the counts")

    @property
    def total(self) -> int:
        return sum(self.counts)

    def latency(self, covers: str = "") -> LatencyHistogram:
        """This table as a LatencyHistogram: the same buckets with edges in ns (vdbench prints them
        in ms to 3 decimals, i.e. whole microseconds, so the ns edges are exact integers)."""
        edges = [e if math.isinf(e) else float(round(ms_to_ns(e))) for e in self.edges_ms]
        return LatencyHistogram.of_buckets(edges, self.counts, origin=ORIGIN, covers=covers)

    def percentile_ms(self, pct: float, what: str = "histogram") -> float:
        """Upper edge of the bucket holding the nearest-rank p-th percentile (see module doc)."""
        if not 0 < pct <= 100:
            raise ValueError(f"percentile {pct} is not in (0, 100]")
        if self.total == 0:
            raise NoData(f"no I/O in vdbench {what}: no p{pct:g} latency")
        return ns_to_ms(self.latency().percentile_ns(pct))

    def merged(self, other: BucketHistogram) -> BucketHistogram:
        """Counts added bucket by bucket; histograms with different edges are never merged."""
        if self.edges_ms != other.edges_ms:
            raise ValueError("vdbench histograms with different bucket edges cannot be merged")
        return BucketHistogram(self.edges_ms, tuple(a + b for a, b in zip(self.counts, other.counts, strict=True)))


@dataclass(frozen=True)
class PointHistograms:
    label: str  # run_label() of the run point
    sections: dict[str, BucketHistogram]  # "all" / "read" / "write" (a one-direction section is "all" and its direction)


def parse_histograms(path: Path) -> list[PointHistograms]:
    """Every run point's histograms, in file order."""
    points: list[PointHistograms] = []
    section: str | None = None
    rows: list[tuple[Line, float, float, int]] = []

    def close() -> None:
        if section is not None:
            if not points:
                raise EngineError(f"{path}: histogram section {section!r} before any 'Starting RD=' line")
            histogram = _histogram(path, rows)
            for key in SECTIONS[section]:
                points[-1].sections[key] = histogram

    for line in read_lines(path):
        text = line.text.strip()
        label = run_label(line)
        if label is not None:
            close()
            section, rows = None, []
            points.append(PointHistograms(label, {}))
        elif text in SECTIONS:
            close()
            section, rows = text, []
        elif (match := _ROW.match(line.text)) is not None:
            if section is None:
                raise line.fail("histogram row outside a section")
            upper = math.inf if match.group(2) == "max" else float(match.group(2))
            rows.append((line, float(match.group(1)), upper, int(match.group(3).replace(",", ""))))
        elif section is not None and rows and text:
            raise line.fail("not a histogram row")
        elif section is not None and text and not _COLUMNS.match(line.text):
            raise line.fail("expected the histogram column header")
    close()
    return points


def _histogram(path: Path, rows: list[tuple[Line, float, float, int]]) -> BucketHistogram:
    if not rows:
        raise EngineError(f"{path}: a histogram section without buckets")
    for (_, _, upper, _), (line, lower, _, _) in itertools.pairwise(rows):
        if lower != upper:
            raise line.fail(f"bucket starts at {lower} ms where the previous ended at {upper} ms")
    if rows[-1][2] != math.inf:
        raise rows[-1][0].fail("the last bucket is not open-ended ('< max')")
    return BucketHistogram(tuple([rows[0][1], *(r[2] for r in rows)]), tuple(r[3] for r in rows))
