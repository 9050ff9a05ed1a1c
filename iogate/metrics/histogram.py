"""fio's completion-latency histogram: decode, merge, percentiles.

fio (stat.h) keeps FIO_IO_U_PLAT_NR = 1856 bins: 29 groups of 64 (PLAT_BITS = 6).
Bins 0..127 hold their exact value; above that, each group doubles the range and
keeps 64 equal buckets, so a bin's width is at most 1/64 of its value and its
midpoint (what fio reports) is within 0.8 % of any latency in it. json+ output
keys the bins by that midpoint in ns; hist logs (log_hist_msec) list the counts
by index. Merging = summing counts bin by bin: exact for any split of samples
across jobs, hosts and intervals. Percentiles come from merged bins, never from
averaging per-job percentiles.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

PLAT_BITS = 6
PLAT_VAL = 1 << PLAT_BITS
PLAT_GROUP_NR = 29
PLAT_NR = PLAT_GROUP_NR * PLAT_VAL  # 1856


def index_to_value_ns(index: int) -> int:
    """Representative latency of a bin (fio's plat_idx_to_val: the bucket midpoint)."""
    if not 0 <= index < PLAT_NR:
        raise ValueError(f"fio histogram bin {index} out of range 0..{PLAT_NR - 1}")
    if index < (PLAT_VAL << 1):
        return index
    error_bits = (index >> PLAT_BITS) - 1
    base = 1 << (error_bits + PLAT_BITS)
    k = index % PLAT_VAL
    return int(base + (k + 0.5) * (1 << error_bits))


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
        hist = cls()
        for key, count in bins.items():
            try:
                value = int(key)
            except ValueError:
                raise ValueError(f"json+ bin key {key!r} is not an integer latency in ns") from None
            if int(count) < 0:
                raise ValueError(f"json+ bin {value} ns has a negative count {count}")
            index = value_to_index(value)
            if index_to_value_ns(index) != value:
                raise ValueError(f"json+ bin key {value} ns is not a fio bin midpoint (fio build with other PLAT_BITS?)")
            if count:
                hist.counts[index] = hist.counts.get(index, 0) + int(count)
        return hist

    @classmethod
    def from_counts(cls, counts: Mapping[int, int]) -> Histogram:
        """From bin index -> count (hist logs, HistSample); checks indexes and counts."""
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

    def percentile_ns(self, pct: float) -> float:
        """Latency at pct (0 < pct <= 100), as fio computes it: the bin where the
        cumulative count first reaches pct % of all samples."""
        if not 0 < pct <= 100:
            raise ValueError(f"percentile {pct} out of range (0, 100]")
        total = self.total
        if total == 0:
            return 0.0
        threshold = pct / 100.0 * total
        running = 0
        for index in sorted(self.counts):
            running += self.counts[index]
            if running >= threshold:
                return float(index_to_value_ns(index))
        return float(index_to_value_ns(max(self.counts)))

    def percentiles_ns(self, pcts: Iterable[float]) -> dict[float, float]:
        """Several percentiles at once: {pct: latency ns}."""
        return {pct: self.percentile_ns(pct) for pct in pcts}

    def mean_ns(self) -> float:
        total = self.total
        return sum(index_to_value_ns(i) * c for i, c in self.counts.items()) / total if total else 0.0


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
