"""fio's completion-latency histogram: decode, merge, percentiles.

fio (stat.h) keeps FIO_IO_U_PLAT_NR = 1856 bins: 29 groups of 64 (PLAT_BITS = 6).
Bins 0..127 hold their exact value; above that, each group doubles the range and
keeps 64 equal buckets, so a bin's width is at most 1/64 of its value and its
midpoint (what fio reports) is within 0.8 % of any latency in it. json+ output
keys the bins by that midpoint in ns; hist logs (log_hist_msec) list the counts
by index. Merging = summing counts bin by bin: exact for any split of samples
across jobs, hosts and intervals. Percentiles come from merged bins, never from
averaging per-job percentiles.

Percentile rank, exactly as fio 3.33 computes it (stat.c calc_clat_percentiles):
walking the bins in order, percentile p is the first bin where the running
count `sum` satisfies `sum >= (long double) p / 100.0 * nr`, nr = samples.
fio keeps p as a C double (fio_fp64_t.u.f, parsed with strtod from
percentile_list, default 1:5:10:20:30:40:50:60:70:80:90:95:99:99.5:99.9:99.95:99.99),
so 99.95 is really 99.9500000000000028421709430404007434844970703125, and the
division and product are rounded to an x86-64 long double (64-bit mantissa,
round half to even). We redo that in rationals: the exact double, each step
rounded to 64 significant bits. The decimal 99.95 would not do: at nr = 2000
it gives rank 1999, where fio's threshold is just above 1999 and picks the
2000th sample (a different bin). Since p <= 100 and nr is the bin total, the
threshold never exceeds nr and the walk always ends inside the histogram (fio
logs "error calculating latency percentiles" otherwise).
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

from iogate.metrics.bincounts import BinCounts
from iogate.metrics.nodata import NoData

PLAT_BITS = 6
PLAT_VAL = 1 << PLAT_BITS
PLAT_GROUP_NR = 29
PLAT_NR = PLAT_GROUP_NR * PLAT_VAL  # 1856
LONG_DOUBLE_MANTISSA_BITS = 64  # x87 extended precision: fio's long double on x86-64


def index_to_value_ns(index: int) -> int:
    """Representative latency of a bin (fio's plat_idx_to_val: the bucket midpoint)."""
    if not 0 <= index < PLAT_NR:
        raise ValueError(f"fio histogram bin {index} out of range 0..{PLAT_NR - 1}")
    if index < (PLAT_VAL << 1):
        return index
    error_bits = (index >> PLAT_BITS) - 1
    base = 1 << (error_bits + PLAT_BITS)
    k = index % PLAT_VAL
    # fio: base + (k + 0.5) * 2^error_bits in double, truncated; error_bits >= 1 here, so it is an integer.
    return base + ((2 * k + 1) << (error_bits - 1))


def value_to_index(value_ns: int) -> int:
    """The bin a latency falls in (fio's plat_val_to_idx)."""
    if value_ns < 0:
        raise ValueError(f"negative latency {value_ns}")
    msb = value_ns.bit_length() - 1 if value_ns else 0
    if msb <= PLAT_BITS:
        return value_ns
    error_bits = msb - PLAT_BITS
    base = (error_bits + 1) << PLAT_BITS
    offset = (PLAT_VAL - 1) & (value_ns >> error_bits)
    return min(base + offset, PLAT_NR - 1)


# json+ bin keys as fio writes them (the midpoint in ns, as text or int) -> bin index.
_INDEX_OF_KEY: dict[str | int, int] = {}
for _index in range(PLAT_NR):
    _INDEX_OF_KEY[index_to_value_ns(_index)] = _index
    _INDEX_OF_KEY[str(index_to_value_ns(_index))] = _index


def _json_key_index(key: str | int) -> int:
    """The bin of a json+ key that is not fio's plain text of a midpoint (" 70", 70.0 ...): checked."""
    try:
        value = int(key)
    except ValueError:
        raise ValueError(f"json+ bin key {key!r} is not an integer latency in ns") from None
    index = value_to_index(value)
    if index_to_value_ns(index) != value:
        raise ValueError(f"json+ bin key {value} ns is not a fio bin midpoint (fio build with other PLAT_BITS?)")
    return index


def json_bin_counts(bins: Mapping[str | int, int]) -> BinCounts:
    """json+ "bins" ({"<midpoint ns>": count}) as BinCounts by bin index; checks every key is a real
    bin and every count a non-negative integer (two keys of one bin add up)."""
    try:  # fio's own output: midpoints as text, ascending, no zeros; read at C speed
        indexes = list(map(_INDEX_OF_KEY.__getitem__, bins))
        counts = list(map(int, bins.values()))
        if all(map(operator.lt, indexes, indexes[1:])) and (not counts or min(counts) > 0):
            return BinCounts._trusted(indexes, counts)
    except (KeyError, TypeError, ValueError):
        pass
    by_index: dict[int, int] = {}
    for key, count in bins.items():
        index = _INDEX_OF_KEY.get(key)
        if index is None:
            index = _json_key_index(key)
        number = int(count)
        if number < 0:
            raise ValueError(f"json+ bin {int(key)} ns has a negative count {count}")
        if number:
            by_index[index] = by_index.get(index, 0) + number
    return BinCounts._trusted(sorted(by_index), (by_index[i] for i in sorted(by_index)))


@dataclass
class Histogram:
    """Bin counts by fio bin index; add histograms together, ask for percentiles.

    >>> h = Histogram.from_json_bins(job["read"]["clat_ns"]["bins"])
    >>> h.percentile_ns(99.0)
    """

    counts: dict[int, int] = field(default_factory=dict)

    @classmethod
    def from_json_bins(cls, bins: Mapping[str | int, int]) -> Histogram:
        """From json+ "bins" ({"<midpoint ns>": count}); checks every key is a real bin."""
        return cls(dict(json_bin_counts(bins).items()))

    @classmethod
    def from_counts(cls, counts: Mapping[int, int]) -> Histogram:
        """From bin index -> count (hist logs, HistSample); checks indexes and counts."""
        if isinstance(counts, BinCounts):
            return cls(dict(BinCounts.from_mapping(counts, PLAT_NR).items()))
        for index, count in counts.items():
            if not 0 <= int(index) < PLAT_NR:
                raise ValueError(f"fio histogram bin {index} out of range 0..{PLAT_NR - 1}")
            if int(count) < 0:
                raise ValueError(f"fio histogram bin {index} has a negative count {count}")
        return cls({int(i): int(c) for i, c in counts.items() if c})

    @classmethod
    def from_latencies_ns(cls, latencies_ns: Iterable[int | float]) -> Histogram:
        """Bin raw latencies the way fio does (for raw per-IO logs and for tests)."""
        hist = cls()
        for latency in latencies_ns:
            index = value_to_index(int(latency))
            hist.counts[index] = hist.counts.get(index, 0) + 1
        return hist

    @classmethod
    def merged(cls, parts: Iterable[Histogram]) -> Histogram:
        total = cls()
        for part in parts:
            total.add(part)
        return total

    def add(self, other: Histogram) -> None:
        for index, count in other.counts.items():
            self.counts[index] = self.counts.get(index, 0) + count

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def to_json_bins(self) -> dict[int, int]:
        return {index_to_value_ns(i): c for i, c in sorted(self.counts.items())}

    def percentile_ns(self, pct: float | str) -> float:
        """Latency at pct (0 < pct <= 100) exactly as fio reports it: the first bin whose
        cumulative count reaches fio's rank threshold (module docstring). Raises NoData
        on an empty histogram: there is no latency of zero samples."""
        threshold_pct = fio_percentile_value(pct)
        total = self.total
        if total == 0:
            raise NoData(f"no latency samples: p{pct_label(pct)} of an empty histogram")
        threshold = fio_rank_threshold(threshold_pct, total)
        running = 0
        for index in sorted(self.counts):
            running += self.counts[index]
            if running >= threshold:
                return float(index_to_value_ns(index))
        raise AssertionError(f"p{pct_label(pct)}: threshold {threshold} above {total} samples")  # p <= 100: unreachable

    def mean_ns(self) -> float:
        """Mean of the bin midpoints (within 1/128 of the true mean); NoData when empty."""
        total = self.total
        if total == 0:
            raise NoData("no latency samples: mean of an empty histogram")
        return sum(index_to_value_ns(i) * c for i, c in self.counts.items()) / total


def pct_label(pct: float | str) -> str:
    return f"{float(pct):g}"


def fio_percentile_value(pct: float | str | Fraction) -> Fraction:
    """The percentile as fio holds it: the exact value of the nearest double (strtod of the text)."""
    value = Fraction(float(pct))
    if not 0 < value <= 100:
        raise ValueError(f"percentile {pct} out of range (0, 100]")
    return value


def round_to_long_double(value: Fraction, mantissa_bits: int = LONG_DOUBLE_MANTISSA_BITS) -> Fraction:
    """value rounded to `mantissa_bits` significant bits, half to even (IEEE round-to-nearest)."""
    if value <= 0:
        if value == 0:
            return value
        return -round_to_long_double(-value, mantissa_bits)
    num, den = value.numerator, value.denominator
    exponent = num.bit_length() - den.bit_length()  # floor(log2(value)) or one more
    if (num << max(0, -exponent)) < (den << max(0, exponent)):
        exponent -= 1
    shift = mantissa_bits - 1 - exponent  # scale the value to [2^(bits-1), 2^bits)
    scaled_num, scaled_den = (num << shift, den) if shift >= 0 else (num, den << -shift)
    mantissa, remainder = divmod(scaled_num, scaled_den)
    if 2 * remainder > scaled_den or (2 * remainder == scaled_den and mantissa & 1):
        mantissa += 1
    return Fraction(mantissa, 1 << shift) if shift >= 0 else Fraction(mantissa << -shift)


def fio_rank_threshold(pct: Fraction, samples: int) -> Fraction:
    """fio's `(long double) pct / 100.0 * nr`, each operation rounded to a long double."""
    return round_to_long_double(round_to_long_double(pct / 100) * samples)


def bin_bounds_ns(index: int) -> tuple[int, int]:
    """[low, high) latency range of a bin; its width is at most 1/64 of low."""
    if not 0 <= index < PLAT_NR:
        raise ValueError(f"fio histogram bin {index} out of range 0..{PLAT_NR - 1}")
    if index < (PLAT_VAL << 1):
        return index, index + 1
    error_bits = (index >> PLAT_BITS) - 1
    low = (1 << (error_bits + PLAT_BITS)) + (index % PLAT_VAL) * (1 << error_bits)
    return low, low + (1 << error_bits)


DDIR_BY_CODE = {0: "read", 1: "write", 2: "trim"}


@dataclass(frozen=True)
class HistLogLine:
    """One line of a fio hist log (write_hist_log + log_hist_msec): one interval, one direction.

    fio writes the bins *accumulated since the previous line* of that job and
    direction, so each line is one interval's histogram; intervals add up to the
    run minus its last partial interval (fio does not flush that one).
    """

    t_ms: int  # interval end; epoch ms with log_unix_epoch=1, else ms since job start
    direction: str  # "read" | "write" | "trim"
    block_size_bytes: int
    histogram: Histogram


def parse_hist_log_line(line: str, where: str = "hist log") -> HistLogLine:
    """Decode `t_ms, ddir, bs, c0, c1, ... c1855` (fio 3.x, log_hist_coarseness=0)."""
    fields = [part.strip() for part in line.split(",")]
    header = len(fields) - PLAT_NR
    # fio 3.x writes t, ddir, bs; builds with per-IO priority logging add one more field.
    if header not in (3, 4):
        raise ValueError(
            f"{where}: {len(fields)} fields, expected {PLAT_NR} bins after 3 header fields "
            f"(log_hist_coarseness must be 0, fio built with PLAT_BITS={PLAT_BITS})"
        )
    try:
        numbers = [int(part) for part in fields]
    except ValueError:
        raise ValueError(f"{where}: non-integer field in {line[:60]!r}...") from None
    t_ms, ddir_code, block_size = numbers[0], numbers[1], numbers[2]
    if ddir_code not in DDIR_BY_CODE:
        raise ValueError(f"{where}: unknown data direction {ddir_code} (0 read, 1 write, 2 trim)")
    counts = {index: count for index, count in enumerate(numbers[header:]) if count}
    return HistLogLine(t_ms, DDIR_BY_CODE[ddir_code], block_size, Histogram.from_counts(counts))


def read_hist_log(path: Path | str) -> list[HistLogLine]:
    """Every line of a hist log file; errors name file:line."""
    path = Path(path)
    lines = []
    with path.open() as handle:
        for number, line in enumerate(handle, start=1):
            if line.strip():
                lines.append(parse_hist_log_line(line, where=f"{path} line {number}"))
    return lines
