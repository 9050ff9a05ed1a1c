"""A latency histogram that carries its own bucket scheme: fio's 1856 bins or explicit bucket edges.

Two engines, two schemes, one type. fio's json+ keeps 1856 log-linear bins
(`iogate.metrics.histogram`); vdbench's histogram.html keeps its own coarse
buckets (`iogate.engines.vdbench.buckets`). Both are exact inputs: a
`LatencyHistogram` holds the counts *by bucket of its scheme* and asks the
scheme for percentiles, so neither is ever re-binned into the other.

Percentile rules (each exact for its scheme):

- `FIO_BINS`: fio's own rule, bit for bit (`Histogram.percentile_ns`: the first
  bin whose running count reaches fio's long-double threshold, reported as the
  bin's midpoint, as fio prints it).
- `Buckets`: nearest rank, rank = ceil(p/100 * N) computed in rationals on the
  decimal the percentile was written as (99.9, not the double just above it),
  reported as the *upper edge* of the first bucket whose running count reaches
  the rank: a value the true percentile does not exceed, so a latency bound
  never passes on interpolation. The open-ended last bucket's upper edge is
  math.inf: a percentile there has no finite bound and fails every latency limit.

Zero samples is NoData under both. Merging sums counts bucket by bucket and
only ever within one scheme; histograms of different schemes (fio bins and
vdbench buckets, or two different edge sets) are refused with
HistogramSchemeMismatch, a NoData naming both schemes: the union has no exact
percentile, so a criterion asked for one fails closed and says why.

`covers` says which I/Os the counts include (vdbench: every interval of the
run point, warmup included, unlike its windowed averages), so evidence can
quote it next to the number.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction

from iogate.metrics.bincounts import BinCounts
from iogate.metrics.histogram import PLAT_BITS, PLAT_NR, Histogram, index_to_value_ns, json_bin_counts, pct_label
from iogate.metrics.nodata import NoData


def _sum(parts: list[BinCounts], size: int) -> BinCounts:
    """Bin-by-bin sum: exact integers, whatever the number of parts."""
    dense = [0] * size
    for part in parts:
        part.sum_into(dense)
    return BinCounts.from_dense(dense)


class HistogramSchemeMismatch(NoData):
    """Histograms of different bucket schemes were to be merged; the message names both.

    A NoData: no exact percentile exists for the union, so criteria fail closed
    quoting this message instead of judging a number re-binned across edges.
    """


@dataclass(frozen=True)
class FioBins:
    """fio's completion-latency bins (stat.h FIO_IO_U_PLAT_NR): 29 groups of 64, PLAT_BITS=6."""

    @property
    def size(self) -> int:
        return PLAT_NR

    def describe(self) -> str:
        return f"fio json+ bins ({PLAT_NR} log-linear bins, PLAT_BITS={PLAT_BITS})"


FIO_BINS = FioBins()


@dataclass(frozen=True)
class Buckets:
    """Explicit bucket edges in ns: bucket i is [edges_ns[i], edges_ns[i+1]); the last edge may be math.inf.

    Two schemes are the same when their edges are; `origin` only names them in messages.
    """

    edges_ns: tuple[float, ...]
    origin: str = field(default="buckets", compare=False)

    def __post_init__(self) -> None:
        edges = self.edges_ns
        if len(edges) < 2:
            raise ValueError(f"{self.origin}: a bucket scheme needs at least two edges, got {list(edges)}")
        if any(math.isnan(e) for e in edges) or any(b <= a for a, b in itertools.pairwise(edges)):
            raise ValueError(f"{self.origin}: bucket edges must strictly ascend, got {list(edges)}")
        if math.isinf(edges[0]) or edges[0] < 0:
            raise ValueError(f"{self.origin}: the first bucket edge must be a latency >= 0 ns, got {edges[0]}")

    @property
    def size(self) -> int:
        return len(self.edges_ns) - 1

    @property
    def open_ended(self) -> bool:
        return math.isinf(self.edges_ns[-1])

    def describe(self) -> str:
        top = f"open above {self.edges_ns[-2]:g} ns" if self.open_ended else f"up to {self.edges_ns[-1]:g} ns"
        return f"{self.origin} ({self.size} buckets from {self.edges_ns[0]:g} ns, {top})"


Scheme = FioBins | Buckets


def _pct_fraction(pct: float | str) -> Fraction:
    """The percentile as the decimal it was written as (repr of a float is its shortest round-trip text)."""
    value = Fraction(pct if isinstance(pct, str) else repr(float(pct)))
    if not 0 < value <= 100:
        raise ValueError(f"percentile {pct} out of range (0, 100]")
    return value


def nearest_rank(pct: float | str, total: int) -> int:
    """ceil(pct/100 * total) in exact rationals: the 1-based rank of the nearest-rank percentile."""
    return math.ceil(_pct_fraction(pct) / 100 * total)


@dataclass(frozen=True)
class LatencyHistogram:
    """Counts by bucket index of `scheme` (zeros omitted), what they cover, and the scheme's exact percentiles.

    >>> LatencyHistogram.from_fio_json_bins(job["read"]["clat_ns"]["bins"]).percentile_ns(99)
    >>> LatencyHistogram.of_buckets((0, 20_000, 40_000, math.inf), (5, 90, 5), origin="vdbench").percentile_ns(99)
    inf
    """

    scheme: Scheme
    counts: Mapping[int, int] = field(default_factory=dict)
    covers: str = ""

    def __post_init__(self) -> None:
        # Held as BinCounts (iogate.metrics.bincounts): compact, immutable, checked once and then trusted.
        try:
            counts = BinCounts.from_mapping(self.counts, self.scheme.size)
        except ValueError as exc:
            raise ValueError(f"{self.scheme.describe()}: {exc}") from None
        object.__setattr__(self, "counts", counts)

    # -- construction ---------------------------------------------------------------------------

    @classmethod
    def from_fio(cls, histogram: Histogram, covers: str = "") -> LatencyHistogram:
        return cls(FIO_BINS, BinCounts.from_mapping(histogram.counts, PLAT_NR), covers)

    @classmethod
    def from_fio_json_bins(cls, bins: Mapping[str | int, int], covers: str = "") -> LatencyHistogram:
        """From json+ "bins" ({"<midpoint ns>": count}); every key must be a real fio bin."""
        return cls(FIO_BINS, json_bin_counts(bins), covers)

    @classmethod
    def of_buckets(cls, edges_ns: Iterable[float], counts: Iterable[int], *, origin: str = "buckets",
                   covers: str = "") -> LatencyHistogram:
        """From bucket edges (one more than the counts) and the count of each bucket in order."""
        scheme = Buckets(tuple(float(e) for e in edges_ns), origin)
        per_bucket = list(counts)
        if len(per_bucket) != scheme.size:
            raise ValueError(f"{scheme.describe()}: {len(per_bucket)} counts for {scheme.size} buckets")
        return cls(scheme, dict(enumerate(per_bucket)), covers)

    @classmethod
    def merged(cls, parts: Iterable[LatencyHistogram]) -> LatencyHistogram | None:
        """Bucket-wise sum of histograms of one scheme (None for no parts); refuses mixed schemes.

        `covers` of the sum lists each part's distinct `covers` once, in order."""
        first: LatencyHistogram | None = None
        counted: list[BinCounts] = []
        covers: dict[str, None] = {}
        for part in parts:
            if first is None:
                first = part
            elif part.scheme != first.scheme:
                what = "different bucket edges" if type(part.scheme) is type(first.scheme) else "different bucket schemes"
                raise HistogramSchemeMismatch(
                    f"latency histograms with {what} cannot be merged exactly: {first.scheme.describe()} and "
                    f"{part.scheme.describe()}")
            counted.append(part.counts)  # type: ignore[arg-type]  # BinCounts since __post_init__
            if part.covers:
                covers[part.covers] = None
        if first is None:
            return None
        return LatencyHistogram(first.scheme, counted[0] if len(counted) == 1 else _sum(counted, first.scheme.size), "; ".join(covers))

    def merge(self, other: LatencyHistogram) -> LatencyHistogram:
        """Counts added bucket by bucket; HistogramSchemeMismatch (naming both schemes) across schemes."""
        merged = LatencyHistogram.merged((self, other))
        assert merged is not None
        return merged

    # -- reading ---------------------------------------------------------------------------------

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def describe(self) -> str:
        return self.covers or self.scheme.describe()

    def percentile_ns(self, pct: float | str) -> float:
        """Latency at pct (0 < pct <= 100) by the scheme's exact rule (module docstring); NoData when empty.

        math.inf when the rank falls in an open-ended top bucket."""
        if isinstance(self.scheme, FioBins):
            return self.fio().percentile_ns(pct)  # fio's rule, bit for bit (NoData when empty)
        rank = nearest_rank(pct, self.total)  # validates pct before the empty check, as fio's rule does
        if not self.total:
            raise NoData(f"no latency samples (no I/O) in {self.describe()}: no p{pct_label(pct)}")
        running = 0
        for index, count in self.counts.items():  # in index order
            running += count
            if running >= rank:
                return float(self.scheme.edges_ns[index + 1])
        raise AssertionError(f"p{pct_label(pct)}: rank {rank} above {self.total} samples")  # pct <= 100: unreachable

    def fio(self) -> Histogram:
        """The fio Histogram of a FIO_BINS histogram; HistogramSchemeMismatch for any other scheme."""
        if not isinstance(self.scheme, FioBins):
            raise HistogramSchemeMismatch(f"fio bins asked of {self.scheme.describe()}, not {FIO_BINS.describe()}")
        return Histogram(dict(self.counts.items()))

    def to_fio_json_bins(self) -> dict[int, int]:
        """fio json+ bins ({midpoint ns: count}) of a FIO_BINS histogram."""
        self.fio()
        return {index_to_value_ns(i): c for i, c in self.counts.items()}

    def bucket_bounds_ns(self, index: int) -> tuple[float, float]:
        """[low, high) of a bucket of an explicit scheme (high may be math.inf)."""
        if not isinstance(self.scheme, Buckets):
            raise ValueError(f"bucket bounds of {self.scheme.describe()}: see iogate.metrics.histogram.bin_bounds_ns")
        return self.scheme.edges_ns[index], self.scheme.edges_ns[index + 1]
